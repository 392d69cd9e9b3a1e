package agents

import (
	"maps"
	"os"
	"sync"
	"time"

	"github.com/agentctl/agentctl/internal/clock"
	"github.com/agentctl/agentctl/internal/process"
	"github.com/agentctl/agentctl/mailbox"
)

// heartbeat keeps status.json: what the runner does now, and counters. A
// turn runs on the runner's goroutine, so a second goroutine beats while
// it lasts (see beatDuring); the mutex keeps the two apart.
type heartbeat struct {
	mu sync.Mutex
	mb *mailbox.Mailbox
	// Clock times the beats and stamps the status; clock.System when nil.
	Clock clock.Clock
	st    mailbox.Status
	// held says set changed st within busyRewriteGap of the last write
	// and left the write to the turn's next beat.
	held bool
}

// newHeartbeat starts the status of a new runner. Counters start at zero;
// the run of turns without a block goes on from the last runner's, read
// before this runner writes anything.
func newHeartbeat(mb *mailbox.Mailbox, clk clock.Clock) *heartbeat {
	host, _ := os.Hostname()
	clk = clock.Or(clk)
	h := &heartbeat{mb: mb, Clock: clk, st: mailbox.Status{
		PID: os.Getpid(), PIDStart: selfStart(), Host: host, StartedAt: clk.Now().UTC(), Counters: map[string]int{},
	}}
	if prev, err := mb.ReadStatus(); err == nil {
		h.st.NoBlock = prev.NoBlock
	}
	return h
}

// snapshot is status.json as the runner last wrote it, or is about to.
func (h *heartbeat) snapshot() mailbox.Status {
	h.mu.Lock()
	defer h.mu.Unlock()
	st := h.st
	st.Agent = h.mb.Agent
	st.Counters = maps.Clone(h.st.Counters)
	return st
}

// busyRewriteGap is how stale status.json may get while a runner goes from
// one message to the next: rewriting it for every message of a burst would
// cost more than the messages themselves.
const busyRewriteGap = time.Second

// set changes the state and writes status.json; an unchanged idle state is
// not rewritten, so an idle runner does not touch the disk between beats,
// and a busy one rewrites it at most every busyRewriteGap.
func (h *heartbeat) set(state, current, subject string) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if state == h.st.State && current == h.st.Current && state != "working" {
		return nil
	}
	sameState := state == h.st.State
	if !sameState || current != h.st.Current {
		h.st.Since = h.Clock.Now().UTC()
	}
	h.st.State, h.st.Current, h.st.Subject = state, current, subject
	if sameState && h.Clock.Now().Sub(h.st.UpdatedAt) < busyRewriteGap {
		h.held = true // written by the turn's beat within busyRewriteGap
		return nil
	}
	return h.writeLocked()
}

// wait records what keeps the runner from its work ("" for nothing, once
// it has gone away), and rewrites status.json when that changes.
func (h *heartbeat) wait(what string) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if what == h.st.Waiting {
		return nil
	}
	h.st.Waiting = what
	if h.st.State == "" {
		h.st.State = "starting"
	}
	return h.writeLocked()
}

func (h *heartbeat) state() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.st.State
}

func (h *heartbeat) count(name string) {
	h.mu.Lock()
	h.st.Counters[name]++
	h.mu.Unlock()
}

func (h *heartbeat) noBlock() mailbox.Streak {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.st.NoBlock
}

// setNoBlock keeps the run of turns without a block, for the next runner
// too. It rides on the next write of status.json, which follows soon
// whatever the runner does next (the next message's "working", "idle"
// once the inbox is empty, "stopped"); it is written at once only when
// status.json is older than busyRewriteGap, as after a long turn. Only a
// runner killed within that gap of its last write can lose part of the
// run, which the next runner then counts again.
func (h *heartbeat) setNoBlock(s mailbox.Streak) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if s == h.st.NoBlock {
		return nil
	}
	h.st.NoBlock = s
	if h.Clock.Now().Sub(h.st.UpdatedAt) < busyRewriteGap {
		return nil
	}
	return h.writeLocked()
}

// beat rewrites status.json with a fresh updated_at.
func (h *heartbeat) beat() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.writeLocked()
}

func (h *heartbeat) writeLocked() error {
	h.st.UpdatedAt = h.Clock.Now().UTC()
	h.held = false
	return h.mb.WriteStatus(h.st)
}

// beatDuring beats every interval until the returned stop is called, and
// writes within busyRewriteGap what set held back: a turn that follows a
// quick one is shown as the current one in a second, not at the next
// beat, up to run.heartbeat later.
func (h *heartbeat) beatDuring(interval time.Duration) (stop func()) {
	return during(h.Clock, min(interval, busyRewriteGap), func() bool {
		h.mu.Lock()
		defer h.mu.Unlock()
		if h.held || !h.Clock.Now().Before(h.st.UpdatedAt.Add(interval)) {
			h.writeLocked() // a failed beat is retried at the next tick
		}
		return false
	})
}

// selfStart is this process's start token for status.json; 0 where it is
// unknown.
func selfStart() uint64 {
	start, _ := process.StartTime(os.Getpid())
	return start
}
