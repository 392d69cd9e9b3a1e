package hub

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/agentctl/agentctl/internal/atomicfile"
	"github.com/agentctl/agentctl/internal/clock"
	"github.com/agentctl/agentctl/internal/layout"
)

// SeatsFile is where the hub shows the seats of remote agents: the last
// beat of each, for `agentctl status` and mission control.
func SeatsFile(root string) string { return layout.HubSeats(root) }

// Seats is the content of SeatsFile.
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

// ReadSeats reads SeatsFile; ok is false when no hub ever wrote one.
func ReadSeats(root string) (s Seats, ok bool, err error) {
	data, err := os.ReadFile(SeatsFile(root))
	if errors.Is(err, fs.ErrNotExist) {
		return Seats{}, false, nil
	}
	if err != nil {
		return Seats{}, false, err
	}
	if err := json.Unmarshal(data, &s); err != nil {
		return Seats{}, false, fmt.Errorf("cannot read %s: %w", SeatsFile(root), err)
	}
	return s, true, nil
}

// SeatsSettings are what the hub's record of the seats needs.
type SeatsSettings struct {
	Root    string
	Machine string   // the hub's machine
	Remote  []string // the agents the hub keeps runners for
	Conn    *nats.Conn
	// Clock stamps the beats as the hub hears them, and times the
	// rewrites of SeatsFile; clock.System when nil.
	Clock clock.Clock
}

// FollowSeats listens to the seats' beats and keeps SeatsFile until ctx
// ends: at once when a seat appears or changes state, else every beat.
func FollowSeats(ctx context.Context, ss SeatsSettings) error {
	root, clk := ss.Root, clock.Or(ss.Clock)
	var mu sync.Mutex
	beats := map[string]Beat{}
	changed := make(chan struct{}, 1)
	sub, err := ss.Conn.Subscribe(beatSubject("*"), func(m *nats.Msg) {
		var b Beat
		if json.Unmarshal(m.Data, &b) != nil || b.Agent == "" {
			return
		}
		b.At = clk.Now().UTC() // the hub's clock, not the seat's
		mu.Lock()
		old, known := beats[b.Agent]
		beats[b.Agent] = b
		mu.Unlock()
		if !known || old.State != b.State || old.Turn != b.Turn || old.PID != b.PID {
			select {
			case changed <- struct{}{}:
			default:
			}
		}
	})
	if err != nil {
		return fmt.Errorf("cannot follow the seats: %w", err)
	}
	defer sub.Unsubscribe()
	if err := atomicfile.MkdirAll(filepath.Dir(SeatsFile(root))); err != nil {
		return err
	}
	// Every beat of the clock, as a ticker would, whatever changes come
	// between.
	next := clk.Now().Add(DefaultBeat)
	tick := clk.At(next)
	for {
		mu.Lock()
		s := Seats{PID: os.Getpid(), Machine: ss.Machine, UpdatedAt: clk.Now().UTC(), Remote: ss.Remote, Beats: maps.Clone(beats)}
		mu.Unlock()
		data, _ := json.MarshalIndent(s, "", "  ")
		if err := atomicfile.WriteFileNoSync(SeatsFile(root), append(data, '\n')); err != nil {
			return fmt.Errorf("cannot show the seats: %w", err)
		}
		select {
		case <-ctx.Done():
			return nil
		case now := <-tick:
			for !next.After(now) { // ticks missed (a machine asleep) are dropped
				next = next.Add(DefaultBeat)
			}
			tick = clk.At(next)
		case <-changed:
		}
	}
}
