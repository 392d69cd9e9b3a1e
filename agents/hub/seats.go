package hub

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/rs/zerolog"

	"github.com/agentctl/agentctl/agents/hub/hubseats"
	"github.com/agentctl/agentctl/internal/atomicfile"
	"github.com/agentctl/agentctl/internal/clock"
	"github.com/agentctl/agentctl/mailbox"
)

// Seats is the record the hub keeps of the seats (package hubseats).
type Seats = hubseats.Seats

// SeatsSettings are what the hub's record of the seats needs.
type SeatsSettings struct {
	Root    string
	Machine string   // the hub's machine
	Remote  []string // the agents the hub keeps runners for
	Conn    *nats.Conn
	// Clock stamps the beats as the hub hears them, and times the
	// rewrites of SeatsFile; clock.System when nil.
	Clock clock.Clock
	// Human is told, in their mailbox, when a seat that was heard from
	// falls silent, and when it is heard again; "" tells no one.
	Human string
	Log   zerolog.Logger
}

// maxBeatBytes bounds a beat: a machine, its pid, a state and a turn's id.
const maxBeatBytes = 4 << 10

// FollowSeats listens to the seats' beats and keeps SeatsFile until ctx
// ends: at once when a seat appears or changes state, else every beat.
func FollowSeats(ctx context.Context, ss SeatsSettings) error {
	root, clk := ss.Root, clock.Or(ss.Clock)
	var mu sync.Mutex
	beats := map[string]Beat{}
	// The last hub's record goes on: a seat heard before this hub started
	// is not "never heard", and one that fell silent meanwhile is told.
	present := map[string]bool{}
	if prev, ok, err := hubseats.Read(root); err == nil && ok {
		for _, agent := range ss.Remote {
			if b, heard := prev.Beats[agent]; heard {
				beats[agent] = b
				_, present[agent] = prev.Seen(agent, prev.UpdatedAt)
			}
		}
	}
	changed := make(chan struct{}, 1)
	sub, err := ss.Conn.Subscribe(beatSubject("*"), func(m *nats.Msg) {
		// The agent is the subject's, which the server lets only its
		// machine publish on, never the body's: a machine must not speak
		// for another's seat. What the body says is kept small.
		agent := strings.TrimPrefix(m.Subject, beatSubject(""))
		var b Beat
		if len(m.Data) > maxBeatBytes || !slices.Contains(ss.Remote, agent) || json.Unmarshal(m.Data, &b) != nil {
			return
		}
		b.Agent = agent
		b.At = clk.Now().UTC() // the hub's clock, not the seat's
		mu.Lock()
		old, known := beats[b.Agent]
		beats[b.Agent] = b
		mu.Unlock()
		// A seat heard again after a silence is news too.
		if !known || old.State != b.State || old.Turn != b.Turn || old.PID != b.PID || b.At.Sub(old.At) >= 3*DefaultBeat {
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
	// The server has the subscription before the seats file says the hub
	// listens: a beat sent after that is heard.
	if err := ss.Conn.Flush(); err != nil {
		return fmt.Errorf("cannot follow the seats: %w", err)
	}
	if err := atomicfile.MkdirAll(filepath.Dir(hubseats.File(root))); err != nil {
		return err
	}
	// Every beat of the clock, as a ticker would, whatever changes come
	// between.
	listening := clk.Now().UTC()
	next := clk.Now().Add(DefaultBeat)
	tick := clk.At(next)
	for {
		mu.Lock()
		s := Seats{PID: os.Getpid(), Machine: ss.Machine, UpdatedAt: clk.Now().UTC(), Remote: ss.Remote, Beats: maps.Clone(beats)}
		mu.Unlock()
		now := clk.Now().UTC()
		gone, back := seatChanges(s, present, now)
		if now.Before(listening.Add(3 * DefaultBeat)) {
			// A seat heard by the last hub is given three beats to be
			// heard by this one before it counts as gone.
			for _, agent := range gone {
				present[agent] = true
			}
			gone = nil
		}
		for _, agent := range gone {
			ss.tellSeat(agent, s.Beats[agent], "gone", now)
		}
		for _, agent := range back {
			ss.tellSeat(agent, s.Beats[agent], "back", now)
		}
		data, _ := json.MarshalIndent(s, "", "  ")
		if err := atomicfile.WriteFileNoSync(hubseats.File(root), append(data, '\n')); err != nil {
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

// seatChanges compares the seats as they look at now with present (which
// it updates): the agents whose seat, heard from before, fell silent, and
// those heard again after that.
func seatChanges(s Seats, present map[string]bool, now time.Time) (gone, back []string) {
	for _, agent := range s.Remote {
		_, heard := s.Beats[agent]
		_, here := s.Seen(agent, now)
		was, known := present[agent]
		switch {
		case !heard:
			continue
		case known && was && !here:
			gone = append(gone, agent)
		case known && !was && here:
			back = append(back, agent)
		}
		present[agent] = here
	}
	return gone, back
}

// tellSeat tells the person that agent's seat fell silent (what "gone")
// or is heard again ("back"). The notice's id comes from the seat's last
// beat, so a hub restarted into the same silence does not tell it twice.
func (ss SeatsSettings) tellSeat(agent string, last Beat, what string, now time.Time) {
	ss.Log.Warn().Str("event", "seat-"+what).Str("agent", agent).Str("machine", last.Machine).Time("last_beat", last.At).Msg("a remote seat changed")
	if ss.Human == "" {
		return
	}
	subject := fmt.Sprintf("%s's seat on %s is not heard from", agent, last.Machine)
	body := fmt.Sprintf("The hub last heard %s's seat on %s at %s. Its turns wait for it on the hub, none is lost; it takes them again once it is back. Is the machine asleep, or 'agentctl run %s --hub …' stopped there?",
		agent, last.Machine, last.At.Format(time.RFC3339), agent)
	if what == "back" {
		subject = fmt.Sprintf("%s's seat on %s is back", agent, last.Machine)
		body = fmt.Sprintf("The hub hears %s's seat on %s again, at %s. The turns that waited are taken in order.", agent, last.Machine, now.Format(time.RFC3339))
	}
	msg := mailbox.Message{
		ID: fmt.Sprintf("seat-%s-%s-%s", what, strings.ToLower(agent), last.At.UTC().Format("20060102T150405")), From: "agentctl", To: ss.Human,
		Type: "recovery", Priority: mailbox.High, Subject: subject, Body: body, CreatedAt: now,
		Meta: map[string]any{"agent": agent, "machine": last.Machine},
	}
	if err := mailbox.DeliverNotice(ss.Root, msg); err != nil {
		ss.Log.Warn().Err(err).Str("to", ss.Human).Msg("cannot tell the person about a remote seat")
	}
}
