package agents

import (
	"context"
	"errors"
	"os"
	"time"

	"github.com/rs/zerolog"

	"github.com/agentctl/agentctl/agents/cost"
	"github.com/agentctl/agentctl/cursor"
	"github.com/agentctl/agentctl/internal/clock"
	"github.com/agentctl/agentctl/mailbox"
	"github.com/agentctl/agentctl/mailbox/intake"
)

// Settings are everything a runner needs, as plain values: the command
// reads agentctl.yaml and hands them down.
type Settings struct {
	Root   string
	Agent  string   // the agent this runner serves; an already-resolved name
	Agents []string // every configured agent
	// People have mailboxes but no runner: replies may write to them, and
	// Human, one of them, gets what needs a person (questions, threads
	// over their hop budget, notices no agent can take). "" for nobody.
	People []string
	Human  string
	Driver cursor.Driver
	// Supervised says agentctl up runs this runner and tells Human of a
	// stop that needs a person (supervise.EnvSupervised), so the runner
	// does not tell it too.
	Supervised bool

	Consumer mailbox.Options
	Intake   intake.Options
	Watch    mailbox.WatchOptions

	// Heartbeat is how often status.json is rewritten when nothing happens.
	Heartbeat time.Duration
	// MaxPromptBytes dead-letters longer prompts instead of cutting them.
	MaxPromptBytes int
	// ShutdownGrace lets a running turn finish after the context ends.
	ShutdownGrace time.Duration
	// Resend allows sending a prompt again after its submission was
	// recorded (for headless agents whose command can simply run again).
	Resend bool
	// ResendStopped allows sending again a prompt the agent stopped
	// unanswered when the runner stopped on purpose (cursor.ErrPromptStopped).
	ResendStopped bool
	// TemplatesDir overrides the built-in prompt templates (see Templates).
	TemplatesDir string
	// MaxHops is how many replies deep a thread may go before its next
	// message goes to Human instead; MaxSendsPerReply caps the messages
	// one reply may send. Both keep agents from answering each other
	// forever.
	MaxHops, MaxSendsPerReply int
	// Guardrails say which effects of a reply apply, wait for Human's
	// approval, or are refused (guardrails.go); the zero value allows all.
	Guardrails Guardrails
	// NoBlockNotice is how many turns in a row may end "done without
	// block" before Human is told, once per run; 0 for the default
	// (DefaultNoBlockNotice), negative for never.
	NoBlockNotice int
	// Prompts per minute and per hour; 0 means no limit.
	PerMinute, PerHour int
	// Prices turn the tokens a driver reports into money where the agent
	// gives no price; Budget parks the seat once a day's spending reaches
	// it (budget.go).
	Prices cost.Prices
	Budget cost.Budget
	// Model is the seat's configured model, for a turn whose agent does
	// not say which model it used.
	Model string

	Recovery RecoverySettings

	// Coordination without a model turn (policy.go, board_work.go,
	// dependency.go, lore.go). Policy maps a message type (lower case) to
	// PolicyTurn, PolicyRunner or PolicyDigest; DigestWait is the longest
	// a digest note waits for a turn to carry it; BoardLook is how often
	// an idle runner looks at the boards; TakeWork lets it take tasks,
	// unowned ones only with one of WorkLabels when there are any.
	Policy     map[string]string
	DigestWait time.Duration
	BoardLook  time.Duration
	TakeWork   bool
	WorkLabels []string
	Lore       LoreSettings

	Log zerolog.Logger
	// Clock is the runner's time; the wall clock when nil. It replaces any
	// clock of Consumer, Watch and Intake, so that one clock drives the
	// loop and the mailbox, consumer, watcher and intake under it: tests
	// step a fake one, and nothing in them waits for a backoff or a
	// heartbeat.
	Clock clock.Clock
}

// Defaults of the loop guards and of coordination.
const (
	DefaultMaxHops          = 20
	DefaultMaxSendsPerReply = 10
	DefaultDigestWait       = 30 * time.Minute
	DefaultBoardLook        = 30 * time.Second
)

