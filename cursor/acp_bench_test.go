package cursor

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// BenchmarkACPTurnOverhead measures what an ACP turn costs beyond the
// agent's own time (the stand-in appends the time each prompt took it),
// beside an exec turn of cat, whose whole time is the process it starts.
// The target is at most 20 ms a turn.
func BenchmarkACPTurnOverhead(b *testing.B) {
	const reply = "Done.\n\n```agentctl\nreport: done\n```\n"
	b.Run("acp", func(b *testing.B) {
		s := acpStandIn(b)
		timings := filepath.Join(b.TempDir(), "timings")
		s.Env = append(s.Env, "ACPAGENT_TIMINGS="+timings)
		d := newACP(b, s)
		ctx := context.Background()
		var session string
		turn := func() {
			got, err := d.Run(ctx, Turn{Prompt: "echo:" + reply, Session: session, OnSession: func(id string) { session = id }})
			if err != nil || got != reply {
				b.Fatalf("reply %q, %v", got, err)
			}
		}
		turn() // the agent's start and the session are not a turn's cost
		os.Remove(timings)
		b.ResetTimer()
		start := time.Now()
		for range b.N {
			turn()
		}
		wall := time.Since(start)
		b.StopTimer()
		own := sumNanos(b, timings)
		b.ReportMetric(acpMS(wall)/float64(b.N), "turn-ms")
		b.ReportMetric(acpMS(own)/float64(b.N), "agent-ms")
		b.ReportMetric(acpMS(wall-own)/float64(b.N), "overhead-ms")
	})
	b.Run("exec", func(b *testing.B) {
		if runtime.GOOS == "windows" {
			b.Skip("cat is not on Windows")
		}
		d, err := NewExec(ExecSettings{Command: []string{"cat"}})
		if err != nil {
			b.Fatal(err)
		}
		ctx := context.Background()
		b.ResetTimer()
		start := time.Now()
		for range b.N {
			if got, err := d.Run(ctx, Turn{Prompt: reply}); err != nil || got != reply {
				b.Fatalf("reply %q, %v", got, err)
			}
		}
		b.ReportMetric(acpMS(time.Since(start))/float64(b.N), "overhead-ms")
	})
}

func sumNanos(b *testing.B, file string) time.Duration {
	data, err := os.ReadFile(file)
	if err != nil {
		b.Fatal(err)
	}
	var sum time.Duration
	for _, l := range strings.Fields(string(data)) {
		n, err := strconv.ParseInt(l, 10, 64)
		if err != nil {
			b.Fatal(err)
		}
		sum += time.Duration(n)
	}
	return sum
}

func acpMS(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
