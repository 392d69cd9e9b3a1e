package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/agentctl/agentctl/agents/notify"
	"github.com/agentctl/agentctl/agents/supervise"
	"github.com/agentctl/agentctl/cmd/internal/cli"
	"github.com/agentctl/agentctl/config"
	"github.com/agentctl/agentctl/internal/layout"
)

const upUsage = `
Usage: agentctl up [AGENT...] [--machine NAME] [--log-format console|json]

Starts a runner ('agentctl run AGENT') for every agent in agentctl.yaml, or
only for the agents named, as child processes, and keeps them running:
a runner that dies is started again after a pause that doubles while it
keeps dying (1s up to 1m), and after 5 deaths in a row the person in the
loop (their mailbox) and the agent's devlog are told once. A runner
already started by hand is left alone and watched, never duplicated. The
runners' logs are merged into one on stderr, each line after its agent's
name.

On the hub's machine of a swarm (hub.machine in agentctl.yaml), agents
whose machine is another one get no runner of their own here: up starts
'agentctl hub' instead, whose runners serve them all while their seats
run 'agentctl run AGENT --hub URL' on their machines, and keeps it running
the same way (a hub started by hand is watched, never duplicated).

On one of the swarm's other machines, up keeps the seats of the agents
whose machine it is: 'agentctl run AGENT --hub URL' with hub.url. Which
machine up is on: --machine, else this host's name when an agent names it
as its machine, else the hub's.

Ctrl+C, SIGTERM or 'agentctl down' stop every runner the way Ctrl+C stops
one (a turn in flight gets run.shutdown_grace to finish) and then up. Only
one up runs per runtime.

Examples:
  agentctl up
  agentctl up Agent-1 Agent-3
  agentctl up --log-format json 2>>runtime/up.log
  agentctl up --machine laptop-2
`

func runUp(ctx context.Context, env *cli.Env, args []string) error {
	fs := cli.NewFlagSet(env, "up", upUsage)
	logFormat := fs.String("log-format", "console", "log `format` of the runners: console or json")
	machine := fs.String("machine", "", "the `name` of this machine in agentctl.yaml (default: this host's name if an agent has it, else hub.machine)")
	rest, err := cli.ParseArgs(fs, args)
	if err != nil {
		return err
	}
	log, err := newLogger(env.Stderr, *logFormat)
	if err != nil {
		return err
	}
	cfg, err := cli.LoadConfig(env)
	if err != nil {
		return err
	}
	names := cfg.AgentNames()
	if len(rest) > 0 {
		names = names[:0:0]
		for _, n := range rest {
			name, err := resolveAgent(env, cfg, n)
			if err != nil {
				return err
			}
			names = append(names, name)
		}
	}
	if len(names) == 0 {
		return cli.WithHint(errors.New("up: this runtime has no agents"), "add agents to agentctl.yaml, or run 'agentctl init --agents 3'")
	}
	me := upMachine(cfg, *machine)
	local, hubbed, err := upPlan(cfg, names, me)
	if err != nil {
		return err
	}
	seat := cfg.Hub.Machine != "" && me != cfg.Hub.Machine // a seat machine: runners take turns for the hub
	hubURL := cfg.Hub.URL
	if seat && hubURL == "" {
		return cli.WithHint(fmt.Errorf("up: %s is not the hub's machine (%s), and hub.url does not say where the hub is", me, cfg.Hub.Machine),
			"set hub.url in agentctl.yaml, e.g. nats://"+cfg.Hub.Machine+":4222, or run 'agentctl run AGENT --hub URL' by hand")
	}
	root, err := filepath.Abs(env.Root)
	if err != nil {
		return err
	}
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("cannot find the agentctl program to start runners with: %w", err)
	}
	release, err := supervise.Lock(root)
	var running *supervise.RunningError
	if errors.As(err, &running) {
		return cli.WithHint(err, "stop it with 'agentctl down', or start single runners with 'agentctl run AGENT'")
	}
	if err != nil {
		return err
	}
	defer release()
	json := *logFormat == "json" // then stderr holds JSON objects only
	if !json {
		var what []string
		if len(local) > 0 {
			what = append(what, fmt.Sprintf("%d runners alive (%s)", len(local), strings.Join(local, ", ")))
		}
		if len(hubbed) > 0 {
			what = append(what, fmt.Sprintf("the hub alive ('agentctl hub': its runners serve %s, whose seats are on other machines)", strings.Join(hubbed, ", ")))
		}
		fmt.Fprintf(env.Stderr, "agentctl up: keeping %s; Ctrl+C or 'agentctl down' stops them\n", strings.Join(what, " and "))
	}
	// The people's mailboxes are on this machine unless it is a seat's:
	// up, one per runtime, is the one that tells them (package notify).
	if n := cfg.Notify; n.Enabled() && !seat {
		w := &notify.Watcher{Root: root, People: cfg.PeopleNames(), Poll: n.Poll.D(), Log: log.With().Str("agent", "notify").Logger(),
			Ways: notify.Settings{Desktop: n.Desktop, Webhook: n.Webhook, Headers: n.WebhookHeaders, Command: n.Command}}
		wctx, stop := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() { w.Run(wctx); close(done) }()
		defer func() { stop(); <-done }()
	}
	err = supervise.Run(ctx, supervise.Settings{
		Root: root, Agents: local, Hub: hubbed, Human: cfg.Human(), Log: env.Stderr, JSON: json,
		Policy: supervise.DefaultPolicy(),
		Grace:  cfg.Run.ShutdownGrace.D() + 5*time.Second,
		// What a person edits to mend a runner stopped by refused
		// credentials or settings that cannot work.
		Watch: []string{layout.Config(root), layout.HubCredentials(root)},
		Command: func(agent string) *exec.Cmd {
			// argv[0] stays "agentctl": the program may be a copy under
			// another name, and argv[0] is what ps shows.
			if agent == supervise.HubName {
				return &exec.Cmd{Path: self, Args: []string{"agentctl", "--root", root, "hub", "--log-format", *logFormat}}
			}
			if seat {
				return &exec.Cmd{Path: self, Args: []string{"agentctl", "--root", root, "run", agent, "--hub", hubURL, "--log-format", *logFormat}}
			}
			return &exec.Cmd{Path: self, Args: []string{"agentctl", "--root", root, "run", agent, "--log-format", *logFormat}}
		},
	})
	if err != nil {
		return err
	}
	if !json {
		fmt.Fprintln(env.Stderr, "agentctl up: every runner stopped")
	}
	return nil
}

