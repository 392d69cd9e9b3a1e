package mailbox

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// BenchmarkDeliver measures durable deliveries (fsynced file, link, marker,
// folder fsync) from one writer.
func BenchmarkDeliver(b *testing.B) {
	mb := openMailbox(b, newRuntime(b, "Agent-1"), "Agent-1")
	b.ResetTimer()
	start := time.Now()
	for i := 0; b.Loop(); i++ {
		if err := mb.Deliver(testMessage(fmt.Sprintf("d-%d", i), "Agent-1", Normal)); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "deliveries/s")
}

// BenchmarkDeliver8Writers measures durable deliveries from 8 concurrent
// writers into one inbox.
func BenchmarkDeliver8Writers(b *testing.B) {
	mb := openMailbox(b, newRuntime(b, "Agent-1"), "Agent-1")
	var next atomic.Int64
	var wg sync.WaitGroup
	b.ResetTimer()
	start := time.Now()
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := next.Add(1)
				if i > int64(b.N) {
					return
				}
				if err := mb.Deliver(testMessage(fmt.Sprintf("w%d-%d", w, i), "Agent-1", Normal)); err != nil {
					b.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "deliveries/s")
}

// BenchmarkPickupLatency measures the time from a message file appearing in
// inbox/ to its claim, with the watcher and the consumer loop running and
// otherwise idle.
func BenchmarkPickupLatency(b *testing.B) {
	mb := openMailbox(b, newRuntime(b, "Agent-1"), "Agent-1")
	c := consume(b, mb, Options{Known: []string{"Agent-1"}}, time.Now())
	w, err := Watch(mb, WatchOptions{})
	if err != nil {
		b.Fatal(err)
	}
	defer w.Close()
	claimed := make(chan time.Time)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() {
		done <- Serve(ctx, c, c, w.C, Worker{Handle: func(ctx context.Context, cl *Claim) error {
			claimed <- time.Now()
			return c.Complete(cl, Receipt{}, time.Now())
		}})
	}()
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		time.Sleep(2 * time.Millisecond) // let the loop go idle again
		// The file appears the way `mv` drops one in: a rename into inbox/.
		id := fmt.Sprintf("p-%d", i)
		tmp := filepath.Join(b.TempDir(), id+".json")
		if err := os.WriteFile(tmp, testMessage(id, "Agent-1", Normal).Encode(), 0o644); err != nil {
			b.Fatal(err)
		}
		appeared := time.Now()
		if err := os.Rename(tmp, inboxPath(mb, id+".json")); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, (<-claimed).Sub(appeared))
	}
	b.StopTimer()
	cancel()
	if err := <-done; err != nil {
		b.Fatal(err)
	}
	reportPercentiles(b, lat)
}

func reportPercentiles(b *testing.B, lat []time.Duration) {
	slices.Sort(lat)
	at := func(p float64) float64 {
		return float64(lat[min(len(lat)-1, int(p*float64(len(lat))))].Microseconds()) / 1000
	}
	b.ReportMetric(at(0.50), "p50-ms")
	b.ReportMetric(at(0.99), "p99-ms")
}

// BenchmarkClaim measures claiming (and archiving) one message with 10 and
// with 10,000 messages pending: the index makes both cost the same.
func BenchmarkClaim(b *testing.B) {
	for _, pending := range []int{10, 10000} {
		b.Run(fmt.Sprintf("pending=%d", pending), func(b *testing.B) {
			mb := openMailbox(b, newRuntime(b, "Agent-1"), "Agent-1")
			for i := range pending {
				if err := mb.Deliver(testMessage(fmt.Sprintf("c-%06d", i), "Agent-1", Normal)); err != nil {
					b.Fatal(err)
				}
			}
			now := time.Now()
			c := consume(b, mb, Options{Known: []string{"Agent-1"}}, now)
			var claimTime time.Duration
			for i := 0; b.Loop(); i++ {
				start := time.Now()
				cl, err := c.Claim(now)
				claimTime += time.Since(start)
				if err != nil {
					b.Fatal(err)
				}
				if err := c.Complete(cl, Receipt{}, now); err != nil {
					b.Fatal(err)
				}
				// keep the queue at its size
				m := testMessage(fmt.Sprintf("r-%06d", i), "Agent-1", Normal)
				if err := mb.Deliver(m); err != nil {
					b.Fatal(err)
				}
				c.index(m)
			}
			b.ReportMetric(float64(claimTime.Microseconds())/float64(b.N), "claim-µs")
		})
	}
}
