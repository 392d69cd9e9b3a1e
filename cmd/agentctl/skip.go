package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"github.com/agentctl/agentctl/agents"
	"github.com/agentctl/agentctl/config"
	"github.com/agentctl/agentctl/mailbox"
)

const skipUsage = `
Usage: agentctl skip AGENT [--reason TEXT] [--wait 30s] [--id ID]

Abandons the turn AGENT is taking, safely, and records it: the message in
flight goes to deadletter/ with the reason "skipped by a person: TEXT", the
devlog gets an entry with the outcome "skipped", and the sender hears of it
as of any dead letter. 'agentctl retry ID' brings the message back.

When AGENT's runner is up, skip asks it (skip.json in the mailbox folder)
and waits up to --wait for the message to leave processing/: the runner
cancels the turn, which releases the desktop input lock and restores the
clipboard, or ends the agent's command and its children. When no runner is
up, skip settles the message itself, under the same lock a runner takes.

Examples:
  agentctl skip Agent-3 --reason "stuck on a modal dialog"
  agentctl skip Agent-4 --reason "wrong task" --wait 1m
`

func runSkip(ctx context.Context, env *Env, args []string) error {
	fs := newFlagSet(env, "skip", skipUsage)
	reason := fs.String("reason", "", "why the turn is abandoned, kept with the dead letter (`text`)")
	wait := fs.Duration("wait", 30*time.Second, "how long to wait for a running runner to let go (`duration`)")
	onlyID := fs.String("id", "", "the message in flight, when processing/ holds several (`id`)")
	rest, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if err := wantArgs(fs, rest, 1, 1, "one agent name"); err != nil {
		return err
	}
	cfg, err := loadConfig(env)
	if err != nil {
		return err
	}
	return skipTurn(ctx, env, cfg, rest[0], *onlyID, *reason, *wait)
}

// skipTurn abandons the turn agent is taking (message onlyID, or the one in
// flight), telling its runner or settling the message itself, and says
// what happened on env.Stdout.
func skipTurn(ctx context.Context, env *Env, cfg config.Config, agent, onlyID, reason string, wait time.Duration) error {
	mb, err := openAgentMailbox(env, cfg, agent)
	if err != nil {
		return err
	}
	id, err := inFlight(mb, onlyID)
	if err != nil {
		return err
	}
	why := reason
	if why == "" {
		why = "no reason given"
	}
	log := zerolog.New(env.Stderr).Level(zerolog.WarnLevel)
	_, err = agents.Skip(env.Root, mb.Agent, cfg.Human(), id, why, log, time.Now())
	var locked *mailbox.LockedError
	if !errors.As(err, &locked) {
		if err != nil {
			return fmt.Errorf("cannot skip %s: %w", id, err)
		}
		fmt.Fprintf(env.Stdout, "%s skipped: no runner was up; it is in %s's deadletter/\n", id, mb.Agent)
		fmt.Fprintf(env.Stdout, "bring it back with: agentctl retry %s\n", id)
		return nil
	}
	return askRunner(ctx, env, mb, cfg.Human(), id, why, locked.PID, wait)
}

// inFlight is the id of the message in flight in mb, the one named by only
// if set.
func inFlight(mb *mailbox.Mailbox, only string) (string, error) {
	entries, err := mb.List(mailbox.StateProcessing)
	if err != nil {
		return "", err
	}
	var ids []string
	for _, e := range entries {
		if e.Message.ID != "" && (only == "" || e.Message.ID == only) {
			ids = append(ids, e.Message.ID)
		}
	}
	switch {
	case len(ids) == 1:
		return ids[0], nil
	case len(ids) == 0 && only != "":
		return "", withHint(fmt.Errorf("%s is not in flight in %s's mailbox", only, mb.Agent), "see what is with 'agentctl inbox "+mb.Agent+" --state processing'")
	case len(ids) == 0:
		return "", withHint(fmt.Errorf("nothing is in flight for %s", mb.Agent), "'agentctl status' shows what each agent does; 'agentctl drop ID' settles a pending message")
	}
	return "", withHint(fmt.Errorf("%s has %d messages in flight: %s", mb.Agent, len(ids), strings.Join(ids, ", ")), "name one with --id ID")
}

// skipPoll is how often skip looks whether the runner let go.
const skipPoll = 100 * time.Millisecond

// askRunner leaves a skip request for the runner holding mb and waits for
// the message to leave processing/, then says where it went. If the runner
// goes away meanwhile, skip settles the message itself.
func askRunner(ctx context.Context, env *Env, mb *mailbox.Mailbox, human, id, why string, pid int, wait time.Duration) error {
	if err := mb.RequestSkip(mailbox.SkipRequest{ID: id, Reason: why, At: time.Now().UTC()}); err != nil {
		return err
	}
	// The request is for this turn only: whatever happens, it goes.
	defer mb.ClearSkipRequest(id)
	fmt.Fprintf(env.Stdout, "asked %s's runner (pid %d) to skip %s; waiting up to %s\n", mb.Agent, pid, id, wait)
	deadline := time.NewTimer(wait)
	defer deadline.Stop()
	tick := time.NewTicker(skipPoll)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return fmt.Errorf("interrupted; the skip request for %s is withdrawn", id)
		case <-deadline.C:
			return withHint(fmt.Errorf("%s's runner (pid %d) did not let go of %s within %s; the request is withdrawn", mb.Agent, pid, id, wait),
				fmt.Sprintf("run skip again with a longer --wait, or stop the runner (kill %d) and run skip again", pid))
		case <-tick.C:
		}
		found, err := mb.Locate(id)
		if err != nil {
			return err
		}
		if len(inStateEntries(found, mailbox.StateProcessing)) > 0 {
			// Still in flight. A runner that died meanwhile left it for us.
			if _, err := agents.Skip(env.Root, mb.Agent, human, id, why, zerolog.Nop(), time.Now()); err == nil {
				fmt.Fprintf(env.Stdout, "%s skipped: the runner stopped meanwhile; it is in %s's deadletter/\n", id, mb.Agent)
				fmt.Fprintf(env.Stdout, "bring it back with: agentctl retry %s\n", id)
				return nil
			}
			continue
		}
		return reportSkip(env, mb, id, found)
	}
}

// reportSkip says where the message went once it left processing/; only a
// dead letter with the skip reason is reported as skipped.
func reportSkip(env *Env, mb *mailbox.Mailbox, id string, found []mailbox.Entry) error {
	for _, e := range found {
		if e.State == mailbox.StateDead && strings.HasPrefix(e.Reason, agents.SkipReason("")) {
			fmt.Fprintf(env.Stdout, "%s skipped: it is in %s's %s\n", id, mb.Agent, e.File)
			fmt.Fprintf(env.Stdout, "bring it back with: agentctl retry %s\n", id)
			return nil
		}
	}
	if len(found) == 0 {
		return fmt.Errorf("%s left processing/ but is nowhere in %s's mailbox now", id, mb.Agent)
	}
	e := found[0]
	return withHint(fmt.Errorf("%s was not skipped: its turn ended first, and it is %s (%s)", id, e.State, e.File),
		fmt.Sprintf("'agentctl inbox %s --state %s' shows it", mb.Agent, e.State))
}

func inStateEntries(es []mailbox.Entry, state string) []mailbox.Entry {
	var out []mailbox.Entry
	for _, e := range es {
		if e.State == state {
			out = append(out, e)
		}
	}
	return out
}
