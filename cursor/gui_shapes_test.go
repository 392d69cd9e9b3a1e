//go:build linux && !nogui

package cursor

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"
)

// roundTrips runs two turns on one window (the second must not take the
// first's reply for its own) and checks each reply is exactly what the
// window answered.
func roundTrips(t *testing.T, g *GUI, prompts, replies func(testing.TB) []string, s shape) {
	t.Helper()
	for turn := 1; turn <= 2; turn++ {
		prompt := fmt.Sprintf("turn %d, %s", turn, shapePrompt(s))
		start := time.Now()
		var notes []string
		reply, err := g.Run(context.Background(), Turn{Prompt: prompt, OnNote: func(n string) { notes = append(notes, n) }})
		if err != nil {
			t.Fatalf("turn %d: %v", turn, err)
		}
		// A reply whose end only stillness told is said to be so.
		if g.win.Busy == nil && !strings.Contains(strings.Join(notes, "\n"), "keeping still") {
			t.Errorf("turn %d: notes %q; want the receipt told that only stillness ended the reply", turn, notes)
		}
		got := prompts(t)
		if len(got) != turn || got[turn-1] != prompt {
			t.Fatalf("turn %d: the window received %q", turn, got)
		}
		answered := replies(t)
		if len(answered) != turn {
			t.Fatalf("turn %d: the driver returned before the window finished its reply (%d of %d replies finished)", turn, len(answered), turn)
		}
		if reply != answered[turn-1] {
			t.Fatalf("turn %d: reply of %d bytes differs from the window's %d-byte reply:\n%q\nwant\n%q", turn, len(reply), len(answered[turn-1]), clip(reply), clip(answered[turn-1]))
		}
		t.Logf("turn %d: %d-byte reply in %s", turn, len(reply), time.Since(start).Round(time.Millisecond))
	}
}

func TestGUIShapesTk(t *testing.T) {
	for i, s := range shapes {
		for _, busy := range []bool{true, false} {
			if !busy && (s.name == "long-think" || s.name == "50KB") {
				continue // stillness alone adds nothing for these beyond long-pause
			}
			name := s.name + "/busy-indicator"
			if !busy {
				name = s.name + "/stillness"
			}
			t.Run(name, func(t *testing.T) {
				chat := startChat(t, chatOptions{title: "Cursor - " + name, x: 10 + 430*(i%3), y: 10, shape: s})
				w := chat.window()
				if !busy {
					w.Busy = nil
				}
				g := newTestGUI(t, w, t.TempDir())
				roundTrips(t, g, chat.prompts, chat.replies, s)
			})
		}
	}
}

// TestGUIStillnessShorterThanAPauseIsCaught shows what gui.max_pause
// protects against, and that a turn with a busy indicator does not depend
// on it.
func TestGUIBusyIndicatorOutlastsAShortMaxPause(t *testing.T) {
	s := shape{name: "pause-beyond-max", think: 0.2, chunks: 4, pause: 0.1, longPause: 2}
	chat := startChat(t, chatOptions{title: "Cursor - pause beyond max_pause", x: 10, y: 400, shape: s})
	gui := testGUI()
	gui.MaxPause = time.Second // shorter than the reply's pause
	g, err := NewGUI(chat.window(), gui, Options{LockDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	roundTrips(t, g, chat.prompts, chat.replies, s)
}

func TestGUIShapesChromium(t *testing.T) {
	for i, s := range shapes {
		for _, busy := range []bool{true, false} {
			if !busy && (s.name == "long-think" || s.name == "50KB") {
				continue
			}
			name := s.name + "/busy-indicator"
			if !busy {
				name = s.name + "/stillness"
			}
			t.Run(name, func(t *testing.T) {
				chat := startChromium(t, chatOptions{title: "Cursor - " + name, x: 10 + 430*(i%3), y: 400, shape: s})
				w := chat.window()
				if !busy {
					w.Busy = nil
				}
				g := newTestGUI(t, w, t.TempDir())
				roundTrips(t, g, chat.prompts, chat.replies, s)
			})
		}
	}
}

// TestGUI50KBPrompt pastes a 50 KB prompt (Unicode, emoji, tabs, CRLF,
// fences) into each stand-in's input box and reads the reply that quotes it.
func TestGUI50KBPrompt(t *testing.T) {
	var b strings.Builder
	for b.Len() < 50*1024 {
		b.WriteString(bigPrompt())
	}
	prompt := b.String()
	for i, si := range standIns {
		t.Run(si.name, func(t *testing.T) {
			chat := si.start(t, chatOptions{title: "Cursor - 50KB " + si.name, x: 10 + 430*i, y: 400, shape: classic})
			g := newTestGUI(t, chat.window(), t.TempDir())
			reply, err := g.Run(context.Background(), Turn{Prompt: prompt})
			if err != nil {
				t.Fatal(err)
			}
			if got := chat.prompts(t); len(got) != 1 || got[0] != prompt {
				t.Fatalf("the window did not receive the %d-byte prompt exactly", len(prompt))
			}
			if reply != "You wrote:\n"+prompt {
				t.Fatalf("the %d-byte reply is not the window's", len(reply))
			}
		})
	}
}
