package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/rs/zerolog"

	"github.com/agentctl/agentctl/agents"
	"github.com/agentctl/agentctl/agents/cost"
	"github.com/agentctl/agentctl/agents/supervise"
	"github.com/agentctl/agentctl/cmd/internal/cli"
	"github.com/agentctl/agentctl/config"
	"github.com/agentctl/agentctl/config/driverconf"
	"github.com/agentctl/agentctl/cursor"
	"github.com/agentctl/agentctl/internal/clilog"
	"github.com/agentctl/agentctl/internal/profiling"
	"github.com/agentctl/agentctl/mailbox"
	"github.com/agentctl/agentctl/mailbox/intake"
)

const runUsage = `
Usage: agentctl run AGENT [--driver gui|exec|cdp|acp] [--preset NAME] [--new-session]
                          [--hub URL [--creds FILE]] [--log-format console|json] [-- CMD ARGS...]

Runs AGENT's long-lived loop: it watches the agent's mailbox and, one
message at a time (most urgent first, oldest first within a priority),
turns the message into a self-prompt, takes a turn with the agent's chat
window (driver gui), its chat page through the app's DevTools port (driver
cdp), its headless command (driver exec) or its Agent Client Protocol
program (driver acp), and applies what the
reply asks for: messages to other agents, board changes, a devlog entry.
Then the message is archived with a receipt. Leave it running, one per
agent; a second run for the same agent refuses and names the first one's
pid, and while anything else holds the agent's lock, run waits and logs
what it waits for. Ctrl+C or SIGTERM finish the current step and stop; a runner killed
mid-turn is resumed by the next one without sending the prompt twice.

A reply asks for effects with a fenced block at its end:

  ` + "```agentctl" + `
  {"send": [{"to": "Agent-2", "subject": "review", "body": "Please review T-7"}],
   "board": [{"id": "T-7", "status": "review", "owner": "Agent-2"}],
   "devlog": "Parser done; Agent-2 reviews."}
  ` + "```" + `

Everything after "--" is the exec command for this run (the prompt goes to
its stdin, or replaces an argument "{prompt}"); it implies --driver exec.

Memory: with an exec preset (claude, codex, cursor-agent, gemini or
generic; --preset or exec.preset) the reply is read from the JSON the
command prints and the agent's session is kept in sessions/AGENT.json, so
the next turn, and the next runner, continue the same conversation. --new-session starts the first
turn in a fresh one (a chat window presses its new_chat_key); new_chat in
agentctl.yaml starts one per thread or every N turns.

On another machine than the hub's, --hub URL takes the agent's turns for
'agentctl hub': the hub claims its messages and applies what the replies
ask for in the runtime folder there; this machine only drives the window or
command, keeping a journal of its turns in seats/AGENT/ so that a crash or
a network cut neither loses a turn nor sends its prompt twice. Messages
dropped into the agent's inbox folder here are forwarded to the hub, when
they come from an agent of this machine. The hub knows this machine by its
credentials: the seed file 'agentctl hub credentials MACHINE' prints on the
hub's machine, kept here as hub/credentials/MACHINE.nk under the runtime,
or named by hub.credentials or --creds.

Examples:
  agentctl run Agent-3
  agentctl run Agent-4 --driver exec -- claude -p "{prompt}"
  agentctl run Agent-4 --preset claude
  agentctl run Agent-5 --preset cursor-agent --new-session
  agentctl run Agent-2 --log-format json 2>>runtime/Agent-2.log
  agentctl run Agent-5 --hub nats://desk-1:4222
  agentctl run Agent-5 --hub nats://desk-1:4222 --creds ~/desk-2.nk
`

