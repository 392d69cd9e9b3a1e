package agents

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/rs/zerolog"

	"agentctl/cursor"
	"agentctl/mailbox"
)

// Settings are everything a runner needs, as plain values: the command
// reads agentctl.yaml and hands them down.
type Settings struct {
	Root   string
	Agent  string   // the agent this runner serves; an already-resolved name
	Agents []string // every configured agent
	Driver cursor.Driver

	Consumer mailbox.Options
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
	// TemplatesDir overrides the built-in prompt templates (see Templates).
	TemplatesDir string
	// Prompts per minute and per hour; 0 means no limit.
	PerMinute, PerHour int

	Recovery RecoverySettings

	Log zerolog.Logger
	// Now is the clock; time.Now when nil.
	Now func() time.Time
}

// Runner is the long-lived loop of one agent. One goroutine runs it.
type Runner struct {
	s         Settings
	mb        *mailbox.Mailbox
	c         *mailbox.Consumer
	hb        *heartbeat
	limit     *rateLimit
	templates Templates
	recovery  *Recovery
	log       zerolog.Logger
}

// New checks the settings and opens the agent's mailbox.
func New(s Settings) (*Runner, error) {
	if s.Driver == nil {
		return nil, errors.New("the runner has no driver")
	}
	if s.Now == nil {
		s.Now = time.Now
	}
	if s.Heartbeat <= 0 {
		s.Heartbeat = 10 * time.Second
	}
	if s.MaxPromptBytes <= 0 {
		s.MaxPromptBytes = 64 * 1024
	}
	mb, err := mailbox.Open(s.Root, s.Agent)
	if err != nil {
		return nil, err
	}
	if s.Consumer.Known == nil {
		s.Consumer.Known = s.Agents
	}
	r := &Runner{
		s: s, mb: mb,
		limit:     newRateLimit(s.PerMinute, s.PerHour),
		templates: Templates{Dir: s.TemplatesDir},
		log:       s.Log.With().Str("agent", s.Agent).Logger(),
	}
	r.recovery = &Recovery{S: s.Recovery, Root: s.Root, Agents: s.Agents, Self: s.Agent, Consumer: s.Consumer, Log: r.log}
	return r, nil
}

// Run claims and works messages until ctx ends. It refuses to start while
// another runner consumes the same mailbox (a *mailbox.LockedError says
// which), and waits while anything else holds the mailbox's lock. When ctx ends during a turn, the turn gets ShutdownGrace to
// finish; a turn cut off after that stays in processing/ for the next
// runner to resume.
func (r *Runner) Run(ctx context.Context) (err error) {
	opts := r.s.Consumer
	opts.OnEvent = r.onMailboxEvent
	// A runner restarted right after a crash may find the lock held for a
	// moment by a child the dead runner was starting.
	opts.ConsumerWait = 2 * time.Second
	// Anything else but a live runner holding the lock is waited out, and
	// said so.
	opts.Runner, opts.Wait, opts.OnWait = true, ctx, r.onConsumerWait
	c, err := r.mb.Consume(opts, r.s.Now())
	if err != nil {
		return err
	}
	r.c = c
	defer c.Close()
	r.hb = newHeartbeat(r.mb, r.s.Now)
	if err := r.hb.set("starting", "", ""); err != nil {
		return err
	}
	defer func() {
		if serr := r.hb.set("stopped", "", ""); err == nil {
			err = serr
		}
	}()
	w, err := mailbox.Watch(r.mb, r.s.Watch)
	if err != nil {
		return err
	}
	defer w.Close()
	// What arrived between Consume's scan and the watch's start has no
	// event coming.
	if err := c.Scan(r.s.Now()); err != nil {
		return err
	}
	sched, err := r.schedule()
	if err != nil {
		return err
	}
	r.log.Info().Str("event", "started").Int("pid", os.Getpid()).Int("pending", c.Pending()).Msg("runner started")

	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		wait, err := r.drain(ctx)
		if err != nil || ctx.Err() != nil {
			return err
		}
		now := r.s.Now()
		next := now.Add(r.s.Heartbeat)
		if t, ok := c.NextWake(); ok && t.Before(next) {
			next = t
		}
		if t, ok := sched.Next(); ok && t.Before(next) {
			next = t
		}
		if !wait.IsZero() && wait.Before(next) {
			next = wait
		}
		timer.Reset(max(next.Sub(now), 0))
		select {
		case <-ctx.Done():
			return nil
		case ch := <-w.C:
			now := r.s.Now()
			if ch.Rescan {
				err = c.Scan(now)
			}
			if err == nil {
				err = c.Notice(now, ch.Names...)
			}
		case <-timer.C:
			now := r.s.Now()
			err = c.Tick(now)
			if err == nil {
				err = sched.RunDue(now)
			}
			if err == nil {
				err = r.hb.beat()
			}
		}
		if err != nil {
			return err
		}
	}
}

// drain works every claimable message. It returns early with the time the
// rate limit allows the next prompt.
func (r *Runner) drain(ctx context.Context) (rateWait time.Time, err error) {
	for ctx.Err() == nil {
		now := r.s.Now()
		if r.c.Pending() > 0 || r.mustResume() {
			if ok, until := r.limit.allow(now); !ok {
				if r.hb.state() != "rate-limited" {
					r.log.Warn().Str("event", "rate-limited").Time("until", until).Int("pending", r.c.Pending()).Msg("prompt rate limit reached; messages wait")
				}
				return until, r.hb.set("rate-limited", "", "")
			}
		}
		cl, err := r.c.Claim(now)
		if errors.Is(err, mailbox.ErrEmpty) {
			break
		}
		if err != nil {
			return time.Time{}, fmt.Errorf("cannot claim a message: %w", err)
		}
		if err := r.handle(ctx, cl); err != nil {
			return time.Time{}, err
		}
	}
	if ctx.Err() != nil {
		return time.Time{}, nil
	}
	return time.Time{}, r.hb.set("idle", "", "")
}

// mustResume is true while a crashed runner's claim waits to be resumed.
func (r *Runner) mustResume() bool {
	t, ok := r.c.NextWake()
	return ok && t.IsZero()
}

// onConsumerWait tells, in the log and in status.json, what the runner
// waits for before it can start.
func (r *Runner) onConsumerWait(holder string) {
	r.log.Warn().Str("event", "waiting").Str("reason", holder).Msg("waiting for the mailbox's consumer lock")
	if err := newHeartbeat(r.mb, r.s.Now).waiting(holder); err != nil {
		r.log.Warn().Err(err).Msg("cannot show the wait in status.json")
	}
}

func (r *Runner) onMailboxEvent(e mailbox.Event) {
	ev := r.log.Info()
	if e.Kind == "deadlettered" || e.Kind == "duplicate" {
		ev = r.log.Warn()
		if e.Kind == "deadlettered" {
			r.hb.count("deadlettered")
		}
	}
	ev.Str("event", e.Kind).Str("id", e.ID).Str("file", e.File).Str("reason", e.Reason).Msg("mailbox " + e.Kind)
}

// schedule sets up the recovery loops that run inside the runner.
func (r *Runner) schedule() (*Schedule, error) {
	s := NewSchedule(r.s.Now())
	specs := r.s.Recovery.Cron
	jobs := []struct {
		name, spec string
		run        func(time.Time) error
	}{
		{"rescan", specs.Rescan, func(now time.Time) error { return r.c.Scan(now) }},
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
