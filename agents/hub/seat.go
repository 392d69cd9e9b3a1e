package hub

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/rs/zerolog"

	"github.com/agentctl/agentctl/agents/hub/hubseats"
	"github.com/agentctl/agentctl/cursor"
	"github.com/agentctl/agentctl/internal/clock"
)

// SeatSettings are everything a seat needs, as plain values.
type SeatSettings struct {
	Agent   string
	Machine string // this machine's name, told to the hub with every answer
	Driver  cursor.Driver
	Journal *Journal
	Conn    *nats.Conn
	// Beat is how often the seat tells the hub it is there.
	Beat time.Duration
	// Keep is how long the journal keeps a turn's record.
	Keep time.Duration
	// Grace lets a turn under way finish after ctx ends (run.shutdown_grace),
	// as a runner's does; one cut off is resumed when the seat is back.
	Grace time.Duration
	// Root, when set, is this machine's runtime folder: the seat shows
	// itself in the agent's status.json there, for 'agentctl status'.
	Root string
	Log  zerolog.Logger
	// Clock times the beats and stamps the journal and the answers;
	// clock.System when nil.
	Clock clock.Clock
}

// Defaults of a seat.
const (
	DefaultBeat = hubseats.DefaultBeat
	DefaultKeep = 7 * 24 * time.Hour
	// askAckWait is how long the server waits for a word from the seat
	// before it offers the ask again; a working seat says "in progress"
	// three times as often.
	askAckWait = 15 * time.Second
	// answerWait is how long a seat waits for the hub to take an answer
	// sent straight to it before it sends it through the replies stream.
	answerWait = 5 * time.Second
	// handOverPause is how long, after the hub did not take an answer in
	// answerWait, the seat sends its answers through the replies stream
	// only: a hub stalled once (a loaded machine) soon gets them straight
	// again, and one whose server does not let the seat send there costs
	// a wait of answerWait this seldom.
	handOverPause = 10 * time.Minute
)

// seat is the far end of Driver: it takes the asks of its agent's turns,
// one at a time, drives the local window or command, and answers.
type seat struct {
	s   SeatSettings
	js  jetstream.JetStream
	log zerolog.Logger

	// answerWait is how long handOver waits for the hub: the const
	// answerWait, shorter in tests.
	answerWait time.Duration

	mu         sync.Mutex
	handOverAt time.Time          // by the seat's clock: answers go through the replies stream only until then
	current    string             // the turn being taken, "" when idle
	currentAsk string             // the ask of it
	cancel     context.CancelFunc // ends the current turn
	dropped    bool               // the hub cancelled the current turn
	abandoned  []string           // asks the hub cancelled before they came, oldest first
	started    time.Time
}

// RunSeat serves the agent's turns until ctx ends. It waits for the hub to
// create the streams, and rides out the hub's restarts and network cuts: a
// turn whose answer cannot be sent yet stays in the journal, and the ask
// comes back to be answered from there.
func RunSeat(ctx context.Context, s SeatSettings) error {
	if s.Beat <= 0 {
		s.Beat = DefaultBeat
	}
	if s.Keep <= 0 {
		s.Keep = DefaultKeep
	}
	s.Clock = clock.Or(s.Clock)
	js, err := jetstream.New(s.Conn)
	if err != nil {
		return err
	}
	st := &seat{s: s, js: js, log: s.Log.With().Str("agent", s.Agent).Logger(), started: s.Clock.Now().UTC(), answerWait: answerWait}
	if n, err := s.Journal.Prune(s.Clock.Now().Add(-s.Keep)); err != nil {
		return err
	} else if n > 0 {
		st.log.Info().Str("event", "pruned").Int("turns", n).Msg("old turns removed from the seat's journal")
	}
	if err := WaitStreams(ctx, js, func(err error) {
		st.log.Warn().Str("event", "waiting").Err(err).Msg("waiting for the hub to create its streams ('agentctl hub' on the hub's machine)")
	}); err != nil {
		return err
	}
	asks, err := st.asks(ctx)
	if err != nil {
		return err
	}
	sub, err := s.Conn.Subscribe(cancelSubject(s.Agent), st.onCancel)
	if err != nil {
		return fmt.Errorf("cannot listen for the hub's cancels: %w", err)
	}
	defer sub.Unsubscribe()
	var wg sync.WaitGroup
	beatCtx, stopBeats := context.WithCancel(ctx)
	wg.Add(1)
	go func() { defer wg.Done(); st.beats(beatCtx) }()
	defer func() { stopBeats(); wg.Wait() }()

	st.log.Info().Str("event", "started").Str("machine", s.Machine).Msg("seat taking turns from the hub")
	if err := st.recover(ctx); err != nil {
		return stopped(ctx, err)
	}
	return st.serveAsks(ctx, asks)
}

