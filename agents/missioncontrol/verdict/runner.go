package verdict

import (
	"errors"
	"io/fs"
	"time"

	"github.com/agentctl/agentctl/mailbox"
)

// Runner is the verdict on an agent's runner from its heartbeat.
type Runner struct {
	// Runner is running, stopped, gone (a heartbeat whose process ended,
	// or whose pid another process took since), elsewhere (another
	// host's, judged by its age alone) or person.
	Runner string `json:"runner"`
	PID    int    `json:"pid,omitempty"`
	// State is what the runner says it does: idle, working, rate-limited,
	// stopped; "-" when no runner ever ran.
	State   string     `json:"state"`
	Current string     `json:"current,omitempty"`
	Subject string     `json:"subject,omitempty"`
	Since   *time.Time `json:"since,omitempty"`
	// Stalled is a turn older than recovery.stall_after.
	Stalled bool `json:"stalled,omitempty"`
	// Silent says a runner that seems up has not written its heartbeat
	// for longer than recovery.stale_after (stopped, hung, or on another
	// host that is gone): "no heartbeat for 2m54s".
	Silent  string `json:"silent,omitempty"`
	Waiting string `json:"waiting,omitempty"`
	// Heartbeat is when status.json was last written. Views are not sent
	// it: an idle runner rewrites it every run.heartbeat, and a snapshot that
	// changes with every heartbeat would never let a viewer idle.
	Heartbeat *time.Time `json:"-"`
	// DoneWithErrors and DoneWithoutBlock count the messages the running
	// runner finished with part of the reply refused or waiting, and with
	// no agentctl block where the prompt asked for one (its counters).
	DoneWithErrors   int `json:"done_with_errors,omitempty"`
	DoneWithoutBlock int `json:"done_without_block,omitempty"`
	// NoBlockRun is how many turns in a row lately ended without the
	// block; unlike the counters it outlives the runner.
	NoBlockRun int `json:"no_block_run,omitempty"`
	// StatusProblem is a status.json that cannot be read.
	StatusProblem string `json:"status_problem,omitempty"`
}

// Counter names of outcomes in status.json that views single out.
const (
	CounterWithErrors = "done with errors"
	CounterNoBlock    = "done without block"
)

// Judge decides what a runner is doing from its status.json (st, or the
// error reading it) and whether its process still runs on this host
// (alive, given its pid and start token). A runner that seems up but has
// not beaten for staleAfter is Silent. It is pure: status and mission
// control both act on its verdict.
func Judge(st mailbox.Status, err error, host string, now time.Time, stallAfter, staleAfter time.Duration, alive func(pid int, start uint64) bool) Runner {
	r := Runner{Runner: "stopped", State: "-"}
	if isNoStatus(err) {
		return r
	}
	if err != nil {
		r.StatusProblem = err.Error()
		return r
	}
	updated := st.UpdatedAt
	r.Heartbeat = &updated
	r.NoBlockRun = st.NoBlock.Turns
	silent := ""
	if age := now.Sub(updated); staleAfter > 0 && age > staleAfter && st.State != "stopped" {
		silent = "no heartbeat for " + age.Round(time.Second).String()
	}
	switch {
	case st.Host != "" && st.Host != host:
		r.Runner, r.PID, r.State, r.Silent = "elsewhere", st.PID, st.State, silent
	case alive(st.PID, st.PIDStart) && st.State != "stopped":
		r.Silent = silent
		r.Runner, r.PID, r.State, r.Current, r.Subject, r.Waiting = "running", st.PID, st.State, st.Current, st.Subject, st.Waiting
		if !st.Since.IsZero() {
			since := st.Since
			r.Since = &since
			r.Stalled = st.State == "working" && now.Sub(since) > stallAfter
		}
		r.DoneWithErrors, r.DoneWithoutBlock = st.Counters[CounterWithErrors], st.Counters[CounterNoBlock]
	case st.State == "stopped":
		r.State = "stopped"
	default:
		r.Runner, r.PID, r.State = "gone", st.PID, st.State+" (pid gone)"
	}
	return r
}

// isNoStatus reports a mailbox without a heartbeat: no runner ever ran.
func isNoStatus(err error) bool { return errors.Is(err, fs.ErrNotExist) }