func runRun(ctx context.Context, env *cli.Env, args []string) (err error) {
	fs := cli.NewFlagSet(env, "run", runUsage)
	driverName := fs.String("driver", "", "`driver` for this run: gui, exec, cdp or acp (default: the agent's setting)")
	logFormat := fs.String("log-format", "console", "log `format` on stderr: console or json")
	preset := fs.String("preset", "", "exec `preset` for this run: "+strings.Join(config.PresetNames(), ", ")+" (implies --driver exec)")
	newSession := fs.Bool("new-session", false, "start the first turn in a fresh conversation instead of continuing the agent's session")
	hubURL := fs.String("hub", "", "take the agent's turns for the hub at `URL` (comma-separated for a cluster): this machine is one of the swarm's other machines")
	creds := fs.String("creds", "", "with --hub, this machine's nkey seed `file` (default: hub.credentials, else hub/credentials/MACHINE.nk under the runtime)")
	rest, err := cli.ParseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(rest) < 1 {
		return cli.UsageError{Msg: "run: want AGENT"}
	}
	idleForDays()
	stopProfile, err := profiling.FromEnv("run")
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, stopProfile()) }()
	name, command := rest[0], rest[1:]
	log, err := newLogger(env.Stderr, *logFormat)
	if err != nil {
		return err
	}
	cfg, err := cli.LoadConfig(env)
	if err != nil {
		return err
	}
	name, err = resolveAgent(env, cfg, name)
	if err != nil {
		return err
	}
	agent, err := cfg.Agent(name)
	if err != nil {
		return err
	}
	if *preset != "" {
		agent.Driver, agent.Exec.Preset = config.DriverExec, *preset
	}
	if len(command) > 0 {
		agent.Driver, agent.Exec.Command = config.DriverExec, command
	}
	switch *driverName {
	case "":
	case config.DriverGUI, config.DriverExec, config.DriverCDP, config.DriverACP:
		agent.Driver = *driverName
	default:
		return cli.UsageError{Msg: fmt.Sprintf("run: --driver %q is not gui, exec, cdp or acp", *driverName)}
	}
	if err := runnable("run", agent); err != nil {
		return err
	}
	if *newSession {
		if err := agent.NewChatError(); err != nil {
			hint := "set window.new_chat_key for " + agent.Name + " in agentctl.yaml, e.g. ctrl+n"
			if agent.EffectiveDriver() == config.DriverExec {
				hint = "give the agent an exec preset (--preset claude, or exec.preset in agentctl.yaml) to keep its session"
			}
			return cli.UsageError{Msg: fmt.Sprintf("run: --new-session: %s: %s", agent.Name, err), Fix: hint}
		}
	}
	sessionLog := log.With().Str("agent", agent.Name).Logger()
	settings, err := seatSettings(env.Root, agent, cfg.GUI)
	if err != nil {
		return err
	}
	driver, err := cursor.New(settings, cursor.Options{LockDir: cursor.LockDir(env.Root), Agent: agent.Name,
		Sessions: cursor.SessionsDir(env.Root), NewSession: *newSession,
		Warn: func(err error) { sessionLog.Warn().Str("event", "session").Err(err).Msg("conversation record") }})
	if err != nil {
		return fmt.Errorf("cannot set up the %s driver of %s: %w", agent.EffectiveDriver(), agent.Name, err)
	}
	if c, ok := driver.(interface{ Close() }); ok {
		defer c.Close()
	}
	if agent.KeepsConversation() || *newSession {
		ev := sessionLog.Info().Str("event", "session").Str("record", cursor.SessionFile(cursor.SessionsDir(env.Root), agent.Name))
		if *newSession {
			ev.Msg("the first turn starts a new conversation (--new-session)")
		} else {
			ev.Msg("turns continue the agent's conversation")
		}
	}
	if *creds != "" && *hubURL == "" {
		return cli.UsageError{Msg: "run: --creds goes with --hub: it is how this machine logs in to the hub"}
	}
	if *hubURL != "" {
		return runSeat(ctx, env, cfg, agent, driver, config.URLs(*hubURL), *creds, log)
	}
	r, err := agents.New(runnerSettings(env, cfg, agent, driver, log))
	if errors.Is(err, mailbox.ErrNoMailbox) {
		return cli.WithHint(err, "run 'agentctl init' to create the mailboxes of the configured agents")
	}
	if err != nil {
		return err
	}
	err = r.Run(ctx)
	var locked *mailbox.LockedError
	if errors.As(err, &locked) {
		hint := "only one runner per agent; stop the other one first"
		if locked.PID > 0 { // believed: a live runner, the very process that took the lock
			hint += fmt.Sprintf(" (kill %d)", locked.PID)
		}
		return cli.WithHint(fmt.Errorf("cannot run %s: %w", agent.Name, err), hint)
	}
	if err != nil && !errors.Is(err, context.Canceled) {
		return fmt.Errorf("runner of %s stopped: %w", agent.Name, err)
	}
	log.Info().Str("agent", agent.Name).Str("event", "stopped").Msg("runner stopped")
	return nil
}

// runnable says why agent's runner cannot start, before anything starts:
// an exec agent without a command, a window never calibrated.
func runnable(command string, agent config.Agent) error {
	if agent.EffectiveDriver() == config.DriverExec {
		if err := agent.Validate(); err != nil {
			if agent.Exec.Preset == "" && len(agent.Exec.Command) == 0 {
				return cli.UsageError{Msg: command + ": the exec driver of " + agent.Name + " needs a command",
					Fix: "set exec.command or exec.preset in agentctl.yaml, or give it after --, e.g. agentctl run " + agent.Name + " --driver exec -- claude -p \"{prompt}\", or a preset: --preset claude"}
			}
			return cli.UsageError{Msg: command + ": " + err.Error()}
		}
	}
	if agent.EffectiveDriver() == config.DriverACP {
		if err := agent.Validate(); err != nil {
			return cli.WithHint(fmt.Errorf("%s: %w", agent.Name, err), "set acp.preset (claude, codex, gemini, cursor) or acp.command in agentctl.yaml")
		}
	}
	if agent.EffectiveDriver() == config.DriverGUI {
		if err := driverconf.Calibrated(agent.Window); err != nil {
			return cli.WithHint(fmt.Errorf("%s: %w", agent.Name, err), "run 'agentctl calibrate "+agent.Name+"' first")
		}
	}
	if agent.EffectiveDriver() == config.DriverCDP {
		if err := agent.CDP.Ready(); err != nil {
			return cli.WithHint(fmt.Errorf("%s: %w", agent.Name, err), "run 'agentctl calibrate "+agent.Name+" --cdp http://127.0.0.1:9222' first")
		}
	}
	return nil
}

