package agents

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/agentctl/agentctl/agents/receipt"
	"github.com/agentctl/agentctl/cursor"
	"github.com/agentctl/agentctl/internal/clock"
	"github.com/agentctl/agentctl/mailbox"
	"github.com/agentctl/agentctl/projectboard"
)

// Stages of a turn the runner records, besides those of package mailbox.
const (
	stageHanded = string(cursor.StageHanded)
	// stageResumable: what a resume of the turn needs is on record (how
	// the chat looked before the prompt; an ACP prompt stopped).
	stageResumable = "resumable"
	stagePressed   = string(cursor.StagePressed)
	stageSubmit    = string(cursor.StageSubmitted)
	stageReply     = string(cursor.StageReplied)
)

// handle takes one claimed message through the whole loop and settles it.
// An error means the runner must stop: the claim stays in processing/ and
// the next runner resumes it from its progress record.
func (r *Runner) handle(ctx context.Context, mcl *mailbox.Claim) error {
	cl := &claim{Claim: mcl}
	msg := cl.Message
	log := r.log.With().Str("id", msg.ID).Logger()
	log.Info().Str("event", "claimed").Str("from", msg.From).Str("type", msg.Type).Str("priority", string(msg.Priority)).
		Bool("resumed", cl.Resumed).Int("attempt", cl.Progress.Attempt).Str("subject", msg.Subject).Msg("claimed")
	r.hb.count("claimed")
	if err := r.hb.set("working", msg.ID, msg.Subject); err != nil {
		return err
	}
	started := r.now()
	turn, err := readTurn(cl.Progress)
	var newer *newerTurnError
	switch {
	case errors.As(err, &newer):
		return fmt.Errorf("cannot resume %s: %w", msg.ID, err)
	case err != nil:
		// What was done already is unknown: doing it again might do it
		// twice, so a person decides.
		cl.unreadable = true
		return r.deadletter(log, cl, fmt.Sprintf("its progress record cannot be read back (%v); nothing of it was done again, since what was already done is unknown", err))
	}
	cl.turn = turn

	var reply string
	haveReply := cl.turn.Reply != nil
	if cl.Exhausted != "" && !haveReply {
		// Its runners kept dying while working it; with a reply in hand,
		// what is left (the effects) is finished instead.
		return r.deadletter(log, cl, cl.Exhausted)
	}
	if haveReply {
		reply = *cl.turn.Reply
	} else {
		switch r.policyOf(msg) {
		case PolicyRunner:
			var err error
			if reply, err = r.runnerReply(msg); err != nil {
				return r.failed(ctx, log, cl, err)
			}
			cl.turn.Reply, cl.turn.ByRunner = &reply, true
			if err := r.record(cl, "answered", r.now()); err != nil {
				return err
			}
			haveReply = true
			log.Info().Str("event", "answered").Str("type", msg.Type).Msg("handled by the runner, without a turn")
		case PolicyDigest:
			if waits, err := r.postponeNote(cl); waits || err != nil {
				return err
			}
		}
	}
	if !haveReply {
		if took, err := r.takeBoardTask(ctx, log, cl); !took || err != nil {
			return err
		}
		var err error
		reply, err = r.takeTurn(ctx, log, cl)
		if err != nil {
			return r.failed(ctx, log, cl, err)
		}
	}
	parsed := ParseReply(reply)
	out, err := r.applyEffects(ctx, log, cl, reply, parsed)
	if err != nil {
		return err
	}
	now := r.now()
	timings := map[string]string{"total": now.Sub(started).Round(time.Millisecond).String()}
	if t, ok := cl.Progress.Stages[stageSubmit]; ok {
		timings["claim_to_submit"] = t.Sub(cl.Progress.ClaimedAt).Round(time.Millisecond).String()
		if rt, ok := cl.Progress.Stages[stageReply]; ok {
			timings["submit_to_reply"] = rt.Sub(t).Round(time.Millisecond).String()
		}
	}
	d := out.receiptData()
	d.DriverNotes = cl.turn.DriverNotes
	data, err := receipt.Encode(withHistory(d, msg))
	if err != nil {
		return err
	}
	rc := mailbox.Receipt{Outcome: out.receiptOutcome(), Reply: reply, Timings: timings, Data: data}
	if err := r.complete(cl, rc, now); err != nil {
		return err
	}
	r.hb.count(rc.Outcome)
	if err := r.noteNoBlock(log, msg, out); err != nil {
		return err
	}
	log.Info().Str("event", "archived").Str("outcome", rc.Outcome).Int("sent", len(out.Sent)).Int("board", len(out.Board)).
		Str("took", timings["total"]).Msg("archived")
	return nil
}

