//go:build linux && !nogui

package cursor

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// standIns start either stand-in window.
var standIns = []struct {
	name  string
	start func(testing.TB, chatOptions) *chatWindow
}{{"tk", startChat}, {"chromium", startChromium}}

// BenchmarkGUIOverhead runs turns of every timing shape on both stand-ins,
// with and without a busy indicator, and reports
//
//	overhead-ms  the whole turn minus the model's own time (from the
//	             window receiving the prompt to its reply being finished,
//	             as the window logged them): the driver's cost. Targets:
//	             ≤ 300 with a busy indicator, ≤ gui.max_pause + 200
//	             without one.
//
// Turns after the first of a chat are measured: the first also waits up to
// copyWait for a copy button that has no reply to copy yet.
func BenchmarkGUIOverhead(b *testing.B) {
	for _, si := range standIns {
		for i, s := range shapes {
			if s.name == "long-think" || s.name == "long-pause" {
				continue // the model's time, not the driver's, dominates
			}
			for _, busy := range []bool{true, false} {
				name := fmt.Sprintf("%s/%s/busy=%v", si.name, s.name, busy)
				b.Run(name, func(b *testing.B) {
					chat := si.start(b, chatOptions{title: "Cursor - bench " + name, x: 10 + 430*(i%3), y: 400, shape: s})
					w := chat.window()
					if !busy {
						w.Busy = nil
					}
					g := newTestGUI(b, w, b.TempDir())
					warmUp(b, g)
					var overhead time.Duration
					b.ResetTimer()
					for n := 0; n < b.N; n++ {
						start := time.Now()
						if _, err := g.Run(context.Background(), Turn{Prompt: fmt.Sprintf("turn %d: %s", n, shapePrompt(s))}); err != nil {
							b.Fatal(err)
						}
						overhead += time.Since(start) - chat.lastModelTime(b)
					}
					b.ReportMetric(float64(overhead.Milliseconds())/float64(b.N), "overhead-ms")
				})
			}
		}
	}
}

// BenchmarkGUIPaste20KB reports, for a 20 KB prompt with Unicode, emoji,
// tabs and CRLF,
//
//	received-ms  from the start of the turn until the window received the
//	             whole prompt (lock, clipboard, activation, the copy of the
//	             previous reply, the paste and the submit key): target ≤ 400
func BenchmarkGUIPaste20KB(b *testing.B) {
	for _, si := range standIns {
		b.Run(si.name, func(b *testing.B) {
			s := shape{name: "quick", think: 0, chunks: 1}
			chat := si.start(b, chatOptions{title: "Cursor - paste bench " + si.name, x: 10, y: 400, shape: s})
			g := newTestGUI(b, chat.window(), b.TempDir())
			warmUp(b, g)
			var received time.Duration
			b.ResetTimer()
			for n := 0; n < b.N; n++ {
				prompt := fmt.Sprintf("turn %d\n%s", n, bigPrompt())
				start := time.Now()
				if _, err := g.Run(context.Background(), Turn{Prompt: prompt}); err != nil {
					b.Fatal(err)
				}
				ev := chat.last(b, "prompt")
				if ev.text != prompt {
					b.Fatalf("the window received a %d-byte prompt, want the %d-byte one", len(ev.text), len(prompt))
				}
				received += ev.at.Sub(start)
			}
			b.ReportMetric(float64(received.Milliseconds())/float64(b.N), "received-ms")
		})
	}
}

// warmUp takes the chat's first turn, which differs from the rest (see
// BenchmarkGUIOverhead).
func warmUp(b *testing.B, g *GUI) {
	b.Helper()
	if _, err := g.Run(context.Background(), Turn{Prompt: "warm-up"}); err != nil {
		b.Fatal(err)
	}
}
