package cli

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/agentctl/agentctl/agents/hub/hubseats"
	"github.com/agentctl/agentctl/agents/missioncontrol/verdict"
	"github.com/agentctl/agentctl/config"
)

// readSeats reads the hub's record of the seats when the runtime has
// remote agents; nil when no hub ever wrote one.
func readSeats(env *Env, cfg config.Config) (*hubseats.Seats, error) {
	if len(cfg.RemoteAgents()) == 0 {
		return nil, nil
	}
	s, ok, err := hubseats.Read(env.Root)
	if err != nil || !ok {
		return nil, err
	}
	return &s, nil
}

// seatOf is the seat of a remote agent, nil for one of this machine.
func seatOf(cfg config.Config, seats *hubseats.Seats, name string, now time.Time) *seatStatus {
	agent, err := cfg.Agent(name)
	if err != nil || !cfg.Remote(agent) {
		return nil
	}
	var record hubseats.Seats
	if seats != nil {
		record = *seats
	}
	v := verdict.JudgeSeat(record, name, agent.Machine, now)
	s := &seatStatus{Machine: v.Machine, Heard: v.Heard, Present: v.Present, State: v.State, LastBeat: v.Beat,
		HubDown: v.HubDown}
	if v.Beat != nil {
		s.BeatAge = now.Sub(*v.Beat).Round(time.Second).String()
	}
	return s
}

// seatCell is the SEAT column: the machine, and how the hub hears it.
func seatCell(s *seatStatus) string {
	switch {
	case s == nil:
		return "-"
	case s.HubDown:
		return s.Machine + ": unknown, the hub is not running"
	case !s.Heard:
		return s.Machine + ": never heard"
	case !s.Present:
		return fmt.Sprintf("%s: absent (last beat %s ago)", s.Machine, s.BeatAge)
	}
	return fmt.Sprintf("%s: present, %s (beat %s ago)", s.Machine, s.State, s.BeatAge)
}

// seatHints says what brings the missing parts of a swarm: the hub, whose
// runners serve the remote agents, when its record was read and there is
// none, and the seats not heard from.
func seatHints(cfg config.Config, rows []agentStatus, seats *hubseats.Seats, read bool, now time.Time) []string {
	if len(cfg.RemoteAgents()) == 0 {
		return nil
	}
	var hints []string
	// Where no hub has run, a remote agent's heartbeat was written by its
	// seat: this is a seat's machine, and its hub is elsewhere.
	seatsHere := slices.ContainsFunc(rows, func(r agentStatus) bool {
		return r.State != "-" && slices.Contains(cfg.RemoteAgents(), r.Agent)
	})
	if seats == nil && read && !seatsHere {
		hints = append(hints, "no hub has run here: start 'agentctl hub' (or 'agentctl up'), which keeps the runners of "+strings.Join(cfg.RemoteAgents(), ", "))
	}
	if seats != nil && !seats.Listening(now) {
		// The seats may well be there: it is the hub that is not.
		return append(hints, fmt.Sprintf("the hub has not written its record of the seats for %s: start 'agentctl hub' (or 'agentctl up'), which keeps the runners of %s",
			now.Sub(seats.UpdatedAt).Round(time.Second), strings.Join(cfg.RemoteAgents(), ", ")))
	}
	url := "URL"
	if u := config.URLs(cfg.Hub.URL); len(u) > 0 {
		url = cfg.Hub.URL
	}
	for _, r := range rows {
		if r.Seat != nil && !r.Seat.Present {
			hints = append(hints, fmt.Sprintf("run 'agentctl run %s --hub %s' on %s", r.Agent, url, r.Seat.Machine))
		}
	}
	return hints
}
