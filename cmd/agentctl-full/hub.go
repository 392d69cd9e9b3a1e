package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/rs/zerolog"
	"golang.org/x/sync/errgroup"

	"github.com/agentctl/agentctl/agents"
	"github.com/agentctl/agentctl/agents/hub"
	"github.com/agentctl/agentctl/agents/hub/hubconf"
	"github.com/agentctl/agentctl/cmd/internal/cli"
	"github.com/agentctl/agentctl/config"
	"github.com/agentctl/agentctl/internal/clock"
	"github.com/agentctl/agentctl/mailbox"
)

const hubUsage = `
Usage: agentctl hub [--listen ADDR] [--nats URL] [--machine NAME]
                    [--server-only] [--log-format console|json]
       agentctl hub credentials MACHINE [--out FILE]

Runs the hub of a swarm whose seats are on several machines. The hub's
machine keeps the runtime folder: boards, devlogs, lore and every mailbox
with its history. Agents whose machine (agents[].machine in agentctl.yaml)
is another one take their turns there, with 'agentctl run AGENT --hub URL';
the hub keeps their runners, so their messages are claimed, prompted,
guarded and applied here, exactly once, like those of local agents.

The hub runs a NATS server with JetStream storage in hub/jetstream (or uses
the external cluster of --nats or hub.nats): the program agentctl-hub,
which it finds beside agentctl or on PATH and stops when it stops. The
hub keeps a runner for every remote agent, delivers to the mailboxes here
what the inbox folders of the other machines receive, and shows the seats
in hub/seats.json for 'agentctl status'. Agents of the hub's own machine
run as always, with 'agentctl run' or 'agentctl up'.

The embedded server accepts no one without credentials. On first start
the hub makes them, under hub/credentials/ (readable by you only): its own
identity, and one per machine that agents[].machine names, which may use
only the subjects of the agents seated there and send only as them.
'agentctl hub credentials MACHINE' prints a machine's seed file (or writes
it with --out) to copy to that machine, as hub/credentials/MACHINE.nk under
its runtime or wherever its hub.credentials says. hub.user and
hub.password_file, or hub.nkey_seed_file, add a swarm-wide login with every
permission; off loopback, set TLS with hub.tls too. Only one hub runs on a
runtime: a second refuses, naming the first's pid.

--server-only runs just the NATS server, for the other nodes of a cluster
(hub.cluster); such a node keeps no runtime folder of its own, and accepts
the swarm-wide login (hub.user or hub.nkey_seed_file), which it requires.

Examples:
  agentctl hub
  agentctl hub --listen 0.0.0.0:4222
  agentctl hub --nats nats://nats-1:4222,nats://nats-2:4222
  agentctl hub --server-only --listen 0.0.0.0:4222
  agentctl hub credentials desk-2 --out desk-2.nk
`

func runHub(ctx context.Context, env *cli.Env, args []string) (err error) {
	if len(args) > 0 && args[0] == "credentials" {
		return runHubCredentials(env, args[1:])
	}
	fs := cli.NewFlagSet(env, "hub", hubUsage)
	listen := fs.String("listen", "", "`address` the embedded server listens on (default: hub.listen, "+config.DefaultHubListen+")")
	external := fs.String("nats", "", "external NATS `URLs`, comma-separated, instead of the embedded server")
	machine := fs.String("machine", "", "this machine's `name` (default: hub.machine)")
	serverOnly := fs.Bool("server-only", false, "run only the NATS server, as a node of a cluster")
	logFormat := fs.String("log-format", "console", "log `format` on stderr: console or json")
	rest, err := cli.ParseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return cli.UsageError{Msg: fmt.Sprintf("hub: unexpected argument %q", rest[0])}
	}
	log, err := newLogger(env.Stderr, *logFormat)
	if err != nil {
		return err
	}
	cfg, err := cli.LoadConfig(env)
	if err != nil && !(*serverOnly && errors.Is(err, config.ErrNotFound)) {
		return err
	}
	if err != nil {
		cfg = config.Default()
	}
	release, err := lockHub(env.Root)
	if err != nil {
		return err
	}
	defer release()
	me := thisMachine(*machine, cfg.Hub.Machine)
	urls := config.URLs(*external)
	if len(urls) == 0 {
		urls = config.URLs(cfg.Hub.NATS)
	}
	if *serverOnly && len(urls) > 0 {
		return cli.UsageError{Msg: "hub: --server-only runs the embedded server; it cannot use an external one (--nats, hub.nats)"}
	}
	if len(urls) == 0 {
		// err, not a new one: the deferred stop below sets it.
		var program string
		if program, err = findHubProgram(); err != nil {
			return err
		}
		var ss hubconf.Settings
		if ss, err = hubServer(env, cfg, *listen, me, *serverOnly); err != nil {
			return err
		}
		if *serverOnly {
			if len(ss.Users) == 0 && len(ss.Keys) == 0 {
				return cli.WithHint(errors.New("hub: a --server-only node needs the swarm's login, or anyone who reaches it reads every prompt"),
					"set hub.user and hub.password_file (or hub.nkey_seed_file) in this node's agentctl.yaml, and the same in the hub's")
			}
		}
		var srv *hubServerProc
		if srv, err = startHubServer(env, program, ss, *logFormat); err != nil {
			return err
		}
		urls = []string{srv.url}
		if *serverOnly {
			fmt.Fprintln(env.Stdout, srv.url)
			select {
			case <-ctx.Done():
			case <-srv.done:
			}
			return srv.stop()
		}
		// The hub lives as long as its server: without it the runners
		// would wait on nothing.
		asked := ctx
		var cancel context.CancelFunc
		ctx, cancel = context.WithCancel(ctx)
		defer cancel()
		go func() {
			select {
			case <-srv.done:
				cancel()
			case <-ctx.Done():
			}
		}()
		defer func() {
			// A server that ended unasked is why the hub stops, whatever
			// its parts said on the way out.
			if ended := srv.ended(); ended && asked.Err() == nil {
				err = cmp.Or(srv.exit(), error(errors.New("the hub's NATS server stopped unasked")))
				return
			}
			// Else it stops after the runners, which use it to the end.
			// A server that did not end cleanly comes first: a part that
			// failed on its lost connection before its end was seen
			// failed because of it.
			err = cmp.Or(srv.stop(), err)
		}()
	}
	cs, err := hubClient(env, cfg, urls, "agentctl hub on "+me, log, hubRole{})
	if err != nil {
		return err
	}
	nc, err := hub.Connect(ctx, cs)
	if err != nil {
		return fmt.Errorf("cannot connect to the hub's server: %w", err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return err
	}
	waiting := func(err error) {
		log.Warn().Err(err).Str("event", "waiting").Msg("the hub's servers cannot hold the swarm's streams yet; waiting for them")
	}
	if err := hub.EnsureStreams(ctx, js, cfg.Hub.Replicas, waiting); err != nil {
		return err
	}
	remote := cfg.RemoteAgents()
	fmt.Fprintln(env.Stdout, urls[0])
	log.Info().Str("event", "started").Str("machine", me).Strs("remote", remote).Msg("hub started")
	// Once asked to stop (or left by its server, which the deferred stop
	// reports), a part still starting fails on the ended context: that is
	// the stop, not a failure.
	if err := serveHub(ctx, env, cfg, nc, me, remote, log); err != nil && ctx.Err() == nil {
		return err
	}
	log.Info().Str("event", "stopped").Msg("hub stopped")
	return nil
}