// Runner is the long-lived loop of one agent. One goroutine runs it.
type Runner struct {
	s         Settings
	mb        *mailbox.Mailbox
	c         *mailbox.Consumer
	in        *intake.Intake // takes in inbox.json and the places old writers use, for c
	hb        *heartbeat
	limit     *rateLimit
	budget    *budget
	templates Templates
	recovery  *Recovery
	log       zerolog.Logger

	look coordination
	// park holds the seat back while the model API refuses its turns
	// (apifailure.go); nil when it does not.
	park *seatPark
	// notices are Human's notices of a fault not delivered yet, and
	// interrupted the messages a fault stopped in flight, whose resumption
	// costs them no attempt (fault.go). inFlight is the message being
	// handled, kept when handling it ended in an error.
	notices     []mailbox.Message
	interrupted map[string]bool
	inFlight    string
	lastFault   lastFault
}

// New checks the settings and opens the agent's mailbox.
func New(s Settings) (*Runner, error) {
	if s.Driver == nil {
		return nil, errors.New("the runner has no driver")
	}
	s.Clock = clock.Or(s.Clock)
	s.Consumer.Clock, s.Watch.Clock, s.Intake.Clock = s.Clock, s.Clock, s.Clock
	if s.Heartbeat <= 0 {
		s.Heartbeat = 30 * time.Second
	}
	if s.MaxHops <= 0 {
		s.MaxHops = DefaultMaxHops
	}
	if s.MaxSendsPerReply <= 0 {
		s.MaxSendsPerReply = DefaultMaxSendsPerReply
	}
	if s.MaxPromptBytes <= 0 {
		s.MaxPromptBytes = 64 * 1024
	}
	if s.NoBlockNotice == 0 {
		s.NoBlockNotice = DefaultNoBlockNotice
	}
	if s.DigestWait <= 0 {
		s.DigestWait = DefaultDigestWait
	}
	if s.BoardLook <= 0 {
		s.BoardLook = DefaultBoardLook
	}
	mb, err := mailbox.Open(s.Root, s.Agent)
	if err != nil {
		return nil, err
	}
	mb.Clock = s.Clock
	if s.Consumer.Known == nil {
		s.Consumer.Known = s.Agents
	}
	r := &Runner{
		s: s, mb: mb,
		limit:     newRateLimit(s.PerMinute, s.PerHour),
		budget:    newBudget(s.Root, s.Budget),
		templates: Templates{Dir: s.TemplatesDir},
		log:       s.Log.With().Str("agent", s.Agent).Logger(),
	}
	if s.Recovery.Human == "" {
		s.Recovery.Human = s.Human
	}
	r.recovery = &Recovery{S: s.Recovery, Root: s.Root, Agents: s.Agents, People: s.People, Self: s.Agent, Consumer: s.Consumer,
		Intake: intake.Options{MaxInboxJSONBytes: s.Intake.MaxInboxJSONBytes, LockWait: s.Intake.LockWait}, Log: r.log, Clock: s.Clock}
	return r, nil
}

// Run claims and works messages until ctx ends. It refuses to start while
// another runner consumes the same mailbox (a *mailbox.LockedError says
// which), and waits while anything else holds the mailbox's lock. When ctx ends during a turn, the turn gets ShutdownGrace to
// finish; a turn cut off after that stays in processing/ for the next
// runner to resume.
//
// A runtime that cannot be written (fault.go) does not end Run: the loop
// ends, the seat waits until the runtime takes writes again, and the loop
// starts again as a restarted runner would, resuming what it held.
func (r *Runner) Run(ctx context.Context) (err error) {
	// The heartbeat exists before the consumer: opening it scans the
	// mailbox, and what the scan dead-letters is counted there.
	r.hb = newHeartbeat(r.mb, r.s.Clock)
	defer func() {
		if serr := r.hb.set("stopped", "", ""); err == nil && classifyFault(serr, r.s.Root, r.rootGone()) == faultNone {
			err = serr
		}
	}()
	for {
		err := r.serve(ctx)
		kind := classifyFault(err, r.s.Root, r.rootGone())
		if kind == faultNone || ctx.Err() != nil {
			return err
		}
		if r.inFlight != "" {
			if r.interrupted == nil {
				r.interrupted = map[string]bool{}
			}
			r.interrupted[r.inFlight] = true
		}
		if err := r.sitOut(ctx, kind, err); err != nil {
			return nil // stopped while waiting: what was in flight stays in processing/ for the next runner
		}
	}
}