// takeTurn renders the prompt and runs the driver. A claim whose
// submission was recorded is resumed, never sent again, unless the runner
// may resend.
func (r *Runner) takeTurn(ctx context.Context, log zerolog.Logger, cl *claim) (string, error) {
	rendered, err := r.prompt(cl.Message)
	if err != nil {
		return "", err
	}
	prompt := rendered.Text
	if cl.turn.AsksBlock == nil {
		cl.turn.AsksBlock = &rendered.AsksForBlock
	}
	notes, err := r.notesFor(cl, r.s.MaxPromptBytes-len(prompt)-len(notesSection([]mailbox.Entry{{}})))
	if err != nil {
		return "", err
	}
	prompt += notesSection(notes)
	if len(prompt) > r.s.MaxPromptBytes {
		return "", &deadError{fmt.Sprintf("its prompt is %d bytes, over run.max_prompt_bytes (%d); it was not cut short", len(prompt), r.s.MaxPromptBytes)}
	}
	if err := r.endRecordedChild(log, cl); err != nil {
		return "", err
	}
	turn := cursor.Turn{ID: turnID(cl.Claim), Prompt: prompt, Thread: cl.Message.Thread(), Resume: promptDelivered(cl.Progress), ResumeState: cl.turn.ResumeState}
	turn.OnStart = r.recordChild(cl)
	turn.OnUsage = func(u cursor.Usage) { r.recordUsage(log, cl.Message.ID, u) }
	turn.OnProgress = onProgress(log)
	// A permission the turn asks for is part of the turn: the turn is over
	// only once every callback has returned (and withdrawn its request,
	// if the turn stopped waiting for it).
	asking := newPermissionCalls(r.s.Clock)
	defer asking.finish()
	onPermission := r.onPermission(log, cl)
	turn.OnPermission = func(ctx context.Context, req cursor.PermissionRequest) (cursor.PermissionVerdict, error) {
		if !asking.begin() {
			return cursor.PermissionVerdict{Reason: "refused: the turn that asked is over"}, nil
		}
		defer asking.end()
		return onPermission(ctx, req)
	}
	turn.OnNote = func(note string) {
		cl.turn.DriverNotes = append(cl.turn.DriverNotes, note)
		log.Warn().Str("event", "note").Msg(note)
	}
	turn.OnResumeState = func(state string) error {
		cl.turn.ResumeState = state
		// Unsynced: what follows is synced (a chat's press of the send
		// key, an ACP turn's let-go as its runner stops), and a power cut
		// before it takes nothing a resume needs.
		return r.recordUnsynced(cl, stageResumable, r.now())
	}
	turn.OnStage = func(s cursor.Stage) error {
		now := r.now()
		if s != cursor.StageReplied { // logged below, with the reply's size
			log.Info().Str("event", string(s)).Msg(string(s))
		}
		switch s {
		case cursor.StagePressed:
			return r.record(cl, stagePressed, now)
		case cursor.StageHanded:
			cl.turn.Handed++
			// Unsynced: lost in a power cut, the crash it would excuse
			// costs an attempt, as it did before.
			return r.recordUnsynced(cl, stageHanded, now)
		case cursor.StageSubmitted:
			r.limit.add(now)
			r.hb.count("turns")
			cl.turn.PromptBytes = len(prompt)
			if _, started := cl.Progress.Stages[stageStarted]; started {
				// A started command had the prompt: recovery reads the
				// record of its start as this one (promptDelivered).
				return r.recordUnsynced(cl, stageSubmit, now)
			}
			return r.record(cl, stageSubmit, now)
		}
		return nil
	}
	turnCtx, cancel := r.turnContext(ctx)
	defer cancel(nil)
	skipRequested, stopSkipWatch := r.watchSkip(cl.Message.ID, func() { cancel(cursor.ErrAbandoned) })
	defer stopSkipWatch()
	defer r.hb.beatDuring(r.s.Heartbeat)()
	reply, err := r.s.Driver.Run(turnCtx, turn)
	if err != nil && errors.Is(err, cursor.ErrPromptStopped) && r.s.ResendStopped {
		note := "the prompt was sent again: the runner that sent it stopped, and the agent stopped the prompt unanswered"
		cl.turn.DriverNotes = append(cl.turn.DriverNotes, note)
		log.Warn().Str("event", "retry").Msg(note)
		// The new prompt's turn is not the stopped one: should it be cut
		// off in its turn, that says nothing of this one.
		cl.turn.ResumeState = ""
		turn.Resume, turn.ResumeState, turn.ID = false, "", turn.ID+"/resent"
		reply, err = r.s.Driver.Run(turnCtx, turn)
	}
	// The reply may be lost without this runner resuming: a seat on
	// another machine that restarted mid-turn resumed it there.
	if err != nil && errors.Is(err, cursor.ErrReplyLost) && r.s.Resend {
		log.Warn().Str("event", "retry").Err(err).Msg("reply of the interrupted turn is lost; sending the prompt again (run.resend)")
		turn.Resume, turn.ID = false, turn.ID+"/resent"
		reply, err = r.s.Driver.Run(turnCtx, turn)
	}
	if err != nil {
		if req, ok := skipRequested(); ok {
			return "", &skipError{req}
		}
		return "", err
	}
	now := r.now()
	r.apiWorks(log, cl.Message)
	cl.turn.Reply = &reply
	if strings.TrimSpace(reply) == "" {
		// A command may well end its turn having said nothing; the record
		// says so, rather than show a plain "done" on nothing.
		cl.turn.DriverNotes = append(cl.turn.DriverNotes, "the agent's reply was empty")
		log.Warn().Str("event", "note").Msg("the agent's reply was empty")
	}
	if err := r.record(cl, stageReply, now); err != nil {
		return "", err
	}
	log.Info().Str("event", "replied").Int("bytes", len(reply)).Msg("replied")
	return reply, nil
}

