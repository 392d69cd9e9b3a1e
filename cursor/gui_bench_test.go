//go:build linux && !nogui

package cursor

import (
	"context"
	"testing"
	"time"
)

// BenchmarkGUITurn20KB runs whole turns with a 20 KB prompt against the
// stand-in window and reports:
//
//	inject-ms    from the start of the turn until the prompt is pasted
//	             (lock, clipboard, activation, click, paste): target ≤ 400
//	overhead-ms  the whole turn minus the reply's own streaming time
//	             (the stand-in's thinking delay and pauses between chunks),
//	             so it includes the quiet period: target ≤ 1000
func BenchmarkGUITurn20KB(b *testing.B) {
	const think, pause, chunks = 0.3, 0.25, 3
	streaming := time.Duration((think + pause*(chunks-1)) * float64(time.Second))
	chat := startChat(b, chatOptions{title: "Cursor - bench", x: 10, y: 400, think: think, pause: pause, chunks: chunks})
	g := newTestGUI(b, chat.window(), b.TempDir())
	prompt := bigPrompt()
	var inject, overhead time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		var injected time.Time
		reply, err := g.Run(context.Background(), Turn{Prompt: prompt, NewChat: true, OnStage: func(s Stage) error {
			if s == StageInjected {
				injected = time.Now()
			}
			return nil
		}})
		if err != nil {
			b.Fatal(err)
		}
		if reply != prompt {
			b.Fatal("reply differs from the prompt")
		}
		inject += injected.Sub(start)
		overhead += time.Since(start) - streaming
	}
	b.ReportMetric(float64(inject.Milliseconds())/float64(b.N), "inject-ms")
	b.ReportMetric(float64(overhead.Milliseconds())/float64(b.N), "overhead-ms")
}
