//go:build linux

package cursor

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"
)

// BenchmarkCDPOverhead runs turns of every quick timing shape on the
// stand-in page through the CDP driver with its default timings, and
// reports
//
//	overhead-ms  the whole turn minus the model's own time (from the page
//	             receiving the prompt to its reply being finished, as the
//	             page logged them): the driver's cost. Target: ≤ 100.
func BenchmarkCDPOverhead(b *testing.B) {
	br := startCDPBrowser(b)
	for _, s := range shapes {
		if s.name == "long-think" || s.name == "long-pause" {
			continue // the model's time, not the driver's, dominates
		}
		b.Run(s.name, func(b *testing.B) {
			c := br.openChatPage(b, "Cursor - bench "+s.name, s, 0)
			seat := c.seat()
			d, err := NewCDP(seat, cdpTestGUI(), Options{})
			if err != nil {
				b.Fatal(err)
			}
			var overhead time.Duration
			b.ResetTimer()
			for n := 0; n < b.N; n++ {
				start := time.Now()
				if _, err := d.Run(context.Background(), Turn{Prompt: fmt.Sprintf("turn %d: %s", n, shapePrompt(s))}); err != nil {
					b.Fatal(err)
				}
				overhead += time.Since(start) - c.lastModelTime(b)
			}
			b.ReportMetric(float64(overhead.Microseconds())/1000/float64(b.N), "overhead-ms")
		})
	}
}

// seatShape is the model of the throughput benchmarks: half a second of
// thinking and streaming per turn.
var seatShape = shape{name: "seat", think: 0.3, chunks: 3, pause: 0.1}

// BenchmarkCDPThreeSeats runs b.N turns on each of three pages at once
// and reports turns/s over all three, to set beside
// BenchmarkGUIThreeSeats: the CDP driver takes no desktop input lock.
func BenchmarkCDPThreeSeats(b *testing.B) {
	br := startCDPBrowser(b)
	var ds []Driver
	for i := range 3 {
		c := br.openChatPage(b, fmt.Sprintf("Agent-%d - Cursor", i+1), seatShape, 0)
		ds = append(ds, newTestCDP(b, c.seat()))
	}
	runSeats(b, ds)
}

// runSeats runs b.N turns on every driver at once, each driver's turns
// one after another, and reports the turns per second of them all.
func runSeats(b *testing.B, ds []Driver) {
	b.Helper()
	b.ResetTimer()
	start := time.Now()
	var wg sync.WaitGroup
	errs := make(chan error, len(ds))
	for i, d := range ds {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := 0; n < b.N; n++ {
				if _, err := d.Run(context.Background(), Turn{Prompt: fmt.Sprintf("seat %d, turn %d", i, n)}); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
	b.ReportMetric(float64(len(ds)*b.N)/time.Since(start).Seconds(), "turns/s")
}

// lastModelTime is how long the page's model took over its last turn.
func (c *chatPageTab) lastModelTime(t testing.TB) time.Duration {
	var prompt, replied float64
	for _, e := range recordedEvents(t, c.log) {
		switch e["event"] {
		case "prompt":
			prompt, _ = e["at"].(float64)
		case "replied":
			replied, _ = e["at"].(float64)
		}
	}
	return time.Duration((replied - prompt) * float64(time.Second))
}
