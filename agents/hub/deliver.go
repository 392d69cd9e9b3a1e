package hub

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/rs/zerolog"

	"github.com/agentctl/agentctl/internal/agentname"
	"github.com/agentctl/agentctl/internal/atomicfile"
	"github.com/agentctl/agentctl/internal/clock"
	"github.com/agentctl/agentctl/internal/layout"
	"github.com/agentctl/agentctl/mailbox"
	"github.com/agentctl/agentctl/mailbox/intake"
)

// IntakeSettings are what the hub's intake of forwarded messages needs.
type IntakeSettings struct {
	Root string
	// Known lists the mailboxes of the runtime (agents and people).
	Known []string
	// Senders are the agents seated on other machines: a forwarded
	// message must come from one of them, the one its subject names.
	Senders []string
	Conn    *nats.Conn
	Log     zerolog.Logger
	// Clock stamps a forwarded message that carries no time of its own,
	// as a file's modification time stamps one dropped in an inbox;
	// clock.System when nil.
	Clock clock.Clock
}

// Intake delivers into the hub's mailboxes what other machines forward,
// until ctx ends. A message is acknowledged only once it is in its inbox;
// one delivered before (a forwarder that published it twice) is refused
// by the mailbox as a duplicate, and acknowledged.
func Intake(ctx context.Context, s IntakeSettings) error {
	root, log, clk := s.Root, s.Log, clock.Or(s.Clock)
	js, err := jetstream.New(s.Conn)
	if err != nil {
		return err
	}
	var cons jetstream.Consumer
	err = retry(ctx, func() (err error) {
		cons, err = js.CreateOrUpdateConsumer(ctx, DeliverStream, jetstream.ConsumerConfig{
			Durable: "hub-intake", AckPolicy: jetstream.AckExplicitPolicy, AckWait: 30 * time.Second,
			Description: "agentctl hub: messages forwarded from other machines",
		})
		return err
	})
	if err != nil {
		return fmt.Errorf("cannot take forwarded messages: %w", err)
	}
	cc, err := cons.Consume(func(m jetstream.Msg) {
		err := deliverForwarded(root, s.Known, s.Senders, clk.Now(), m)
		var nowhere *nowhereError
		var spoofed *senderError
		switch {
		case errors.As(err, &nowhere):
			if err = keepUndeliverable(root, clk.Now(), m, nowhere.Error()); err == nil {
				log.Error().Str("event", "undeliverable").Str("subject", m.Subject()).Err(nowhere).Msg("forwarded message for no mailbox of this runtime kept in " + UndeliverableDir(root))
				_ = m.Ack()
				return
			}
		case errors.As(err, &spoofed):
			if err = keepUndeliverable(root, clk.Now(), m, spoofed.Error()); err == nil {
				log.Error().Str("event", "refused").Str("subject", m.Subject()).Err(spoofed).Msg("forwarded message refused, kept in " + UndeliverableDir(root))
				_ = m.Ack()
				return
			}
		}
		if err != nil {
			log.Error().Str("event", "intake").Err(err).Msg("forwarded message not delivered yet; offered again shortly")
			_ = m.NakWithDelay(time.Second)
			return
		}
		_ = m.Ack()
	})
	if err != nil {
		return fmt.Errorf("cannot take forwarded messages: %w", err)
	}
	<-ctx.Done()
	cc.Stop()
	return nil
}

// deliverForwarded puts one forwarded message in its mailbox, through the
// intake (intake.DeliverForwarded), once its subject names a sender seated
// on another machine and a mailbox of this runtime; the message must say
// it is from that sender. now stands for the file's modification time a
// dropped message would have.
func deliverForwarded(root string, known, senders []string, now time.Time, m jetstream.Msg) error {
	token, from, ok := strings.Cut(strings.TrimPrefix(m.Subject(), "agentctl.deliver."), ".")
	if !ok {
		return &senderError{subject: m.Subject(), reason: "the subject names no sender (agentctl.deliver.TO.FROM)"}
	}
	sender, err := agentname.Resolve(senders, from)
	if err != nil || sender != from {
		return &senderError{subject: m.Subject(), reason: fmt.Sprintf("%q is no agent seated on another machine, so no machine may send as it", from)}
	}
	agent, err := agentname.Resolve(known, token)
	if err != nil {
		// Only a publisher that is not agentctl addresses no mailbox of
		// the runtime; there is no inbox to keep it in.
		return &nowhereError{token, err}
	}
	mb, err := mailbox.Open(root, agent)
	if err != nil {
		return err
	}
	name := fmt.Sprintf("forwarded-%d%s", now.UnixNano(), layout.MessageSuffix)
	if meta, err := m.Metadata(); err == nil {
		name = fmt.Sprintf("forwarded-%d%s", meta.Sequence.Stream, layout.MessageSuffix)
	}
	return intake.DeliverForwarded(mb, intake.Forwarded{Data: m.Data(), Name: name, At: now}, func(msg mailbox.Message) error {
		if claimed, err := agentname.Resolve([]string{sender}, msg.From); err != nil || claimed != sender {
			return &senderError{subject: m.Subject(), reason: fmt.Sprintf("the message says it is from %q, but its machine may send only as %s", msg.From, sender)}
		}
		return nil
	})
}

// nowhereError is a forwarded message addressed to no mailbox here.
type nowhereError struct {
	to  string
	err error
}

func (e *nowhereError) Error() string { return fmt.Sprintf("forwarded to %q: %v", e.to, e.err) }

// senderError is a forwarded message whose sender its machine may not
// send as: a spoofed "from", or a subject of a publisher that is not
// agentctl.
type senderError struct{ subject, reason string }

func (e *senderError) Error() string { return "refused " + e.subject + ": " + e.reason }

// UndeliverableDir keeps what other machines forwarded to no mailbox of
// this runtime (their agentctl.yaml names an agent this one does not),
// each with the reason beside it.
func UndeliverableDir(root string) string { return layout.HubUndeliverable(root) }

func keepUndeliverable(root string, now time.Time, m jetstream.Msg, reason string) error {
	if err := atomicfile.MkdirAll(UndeliverableDir(root)); err != nil {
		return err
	}
	name := fmt.Sprintf("%d", now.UnixNano())
	if meta, err := m.Metadata(); err == nil {
		name = fmt.Sprintf("%d", meta.Sequence.Stream)
	}
	if err := atomicfile.WriteFile(layout.HubUndeliverableReason(root, name), []byte("subject: "+m.Subject()+"\nreason: "+reason+"\n")); err != nil {
		return err
	}
	return atomicfile.WriteFile(layout.HubUndeliverableMessage(root, name), m.Data())
}