// serveHub runs, until ctx ends, the hub's work on the runtime folder: a
// runner for each remote agent, the intake of forwarded messages, and the
// seats' record.
func serveHub(ctx context.Context, env *cli.Env, cfg config.Config, nc *nats.Conn, me string, remote []string, log zerolog.Logger) error {
	g, ctx := errgroup.WithContext(ctx)
	g.Go(func() error {
		return hub.Intake(ctx, hub.IntakeSettings{Root: env.Root, Known: cfg.MailboxNames(), Senders: remote, Conn: nc, Log: log})
	})
	g.Go(func() error {
		return hub.FollowSeats(ctx, hub.SeatsSettings{Root: env.Root, Machine: me, Remote: remote, Conn: nc, Human: cfg.Human(), Log: log.With().Str("agent", "hub").Logger()})
	})
	for _, name := range remote {
		g.Go(func() error { return keepRemoteRunner(ctx, env, cfg, nc, name, log) })
	}
	return g.Wait()
}

// keepRemoteRunner runs the hub's runner of a remote agent, and starts it
// again after a failure, as 'agentctl up' would: one agent's trouble (its
// mailbox locked by a local runner, a full disk) must not stop the others.
func keepRemoteRunner(ctx context.Context, env *cli.Env, cfg config.Config, nc *nats.Conn, name string, log zerolog.Logger) error {
	agent, err := cfg.Agent(name)
	if err != nil {
		return err
	}
	restartRemote(ctx, clock.System, name, agent.Machine, log, func(ctx context.Context) error {
		return runRemote(ctx, env, cfg, nc, agent, log)
	})
	return nil
}

// restartRemote runs run until ctx ends, again after each failure: a
// second after the first, twice as long after each next one, up to a
// minute, on clk.
func restartRemote(ctx context.Context, clk clock.Clock, name, machine string, log zerolog.Logger, run func(context.Context) error) {
	for wait := time.Second; ctx.Err() == nil; wait = min(2*wait, time.Minute) {
		err := run(ctx)
		if err == nil || ctx.Err() != nil {
			return
		}
		ev := log.Error().Str("agent", name).Err(err)
		var locked *mailbox.LockedError
		if errors.As(err, &locked) {
			ev = ev.Str("hint", fmt.Sprintf("%s's turns are taken on %s; stop the local runner of %s (pid %d)", name, machine, name, locked.PID))
		}
		ev.Dur("again_in", wait).Msg("remote agent's runner stopped; starting it again")
		select {
		case <-ctx.Done():
		case <-clock.After(clk, wait):
		}
	}
}

func runRemote(ctx context.Context, env *cli.Env, cfg config.Config, nc *nats.Conn, agent config.Agent, log zerolog.Logger) error {
	d, err := hub.NewDriver(ctx, nc, agent.Name, log)
	if err != nil {
		return err
	}
	r, err := agents.New(runnerSettings(env, cfg, agent, d, log))
	if err != nil {
		return err
	}
	return r.Run(ctx)
}