// upMachine is the machine up runs on, as agentctl.yaml names machines.
func upMachine(cfg config.Config, flagValue string) string {
	if flagValue != "" || cfg.Hub.Machine == "" {
		return flagValue
	}
	host, _ := os.Hostname()
	for _, a := range cfg.Agents {
		if a.Machine != "" && strings.EqualFold(a.Machine, host) {
			return a.Machine
		}
	}
	return cfg.Hub.Machine
}

// upPlan splits the agents up was asked for into those it runs here and,
// on the hub's machine when any of them takes its turns on another one,
// the remote agents the hub serves: all of them, since one hub keeps every
// remote runner. On another machine (me), only that machine's agents run
// here, as seats. It says what cannot start before anything does.
func upPlan(cfg config.Config, names []string, me string) (local, hubbed []string, err error) {
	remote := false
	onHub := cfg.Hub.Machine == "" || me == cfg.Hub.Machine
	for _, name := range names {
		agent, err := cfg.Agent(name)
		if err != nil {
			return nil, nil, err
		}
		here := !cfg.Remote(agent)
		if !onHub {
			here = agent.Machine == me
		}
		if !here {
			remote = remote || onHub
			continue // its window or command is on its own machine
		}
		if err := runnable("up", agent); err != nil {
			return nil, nil, err
		}
		local = append(local, name)
	}
	if !onHub && len(local) == 0 {
		return nil, nil, cli.WithHint(fmt.Errorf("up: no agent of this runtime runs on %s", me),
			"set agents[].machine in agentctl.yaml, or name this machine with --machine")
	}
	if !remote {
		return local, nil, nil
	}
	for _, name := range cfg.AgentNames() {
		if strings.EqualFold(name, supervise.HubName) {
			return nil, nil, cli.WithHint(fmt.Errorf("up: an agent is named %q, as up names the hub it starts", name),
				"rename the agent, or run 'agentctl hub' and the runners by hand")
		}
	}
	return local, cfg.RemoteAgents(), nil
}