// permissionCalls are a turn's permission callbacks under way. Once the
// turn is over (finish) no new one begins, and finish waits for those
// under way, permissionCallsWait at most: a driver that left one waiting
// on a context never ended must not hold the runner.
type permissionCalls struct {
	// Clock times finish's wait; clock.System when nil.
	Clock clock.Clock
	mu    sync.Mutex
	n     int
	over  bool
	idle  chan struct{} // closed once over with none under way
}

// permissionCallsWait bounds finish's wait for the callbacks under way.
const permissionCallsWait = 15 * time.Second

func newPermissionCalls(clk clock.Clock) *permissionCalls {
	return &permissionCalls{Clock: clk, idle: make(chan struct{})}
}

func (p *permissionCalls) begin() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.over {
		return false
	}
	p.n++
	return true
}

func (p *permissionCalls) end() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.n--; p.n == 0 && p.over {
		close(p.idle)
	}
}

func (p *permissionCalls) finish() {
	p.mu.Lock()
	p.over = true
	idle := p.n == 0
	if idle {
		close(p.idle)
	}
	p.mu.Unlock()
	if idle {
		return // no wait set on the clock: a test's clock counts its sleepers
	}
	select {
	case <-p.idle:
	case <-clock.After(clock.Or(p.Clock), permissionCallsWait):
	}
}

// awayWhenStopped says of a claim whose runner stopped without a word
// that its turn was with another machine's seat then, its reply not in
// yet: the runner only waited, so its crash (the hub's machine rebooted)
// says nothing of the message and costs it no attempt. Past
// maxHandedCrashes it does: a message whose seat's answer itself brings
// the hub down must not do so for ever.
func awayWhenStopped(p mailbox.Progress) bool {
	_, handed := p.Stages[stageHanded]
	_, replied := p.Stages[stageReply]
	if !handed || replied {
		return false
	}
	t, err := readTurn(p)
	return err == nil && t.Handed <= maxHandedCrashes
}

// maxHandedCrashes is how many crashes while a seat has the turn cost the
// message nothing.
const maxHandedCrashes = 10

// turnID names the turn of cl across processes. A runner that takes over
// a claim after a crash counts the crash as an attempt (Progress.Attempt),
// but resumes the same turn: the id counts only the failed tries settled
// before (Message.Attempts) and, for a message a person brought back from
// deadletter/ (which starts its count again), how often that happened.
func turnID(cl *mailbox.Claim) string {
	id := fmt.Sprintf("%s/%d", cl.Message.ID, cl.Message.Attempts+1)
	if h := mailbox.Deaths(cl.Message); len(h) > 0 {
		id += fmt.Sprintf("/r%d", len(h))
	}
	return id
}

// turnContext ends a turn ShutdownGrace after ctx ends, so that Ctrl+C
// lets a nearly finished turn complete (cursor.GraceContext).
func (r *Runner) turnContext(ctx context.Context) (context.Context, context.CancelCauseFunc) {
	return cursor.GraceContext(ctx, r.s.ShutdownGrace)
}

func (r *Runner) prompt(msg mailbox.Message) (renderedPrompt, error) {
	d := PromptData{Agent: r.s.Agent, Message: msg}
	for _, a := range r.s.Agents {
		if a != r.s.Agent {
			d.Others = append(d.Others, a)
		}
	}
	if msg.TaskID != "" {
		store := projectboard.Store{Root: r.s.Root}
		t, err := store.Find(msg.TaskID)
		switch {
		case err == nil:
			d.Task = &t
		case errors.Is(err, projectboard.ErrNoTask):
		default:
			d.TaskError = err.Error()
		}
	}
	return r.templates.render(d)
}

