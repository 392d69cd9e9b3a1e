package intake

import (
	"bytes"
	"fmt"
	"path/filepath"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentctl/agentctl/mailbox"
	"github.com/gofrs/flock"
)

// BenchmarkIngestInboxJSON100k ingests an inbox.json of 100,000 Dream.OS
// entries (half without an id) and prints the total time, and how long a
// Dream.OS writer trying the writers' lock all along waited at most: the
// time ingest holds the lock.
func BenchmarkIngestInboxJSON100k(b *testing.B) {
	const entries = 100_000
	var file bytes.Buffer
	file.WriteString("[\n")
	for i := range entries {
		if i > 0 {
			file.WriteString(",\n")
		}
		id := ""
		if i%2 == 0 {
			id = fmt.Sprintf(`"message_id": "bench-%06d", `, i)
		}
		fmt.Fprintf(&file, `  {%s"sender": "Agent-2", "recipient": "Agent-1", "message_type": "TASK", "priority": "NORMAL", "content": "entry %d"}`, id, i)
	}
	file.WriteString("\n]\n")
	var longestWait, total time.Duration
	var peakHeap uint64
	for b.Loop() {
		b.StopTimer()
		mb := openMailbox(b, newRuntime(b, "Agent-1", "Agent-2"), "Agent-1")
		now := time.Now()
		c := consume(b, mb, settings{Known: []string{"Agent-1", "Agent-2"}}, now)
		writeFile(b, filepath.Join(mb.Dir, mailbox.InboxJSON), file.Bytes())
		var stop atomic.Bool
		probed := make(chan time.Duration)
		go func() { probed <- probeLock(filepath.Join(mb.Dir, mailbox.InboxJSONLock), &stop) }()
		heap := watchHeap(&stop)
		b.StartTimer()

		start := time.Now()
		if err := c.Notice(now, mailbox.InboxJSON); err != nil {
			b.Fatal(err)
		}
		total += time.Since(start)

		b.StopTimer()
		stop.Store(true)
		longestWait = max(longestWait, <-probed)
		peakHeap = max(peakHeap, <-heap)
		if c.Pending() != entries {
			b.Fatalf("%d messages delivered, want %d", c.Pending(), entries)
		}
		c.Close()
		b.StartTimer()
	}
	b.ReportMetric(float64(longestWait.Microseconds())/1000, "lock-wait-max-ms")
	b.ReportMetric(total.Seconds()/float64(b.N), "ingest-s")
	b.ReportMetric(float64(peakHeap)/(1<<20), "peak-heap-MiB")
}

// probeLock takes and releases the lock at path over and over, as a writer
// would, until stop, and returns the longest it had to wait for it.
func probeLock(path string, stop *atomic.Bool) time.Duration {
	var longest time.Duration
	for !stop.Load() {
		lock := flock.New(path)
		start := time.Now()
		if err := lock.Lock(); err != nil {
			return -1
		}
		longest = max(longest, time.Since(start))
		lock.Unlock()
		time.Sleep(time.Millisecond)
	}
	return longest
}

// watchHeap samples the live heap until stop and sends its peak.
func watchHeap(stop *atomic.Bool) <-chan uint64 {
	peak := make(chan uint64, 1)
	go func() {
		var most uint64
		var ms runtime.MemStats
		for !stop.Load() {
			runtime.ReadMemStats(&ms)
			most = max(most, ms.HeapAlloc)
			time.Sleep(10 * time.Millisecond)
		}
		peak <- most
	}()
	return peak
}
