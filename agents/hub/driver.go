package hub

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/rs/zerolog"

	"github.com/agentctl/agentctl/cursor"
	"github.com/agentctl/agentctl/internal/clock"
)

// Driver takes an agent's turns on its seat on another machine: it asks
// through the turns stream and waits for the answer in the replies stream.
// It is the cursor.Driver of the runner the hub keeps for a remote agent,
// so everything but the turn (the mailbox, policies, guardrails, effects)
// happens next to the runtime folder, exactly once, as for a local agent.
//
// A turn never times out here: while the seat is away its ask waits in
// the stream, as a message waits in an inbox while its runner is stopped.
type Driver struct {
	// Clock stamps the asks (Ask.AskedAt); clock.System when nil. Set it
	// before the first Run.
	Clock clock.Clock

	agent   string
	nc      *nats.Conn
	js      jetstream.JetStream
	replies jetstream.Consumer
	log     zerolog.Logger
}

// NewDriver sets up the hub's side of agent's seat. The streams must exist
// (EnsureStreams).
func NewDriver(ctx context.Context, nc *nats.Conn, agent string, log zerolog.Logger) (*Driver, error) {
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, err
	}
	var cons jetstream.Consumer
	err = retry(ctx, func() (err error) {
		cons, err = js.CreateOrUpdateConsumer(ctx, RepliesStream, jetstream.ConsumerConfig{
			Durable: "hub-" + agent, FilterSubject: replySubject(agent),
			AckPolicy: jetstream.AckExplicitPolicy, AckWait: 30 * time.Second,
			Description: "agentctl hub: answers of " + agent + "'s seat",
		})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("cannot read the answers of %s's seat: %w", agent, err)
	}
	d := &Driver{agent: agent, nc: nc, js: js, replies: cons, log: log.With().Str("agent", agent).Logger()}
	// A runner starting asks again for the turn it resumes, if any: an ask
	// left from before is of a turn settled since without the seat (skipped
	// while no hub ran, dead-lettered), which a seat coming back must not
	// take.
	if err := d.purgeAsks(ctx); err != nil {
		d.log.Warn().Err(err).Msg("cannot withdraw the asks left from before; a seat may take a turn settled without it")
	}
	return d, nil
}

// Run asks the seat for t's reply and waits for it. A turn asked again
// (t.Resume, a restarted hub) is answered by the seat from its journal: it
// is never taken twice.
func (d *Driver) Run(ctx context.Context, t cursor.Turn) (string, error) {
	if t.ID == "" {
		return "", errors.New("a turn on another machine needs an id")
	}
	ask := Ask{Turn: t.ID, Ask: newAskID(t.ID), Prompt: t.Prompt, NewChat: t.NewChat, Thread: t.Thread, Resume: t.Resume, AskedAt: clock.Or(d.Clock).Now().UTC()}
	w := &wait{turn: t.ID, answers: make(chan Answer, 1), stages: make(chan string, 8), done: make(chan struct{})}
	defer close(w.done)
	// Before the ask goes out, so that the seat finds someone listening.
	answerSub, err := d.nc.Subscribe(answerSubject(d.agent), w.onCoreAnswer)
	if err != nil {
		return "", fmt.Errorf("cannot read the answers of %s's seat: %w", d.agent, err)
	}
	defer answerSub.Unsubscribe()
	stageSub, err := d.nc.Subscribe(stageSubject(d.agent), w.onStage)
	if err != nil {
		return "", fmt.Errorf("cannot follow the turn on %s's seat: %w", d.agent, err)
	}
	defer stageSub.Unsubscribe()
	consuming, err := d.replies.Consume(w.onAnswer, jetstream.PullMaxMessages(8))
	if err != nil {
		return "", fmt.Errorf("cannot read the answers of %s's seat: %w", d.agent, err)
	}
	defer consuming.Stop()

	data, _ := json.Marshal(ask)
	if err := overPayload(d.nc, data, "the ask carrying the prompt"); err != nil {
		return "", fmt.Errorf("%w: cannot ask %s's seat for the turn: %w", cursor.ErrPromptRefused, d.agent, err)
	}
	if err := retry(ctx, func() error {
		_, err := d.js.Publish(ctx, turnSubject(d.agent), data, jetstream.WithMsgID(ask.Ask))
		return err
	}); err != nil {
		if ctx.Err() != nil {
			// The server may have the ask, and the seat be taking it,
			// with its acknowledgement still on the way.
			return "", d.ended(ctx, ask)
		}
		return "", fmt.Errorf("cannot ask %s's seat for the turn: %w", d.agent, err)
	}
	d.log.Info().Str("event", "asked").Str("turn", t.ID).Bool("resume", t.Resume).Msg("turn handed to the seat")
	if t.OnStage != nil {
		if err := t.OnStage(cursor.StageHanded); err != nil {
			return "", err
		}
	}

	submitted := t.Resume
	markSubmitted := func() error {
		if submitted || t.OnStage == nil {
			submitted = true
			return nil
		}
		submitted = true
		return t.OnStage(cursor.StageSubmitted)
	}
	for {
		select {
		case <-ctx.Done():
			return "", d.ended(ctx, ask)
		case s := <-w.stages:
			if s == string(cursor.StageSubmitted) {
				if err := markSubmitted(); err != nil {
					d.cancel(ask)
					return "", err
				}
			}
		case a := <-w.answers:
			if a.Usage != nil && t.OnUsage != nil {
				t.OnUsage(*a.Usage)
			}
			err := a.err()
			switch a.stage() {
			case cursor.StagePressed:
				// Only the key is known to have gone, as the runner
				// records it of a local chat.
				if !submitted && t.OnStage != nil {
					if err := t.OnStage(cursor.StagePressed); err != nil {
						return "", err
					}
				}
			case cursor.StageSubmitted:
				if err := markSubmitted(); err != nil {
					return "", err
				}
			}
			if err != nil {
				return "", err
			}
			return a.Reply, nil
		}
	}
}

