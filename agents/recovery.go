package agents

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"github.com/agentctl/agentctl/devlog"
	"github.com/agentctl/agentctl/internal/clock"
	"github.com/agentctl/agentctl/internal/process"
	"github.com/agentctl/agentctl/mailbox"
	"github.com/agentctl/agentctl/mailbox/intake"
)

// RecoverySettings are the thresholds and schedules of the recovery loops.
type RecoverySettings struct {
	Lease      time.Duration // a claim with no runner is requeued after this
	StaleAfter time.Duration // a heartbeat this old means a stalled runner
	StallAfter time.Duration // a turn this long while work waits means a stall
	Cron       CronSpecs
	Supervisor string // agent told about stalls; "" for Human
	Human      string // the person told what no agent is to be told; "" for nobody
	Nudge      string // text sent to a stalled agent as an urgent resume message
}

// CronSpecs are the schedules of the loops inside a runner.
type CronSpecs struct {
	Requeue, Expire, Stall, Rescan string
}

// Recovery runs the checks that keep a swarm moving. A runner runs them on
// its schedule; `agentctl reconcile` runs them once. Every check takes the
// time as an argument, and every notice it sends has an id derived from
// what it is about, so running a check again, from several runners at
// once, or after a crash, never sends a notice twice.
type Recovery struct {
	S        RecoverySettings
	Root     string
	Agents   []string
	People   []string // mailboxes without a runner, which dependency notices may reach
	Self     string   // the runner's own agent, whose mailbox it already holds; "" for reconcile
	Consumer mailbox.Options
	// Intake takes in the inbox.json of each mailbox a check opens, as
	// that mailbox's runner would; its watched places are its runner's.
	Intake intake.Options
	Log    zerolog.Logger
	// Clock times the checks' waits for locks (a visited mailbox's, its
	// inbox.json's, the boards') and stamps the board changes they make;
	// clock.System when nil. It replaces any clock of Consumer and Intake.
	Clock clock.Clock
}

// open opens agent's mailbox with the checks' clock.
func (rc *Recovery) open(agent string) (*mailbox.Mailbox, error) {
	mb, err := mailbox.Open(rc.Root, agent)
	if err == nil {
		mb.Clock = rc.Clock
	}
	return mb, err
}