// rootGone says whether the runtime folder is missing.
func (r *Runner) rootGone() bool {
	_, err := os.Stat(r.s.Root)
	return errors.Is(err, os.ErrNotExist)
}

// serve runs the loop once: from taking the mailbox to ctx's end or the
// first error, after which nothing of it is left open.
func (r *Runner) serve(ctx context.Context) error {
	opts := r.s.Consumer
	opts.OnEvent = r.onMailboxEvent
	opts.Interrupted = func(p mailbox.Progress) bool { return r.interrupted[p.ID] || awayWhenStopped(p) }
	// A runner restarted right after a crash may find the lock held for a
	// moment by a child the dead runner was starting.
	opts.ConsumerWait = 2 * time.Second
	// Anything else but a live runner holding the lock is waited out, and
	// said so.
	opts.Runner, opts.Wait, opts.OnWait = true, ctx, r.onConsumerWait
	c, err := r.mb.Consume(opts, r.now())
	if err != nil {
		return err
	}
	// Closed on every way out: a loop started again after a fault takes
	// the consumer's lock anew.
	defer c.Close()
	r.c = c
	in := r.s.Intake
	in.Stop = ctx.Done() // a long ingest stops between two messages
	r.in = intake.New(c, in)
	if err := r.hb.wait(""); err != nil {
		return err
	}
	if err := r.hb.set("starting", "", ""); err != nil {
		return err
	}
	w, err := mailbox.Watch(r.mb, r.s.Watch)
	if err != nil {
		return err
	}
	defer w.Close()
	// The intake's first look, and what arrived between Consume's scan
	// and the watch's start, which has no event coming.
	if err := r.in.Scan(r.now()); err != nil {
		return err
	}
	sched, err := r.schedule()
	if err != nil {
		return err
	}
	r.log.Info().Str("event", "started").Int("pid", os.Getpid()).Int("pending", c.Pending()).Msg("runner started")
	nextBeat := r.now().Add(r.s.Heartbeat)
	return mailbox.Serve(ctx, c, r.in, w.C, mailbox.Worker{
		Handle: func(ctx context.Context, cl *mailbox.Claim) error {
			r.inFlight = cl.Message.ID
			err := r.handle(ctx, cl)
			if err == nil {
				r.inFlight = ""
			}
			r.handled(ctx)
			return err
		},
		Hold: r.hold,
		Between: func(now time.Time) (time.Time, error) {
			if err := sched.RunDue(now); err != nil {
				return time.Time{}, err
			}
			if _, err := r.recovery.ApplyDeferred(now); err != nil {
				r.log.Warn().Err(err).Msg("kept board changes not applied yet")
			}
			if err := r.idle(now); err != nil {
				return time.Time{}, err
			}
			if err := r.hb.wait(r.in.Waiting()); err != nil {
				return time.Time{}, err
			}
			if err := r.coordinate(ctx, now); err != nil {
				return time.Time{}, err
			}
			if r.c.Claimable(now) && r.hb.state() == "idle" {
				return now, nil // a task taken from the board waits in the inbox
			}
			// Awake anyway (a rescan, a board look, a cron job): a beat
			// due soon is written now rather than waking the runner on
			// its own a moment later.
			if !now.Before(nextBeat.Add(-r.s.Heartbeat / wakeSlackDivisor)) {
				if err := r.hb.beat(); err != nil {
					return time.Time{}, err
				}
				nextBeat = now.Add(r.s.Heartbeat)
			}
			next := nextBeat
			if r.look.next.Before(next) {
				next = r.look.next
			}
			if t, ok := sched.Next(); ok && t.Before(next) {
				return t, nil
			}
			return next, nil
		},
	})
}

