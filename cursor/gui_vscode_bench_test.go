//go:build linux && !nogui

package cursor

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// BenchmarkGUIVSCodeOverhead takes turns against code-server's VS Code
// chat with the vscode profile and reports
//
//	overhead-ms  the whole turn minus the model's own time (from the
//	             participant receiving the prompt to its recording the
//	             finished reply): the driver's cost, including the copy
//	             route, the check against the transcript and VS Code's
//	             own rendering after the model is done. Target ≤ 300.
func BenchmarkGUIVSCodeOverhead(b *testing.B) {
	replies := b.TempDir()
	writeReply(b, replies, "short", "Short **and** done: {{message_id}}.\n", `{"think_ms": 400}`)
	chat := startVSCode(b, "Agent-6 — VS Code bench", replies)
	for _, name := range []string{"short", "markdown"} {
		b.Run(name, func(b *testing.B) {
			g, err := NewGUI(chat.window(), vscodeGUI(), Options{LockDir: b.TempDir(), Log: driverLog()})
			if err != nil {
				b.Fatal(err)
			}
			defer g.Close()
			if _, err := g.Run(context.Background(), Turn{Prompt: "Message-ID: warm-up\nvscodechat:default"}); err != nil {
				b.Fatal(err)
			}
			var overhead time.Duration
			b.ResetTimer()
			for n := 0; n < b.N; n++ {
				prompt := fmt.Sprintf("Message-ID: b-%s-%d\nvscodechat:%s", name, n, name)
				start := time.Now()
				got, err := g.Run(context.Background(), Turn{Prompt: prompt})
				if err != nil {
					b.Fatal(err)
				}
				took := time.Since(start)
				if ex := chat.lastExchange(b); ex.Prompt != prompt || ex.Reply != got {
					b.Fatalf("turn %d: the driver returned %d bytes for %q, the participant gave %d for %q", n, len(got), prompt, len(ex.Reply), ex.Prompt)
				}
				overhead += took - chat.lastModelTime(b)
				if name == "markdown" {
					// Alternate, so that no copy equals the one before.
					if _, err := g.Run(context.Background(), Turn{Prompt: fmt.Sprintf("Message-ID: b-sep-%d\nvscodechat:short", n)}); err != nil {
						b.Fatal(err)
					}
				}
			}
			b.ReportMetric(float64(overhead.Milliseconds())/float64(b.N), "overhead-ms")
		})
	}
}
