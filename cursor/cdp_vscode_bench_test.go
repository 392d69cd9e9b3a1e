//go:build linux

package cursor_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/agentctl/agentctl/cursor"
	"github.com/agentctl/agentctl/internal/testenv/codeserver"
)

// BenchmarkCDPOverheadVSCode runs turns on VS Code's chat view in
// code-server through the cdp driver with VS Code's profile, and reports
//
//	overhead-ms  the whole turn minus the model's own time (from the
//	             participant receiving the prompt to its reply ending, as
//	             it recorded them): the driver's cost together with VS
//	             Code's own;
//	app-ms       VS Code's own part of that: from the Enter that sends
//	             the prompt to the participant receiving it (the trip to
//	             the extension host), and from the reply ending to VS
//	             Code having drawn it (it draws progressively; a watcher
//	             in the page times the end of its loading state and the
//	             last change to the reply's words after it);
//	driver-ms    the rest: what the driver adds to the app, before the
//	             Enter (proving the seat, putting the prompt in and
//	             proving it) and after the reply is drawn (proving it
//	             settled, copying and checking it). Target: ≤ 100.
//
// for a short reply and for the default one, both written at once.
func BenchmarkCDPOverheadVSCode(b *testing.B) {
	v := startVSCodeChat(b)
	for name, data := range map[string]string{
		"short.md":   "Done.\n\n```agentctl\n{\"devlog\": \"done {{message_id}}\"}\n```\n",
		"short.json": `{"chunk": 100000, "delay_ms": 0}`,
		"whole.md":   "## Done\n\nI looked at the task and did the work:\n\n- read the message **carefully**;\n- checked the board, _twice_;\n- wrote the note below.\n\n```agentctl\n{\"devlog\": \"Answered {{message_id}}.\"}\n```\n",
		"whole.json": `{"chunk": 100000, "delay_ms": 0}`,
	} {
		if err := os.WriteFile(filepath.Join(v.replies, name), []byte(data), 0o600); err != nil {
			b.Fatal(err)
		}
	}
	d := v.driver(b, v.seat())
	w := v.drawnWatch(b)
	for _, scenario := range []string{"short", "whole"} {
		b.Run(scenario, func(b *testing.B) {
			var overhead, app time.Duration
			for n := 0; n < b.N; n++ {
				start := time.Now()
				if _, err := d.Run(context.Background(), turnOf(fmt.Sprintf("Message-ID: b-%d\nvscodechat:%s", n, scenario))); err != nil {
					b.Fatal(err)
				}
				took := time.Since(start)
				received, ended := v.lastAnswer(b)
				sent, drawn := w.times(b)
				overhead += took - ended.Sub(received)
				app += received.Sub(sent) + drawn.Sub(ended)
			}
			b.ReportMetric(ms(overhead)/float64(b.N), "overhead-ms")
			b.ReportMetric(ms(app)/float64(b.N), "app-ms")
			b.ReportMetric(ms(overhead-app)/float64(b.N), "driver-ms")
		})
	}
}

// drawnWatcher times, inside the page, the last Enter a person's
// keyboard (or CDP's, which the page cannot tell from it) pressed, and
// when the last reply of VS Code's chat was drawn in full: the last
// change to its words once it stopped loading (VS Code draws its code
// blocks' editors a moment after), toolbars aside.
type drawnWatcher struct{ page *chromedp.Browser }

func (v *vscodeChat) drawnWatch(t testing.TB) drawnWatcher {
	t.Helper()
	page := v.page(t)
	js := `(() => { let loading = 0; window.__drawnAt = 0; window.__sentAt = 0;
	  const now = () => performance.timeOrigin + performance.now();
	  window.addEventListener("keydown", e => { if (e.isTrusted && e.key === "Enter") window.__sentAt = now(); }, true);
	  const reply = () => [...document.querySelectorAll(".interactive-session .interactive-response")].pop();
	  new MutationObserver(records => { const n = document.querySelectorAll(".interactive-response.chat-response-loading").length;
	    const r = reply(), words = r && records.some(m => m.type !== "attributes" && r.contains(m.target) && !m.target.closest(".monaco-action-bar"));
	    if (loading > 0 && n === 0 || n === 0 && window.__drawnAt > 0 && words) window.__drawnAt = now();
	    if (n > 0) window.__drawnAt = 0;
	    loading = n; })
	  .observe(document.body, {subtree: true, attributes: true, attributeFilter: ["class"], childList: true, characterData: true}); })()`
	if err := page.Execute(context.Background(), "Runtime.evaluate", map[string]any{"expression": js}, nil); err != nil {
		t.Fatal(err)
	}
	return drawnWatcher{page}
}

// page is a connection of the test's own to the chat's page, beside the
// driver's.
func (v *vscodeChat) page(t testing.TB) *chromedp.Browser {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	page, err := codeserver.Page(ctx, v.b.Endpoint, vscodeTitle)
	if err != nil {
		t.Fatal(err)
	}
	return page
}

// times returns when the last Enter was pressed and the last reply drawn.
func (w drawnWatcher) times(t testing.TB) (sent, drawn time.Time) {
	t.Helper()
	at, err := codeserver.PageTimes(context.Background(), w.page, "__sentAt", "__drawnAt")
	if err != nil {
		t.Fatalf("the page never timed an Enter and a reply drawn: %v", err)
	}
	return at[0], at[1]
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// lastAnswer is when the participant received its last prompt and when
// its reply ended, as it recorded them.
func (v *vscodeChat) lastAnswer(t testing.TB) (received, ended time.Time) {
	data, err := os.ReadFile(v.s.Record)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	var e struct {
		Received time.Time `json:"received"`
		Time     time.Time `json:"time"`
	}
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &e); err != nil || e.Received.IsZero() {
		t.Fatalf("the participant's last record %q has no times: %v", lines[len(lines)-1], err)
	}
	return e.Received, e.Time
}

func turnOf(prompt string) cursor.Turn { return cursor.Turn{Prompt: prompt} }
