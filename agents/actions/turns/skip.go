package turns

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"github.com/agentctl/agentctl/agents"
	"github.com/agentctl/agentctl/agents/actions"
	"github.com/agentctl/agentctl/internal/clock"
	"github.com/agentctl/agentctl/mailbox"
)

// SkipRequest abandons the turn an agent is taking.
type SkipRequest struct {
	Agent string
	// ID names the message in flight, when processing/ holds several.
	ID     string
	Reason string
	// Wait bounds how long a running runner is given to let go.
	Wait time.Duration
	// OnAsk, if set, hears that the agent's runner (asked.RunnerPID) was
	// asked to skip message asked.ID, before the wait for it begins.
	OnAsk func(asked Skipped)
	// Log gets the warnings of a skip settled here; nothing when nil.
	Log io.Writer
}

// SkippedBy says who settled a skipped turn.
type SkippedBy int

const (
	// SkippedHere: no runner was up, and the skip settled the message.
	SkippedHere SkippedBy = iota
	// SkippedAfterRunner: the runner stopped while asked, and the skip
	// settled the message.
	SkippedAfterRunner
	// SkippedByRunner: the runner cancelled the turn when asked.
	SkippedByRunner
)

// Skipped is a turn abandoned: its message is a dead letter.
type Skipped struct {
	ID, Agent string
	By        SkippedBy
	// RunnerPID is the runner that was asked; 0 when none was up.
	RunnerPID int
	// File is the dead letter's file in the mailbox folder, as the runner
	// left it (SkippedByRunner); the others are in deadletter/.
	File string
}

// skipPoll is how often skip looks whether the runner let go.
const skipPoll = 100 * time.Millisecond

// Skip abandons the turn r.Agent is taking (message r.ID, or the one in
// flight), telling its runner or settling the message itself.
func (rt Runtime) Skip(ctx context.Context, r SkipRequest) (Skipped, error) {
	mb, err := rt.OpenAgentMailbox(r.Agent)
	if err != nil {
		return Skipped{}, err
	}
	id, err := InFlight(mb, r.ID)
	if err != nil {
		return Skipped{}, err
	}
	why := r.Reason
	if why == "" {
		why = "no reason given"
	}
	log := zerolog.Nop()
	if r.Log != nil {
		log = zerolog.New(r.Log).Level(zerolog.WarnLevel)
	}
	done := Skipped{ID: id, Agent: mb.Agent}
	_, err = agents.Skip(rt.Root, mb.Agent, rt.Config.Human(), id, why, log, clock.Or(rt.Clock).Now())
	var locked *mailbox.LockedError
	if !errors.As(err, &locked) {
		if err != nil {
			return Skipped{}, fmt.Errorf("cannot skip %s: %w", id, err)
		}
		return done, nil
	}
	done.RunnerPID = locked.PID
	return rt.askRunner(ctx, mb, r, done, why)
}

// InFlight is the id of the message in flight in mb, the one named by only
// if set.
func InFlight(mb *mailbox.Mailbox, only string) (string, error) {
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
		return "", actions.WithHint(fmt.Errorf("%s is not in flight in %s's mailbox", only, mb.Agent), "see what is with 'agentctl inbox "+mb.Agent+" --state processing'")
	case len(ids) == 0:
		return "", actions.WithHint(fmt.Errorf("nothing is in flight for %s", mb.Agent), "'agentctl status' shows what each agent does; 'agentctl drop ID' settles a pending message")
	}
	return "", actions.WithHint(fmt.Errorf("%s has %d messages in flight: %s", mb.Agent, len(ids), strings.Join(ids, ", ")), "name one with --id ID")
}

// askRunner leaves a skip request for the runner holding mb and waits for
// the message to leave processing/, then says where it went. If the runner
// goes away meanwhile, skip settles the message itself.
func (rt Runtime) askRunner(ctx context.Context, mb *mailbox.Mailbox, r SkipRequest, done Skipped, why string) (Skipped, error) {
	c := clock.Or(rt.Clock)
	id, pid := done.ID, done.RunnerPID
	if err := mb.RequestSkip(mailbox.SkipRequest{ID: id, Reason: why, At: c.Now().UTC()}); err != nil {
		return Skipped{}, err
	}
	// The request is for this turn only: whatever happens, it goes.
	defer mb.ClearSkipRequest(id)
	if r.OnAsk != nil {
		r.OnAsk(done)
	}
	deadline := c.At(c.Now().Add(r.Wait))
	for {
		select {
		case <-ctx.Done():
			return Skipped{}, fmt.Errorf("interrupted; the skip request for %s is withdrawn", id)
		case <-deadline:
			return Skipped{}, actions.WithHint(fmt.Errorf("%s's runner (pid %d) did not let go of %s within %s; the request is withdrawn", mb.Agent, pid, id, r.Wait),
				fmt.Sprintf("run skip again with a longer --wait, or stop the runner (kill %d) and run skip again", pid))
		case <-c.At(c.Now().Add(skipPoll)):
		}
		found, err := mb.Locate(id)
		if err != nil {
			return Skipped{}, err
		}
		if len(inStateEntries(found, mailbox.StateProcessing)) > 0 {
			// Still in flight. A runner that died meanwhile left it for us.
			if _, err := agents.Skip(rt.Root, mb.Agent, rt.Config.Human(), id, why, zerolog.Nop(), c.Now()); err == nil {
				done.By = SkippedAfterRunner
				return done, nil
			}
			continue
		}
		return skippedBy(mb, done, found)
	}
}

// skippedBy says where the message went once it left processing/; only a
// dead letter with the skip reason counts as skipped.
func skippedBy(mb *mailbox.Mailbox, done Skipped, found []mailbox.Entry) (Skipped, error) {
	id := done.ID
	for _, e := range found {
		if e.State == mailbox.StateDead && strings.HasPrefix(e.Reason, agents.SkipReason("")) {
			done.By, done.File = SkippedByRunner, e.File
			return done, nil
		}
	}
	if len(found) == 0 {
		return Skipped{}, fmt.Errorf("%s left processing/ but is nowhere in %s's mailbox now", id, mb.Agent)
	}
	e := found[0]
	return Skipped{}, actions.WithHint(fmt.Errorf("%s was not skipped: its turn ended first, and it is %s (%s)", id, e.State, e.File),
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
