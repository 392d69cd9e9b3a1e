//go:build linux && !nogui

package cursor

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/agentctl/agentctl/internal/testenv/codeserver"
)

// BenchmarkGUIVSCodeOverhead takes turns against code-server's VS Code
// chat with the vscode profile and reports
//
//	overhead-ms  the whole turn minus the model's own time (from the
//	             participant receiving the prompt to its recording the
//	             finished reply): the driver's cost together with VS
//	             Code's own. Target ≤ 300.
//	app-ms       VS Code's own part of that, timed inside the page: from
//	             the Enter that sends the prompt to the participant
//	             receiving it (the trip to the extension host), and from
//	             the reply's end to the stop button leaving the page, the
//	             first sign a GUI seat can see;
//	driver-ms    the rest: proving the seat, pasting and proving the
//	             prompt, then seeing the stop button go and the quiet
//	             period (gui.quiet, 100 ms) within which the reply and the
//	             transcript are copied through the reply's context menu and
//	             checked one against the other.
//
// Figures on a 2-core machine beside other test runs, -benchtime 10x:
//
//	                  short reply         markdown reply      load average
//	before            918 ms              1138 ms             3
//	after             343 ms (app 152)    355 ms (app 166)    3-4
//	after, loaded     508 ms (app 208)    769 ms (app 411)    6-14
//
// Before, a turn copied the previous reply through its context menu, waited
// 0.2 s for the composer to hold still, then after the stop button went
// waited the quiet period and VS Code's redrawing before two more copies.
// 300 ms is out of reach with gui.quiet at its default: the turn cannot
// end before the stop button has stayed gone for those 100 ms, on top of
// VS Code's own 150-170 ms; the rest is about 60 ms to paste and prove the
// prompt (VS Code lands a paste 20-80 ms after the keys) and 10 ms to see
// the stop button go, the two copies running within the quiet period.
func BenchmarkGUIVSCodeOverhead(b *testing.B) {
	replies := b.TempDir()
	writeReply(b, replies, "short", "Short **and** done: {{message_id}}.\n", `{"think_ms": 400}`)
	chat := startVSCode(b, "Agent-6 — VS Code bench", replies)
	page := chat.stopWatch(b)
	for _, name := range []string{"short", "markdown"} {
		b.Run(name, func(b *testing.B) {
			g, err := NewGUI(chat.window(), vscodeGUI(), Options{LockDir: b.TempDir(), Log: driverLog(b)})
			if err != nil {
				b.Fatal(err)
			}
			defer g.Close()
			if _, err := g.Run(context.Background(), Turn{Prompt: "Message-ID: warm-up\nvscodechat:default"}); err != nil {
				b.Fatal(err)
			}
			var overhead, app time.Duration
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
				received, replied := chat.lastTimes(b)
				sent, stopped := page.times(b)
				overhead += took - replied.Sub(received)
				app += received.Sub(sent) + stopped.Sub(replied)
				if name == "markdown" {
					// Alternate, so that no copy equals the one before.
					if _, err := g.Run(context.Background(), Turn{Prompt: fmt.Sprintf("Message-ID: b-sep-%d\nvscodechat:short", n)}); err != nil {
						b.Fatal(err)
					}
				}
			}
			b.ReportMetric(float64(overhead.Microseconds())/1000/float64(b.N), "overhead-ms")
			b.ReportMetric(float64(app.Microseconds())/1000/float64(b.N), "app-ms")
			b.ReportMetric(float64((overhead-app).Microseconds())/1000/float64(b.N), "driver-ms")
		})
	}
}

// stopWatcher times, inside the chat's page, the last Enter a keyboard
// pressed and when the stop button last left the page.
type stopWatcher struct{ page *chromedp.Browser }

func (c *vscodeChat) stopWatch(t testing.TB) stopWatcher {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	page, err := codeserver.Page(ctx, c.win.Endpoint, c.title)
	if err != nil {
		t.Fatal(err)
	}
	js := `(() => { window.__sentAt = 0; window.__stoppedAt = 0; let shown = false;
	  const now = () => performance.timeOrigin + performance.now();
	  window.addEventListener("keydown", e => { if (e.isTrusted && e.key === "Enter" && e.target.closest(".interactive-input-part")) window.__sentAt = now(); }, true);
	  new MutationObserver(() => {
	    const s = !!document.querySelector(".interactive-input-part .codicon-stop-circle");
	    if (shown && !s) window.__stoppedAt = now();
	    shown = s; })
	  .observe(document.body, {subtree: true, attributes: true, attributeFilter: ["class"], childList: true}); })()`
	if err := page.Execute(context.Background(), "Runtime.evaluate", map[string]any{"expression": js}, nil); err != nil {
		t.Fatal(err)
	}
	return stopWatcher{page}
}

// times returns when the last Enter was pressed in the composer and when
// the stop button last went.
func (w stopWatcher) times(t testing.TB) (sent, stopped time.Time) {
	t.Helper()
	at, err := codeserver.PageTimes(context.Background(), w.page, "__sentAt", "__stoppedAt")
	if err != nil {
		t.Fatalf("the page never timed an Enter and a stop button going: %v", err)
	}
	return at[0], at[1]
}
