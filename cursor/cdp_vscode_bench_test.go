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
)

// BenchmarkCDPOverheadVSCode runs turns on VS Code's chat view in
// code-server through the cdp driver with VS Code's profile, and reports
//
//	overhead-ms  the whole turn minus the model's own time (from the
//	             participant receiving the prompt to its reply ending, as
//	             it recorded them): the driver's cost together with VS
//	             Code's own (its trip to the extension host, and drawing
//	             the reply, which it does progressively and slowly);
//	driver-ms    the whole turn minus the time from the participant
//	             receiving the prompt to VS Code having drawn the reply (a
//	             watcher in the page times the end of its loading state):
//	             what the driver adds to the app. Target: ≤ 100.
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
			var overhead, driver time.Duration
			for n := 0; n < b.N; n++ {
				start := time.Now()
				if _, err := d.Run(context.Background(), turnOf(fmt.Sprintf("Message-ID: b-%d\nvscodechat:%s", n, scenario))); err != nil {
					b.Fatal(err)
				}
				took := time.Since(start)
				received, ended := v.lastAnswer(b)
				overhead += took - ended.Sub(received)
				driver += took - w.drawnAt(b).Sub(received)
			}
			b.ReportMetric(float64(overhead.Microseconds())/1000/float64(b.N), "overhead-ms")
			b.ReportMetric(float64(driver.Microseconds())/1000/float64(b.N), "driver-ms")
		})
	}
}

// drawnWatcher times, inside the page, the last moment a reply of VS
// Code's chat stopped loading (was drawn in full).
type drawnWatcher struct{ page *chromedp.Browser }

func (v *vscodeChat) drawnWatch(t testing.TB) drawnWatcher {
	t.Helper()
	pages, err := cursor.ListPages(context.Background(), v.b.Endpoint)
	if err != nil || len(pages) == 0 {
		t.Fatalf("no page: %v", err)
	}
	quiet := func(string, ...any) {}
	var ws string
	for _, p := range pages {
		if p.Title == vscodeTitle {
			ws = p.WS
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	page, err := chromedp.NewBrowser(ctx, ws, chromedp.WithBrowserLogf(quiet), chromedp.WithBrowserErrorf(quiet))
	if err != nil {
		t.Fatal(err)
	}
	js := `(() => { let loading = 0; window.__drawnAt = 0;
	  new MutationObserver(() => { const n = document.querySelectorAll(".interactive-response.chat-response-loading").length;
	    if (loading > 0 && n === 0) window.__drawnAt = performance.timeOrigin + performance.now(); loading = n; })
	  .observe(document.body, {subtree: true, attributes: true, attributeFilter: ["class"], childList: true}); })()`
	if err := page.Execute(context.Background(), "Runtime.evaluate", map[string]any{"expression": js}, nil); err != nil {
		t.Fatal(err)
	}
	return drawnWatcher{page}
}

func (w drawnWatcher) drawnAt(t testing.TB) time.Time {
	var res struct {
		Result struct {
			Value float64 `json:"value"`
		} `json:"result"`
	}
	if err := w.page.Execute(context.Background(), "Runtime.evaluate", map[string]any{"expression": "window.__drawnAt", "returnByValue": true}, &res); err != nil || res.Result.Value == 0 {
		t.Fatalf("the page never timed a reply drawn: %v", err)
	}
	ms := res.Result.Value
	return time.UnixMilli(int64(ms)).Add(time.Duration((ms - float64(int64(ms))) * float64(time.Millisecond)))
}

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
