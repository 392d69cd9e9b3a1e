package verdict

import (
	"time"

	"github.com/agentctl/agentctl/agents/hub/hubseats"
)

// Seat is where a remote agent's turns are taken: the machine that runs
// `agentctl run AGENT --hub`, as the hub last heard from it.
type Seat struct {
	// Machine is the seat's machine: the one its beats name, else the one
	// agentctl.yaml names.
	Machine string `json:"machine"`
	// Heard is whether the hub ever heard the seat; Present, whether it
	// beat lately (hubseats.Seats.Seen).
	Heard   bool `json:"heard"`
	Present bool `json:"present"`
	// State is what a present seat does: idle or working.
	State string `json:"state,omitempty"`
	// HubDown says the hub that keeps the record stopped writing it, so
	// whether the seat is there cannot be told.
	HubDown bool `json:"hub_down,omitempty"`
	// Beat is the hub's time of the last beat. Views are not sent it, for
	// the reason they are not sent a runner's heartbeat.
	Beat *time.Time `json:"-"`
}

// JudgeSeat says how agent's seat looks at now from the hub's record
// (seats, which may be the zero Seats when no hub ever wrote one); machine
// is where agentctl.yaml puts the agent. It is pure: status and mission
// control both act on its verdict.
func JudgeSeat(seats hubseats.Seats, agent, machine string, now time.Time) Seat {
	s := Seat{Machine: machine, HubDown: !seats.UpdatedAt.IsZero() && !seats.Listening(now)}
	b, present := seats.Seen(agent, now)
	if _, heard := seats.Beats[agent]; !heard {
		return s
	}
	at := b.At
	s.Heard, s.Present, s.Beat = true, present, &at
	if b.Machine != "" {
		s.Machine = b.Machine
	}
	if present {
		s.State = b.State
	}
	return s
}