// deadError is a failure that no retry can fix.
type deadError struct{ reason string }

func (e *deadError) Error() string { return e.reason }

// failed settles a message whose turn did not produce a reply: retry with
// backoff, dead-letter (telling the sender), or, when the runner is
// stopping, leave it in processing/ for the next runner.
func (r *Runner) failed(ctx context.Context, log zerolog.Logger, cl *claim, cause error) error {
	now := r.now()
	var rec *recordError
	if errors.As(cause, &rec) && classifyFault(rec.err, r.s.Root, false) != faultNone {
		// The turn was cut off by the runtime itself (a stage that could
		// not be recorded: a full disk, a read-only file system), which
		// says nothing of the message: it stays in processing/, and once
		// the loop has sat the fault out it is taken up from what is on
		// record. What this runner holds in memory may be more than that:
		// a press of the send key whose record failed, so the key never
		// went.
		return cause
	}
	submitted := promptMayBeDelivered(cl.Progress, cause)
	var dead *deadError
	var skip *skipError
	reason := ""
	switch {
	case errors.As(cause, &skip):
		return r.skipped(log, cl, skip.req)
	case ctx.Err() != nil:
		// A stop asked for from outside costs the message no attempt:
		// stopping a runner three times in a long turn must not
		// dead-letter it.
		if err := r.c.LetGo(cl.Claim, now); err != nil {
			log.Warn().Err(err).Msg("cannot record the stop; the next runner counts it as an attempt")
		}
		log.Warn().Str("event", "interrupted").Err(cause).Bool("submitted", submitted).Msg("turn cut off by shutdown; left in processing/ for the next runner")
		return ctx.Err()
	case errors.As(cause, &dead):
		reason = dead.reason
	case cursor.FailureOf(cause).API():
		return r.apiRefused(log, cl, cursor.FailureOf(cause), cause)
	case errors.Is(cause, cursor.ErrWindowNotFound) && !submitted:
		// Its app closed or restarting: nothing was sent, so the seat
		// waits for the window as for an outage, and the message keeps
		// its attempts.
		return r.apiRefused(log, cl, cursor.Failure{Kind: cursor.FailureSeatMissing}, cause)
	case errors.Is(cause, cursor.ErrPromptRefused):
		reason = fmt.Sprintf("its prompt cannot be given to the agent: %v; it was not tried again, since it would be refused the same way", cause)
	case cursor.FailureOf(cause).Kind == cursor.FailureBadOutput:
		reason = fmt.Sprintf("its turn ran but its output could not be read: %v; it was not run again, to avoid paying for a second turn", cause)
	case errors.Is(cause, cursor.ErrReplyLost):
		reason = fmt.Sprintf("%s but its reply was lost (%v); it was not sent again (run.resend)", submittedWords(cl.Progress), cause)
	case submitted && !r.s.Resend:
		reason = fmt.Sprintf("%s but the turn failed: %v; it was not sent again, to avoid a second paste (run.resend)", submittedWords(cl.Progress), cause)
	case cl.Progress.Attempt >= r.maxAttempts():
		reason = fmt.Sprintf("it failed %d times; last error: %v", cl.Progress.Attempt, cause)
	default:
		if err := r.devlogOnce(cl, devlogEntry(r.s.Agent, cl.Message, now, "retry", "", cause.Error())); err != nil {
			return err
		}
		if _, err := r.c.Retry(cl.Claim, cause, now); err != nil {
			return err
		}
		r.hb.count("retried")
		log.Warn().Str("event", "retry").Err(cause).Int("attempt", cl.Progress.Attempt).Msg("turn failed; will retry after a backoff")
		return nil
	}
	return r.deadletter(log, cl, reason)
}

func (r *Runner) maxAttempts() int {
	if r.s.Consumer.MaxAttempts < 1 {
		return 3
	}
	return r.s.Consumer.MaxAttempts
}

// deadletter tells the sender and the devlog, then moves the message to
// deadletter/. The notices have ids derived from the message, so a crash
// in between sends none of them twice.
func (r *Runner) deadletter(log zerolog.Logger, cl *claim, reason string) error {
	now := r.now()
	if err := r.devlogOnce(cl, devlogEntry(r.s.Agent, cl.Message, now, "deadletter", "", reason)); err != nil {
		return err
	}
	r.notifySettled(cl.Message, "dead-lettered: "+reason, now)
	if err := r.deadletterClaim(cl, reason, now); err != nil {
		return err
	}
	r.hb.count("deadlettered")
	log.Warn().Str("event", "deadlettered").Str("reason", reason).Msg("deadlettered")
	return nil
}
