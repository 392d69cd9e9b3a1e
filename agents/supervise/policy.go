package supervise

import "time"

// Policy says how a dying runner is restarted.
type Policy struct {
	// MinBackoff is the wait before restarting a runner that died once;
	// it doubles with every further death in a row, up to MaxBackoff.
	MinBackoff, MaxBackoff time.Duration
	// Stable is how long a runner must have run for its death to start a
	// new count: a runner that served for an hour and then died is not
	// crash-looping.
	Stable time.Duration
	// NoticeAfter is how many deaths in a row make a crash loop worth a
	// person's attention; they are told once per loop.
	NoticeAfter int
	// WatchEvery is how often a seat served by a runner started by hand
	// checks whether that runner is still there.
	WatchEvery time.Duration
}

// DefaultPolicy is what `agentctl up` uses unless told otherwise.
func DefaultPolicy() Policy {
	return Policy{MinBackoff: time.Second, MaxBackoff: time.Minute, Stable: time.Minute, NoticeAfter: 5, WatchEvery: 2 * time.Second}
}

// ExitNeedsPerson is the exit status of a child that stopped for a reason
// only a person can fix: its credentials were refused, or its settings
// cannot work. Restarting it would only repeat the refusal (and, with a
// model API, be refused again at a cost), so it waits for the files a
// person would change instead. It is sysexits' EX_CONFIG.
const ExitNeedsPerson = 78

// EnvSupervised is set, to "1", in the environment of every child of
// Run: a child that stops for a reason only a person can mend leaves the
// telling to the supervisor, whose one notice also says what it watches
// to start the child again.
const EnvSupervised = "AGENTCTL_SUPERVISED"

// Verdict is what to do after a runner ended.
type Verdict struct {
	// Deaths is the count of deaths in a row, this one included; 0 when
	// the runner ended cleanly.
	Deaths int
	// Delay is how long to wait before starting it again.
	Delay time.Duration
	// Notify is set on exactly the death that makes the loop worth telling.
	Notify bool
	// Park says the child needs a person: it is not restarted until
	// Settings.Watch changes, and the person is told at once.
	Park bool
}

// Next decides what follows the end of a runner that ran for ran, when
// deaths runners in a row had died before it. A clean exit (someone
// stopped the runner itself) is restarted after MinBackoff and ends the
// count; a runner that ran for Stable or longer starts a new count.
// A child that ended with ExitNeedsPerson is parked.
func Next(p Policy, deaths int, ran time.Duration, clean, needsPerson bool) Verdict {
	if needsPerson {
		return Verdict{Park: true}
	}
	if clean {
		return Verdict{Delay: p.MinBackoff}
	}
	if ran >= p.Stable {
		deaths = 0
	}
	deaths++
	delay := p.MinBackoff
	for i := 1; i < deaths && delay < p.MaxBackoff; i++ {
		delay *= 2
	}
	delay = min(delay, p.MaxBackoff)
	return Verdict{Deaths: deaths, Delay: delay, Notify: p.NoticeAfter > 0 && deaths == p.NoticeAfter}
}