// visit makes this process the consumer of a mailbox whose runner is not
// up, and takes in its inbox.json, as the runner's start would, so that
// what waits there is not left waiting for the runner.
func (rc *Recovery) visit(mb *mailbox.Mailbox, now time.Time, found *[]Finding) (*mailbox.Consumer, error) {
	// What the start does (messages taken in, dead-lettered, a folder
	// made again) is found too: a reconcile that did it says so.
	opts, visiting := rc.Consumer, true
	opts.Clock = rc.Clock
	opts.OnEvent = func(e mailbox.Event) {
		if rc.Consumer.OnEvent != nil {
			rc.Consumer.OnEvent(e)
		}
		if visiting && e.Kind != "lock-free" {
			*found = append(*found, Finding{Agent: mb.Agent, Kind: e.Kind, ID: cmp.Or(e.ID, e.File), Detail: cmp.Or(e.Reason, e.File)})
		}
	}
	c, err := mb.Consume(opts, now)
	if err != nil {
		return nil, err
	}
	in := rc.Intake
	in.Clock = rc.Clock
	err = intake.New(c, in).Scan(now)
	visiting = false
	if err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// Finding is one thing a check found or did.
type Finding struct {
	Agent string `json:"agent"`
	// Kind is stale-heartbeat, stalled-turn, requeued, expired,
	// waiting-for-resume, running, or what opening a mailbox with no
	// runner did (ingested, deadlettered, repaired, recovered, …: the
	// mailbox's event kinds).
	Kind   string `json:"kind"`
	ID     string `json:"id,omitempty"`
	Detail string `json:"detail"`
}

func (f Finding) String() string {
	s := f.Agent + ": " + f.Kind
	if f.ID != "" {
		s += " " + f.ID
	}
	return s + ": " + f.Detail
}

// Stalls looks for stalled agents: a heartbeat older than StaleAfter from a
// runner that did not stop cleanly, or a turn running longer than
// StallAfter while messages wait. Each stall is told once to the
// supervisor and the agent's devlog, and the agent is nudged if a nudge is
// configured.
func (rc *Recovery) Stalls(now time.Time) ([]Finding, error) {
	var found []Finding
	var errs []error
	for _, agent := range rc.Agents {
		mb, err := rc.open(agent)
		if err != nil {
			continue // no mailbox yet: nothing can be stalled
		}
		st, err := mb.ReadStatus()
		if errors.Is(err, fs.ErrNotExist) || (err == nil && st.State == "stopped") {
			continue
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		var f *Finding
		key := ""
		if age := now.Sub(st.UpdatedAt); age > rc.S.StaleAfter {
			alive := "its process is gone"
			if process.Alive(st.PID) {
				alive = "its process is alive but not moving"
			}
			f = &Finding{Agent: agent, Kind: "stale-heartbeat", ID: st.Current,
				Detail: fmt.Sprintf("last heartbeat %s ago (pid %d, %s, state %s)", age.Round(time.Second), st.PID, alive, st.State)}
			key = st.UpdatedAt.UTC().Format(time.RFC3339Nano)
		} else if st.State == "working" && st.Current != "" {
			claimed, ok := claimedAt(mb, st.Current)
			counts, _ := mb.Count()
			if ok && now.Sub(claimed) > rc.S.StallAfter && counts.Pending > 0 {
				f = &Finding{Agent: agent, Kind: "stalled-turn", ID: st.Current,
					Detail: fmt.Sprintf("its turn has run for %s while %d messages wait", now.Sub(claimed).Round(time.Second), counts.Pending)}
				key = st.Current
			}
		}
		if f == nil {
			continue
		}
		found = append(found, *f)
		if err := rc.tellStall(*f, key, now); err != nil {
			errs = append(errs, err)
		}
	}
	return found, errors.Join(errs...)
}

// tellStall sends the recovery notice, the devlog entry and the nudge of
// one stall, each at most once.
func (rc *Recovery) tellStall(f Finding, key string, now time.Time) error {
	noticeID := derivedID("stall", f.Agent, f.Kind, key)
	rc.Log.Warn().Str("event", "stall").Str("stalled", f.Agent).Str("kind", f.Kind).Str("id", f.ID).Str("notice", noticeID).Msg(f.Detail)
	sup := rc.S.Supervisor
	if sup == "" {
		sup = rc.S.Human
	}
	if sup != "" && sup != f.Agent {
		n := mailbox.Message{
			ID: noticeID, From: "agentctl", To: sup, Type: "recovery", Priority: mailbox.High,
			Subject: fmt.Sprintf("%s looks stalled (%s)", f.Agent, f.Kind), CreatedAt: now.UTC(),
			Body: fmt.Sprintf("%s looks stalled: %s.\nCheck its window or runner (agentctl status), and resume it if needed.", f.Agent, f.Detail),
			Meta: map[string]any{"stalled": f.Agent, "kind": f.Kind, "current": f.ID},
		}
		if _, err := deliver(rc.Root, n); err != nil {
			return fmt.Errorf("cannot tell %s about %s: %w", sup, f.Agent, err)
		}
	}
	if !devlogHas(rc.Root, f.Agent, noticeID, "stalled") {
		e := devlog.Entry{Time: now, Agent: f.Agent, MessageID: noticeID, Subject: "stalled: " + f.Kind,
			From: "agentctl", Outcome: "stalled", Note: f.Detail}
		if err := devlog.Append(rc.Root, e); err != nil {
			return err
		}
	}
	if rc.S.Nudge != "" {
		n := mailbox.Message{
			ID: derivedID("nudge", f.Agent, f.Kind, key), From: "agentctl", To: f.Agent, Type: "resume",
			Priority: mailbox.Urgent, Subject: "resume", Body: rc.S.Nudge, CreatedAt: now.UTC(),
		}
		if _, err := deliver(rc.Root, n); err != nil {
			return fmt.Errorf("cannot nudge %s: %w", f.Agent, err)
		}
	}
	return nil
}

// claimedAt reads when the message in processing/ was claimed, from its
// progress record.
func claimedAt(mb *mailbox.Mailbox, id string) (time.Time, bool) {
	p, ok := readProgress(mb, id)
	return p.ClaimedAt, ok
}

func readProgress(mb *mailbox.Mailbox, id string) (mailbox.Progress, bool) {
	p, err := mb.ReadProgress(id)
	return p, err == nil
}

// Requeue puts back in the inbox the claims whose runner is gone and whose
// lease has passed, for agents other than Self. A claim whose prompt was
// already submitted is not requeued (that would send it again): it waits
// for a runner to resume it, and is reported. Agents whose runner is alive
// are left alone: the runner owns its claim.
func (rc *Recovery) Requeue(now time.Time) ([]Finding, error) {
	var found []Finding
	var errs []error
	for _, agent := range rc.Agents {
		if agent == rc.Self {
			continue
		}
		f, err := rc.requeueAgent(agent, now)
		found = append(found, f...)
		if err != nil {
			errs = append(errs, err)
		}
	}
	return found, errors.Join(errs...)
}

func (rc *Recovery) requeueAgent(agent string, now time.Time) ([]Finding, error) {
	mb, err := rc.open(agent)
	if err != nil {
		return nil, nil
	}
	inFlight, err := mb.List(mailbox.StateProcessing)
	if err != nil || len(inFlight) == 0 {
		return nil, err
	}
	due := false
	for _, e := range inFlight {
		p, ok := readProgress(mb, e.Message.ID)
		if !ok || now.Sub(p.ClaimedAt) > rc.S.Lease {
			due = true
		}
	}
	if !due {
		return nil, nil
	}
	var found []Finding
	c, err := rc.visit(mb, now, &found)
	if errors.Is(err, mailbox.ErrConsumerRunning) {
		return nil, nil // its runner is alive and owns the claim
	}
	if err != nil {
		return found, err
	}
	defer c.Close()
	for _, e := range inFlight {
		p, ok := readProgress(mb, e.Message.ID)
		if ok && now.Sub(p.ClaimedAt) <= rc.S.Lease {
			continue
		}
		if promptDelivered(p) {
			found = append(found, Finding{Agent: agent, Kind: "waiting-for-resume", ID: e.Message.ID,
				Detail: "its prompt was submitted before the runner stopped; start 'agentctl run " + agent + "' to read the reply back"})
			continue
		}
		cl, err := c.Claim(now)
		if err != nil {
			return found, fmt.Errorf("cannot requeue %s of %s: %w", e.Message.ID, agent, err)
		}
		if cl == nil || !cl.Resumed {
			return found, fmt.Errorf("cannot requeue %s of %s: the consumer handed out %v first", e.Message.ID, agent, cl)
		}
		dead, err := c.Retry(cl, fmt.Errorf("its claim outlived the %s lease with no runner", rc.S.Lease), now)
		if err != nil {
			return found, err
		}
		kind := "requeued"
		if dead {
			kind = "deadlettered"
			notifySettled(rc.Root, agent, rc.S.Human, rc.Log, cl.Message, "dead-lettered: it had all its attempts, the last one's claim outliving its lease with no runner", now)
		}
		found = append(found, Finding{Agent: agent, Kind: kind, ID: cl.Message.ID,
			Detail: fmt.Sprintf("claimed %s ago by pid %d, which is gone", now.Sub(p.ClaimedAt).Round(time.Second), p.PID)})
		rc.Log.Warn().Str("event", kind).Str("id", cl.Message.ID).Str("of", agent).Msg("claim outlived its lease")
	}
	return found, nil
}

// Expire dead-letters the expired pending messages of agents with no
// runner (a runner expires its own) and tells their senders.
func (rc *Recovery) Expire(now time.Time) ([]Finding, error) {
	var found []Finding
	var errs []error
	for _, agent := range rc.Agents {
		if agent == rc.Self {
			continue
		}
		mb, err := rc.open(agent)
		if err != nil {
			continue
		}
		c, err := rc.visit(mb, now, &found)
		if errors.Is(err, mailbox.ErrConsumerRunning) {
			continue
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		expired, err := c.Expire(now)
		c.Close()
		for _, m := range expired {
			found = append(found, Finding{Agent: agent, Kind: "expired", ID: m.ID, Detail: "dead-lettered: it expired at " + m.ExpiresAt.UTC().Format(time.RFC3339)})
			notifySettled(rc.Root, agent, rc.S.Human, rc.Log, m, "dead-lettered: it expired before it could be processed", now)
		}
		if err != nil {
			errs = append(errs, err)
		}
	}
	return found, errors.Join(errs...)
}

// Reconcile runs every check once, for `agentctl reconcile`: the ingest of
// inbox.json and the rescan happen as each idle mailbox is opened.
func (rc *Recovery) Reconcile(now time.Time) ([]Finding, error) {
	var all []Finding
	var errs []error
	for _, check := range []func(time.Time) ([]Finding, error){rc.Requeue, rc.Expire, rc.Stalls, rc.ApplyDeferred, rc.Dependencies} {
		f, err := check(now)
		all = append(all, f...)
		if err != nil {
			errs = append(errs, err)
		}
	}
	for _, agent := range rc.Agents {
		if mb, err := rc.open(agent); err == nil {
			if st, err := mb.ReadStatus(); err == nil && st.State != "stopped" && process.Alive(st.PID) && now.Sub(st.UpdatedAt) <= rc.S.StaleAfter {
				all = append(all, Finding{Agent: agent, Kind: "running", Detail: fmt.Sprintf("pid %d, %s", st.PID, strings.TrimSpace(st.State+" "+st.Current))})
			}
		}
	}
	return all, errors.Join(errs...)
}
