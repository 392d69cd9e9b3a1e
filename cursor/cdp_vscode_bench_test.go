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

	"github.com/agentctl/agentctl/cursor"
)

// BenchmarkCDPOverheadVSCode runs turns on VS Code's chat view in
// code-server through the cdp driver with VS Code's profile, and reports
//
//	overhead-ms  the whole turn minus the model's own time (from the
//	             participant receiving the prompt to its reply ending, as
//	             it recorded them): the driver's cost together with VS
//	             Code's own (its trip to the extension host and back, and
//	             drawing the reply). Target: ≤ 100.
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
	for _, scenario := range []string{"short", "whole"} {
		b.Run(scenario, func(b *testing.B) {
			var overhead time.Duration
			for n := 0; n < b.N; n++ {
				start := time.Now()
				if _, err := d.Run(context.Background(), turnOf(fmt.Sprintf("Message-ID: b-%d\nvscodechat:%s", n, scenario))); err != nil {
					b.Fatal(err)
				}
				overhead += time.Since(start) - v.lastModelTime(b)
			}
			b.ReportMetric(float64(overhead.Microseconds())/1000/float64(b.N), "overhead-ms")
		})
	}
}

// lastModelTime is how long the participant took over its last answer.
func (v *vscodeChat) lastModelTime(t testing.TB) time.Duration {
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
	return e.Time.Sub(e.Received)
}

func turnOf(prompt string) cursor.Turn { return cursor.Turn{Prompt: prompt} }