// ended is Run's error once ctx has ended. A turn abandoned is stopped on
// the seat; one cut off by a shutdown goes on there, and the next ask of
// it gets the reply.
func (d *Driver) ended(ctx context.Context, ask Ask) error {
	if errors.Is(context.Cause(ctx), cursor.ErrAbandoned) {
		d.cancel(ask)
		d.withdraw(ask)
	}
	return ctx.Err()
}

// withdraw takes an abandoned turn's ask out of the stream: a seat away
// now, which the cancel never reaches, would take it when it comes back,
// and work a turn a person skipped.
func (d *Driver) withdraw(ask Ask) {
	// Real time, not d.Clock: this waits on the server alone, which does
	// not move with a test's clock (see the package doc).
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := d.purgeAsks(ctx); err != nil {
		d.log.Warn().Err(err).Str("turn", ask.Turn).Msg("cannot withdraw the abandoned turn's ask; a seat that comes back may take it")
	}
}

// purgeAsks takes every ask of the agent out of the turns stream.
func (d *Driver) purgeAsks(ctx context.Context) error {
	s, err := d.js.Stream(ctx, TurnsStream)
	if err != nil {
		return err
	}
	return s.Purge(ctx, jetstream.WithPurgeSubject(turnSubject(d.agent)))
}

// cancel tells the seat nobody waits for the turn of ask; a lost cancel
// only costs the seat the rest of a turn nobody reads.
func (d *Driver) cancel(ask Ask) {
	data, _ := json.Marshal(Cancel{Turn: ask.Turn, Ask: ask.Ask})
	if err := d.nc.Publish(cancelSubject(d.agent), data); err != nil {
		d.log.Warn().Err(err).Str("turn", ask.Turn).Msg("cannot tell the seat the turn was abandoned")
	}
}

// wait is what one Run listens for. Answers to other turns are for turns
// the runner has settled already (a redelivery, an ask answered twice):
// they are acknowledged and dropped.
type wait struct {
	turn    string
	answers chan Answer
	stages  chan string
	done    chan struct{} // closed when Run returns
}

// onCoreAnswer takes an answer the seat sent straight to the hub, sparing
// the replies stream's round trip and the server's synced write: the
// seat's journal holds the answer durably already, and the seat lets go
// of the ask only once told here that the runner has it. An answer Run
// does not take (it has returned, or the answer is another turn's) is
// refused, and the seat sends it through the stream, as before.
func (w *wait) onCoreAnswer(m *nats.Msg) {
	if !strings.HasPrefix(m.Reply, "_INBOX.") {
		// The hub answers with every permission: a reply subject of the
		// machine's choosing ($JS.API.STREAM.PURGE...) would have it act
		// on the swarm's streams. A seat's request always names an inbox.
		return
	}
	var a Answer
	if err := json.Unmarshal(m.Data, &a); err != nil || a.Turn != w.turn {
		_ = m.Respond(nil)
		return
	}
	select {
	case <-w.done:
		_ = m.Respond(nil)
		return
	default:
	}
	select {
	case w.answers <- a:
		_ = m.Respond([]byte(answerTaken))
	default:
		_ = m.Respond([]byte(answerTaken)) // a second answer to the same turn
	}
}

func (w *wait) onAnswer(m jetstream.Msg) {
	var a Answer
	if err := json.Unmarshal(m.Data(), &a); err != nil || a.Turn != w.turn {
		_ = m.Ack()
		return
	}
	select {
	case w.answers <- a:
		// Acknowledged once Run has it: if the hub dies before the runner
		// records the reply, the next ask is answered from the journal.
		_ = m.Ack()
	default:
		_ = m.Ack() // a second answer to the same turn
	}
}

func (w *wait) onStage(m *nats.Msg) {
	var s Stage
	if json.Unmarshal(m.Data, &s) != nil || s.Turn != w.turn {
		return
	}
	select {
	case w.stages <- s.Stage:
	default:
	}
}
