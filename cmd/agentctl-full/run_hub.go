package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/rs/zerolog"
	"golang.org/x/sync/errgroup"

	"github.com/agentctl/agentctl/agents/hub"
	"github.com/agentctl/agentctl/cmd/internal/cli"
	"github.com/agentctl/agentctl/config"
	"github.com/agentctl/agentctl/cursor"
	"github.com/agentctl/agentctl/mailbox"
)

// runSeat is 'agentctl run AGENT --hub URL': the agent's seat on one of
// the swarm's other machines. It takes the turns the hub asks for and
// forwards what is dropped into the agent's mailbox here, until ctx ends.
func runSeat(ctx context.Context, env *cli.Env, cfg config.Config, agent config.Agent, driver cursor.Driver, urls []string, creds string, log zerolog.Logger) error {
	me := thisMachine("", agent.Machine)
	cs, err := hubClient(env, cfg, urls, fmt.Sprintf("agentctl run %s on %s", agent.Name, me), log, hubRole{machine: me, creds: creds})
	if err != nil {
		return err
	}
	dir, err := hub.JournalDir(env.Root, agent.Name)
	if err != nil {
		return err
	}
	journal, err := hub.OpenJournal(dir)
	if err != nil {
		return err
	}
	nc, err := hub.Connect(ctx, cs)
	if err != nil {
		return cli.WithHint(fmt.Errorf("cannot reach the hub: %w", err), fmt.Sprintf("start 'agentctl hub' on the hub's machine, and check the URL and the credentials: this machine's are what 'agentctl hub credentials %s' prints there", me))
	}
	defer nc.Close()

	consumer := consumerOptions(cfg)
	consumer.Known = cfg.MailboxNames()
	in := intakeOptions(cfg)
	in.Watch, in.Take = agent.WatchPaths(env.Root), cfg.TakePaths(env.Root, agent)
	fwd := hub.ForwardSettings{Root: env.Root, Agent: agent.Name, Senders: cfg.SeatedOn(agent.Machine), Consumer: consumer, Intake: in, Conn: nc, Log: log,
		Watch: mailbox.WatchOptions{Poll: cfg.Mailbox.Watch == "poll", PollInterval: cfg.Mailbox.PollInterval.D(),
			RescanInterval: cfg.Mailbox.RescanInterval.D(), Extra: in.Watch}}
	var others []string
	for _, name := range cfg.MailboxNames() {
		if a, err := cfg.Agent(name); name != agent.Name && (err != nil || a.Machine != agent.Machine || agent.Machine == "") {
			others = append(others, name)
		}
	}
	seat := hub.SeatSettings{Root: env.Root, Agent: agent.Name, Machine: me, Driver: driver, Journal: journal, Conn: nc, Log: log,
		Grace: cfg.Run.ShutdownGrace.D()}

	// The three stop together: a seat that cannot forward, or a forwarder
	// without its seat, would leave the agent half served.
	g, ctx := errgroup.WithContext(ctx)
	g.Go(func() error { return hub.Forward(ctx, fwd) })
	g.Go(func() error { return hub.ForwardOthers(ctx, fwd, others) })
	g.Go(func() error { return hub.RunSeat(ctx, seat) })
	err = g.Wait()
	if errors.Is(err, context.Canceled) {
		err = nil // asked to stop
	}
	var locked *mailbox.LockedError
	if errors.As(err, &locked) {
		return cli.WithHint(fmt.Errorf("cannot run %s: %w", agent.Name, err), "only one runner per agent on a machine; stop the other one first")
	} else if err != nil {
		return fmt.Errorf("seat of %s stopped: %w", agent.Name, err)
	}
	log.Info().Str("agent", agent.Name).Str("event", "stopped").Msg("seat stopped")
	return nil
}
