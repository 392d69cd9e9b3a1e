package agents

import (
	"errors"
	"fmt"
	"time"

	"github.com/rs/zerolog"

	"github.com/agentctl/agentctl/cursor"
	"github.com/agentctl/agentctl/devlog"
	"github.com/agentctl/agentctl/mailbox"
)

// A turn the model API refused did no work, so it costs the message no
// attempt: attempts count failures of the message, and a quota window or
// an outage of an hour would otherwise dead-letter every healthy message
// that met it. The seat waits instead, all its messages with it.
const (
	// outageFirstProbe is the wait before the first probe of an outage;
	// each probe that meets it still doubles the wait, up to
	// outageMaxProbe. A probe is the next turn itself.
	outageFirstProbe = 30 * time.Second
	outageMaxProbe   = 10 * time.Minute
	// rateLimitUnnamed is the first wait after a 429 that names none;
	// it doubles like an outage's.
	rateLimitUnnamed = time.Minute
)

// seatPark is a seat held back because the model API refused its last
// turn, or because its window was not there to take it.
type seatPark struct {
	kind  cursor.FailureKind
	since time.Time     // the first refusal of this run of them
	until time.Time     // no turn before
	delay time.Duration // the last wait, which the next one doubles when the API named none
}

// state is the seat's state in status.json while it waits.
func (p *seatPark) state() string {
	switch p.kind {
	case cursor.FailureRateLimited:
		return "rate-limited"
	case cursor.FailureSeatMissing:
		return "seat-missing"
	}
	return "api-outage"
}

// waitedOut says whether a park of kind k is told when it begins and
// when it ends: an outage and a missing seat are; a rate limit, which
// ends by itself at a known time, is not.
func waitedOut(k cursor.FailureKind) bool {
	return k == cursor.FailureOutage || k == cursor.FailureSeatMissing
}

// apiVerdict is what the runner does about a turn the API refused.
type apiVerdict struct {
	park seatPark
	// tell: the outage just began, and is said once.
	tell bool
	// stop: no wait can help (the credentials); the runner stops.
	stop bool
}

// judgeAPIFailure decides about a turn the API refused at now, given how
// the seat was parked before (nil: it was not).
func judgeAPIFailure(f cursor.Failure, prev *seatPark, now time.Time) apiVerdict {
	if f.Kind == cursor.FailureAuth {
		return apiVerdict{stop: true}
	}
	p := seatPark{kind: f.Kind, since: now}
	again := prev != nil && prev.kind == f.Kind
	if again {
		p.since = prev.since
	}
	grow := func(first time.Duration) time.Duration {
		if again && prev.delay > 0 {
			return min(prev.delay*2, outageMaxProbe)
		}
		return first
	}
	switch {
	case f.Kind == cursor.FailureRateLimited && f.RetryAfter > 0:
		p.delay = f.RetryAfter
	case f.Kind == cursor.FailureRateLimited && f.ResetAt.After(now):
		p.delay = f.ResetAt.Sub(now)
	case f.Kind == cursor.FailureRateLimited:
		p.delay = grow(rateLimitUnnamed)
	default:
		p.delay = grow(outageFirstProbe)
	}
	p.until = now.Add(p.delay)
	return apiVerdict{park: p, tell: waitedOut(f.Kind) && !again}
}

// apiAuthError stops a runner whose agent's API refused its credentials.
type apiAuthError struct {
	agent string
	cause error
}

func (e *apiAuthError) Error() string {
	return fmt.Sprintf("%s: the model API refused the agent command's credentials; the runner stopped and the message waits in the inbox: %v", e.agent, e.cause)
}

func (e *apiAuthError) Hint() string {
	return "check the API key or login the seat's command uses (its env in agentctl.yaml, or the tool's own login), then start the runner again"
}

func (e *apiAuthError) Unwrap() error { return e.cause }

// NeedsPerson says a restart would be refused the same way: the runner's
// exit status tells agentctl up to wait for the person's edit.
func (e *apiAuthError) NeedsPerson() bool { return true }