func (r *Runner) now() time.Time { return r.s.Clock.Now() }

// hold keeps prompts back while the model API refuses them, the budget is
// spent or the rate limit is reached.
func (r *Runner) hold(now time.Time) (time.Time, error) {
	if until := r.holdForAPI(now); !until.IsZero() {
		return until, r.hb.set(r.park.state(), "", "")
	}
	if until, err := r.holdForBudget(now); err != nil || !until.IsZero() {
		return until, err
	}
	ok, until := r.limit.allow(now)
	if ok {
		return time.Time{}, nil
	}
	if r.hb.state() != "rate-limited" {
		r.log.Warn().Str("event", "rate-limited").Time("until", until).Int("pending", r.c.Pending()).Msg("prompt rate limit reached; messages wait")
	}
	return until, r.hb.set("rate-limited", "", "")
}

// idle records that nothing can be worked on now, unless a hold says why.
func (r *Runner) idle(now time.Time) error {
	if r.c.Claimable(now) {
		return nil // held back: hold has set the state
	}
	if !r.holdForAPI(now).IsZero() {
		return r.hb.set(r.park.state(), "", "")
	}
	return r.hb.set("idle", "", "")
}

// onConsumerWait tells, in the log and in status.json, what the runner
// waits for before it can start (or, taking its removed lock afresh, go
// on), and with "" that the wait is over.
func (r *Runner) onConsumerWait(holder string) {
	if holder == "" {
		r.log.Info().Str("event", "waited").Msg("the wait for the mailbox's consumer lock is over")
		if err := r.hb.wait(""); err != nil {
			r.log.Warn().Err(err).Msg("cannot clear the wait in status.json")
		}
		return
	}
	r.log.Warn().Str("event", "waiting").Str("reason", holder).Msg("waiting for the mailbox's consumer lock")
	if err := r.hb.wait(holder); err != nil {
		r.log.Warn().Err(err).Msg("cannot show the wait in status.json")
	}
}

func (r *Runner) onMailboxEvent(e mailbox.Event) {
	ev := r.log.Info()
	if e.Kind == "deadlettered" || e.Kind == "duplicate" || e.Kind == "lock-busy" || e.Kind == "lock-lost" || e.Kind == "notes-edited" || e.Kind == "repaired" || e.Kind == "unreadable" {
		ev = r.log.Warn()
		if e.Kind == "deadlettered" {
			r.hb.count("deadlettered")
		}
	}
	ev.Str("event", e.Kind).Str("id", e.ID).Str("file", e.File).Str("reason", e.Reason).Msg("mailbox " + e.Kind)
}

// schedule sets up the recovery loops that run inside the runner.
func (r *Runner) schedule() (*Schedule, error) {
	s := NewSchedule(r.now())
	specs := r.s.Recovery.Cron
	jobs := []struct {
		name, spec string
		run        func(time.Time) error
	}{
		{"rescan", specs.Rescan, func(now time.Time) error { return r.in.Scan(now) }},
		{"expire", specs.Expire, func(now time.Time) error {
			expired, err := r.c.Expire(now)
			for _, m := range expired {
				r.log.Warn().Str("event", "deadlettered").Str("id", m.ID).Str("reason", "expired").Msg("message expired before it was claimed")
				r.notifySettled(m, "dead-lettered: it expired before it could be processed", now)
			}
			return err
		}},
		{"stall", specs.Stall, func(now time.Time) error { _, err := r.recovery.Stalls(now); return err }},
		{"requeue", specs.Requeue, func(now time.Time) error { _, err := r.recovery.Requeue(now); return err }},
	}
	for _, j := range jobs {
		if j.spec == "" {
			continue
		}
		if err := s.Add(j.name, j.spec, j.run); err != nil {
			return nil, err
		}
	}
	return s, nil
}
