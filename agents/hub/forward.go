package hub

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/rs/zerolog"

	"github.com/agentctl/agentctl/agents/receipt"
	"github.com/agentctl/agentctl/internal/agentname"
	"github.com/agentctl/agentctl/internal/clock"
	"github.com/agentctl/agentctl/mailbox"
	"github.com/agentctl/agentctl/mailbox/intake"
)

// ForwardSettings are what the forwarder of a seat's machine needs.
type ForwardSettings struct {
	Root, Agent string
	// Senders are the agents seated on this machine, the only ones it may
	// send as (the hub refuses the rest); a message from anyone else is
	// dead-lettered here, with the reason.
	Senders  []string
	Consumer mailbox.Options
	Intake   intake.Options
	Watch    mailbox.WatchOptions
	Conn     *nats.Conn
	Log      zerolog.Logger
	// Clock stamps the claims and receipts, paces the mailbox's consumer,
	// its lock, its watcher and its intake (it replaces any clock of
	// Consumer, Watch or Intake) and ForwardOthers' tries at a mailbox
	// another seat holds; clock.System when nil.
	Clock clock.Clock

	shared bool // another seat may forward this mailbox (ForwardOthers)
}

// Forward carries the messages dropped into the agent's mailbox on this
// machine (its inbox folder, inbox.json, the places old writers use) to
// the hub's: the seat's machine keeps no turn of its own. Each message is
// claimed as a runner claims it, published with its id as JetStream's
// message id, and archived here with the outcome "forwarded" only once the
// server has it; a forwarder killed in between publishes it again, and the
// duplicate is dropped by the server or by the hub's mailbox.
//
// It holds the mailbox's consumer lock as its runner, so `agentctl run`
// without --hub cannot serve the same agent on this machine at once.
func Forward(ctx context.Context, s ForwardSettings) error {
	if err := mailbox.Create(s.Root, s.Agent); err != nil {
		return err
	}
	mb, err := mailbox.Open(s.Root, s.Agent)
	if err != nil {
		return err
	}
	mb.Clock = s.Clock
	js, err := jetstream.New(s.Conn)
	if err != nil {
		return err
	}
	log := s.Log.With().Str("agent", s.Agent).Logger()
	clk := clock.Or(s.Clock)
	opts := s.Consumer
	opts.Runner, opts.ConsumerWait, opts.Clock = true, 2*time.Second, clk
	if !s.shared {
		opts.Wait = ctx // the agent's own mailbox is waited for, and said so
		opts.OnWait = func(holder string) {
			log.Warn().Str("event", "waiting").Str("reason", holder).Msg("waiting for the mailbox's consumer lock")
		}
	}
	opts.OnEvent = func(e mailbox.Event) {
		log.Info().Str("event", e.Kind).Str("id", e.ID).Str("file", e.File).Str("reason", e.Reason).Msg("mailbox " + e.Kind)
	}
	c, err := mb.Consume(opts, clk.Now())
	if err != nil {
		return err
	}
	defer c.Close()
	watch := s.Watch
	watch.Clock = clk
	w, err := mailbox.Watch(mb, watch)
	if err != nil {
		return err
	}
	defer w.Close()
	inOpts := s.Intake
	inOpts.Stop = ctx.Done() // a long ingest stops between two messages
	inOpts.Clock = clk
	in := intake.New(c, inOpts)
	if err := in.Scan(clk.Now()); err != nil {
		return err
	}
	// A stop while a message is on its way leaves it in flight, to be
	// sent again (its id keeps the hub from taking it twice): a stop, not
	// a failure.
	return stopped(ctx, mailbox.Serve(ctx, c, in, w.C, mailbox.Worker{
		Handle: func(ctx context.Context, cl *mailbox.Claim) error {
			msg := cl.Message
			refuse := func(reason string) error {
				log.Error().Str("event", "refused").Str("id", msg.ID).Str("from", msg.From).Msg(reason)
				return c.Deadletter(cl, reason, clk.Now())
			}
			from, err := agentname.Resolve(s.Senders, msg.From)
			if err != nil {
				return refuse(fmt.Sprintf("this machine may send only as the agents seated on it (%s), not as %q; send it from the hub's machine", strings.Join(s.Senders, ", "), msg.From))
			}
			encoded := msg.Encode()
			if err := overPayload(s.Conn, encoded, "the message"); err != nil {
				return refuse(err.Error() + "; it cannot be forwarded to the hub")
			}
			subject := deliverSubject(s.Agent, from)
			err = retry(ctx, func() error {
				_, err := js.Publish(ctx, subject, encoded, jetstream.WithMsgID(s.Agent+"/"+msg.ID))
				if err != nil {
					// The server refuses the subject in the background, and
					// the publish only times out: without this, a sender the
					// hub does not seat on this machine is tried for ever.
					if e := permissionRefused(s.Conn, `"`+subject+`"`); e != nil {
						return refusal{e}
					}
				}
				return err
			})
			var refused refusal
			if errors.As(err, &refused) {
				return refuse(fmt.Sprintf("the hub does not let this machine send as %s (%v); set %s's machine (agents[].machine) alike in both machines' agentctl.yaml, or send it from the hub's machine", from, refused.error, from))
			}
			if err != nil {
				return fmt.Errorf("cannot forward %s to the hub: %w", msg.ID, err)
			}
			log.Info().Str("event", "forwarded").Str("id", msg.ID).Str("from", msg.From).Msg("message forwarded to the hub")
			data, err := receipt.Encode(receipt.Data{To: "hub"})
			if err != nil {
				return err
			}
			return c.Complete(cl, mailbox.Receipt{Outcome: "forwarded", Data: data}, clk.Now())
		},
	}))
}

// ForwardOthers forwards, from this machine, the mailboxes of everyone
// whose turns are not taken here (agents of other machines, people), so
// that a message dropped into any inbox folder reaches the hub. Several
// seats on one machine share the work: each mailbox is forwarded by the
// seat that holds its lock, and the others try again now and then, in
// case that seat stops.
func ForwardOthers(ctx context.Context, s ForwardSettings, names []string) error {
	var wg sync.WaitGroup
	errs := make(chan error, len(names))
	for _, name := range names {
		wg.Add(1)
		go func() {
			defer wg.Done()
			one := s
			one.Agent, one.Intake.Watch, one.Watch.Extra, one.shared = name, nil, nil, true
			for ctx.Err() == nil {
				err := Forward(ctx, one)
				var locked *mailbox.LockedError
				if !errors.As(err, &locked) {
					if err != nil {
						errs <- fmt.Errorf("cannot forward the mailbox of %s: %w", name, err)
					}
					return
				}
				_ = pause(ctx, clock.Or(s.Clock), othersRetry)
			}
		}()
	}
	wg.Wait()
	close(errs)
	var all []error
	for err := range errs {
		all = append(all, err)
	}
	return errors.Join(all...)
}

// othersRetry is how often a seat tries to take over forwarding a mailbox
// another seat of the machine forwards.
const othersRetry = 30 * time.Second
