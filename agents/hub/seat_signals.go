package hub

import (
	"context"
	"encoding/json"
	"os"
	"slices"

	"github.com/nats-io/nats.go"

	"github.com/agentctl/agentctl/internal/clock"
	"github.com/agentctl/agentctl/internal/process"
	"github.com/agentctl/agentctl/mailbox"
)

// What a seat tells and hears besides asks and answers: its beats, the
// stages of a turn as they happen, and the hub's cancel of a turn nobody
// waits for. All of it rides on core NATS and may be missed without harm.

// tell lets the hub know a stage as it happens; the answer says it again.
func (st *seat) tell(turn, stage string) {
	data, _ := json.Marshal(Stage{Turn: turn, Stage: stage})
	_ = st.s.Conn.Publish(stageSubject(st.s.Agent), data)
}

// begin makes ask the seat's current turn, which cancel ends, unless the
// hub gave it up before it came: then it reports false, and the turn
// counts as dropped.
func (st *seat) begin(ask Ask, cancel func()) bool {
	st.mu.Lock()
	defer st.mu.Unlock()
	if i := slices.Index(st.abandoned, ask.Ask); i >= 0 {
		st.abandoned = slices.Delete(st.abandoned, i, i+1)
		st.dropped = true
		return false
	}
	st.current, st.currentAsk, st.cancel, st.dropped = ask.Turn, ask.Ask, cancel, false
	return true
}

func (st *seat) end() {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.current, st.currentAsk, st.cancel = "", "", nil
}

func (st *seat) wasDropped() bool {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.dropped
}

// keptCancels is how many cancels of asks not yet begun a seat keeps: the
// hub runs one turn of an agent at a time, so one would do.
const keptCancels = 16

func (st *seat) onCancel(m *nats.Msg) {
	var c Cancel
	if json.Unmarshal(m.Data, &c) != nil || c.Turn == "" {
		return
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	switch {
	case c.Turn == st.current && (c.Ask == "" || c.Ask == st.currentAsk) && st.cancel != nil:
		st.dropped = true
		st.cancel()
	case c.Ask != "":
		if len(st.abandoned) == keptCancels {
			st.abandoned = slices.Delete(st.abandoned, 0, 1)
		}
		st.abandoned = append(st.abandoned, c.Ask)
	}
}

// beats tells the hub the seat is there, and what it does.
func (st *seat) beats(ctx context.Context) {
	for {
		st.mu.Lock()
		b := Beat{Agent: st.s.Agent, Machine: st.s.Machine, PID: os.Getpid(), State: "idle", Turn: st.current, Started: st.started, At: st.s.Clock.Now().UTC()}
		st.mu.Unlock()
		if b.Turn != "" {
			b.State = "working"
		}
		data, _ := json.Marshal(b)
		_ = st.s.Conn.Publish(beatSubject(st.s.Agent), data)
		st.showLocally(localBeat(b, st.s.Conn.IsConnected()))
		select {
		case <-ctx.Done():
			// The seat stops: said here as a runner's last heartbeat says
			// it, not left "idle" under a pid that is gone.
			b.State, b.Turn, b.At = "stopped", "", st.s.Clock.Now().UTC()
			st.showLocally(b)
			return
		case <-clock.After(st.s.Clock, st.s.Beat):
		}
	}
}

// hubUnreachable is the seat's state on its own machine while the hub
// cannot be reached: its turns wait there (and its answers in its
// journal), and it goes on by itself once the hub is back.
const hubUnreachable = "hub-unreachable"

// localBeat is the beat as the seat's own machine shows it: the hub cannot
// hear a seat that cannot reach it, so only this machine can say so.
func localBeat(b Beat, connected bool) Beat {
	if !connected {
		b.State = hubUnreachable
	}
	return b
}

// showLocally writes the seat's beat to the agent's status.json on this
// machine, as a runner's heartbeat, saying where its turns come from.
func (st *seat) showLocally(b Beat) {
	if st.s.Root == "" {
		return
	}
	mb, err := mailbox.Open(st.s.Root, st.s.Agent)
	if err != nil {
		return // Forward creates the mailbox; the next beat finds it
	}
	// The host and the pid's start as a runner's heartbeat has them, so
	// that status here tells a seat that stopped from one that runs.
	host, _ := os.Hostname()
	start, _ := process.StartTime(b.PID)
	err = mb.WriteStatus(mailbox.Status{PID: b.PID, PIDStart: start, Host: host, State: b.State, Current: b.Turn, StartedAt: b.Started, UpdatedAt: b.At})
	if err != nil {
		st.log.Warn().Err(err).Msg("cannot show the seat in status.json")
	}
}
