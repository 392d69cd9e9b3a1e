package missioncontrol

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentctl/agentctl/agents/hub"
	"github.com/agentctl/agentctl/agents/hub/hubseats"
	"github.com/agentctl/agentctl/agents/missioncontrol/verdict"
	"github.com/agentctl/agentctl/internal/clock"
)

func TestJudgeSeatTellsPresentAbsentAndNeverHeard(t *testing.T) {
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	seats := hubseats.Seats{Remote: []string{"Agent-5", "Agent-6", "Agent-7"}, Beats: map[string]hubseats.Beat{
		"Agent-5": {Agent: "Agent-5", Machine: "m2", State: "working", At: now.Add(-time.Second)},
		"Agent-6": {Agent: "Agent-6", Machine: "m3-renamed", State: "idle", At: now.Add(-time.Hour)},
	}}
	if s := verdict.JudgeSeat(seats, "Agent-5", "m2", now); !s.Heard || !s.Present || s.State != "working" || s.Machine != "m2" || s.Beat == nil {
		t.Errorf("a seat that just beat: %+v", s)
	}
	// An hour-old beat is an absent seat; what it did then is not now.
	if s := verdict.JudgeSeat(seats, "Agent-6", "m3", now); !s.Heard || s.Present || s.State != "" || s.Machine != "m3-renamed" {
		t.Errorf("a seat silent for an hour: %+v", s)
	}
	if s := verdict.JudgeSeat(seats, "Agent-7", "m4", now); s.Heard || s.Present || s.Machine != "m4" || s.Beat != nil {
		t.Errorf("a seat never heard: %+v", s)
	}
	if s := verdict.JudgeSeat(hubseats.Seats{}, "Agent-5", "m2", now); s.Heard || s.Present {
		t.Errorf("no hub ever ran: %+v", s)
	}
}

// remoteRuntime is testRuntime with Agent-2 and Agent-3 on other machines
// than the hub's.
func remoteRuntime(t *testing.T) (string, Settings) {
	root, cfg := testRuntime(t, "Agent-1", "Agent-2", "Agent-3")
	cfg.Remote = map[string]string{"Agent-2": "m2", "Agent-3": "m3"}
	return root, cfg
}

func writeSeats(t *testing.T, root string, s hubseats.Seats) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(hubseats.File(root)), 0o755); err != nil {
		t.Fatal(err)
	}
	data, _ := json.Marshal(s)
	tmp := hubseats.File(root) + ".tmp"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, hubseats.File(root)); err != nil { // as the hub replaces it
		t.Fatal(err)
	}
}

func TestSnapshotShowsRemoteAgentsSeats(t *testing.T) {
	root, cfg := remoteRuntime(t)
	now := time.Now().UTC()
	seats := hubseats.Seats{Machine: "desk-1", Remote: []string{"Agent-2", "Agent-3"}, Beats: map[string]hubseats.Beat{
		"Agent-2": {Agent: "Agent-2", Machine: "m2", State: "idle", At: now},
	}}
	writeSeats(t, root, seats)
	r := NewReader(root, cfg)
	s := r.Read(Changed{All: true}, now)
	if a := s.Agents[0]; a.Seat != nil {
		t.Errorf("an agent of the hub's machine has a seat: %+v", a.Seat)
	}
	if a := s.Agents[1]; a.Seat == nil || !a.Seat.Present || a.Seat.Machine != "m2" || a.Seat.State != "idle" {
		t.Errorf("Agent-2's seat: %+v", a.Seat)
	}
	if a := s.Agents[2]; a.Seat == nil || a.Seat.Heard || a.Seat.Machine != "m3" {
		t.Errorf("Agent-3's seat, never heard: %+v", a.Seat)
	}
	before, _ := json.Marshal(s)

	// Another beat of the same idle seat shows nothing new.
	seats.Beats["Agent-2"] = hubseats.Beat{Agent: "Agent-2", Machine: "m2", State: "idle", At: now.Add(hub.DefaultBeat)}
	writeSeats(t, root, seats)
	after, _ := json.Marshal(r.Read(Changed{Seats: true}, now.Add(hub.DefaultBeat)))
	if string(before) != string(after) {
		t.Errorf("a beat changed the snapshot, so every viewer would get it again:\n%s\n%s", before, after)
	}

	// Silence changes no file: the liveness tick finds the seat gone.
	s = r.Read(Changed{Liveness: true}, now.Add(time.Hour))
	if a := s.Agents[1]; a.Seat == nil || !a.Seat.Heard || a.Seat.Present {
		t.Errorf("Agent-2's seat an hour after its last beat: %+v", a.Seat)
	}

	// A record that cannot be read is a problem shown, not a crash.
	if err := os.WriteFile(hubseats.File(root), []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	s = r.Read(Changed{Seats: true}, now)
	if len(s.Problems) != 1 || !strings.HasPrefix(s.Problems[0], "seats: cannot read ") || s.Agents[1].Seat == nil {
		t.Errorf("problems = %q, Agent-2's seat %+v", s.Problems, s.Agents[1].Seat)
	}
}

func TestFeedFollowsTheSeatsFile(t *testing.T) {
	root, cfg := remoteRuntime(t)
	// The hour-long liveness tick, and a hub folder made before, leave the
	// seat's appearance to the seats file's own events.
	if err := os.MkdirAll(filepath.Dir(hubseats.File(root)), 0o755); err != nil {
		t.Fatal(err)
	}
	f := startFeedWith(t, root, cfg, FeedOptions{Liveness: time.Hour})
	if s, _, _, _ := f.Current(); s.Agents[1].Seat == nil || s.Agents[1].Seat.Heard {
		t.Fatalf("before any hub: %+v", s.Agents[1].Seat)
	}
	writeSeats(t, root, hubseats.Seats{Remote: []string{"Agent-2", "Agent-3"}, Beats: map[string]hubseats.Beat{
		"Agent-3": {Agent: "Agent-3", Machine: "m3", State: "working", At: time.Now().UTC()},
	}})
	await(t, f, "Agent-3's seat working", func(s Snapshot) bool {
		return s.Agents[2].Seat != nil && s.Agents[2].Seat.Present && s.Agents[2].Seat.State == "working"
	})
}

func TestTopShowsSeats(t *testing.T) {
	now := time.Now()
	old := now.Add(-2 * time.Minute)
	m := &Terminal{Clock: clock.Fixed(now), snap: Snapshot{Agents: []Agent{
		{Name: "Agent-1"},
		{Name: "Agent-2", Seat: &Seat{Machine: "m2", Heard: true, Present: true, State: "working", Beat: &now}},
		{Name: "Agent-3", Seat: &Seat{Machine: "m3", Heard: true, Beat: &old}},
		{Name: "Agent-4", Seat: &Seat{Machine: "m4"}},
	}}}
	v := m.View()
	for _, want := range []string{
		"seat of Agent-2 on m2: present, working",
		"seat of Agent-3 on m3: absent, last beat 2m0s ago",
		"seat of Agent-4 on m4: never heard (run 'agentctl run Agent-4 --hub URL' on m4)",
	} {
		if !strings.Contains(v, want) {
			t.Errorf("top does not say %q:\n%s", want, v)
		}
	}
	if strings.Contains(v, "seat of Agent-1") {
		t.Errorf("top shows a seat for a local agent:\n%s", v)
	}
}
