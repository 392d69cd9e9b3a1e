package agents

import (
	"errors"
	"fmt"
	"time"

	"github.com/robfig/cron/v3"

	"github.com/agentctl/agentctl/internal/cronspec"
)

// Schedule runs the recovery loops on their cron specs. It uses
// robfig/cron's parser and schedules but not its goroutine and clock: the
// runner asks Next when to wake and calls RunDue with its own clock, so
// tests step time instead of sleeping.
type Schedule struct {
	start time.Time
	jobs  []*job
}

type job struct {
	name  string
	sched cron.Schedule
	next  time.Time
	run   func(now time.Time) error
}

// NewSchedule starts an empty schedule at now.
func NewSchedule(now time.Time) *Schedule { return &Schedule{start: now} }

// Add schedules run on spec (cron syntax with optional seconds, or a
// descriptor such as @every 30s); its first run is the first time the spec
// names after now.
func (s *Schedule) Add(name, spec string, run func(now time.Time) error) error {
	sched, err := cronspec.Parse(spec)
	if err != nil {
		return fmt.Errorf("cron spec of %s: %q: %w", name, spec, err)
	}
	s.jobs = append(s.jobs, &job{name: name, sched: sched, run: run, next: sched.Next(s.start)})
	return nil
}

// Next is when the earliest job is due; ok is false with no jobs.
func (s *Schedule) Next() (next time.Time, ok bool) {
	for _, j := range s.jobs {
		if !ok || j.next.Before(next) {
			next, ok = j.next, true
		}
	}
	return next, ok
}

// RunDue runs the jobs due at now, once each however late they are, and
// schedules their next runs. It returns the joined errors of the jobs.
func (s *Schedule) RunDue(now time.Time) error {
	var errs []error
	for _, j := range s.jobs {
		if now.Before(j.next) {
			continue
		}
		if err := j.run(now); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", j.name, err))
		}
		j.next = j.sched.Next(now)
	}
	return errors.Join(errs...)
}