// apiRefused acts on a turn the model API refused: the message goes back
// to the inbox, uncounted, until the seat may try again, and the seat
// waits as long (hold). An outage is said once, in the devlog and to
// Human; bad credentials stop the runner.
func (r *Runner) apiRefused(log zerolog.Logger, cl *claim, f cursor.Failure, cause error) error {
	now := r.now()
	v := judgeAPIFailure(f, r.park, now)
	if v.stop {
		if err := r.c.Postpone(cl.Claim, now); err != nil {
			return err
		}
		stop := &apiAuthError{agent: r.s.Agent, cause: cause}
		if r.s.Supervised {
			return stop // up tells, once, with what it watches
		}
		// Keyed by the words of the refusal: a runner restarted into the
		// same refusal does not say it again.
		r.tellAPI(log, "api-auth", fmt.Sprintf("%s: the model API refused its credentials; its runner stopped", r.s.Agent),
			fmt.Sprintf("%v\n\nhint: %s", stop, stop.Hint()), fmt.Sprint(f.Status, cause))
		return stop
	}
	if v.tell {
		t := parkBegins(f.Kind, r.s.Agent, now, cause)
		if err := r.devlogOnce(cl, devlogEntry(r.s.Agent, cl.Message, now, t.event, "", t.note)); err != nil {
			return err
		}
		r.tellAPI(log, t.event, t.subject, t.body, v.park.since.UTC().Format(time.RFC3339Nano))
	}
	if err := r.c.Postpone(cl.Claim, v.park.until); err != nil {
		return err
	}
	r.park = &v.park
	if err := r.hb.set(r.park.state(), "", ""); err != nil {
		return err
	}
	if f.Kind == cursor.FailureSeatMissing {
		r.hb.count("seat-missing")
		log.Warn().Str("event", "seat-missing").Time("until", v.park.until).Err(cause).
			Msg("the agent's window is not there and nothing was sent; the seat waits, and the message is not counted as failed")
		return nil
	}
	r.hb.count("api-refused")
	log.Warn().Str("event", "api-refused").Str("kind", f.Kind.String()).Int("status", f.Status).
		Time("until", v.park.until).Err(cause).Msg("the model API refused the turn; the seat waits, and the message is not counted as failed")
	return nil
}

// apiWorks ends a park once a turn got through, and says so once when an
// outage had been told.
func (r *Runner) apiWorks(log zerolog.Logger, msg mailbox.Message) {
	p := r.park
	if p == nil {
		return
	}
	r.park = nil
	if !waitedOut(p.kind) {
		return
	}
	now := r.now()
	took := now.Sub(p.since).Round(time.Second)
	t := parkEnds(p.kind, r.s.Agent, now, took)
	if err := devlog.Append(r.s.Root, devlogEntry(r.s.Agent, msg, now, t.event, "", t.note)); err != nil {
		log.Warn().Err(err).Msg("cannot note in the devlog that " + t.said)
	}
	r.tellAPI(log, t.event, t.subject, t.body, p.since.UTC().Format(time.RFC3339Nano))
	log.Info().Str("event", t.event).Dur("after", took).Msg(t.said)
}

// tellAPI puts one notice in Human's mailbox; its id comes from key (an
// outage's start), so a notice is never delivered twice.
func (r *Runner) tellAPI(log zerolog.Logger, kind, subject, body, key string) {
	if r.s.Human == "" {
		log.Warn().Str("event", kind).Msg(subject + "; no person is configured to tell")
		return
	}
	n := mailbox.Message{
		ID: derivedID(kind, r.s.Agent, key), From: "agentctl", To: r.s.Human,
		Type: "recovery", Priority: mailbox.High, Subject: subject, Body: body, CreatedAt: r.now().UTC(),
		Meta: map[string]any{"agent": r.s.Agent},
	}
	if _, err := deliver(r.s.Root, n); err != nil && !errors.Is(err, mailbox.ErrDuplicate) {
		log.Warn().Err(err).Str("to", r.s.Human).Msg("cannot tell the person about the model API")
	}
}

// holdForAPI is how long the seat still waits for the model API; zero
// when it need not.
func (r *Runner) holdForAPI(now time.Time) time.Time {
	if r.park == nil || !now.Before(r.park.until) {
		return time.Time{}
	}
	return r.park.until
}
