// Package hubseats is the hub's record of the seats of remote agents,
// hub/seats.json, as package hub writes it and 'agentctl status' and
// mission control read it. It is apart from package hub so that reading
// the record does not link the NATS client.
//
// It owns the record's shape and its one reader (Read); it never writes
// the file, which package hub alone does.
package hubseats

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"

	"github.com/agentctl/agentctl/internal/layout"
)

// DefaultBeat is how often a seat beats unless told otherwise.
const DefaultBeat = 5 * time.Second

// Beat is a seat's heartbeat.
type Beat struct {
	Agent   string    `json:"agent"`
	Machine string    `json:"machine"`
	PID     int       `json:"pid"`
	State   string    `json:"state"` // idle, working
	Turn    string    `json:"turn,omitempty"`
	Started time.Time `json:"started_at"`
	At      time.Time `json:"at"`
}

// File is where the hub shows the seats of remote agents: the last beat
// of each, for `agentctl status` and mission control.
func File(root string) string { return layout.HubSeats(root) }

// Seats is the content of File.
type Seats struct {
	// PID of the hub that writes the file, and when it last did.
	PID       int       `json:"pid"`
	Machine   string    `json:"machine"`
	UpdatedAt time.Time `json:"updated_at"`
	// Remote lists the agents the hub keeps runners for; Beats has the last
	// beat of those whose seat was heard from.
	Remote []string        `json:"remote"`
	Beats  map[string]Beat `json:"beats"`
}

// Seen says how a remote agent's seat looks from the hub at now: present
// when it beat within three beats.
func (s Seats) Seen(agent string, now time.Time) (b Beat, present bool) {
	b, ok := s.Beats[agent]
	return b, ok && now.Sub(b.At) < 3*DefaultBeat
}

// Listening says whether the hub that writes the file still does: it
// rewrites it every beat, so one three beats old is a hub's that stopped.
func (s Seats) Listening(now time.Time) bool {
	return now.Sub(s.UpdatedAt) < 3*DefaultBeat
}

// Read reads File; ok is false when no hub ever wrote one.
func Read(root string) (s Seats, ok bool, err error) {
	data, err := os.ReadFile(File(root))
	if errors.Is(err, fs.ErrNotExist) {
		return Seats{}, false, nil
	}
	if err != nil {
		return Seats{}, false, err
	}
	if err := json.Unmarshal(data, &s); err != nil {
		return Seats{}, false, fmt.Errorf("cannot read %s: %w", File(root), err)
	}
	return s, true, nil
}