// runnerIntake is the intake settings of agent's runner: the places old
// writers still write to are read by it, and emptied only where
// agentctl.yaml says take: true.
func runnerIntake(root string, cfg config.Config, agent config.Agent) intake.Options {
	in := intakeOptions(cfg)
	in.Watch, in.Shared = agent.WatchPaths(root), cfg.SharedPaths(root)
	in.Take = cfg.TakePaths(root, agent)
	in.SharedDeadletters = cfg.SharedDeadletters(agent.Name)
	return in
}

// runnerSettings hands the runner its settings from agentctl.yaml as plain
// values.
func runnerSettings(env *cli.Env, cfg config.Config, agent config.Agent, driver cursor.Driver, log zerolog.Logger) agents.Settings {
	consumer, in := consumerOptions(cfg), runnerIntake(env.Root, cfg, agent)
	return agents.Settings{
		Root: env.Root, Agent: agent.Name, Agents: cfg.AgentNames(), Driver: driver,
		People: cfg.PeopleNames(), Human: cfg.Human(),
		Supervised: os.Getenv(supervise.EnvSupervised) == "1",
		Consumer:   consumer, Intake: in,
		Watch: mailbox.WatchOptions{Poll: cfg.Mailbox.Watch == "poll", PollInterval: cfg.Mailbox.PollInterval.D(),
			RescanInterval: cfg.Mailbox.RescanInterval.D(), Extra: append(in.Watch, in.Shared...)},
		Heartbeat:        cfg.Run.Heartbeat.D(),
		MaxPromptBytes:   cfg.Run.MaxPromptBytes,
		ShutdownGrace:    cfg.Run.ShutdownGrace.D(),
		Resend:           cfg.Run.Resends(agent),
		ResendStopped:    cfg.Run.ResendsStopped(),
		TemplatesDir:     filepath.Join(env.Root, cfg.Run.Templates),
		MaxHops:          cfg.Run.MaxHops,
		MaxSendsPerReply: cfg.Run.MaxSendsPerReply,
		NoBlockNotice:    noBlockNotice(cfg.Run.NoBlockNotice),
		Guardrails:       guardrails(cfg),
		PerMinute:        cfg.RateLimit.PerMinute,
		PerHour:          cfg.RateLimit.PerHour,
		Prices:           prices(cfg.Costs.Prices),
		Budget:           cost.Budget(cfg.Costs.Budget),
		Model:            agent.Model,
		Recovery:         recoverySettings(cfg),
		Policy:           cfg.Coordination.Policy,
		DigestWait:       cfg.Coordination.DigestWait.D(),
		BoardLook:        cfg.Coordination.BoardLook.D(),
		TakeWork:         agent.Board.Take,
		WorkLabels:       agent.Board.Labels,
		Lore:             loreSettings(cfg),
		Log:              log,
	}
}

// prices turns the configuration's price table into the runner's.
func prices(table map[string]config.ModelPrice) cost.Prices {
	out := make(cost.Prices, len(table))
	for model, p := range table {
		out[model] = cost.Price(p)
	}
	return out
}

// noBlockNotice turns run.no_block_notice, where 0 means never, into the
// runner's setting, where 0 means the default.
func noBlockNotice(n int) int {
	if n == 0 {
		return -1
	}
	return n
}

func guardrails(cfg config.Config) agents.Guardrails {
	g := cfg.Guardrails
	return agents.Guardrails{Broadcast: g.Broadcast, OthersTask: g.OthersTask, CloseUnowned: g.CloseUnowned, ManySends: g.ManySends, ManySendsOver: g.ManySendsOver, ToolPermission: g.ToolPermission}
}

func loreSettings(cfg config.Config) agents.LoreSettings {
	l := cfg.Coordination.Lore
	return agents.LoreSettings{OnTaskDone: l.OnTaskDone, EveryMessages: l.EveryMessages, Narrate: l.Narrate, NarrateTimeout: l.NarrateTimeout.D()}
}

func recoverySettings(cfg config.Config) agents.RecoverySettings {
	r := cfg.Recovery
	return agents.RecoverySettings{
		Lease: r.Lease.D(), StaleAfter: r.StaleAfter.D(), StallAfter: r.StallAfter.D(),
		Cron:       agents.CronSpecs{Requeue: r.Cron.Requeue, Expire: r.Cron.Expire, Stall: r.Cron.Stall, Rescan: r.Cron.Rescan},
		Supervisor: cfg.Supervisor.Agent, Nudge: cfg.Supervisor.Nudge,
	}
}

// newLogger logs one event per step (internal/clilog); a format it does
// not know is a usage error.
func newLogger(w io.Writer, format string) (zerolog.Logger, error) {
	l, err := clilog.New(w, format)
	if err != nil {
		return l, cli.UsageError{Msg: err.Error()}
	}
	return l, nil
}