// asks is the seat's durable consumer of its agent's asks, one at a time.
func (st *seat) asks(ctx context.Context) (jetstream.Consumer, error) {
	agent := st.s.Agent
	if _, err := st.js.Consumer(ctx, RepliesStream, "hub-"+agent); errors.Is(err, jetstream.ErrConsumerNotFound) {
		st.log.Warn().Str("event", "unknown-to-hub").Msg("the hub keeps no runner for " + agent + " yet, so no turns come: set its machine (agents[].machine) in the hub's agentctl.yaml to another machine than hub.machine, and restart 'agentctl hub'")
	}
	var asks jetstream.Consumer
	err := retry(ctx, func() (err error) {
		asks, err = st.js.CreateOrUpdateConsumer(ctx, TurnsStream, jetstream.ConsumerConfig{
			Durable: "seat-" + agent, FilterSubject: turnSubject(agent),
			AckPolicy: jetstream.AckExplicitPolicy, AckWait: askAckWait, MaxAckPending: 1,
			Description: "agentctl seat of " + agent,
		})
		if err != nil {
			// The server refuses the request in the background, and the
			// request itself only times out: without this, a machine's
			// key that does not seat this agent is tried for ever.
			if e := permissionRefused(st.s.Conn, ".seat-"+agent); e != nil {
				return refusal{fmt.Errorf("the hub does not let these credentials take %s's turns: they are not those of the machine agents[].machine names for %s in the hub's agentctl.yaml (%w)", agent, agent, e)}
			}
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("cannot take %s's turns from the hub: %w", agent, err)
	}
	return asks, nil
}

// serveAsks takes the asks as the server offers them until ctx ends.
func (st *seat) serveAsks(ctx context.Context, asks jetstream.Consumer) error {
	it, err := asks.Messages(jetstream.PullMaxMessages(1))
	if err != nil {
		return fmt.Errorf("cannot take %s's turns from the hub: %w", st.s.Agent, err)
	}
	defer it.Stop()
	defer context.AfterFunc(ctx, it.Stop)()
	for ctx.Err() == nil {
		m, err := it.Next()
		if errors.Is(err, jetstream.ErrMsgIteratorClosed) && ctx.Err() == nil {
			if e := st.s.Conn.LastError(); e != nil && isAuthError(e) {
				// Its credentials were withdrawn: only a person mends that.
				return refusal{fmt.Errorf("the hub no longer accepts this machine's credentials for %s: %w", st.s.Agent, e)}
			}
			return fmt.Errorf("the hub's server stopped offering %s's turns: %w", st.s.Agent, err)
		}
		if err != nil {
			if ctx.Err() == nil {
				st.log.Debug().Err(err).Msg("cannot take the next ask; trying again")
				// Real time: the next try is for the server's sake.
				_ = pause(ctx, clock.System, time.Second)
			}
			continue
		}
		if err := st.take(ctx, m); err != nil {
			return stopped(ctx, err)
		}
	}
	return nil
}

// recover finishes the turns an earlier seat was taking when it stopped,
// before the server offers their asks again (it waits askAckWait first),
// and sends their answers.
func (st *seat) recover(ctx context.Context) error {
	open, err := st.s.Journal.Unanswered()
	if err != nil {
		return err
	}
	for _, e := range open {
		ask := *e.Ask
		log := st.log.With().Str("turn", ask.Turn).Logger()
		log.Info().Str("event", "recovering").Str("stage", e.Stage).Msg("finishing the turn an earlier seat was taking")
		a, ok, err := st.serve(ctx, ask, nil, log)
		if err != nil || !ok {
			return err
		}
		sendCtx, cancel := st.afterStop(ctx)
		err = st.publish(sendCtx, ask, a)
		cancel()
		if err != nil {
			return st.unsentAtStop(ctx, ask, err)
		}
	}
	return nil
}

// unsentAtStop is the error of an answer that could not be sent: none
// when the seat is stopping, since the journal keeps the answer for the
// hub's ask when the seat is back.
func (st *seat) unsentAtStop(ctx context.Context, ask Ask, err error) error {
	if ctx.Err() == nil {
		return err
	}
	st.log.Warn().Str("event", "unsent").Str("turn", ask.Turn).Err(err).Msg("the seat stopped before the hub had the answer; it is sent when the hub asks again")
	return nil
}

// afterStop is the context that sends an answer: ctx, or once ctx has
// ended (the turn finished in the seat's shutdown grace) answerWait more,
// so that the hub gets the answer at once, the seat stopping or not; the
// journal keeps it meanwhile.
func (st *seat) afterStop(ctx context.Context) (context.Context, context.CancelFunc) {
	if ctx.Err() == nil {
		return ctx, func() {}
	}
	return context.WithTimeout(context.WithoutCancel(ctx), st.answerWait)
}

// take answers one ask: from the journal when the turn was taken already,
// else by taking it.
func (st *seat) take(ctx context.Context, m jetstream.Msg) error {
	var ask Ask
	if err := json.Unmarshal(m.Data(), &ask); err != nil || ask.Turn == "" || ask.Ask == "" {
		st.log.Error().Str("event", "refused").Err(err).Msg("an ask that cannot be read was dropped")
		return m.Term()
	}
	log := st.log.With().Str("turn", ask.Turn).Logger()
	a, ok, err := st.serve(ctx, ask, m, log)
	if err != nil || !ok {
		return err
	}
	sendCtx, cancel := st.afterStop(ctx)
	defer cancel()
	if err := st.publish(sendCtx, ask, a); err != nil {
		return st.unsentAtStop(ctx, ask, err)
	}
	// A confirmed ack: one lost with a cluster's leader would leave the
	// seat idle until the server offers the ask again.
	ackCtx, cancelAck := context.WithTimeout(sendCtx, askAckWait)
	defer cancelAck()
	if err := retry(ackCtx, func() error { return m.DoubleAck(ackCtx) }); err != nil {
		log.Warn().Err(err).Msg("answer sent but the ask not let go; it will be answered again from the journal")
	}
	return nil
}

// serve finds or makes the answer to ask. ok is false when the turn was
// cut off (by the hub, or by the seat stopping): the record stays, and the
// next ask of the turn resumes it. m, when there is one, is kept alive
// while the turn lasts.
func (st *seat) serve(ctx context.Context, ask Ask, m jetstream.Msg, log zerolog.Logger) (a Answer, ok bool, err error) {
	e, found, err := st.s.Journal.Load(ask.Turn)
	if err != nil {
		return a, false, err
	}
	if found && e.Answer != nil {
		if replayable(*e.Answer, ask) {
			log.Info().Str("event", "answered-again").Msg("turn answered from the journal; not taken again")
			return *e.Answer, true, nil
		}
		log.Info().Str("event", "taking-again").Msg("the turn failed here before the agent had its prompt, and the hub asks again: taken afresh")
		e = Entry{Turn: ask.Turn, Stage: stageReceived, Received: e.Received}
	}
	now := st.s.Clock.Now().UTC()
	if !found {
		e = Entry{Turn: ask.Turn, Stage: stageReceived, Received: now}
	}
	e.Ask, e.Updated = &ask, now
	// A turn new to the journal is first written when the agent gets its
	// prompt (started, pressed): until then a crash loses nothing the
	// server does not offer again, and the ask it offers is taken afresh,
	// as a record that says only "received" would have it. A record of a
	// turn the agent may have takes the new ask now, for recover.
	if found {
		if err := st.s.Journal.Save(e); err != nil {
			return a, false, err
		}
	}
	if ctx.Err() != nil {
		// Stopping: a turn not begun gets no grace; its ask is offered
		// again when the seat is back.
		return a, false, nil
	}
	a, taken := st.run(ctx, m, ask, &e, log)
	if !taken {
		if !found && !e.Delivered() {
			// Cut off before the agent had the prompt, and never written:
			// the ask, not acknowledged, is offered again and taken afresh.
			if st.wasDropped() && m != nil {
				_ = m.Ack()
			}
			return a, false, nil
		}
		if st.wasDropped() {
			// Nobody waits for it: no seat resumes it unasked. The hub
			// asks again if it comes back to the turn.
			e.Ask = nil
			if m != nil {
				_ = m.Ack()
			}
		}
		e.Updated = st.s.Clock.Now().UTC()
		return a, false, st.s.Journal.Save(e)
	}
	e.Stage, e.Answer, e.Unsent, e.Child, e.Updated = stageAnswered, &a, true, nil, st.s.Clock.Now().UTC()
	return a, true, st.s.Journal.Save(e)
}

// replayable reports whether saved, a turn's answer in the journal, is
// the one to give ask: a reply; a failure once the agent had the prompt,
// which taking the turn again could send twice; or the answer to this very
// ask, which the hub has not had yet. A failure before the agent had the
// prompt (its window missing, a model API refusing) that the hub saw and
// asks again after waiting is not: replaying it would fail the turn for
// ever without trying.
func replayable(saved Answer, ask Ask) bool {
	return saved.Error == "" || saved.Submitted || saved.Ask == ask.Ask
}

// run takes the turn with the local driver. taken is false when the turn
// was cut off.
func (st *seat) run(ctx context.Context, m jetstream.Msg, ask Ask, e *Entry, log zerolog.Logger) (a Answer, taken bool) {
	a = Answer{Turn: ask.Turn, Ask: ask.Ask, Machine: st.s.Machine}
	if e.Child != nil {
		ended, err := cursor.EndChild(*e.Child)
		if err != nil {
			a.Error, a.Kind, a.Submitted = fmt.Sprintf("the command an earlier seat started for this turn (pid %d) could not be ended: %v; it was not run again, to avoid running it twice at once", e.Child.PID, err), "failed", true
			a.At = st.s.Clock.Now().UTC()
			return a, true
		}
		if ended {
			log.Warn().Str("event", "ended-leftover").Int("pid", e.Child.PID).Msg("ended the command an earlier seat left at work on this prompt")
		}
	}
	turnCtx, cancel := cursor.GraceContext(ctx, st.s.Grace)
	defer cancel(nil)
	if !st.begin(ask, func() { cancel(nil) }) {
		log.Warn().Str("event", "dropped").Msg("the hub abandoned the turn before its ask came")
		return a, false
	}
	defer st.end()
	if m != nil {
		defer keepalive(turnCtx, st.s.Clock, m)()
	}

	record := func(stage string, change func()) error {
		change()
		e.Stage, e.Updated = stage, st.s.Clock.Now().UTC()
		return st.s.Journal.Save(*e)
	}
	t := cursor.Turn{
		ID: ask.Turn, Prompt: ask.Prompt, NewChat: ask.NewChat, Thread: ask.Thread,
		Resume: ask.Resume || e.Delivered(), ResumeState: e.ResumeState,
		OnStart: func(c cursor.Child) error {
			if err := record(stageStarted, func() { e.Child = &c }); err != nil {
				return err
			}
			st.tell(ask.Turn, stageSubmitted) // a started command has the prompt
			return nil
		},
		OnStage: func(s cursor.Stage) error {
			switch {
			case s == cursor.StagePressed:
				// The agent may have the prompt from the key on: a seat
				// started after a crash resumes the turn. The key goes only
				// once that is on record, so a record that fails leaves
				// the turn where it was: the prompt was not sent.
				was := e.Stage
				if err := record(stagePressed, func() {}); err != nil {
					e.Stage = was
					return err
				}
				return nil
			case s != cursor.StageSubmitted || e.Stage == stageStarted:
				// A started command has the prompt already, recorded so
				// in OnStart: its "submitted" says nothing new.
				return nil
			}
			if err := record(stageSubmitted, func() {}); err != nil {
				return err
			}
			st.tell(ask.Turn, stageSubmitted)
			return nil
		},
		OnResumeState: func(state string) error {
			// Written with the press of the key that sends the prompt,
			// which follows: a turn cut off before it is taken afresh,
			// and leaves no record a seat would take up unasked.
			e.ResumeState = state
			return nil
		},
		OnUsage: func(u cursor.Usage) { a.Usage = &u },
	}
	log.Info().Str("event", "taking").Bool("resume", t.Resume).Msg("taking the turn")
	reply, err := st.s.Driver.Run(turnCtx, t)
	// A reply in hand is kept, even as the seat stops: resumed instead, the
	// turn could not read it back from every driver.
	if turnCtx.Err() != nil && (err != nil || st.wasDropped()) {
		if st.wasDropped() {
			log.Warn().Str("event", "dropped").Msg("the hub abandoned the turn")
		} else {
			log.Warn().Str("event", "interrupted").Msg("turn cut off; it is resumed when the seat starts again")
		}
		return a, false
	}
	// A driver that saw the prompt still in the agent's input after the
	// key says so with ErrNotSubmitted: the turn may be taken again.
	a.Submitted, a.At = err == nil || (e.Delivered() && !cursor.ProvenUnsent(err)), st.s.Clock.Now().UTC()
	a.OnlyPressed = err != nil && a.Submitted && e.Stage == stagePressed
	if err != nil {
		a.Error, a.Kind = err.Error(), kindOf(err)
		if f := cursor.FailureOf(err); f.Kind != cursor.FailureOther {
			a.Failure = &f
		}
		log.Warn().Str("event", "failed").Err(err).Msg("turn failed")
	} else {
		a.Reply = reply
		log.Info().Str("event", "replied").Int("bytes", len(reply)).Msg("replied")
	}
	return a, true
}

// publish sends the answer to ask until the server has it: the journal
// keeps it meanwhile (Entry.Unsent), and an ask offered again is answered
// from there.
func (st *seat) publish(ctx context.Context, ask Ask, a Answer) error {
	a.Ask = ask.Ask
	data, _ := json.Marshal(a)
	if err := overPayload(st.s.Conn, data, "the answer carrying the reply"); err != nil {
		// Answered as output that cannot be used: the hub dead-letters
		// the message with the reason, rather than wait for an answer
		// that never arrives.
		st.log.Error().Str("event", "refused").Str("turn", ask.Turn).Err(err).Msg("the reply is too big to send to the hub")
		a = Answer{Turn: a.Turn, Ask: a.Ask, Machine: a.Machine, At: a.At, Submitted: a.Submitted, OnlyPressed: a.OnlyPressed, Usage: a.Usage,
			Error: err.Error(), Kind: "bad_output", Failure: &cursor.Failure{Kind: cursor.FailureBadOutput}}
		data, _ = json.Marshal(a)
	}
	if !st.handOver(ctx, ask, data) {
		err := retry(ctx, func() error {
			_, err := st.js.Publish(ctx, replySubject(st.s.Agent), data, jetstream.WithMsgID(ask.Ask))
			return err
		})
		if err != nil {
			return fmt.Errorf("cannot send the answer of turn %s to the hub: %w", ask.Turn, err)
		}
	}
	if err := st.s.Journal.Sent(ask.Turn); err != nil {
		// The answer is with the hub; the record only keeps the turn
		// in the journal longer.
		st.log.Warn().Err(err).Str("turn", ask.Turn).Msg("cannot record that the hub has the answer")
	}
	return nil
}

// handOver offers the answer straight to the hub's runner waiting for the
// turn, and reports whether it took it. No one waiting (the hub stopped,
// the runner moved on) is said at once; a hub that does not answer in
// answerWait, as a stalled one or a server that does not let the seat
// send there would leave it, is not offered answers again by this seat for
// handOverPause.
func (st *seat) handOver(ctx context.Context, ask Ask, data []byte) bool {
	st.mu.Lock()
	paused := st.s.Clock.Now().Before(st.handOverAt)
	st.mu.Unlock()
	if paused {
		return false
	}
	// Real time: the wait is on the hub across the network.
	ctx, cancel := context.WithTimeout(ctx, st.answerWait)
	defer cancel()
	r, err := st.s.Conn.RequestWithContext(ctx, answerSubject(st.s.Agent), data)
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, nats.ErrTimeout) {
		st.mu.Lock()
		st.handOverAt = st.s.Clock.Now().Add(handOverPause)
		st.mu.Unlock()
		st.log.Info().Str("event", "answers-by-stream").Str("turn", ask.Turn).Dur("for", handOverPause).Msg("the hub did not take an answer sent straight to it; answers go through the replies stream for a while")
	}
	return err == nil && string(r.Data) == answerTaken
}

// keepalive tells the server, while a turn lasts, that its ask is being
// worked on, so it is not offered again mid-turn: every askAckWait/3 of
// c, which is the wall clock wherever a server counts the ack wait.
func keepalive(ctx context.Context, c clock.Clock, m jetstream.Msg) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		next := c.Now().Add(askAckWait / 3)
		for {
			select {
			case <-ctx.Done():
				return
			case now := <-c.At(next):
				_ = m.InProgress()
				next = now.Add(askAckWait / 3)
			}
		}
	}()
	return func() { cancel(); <-done }
}

// stopped is nil when err only says the seat was asked to stop.
func stopped(ctx context.Context, err error) error {
	if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
		return nil
	}
	return err
}
