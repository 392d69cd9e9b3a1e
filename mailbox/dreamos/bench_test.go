package dreamos

import (
	"strings"
	"testing"
	"time"
)

// BenchmarkNormKey measures the key normalisation every decoded field goes
// through against strings.ToLower of the same keys, in the same loop, and
// reports the ratio.
func BenchmarkNormKey(b *testing.B) {
	keys := []string{"messageId", "message_id", "Message-ID", "from agent", "created_at", "PRIORITY"}
	var measure, anchor time.Duration
	n := 0
	for i := 0; i < b.N; i++ {
		k := keys[i%len(keys)]
		start := time.Now()
		for range 100 {
			n += len(strings.ToLower(k))
		}
		mid := time.Now()
		for range 100 {
			n += len(normKey(k))
		}
		anchor += mid.Sub(start)
		measure += time.Since(mid)
	}
	if n == 0 {
		b.Fatal("no keys normalised")
	}
	b.ReportMetric(float64(measure.Nanoseconds())/float64(b.N)/1000, "µs/measure")
	b.ReportMetric(float64(anchor.Nanoseconds())/float64(b.N)/1000, "µs/anchor")
	b.ReportMetric(float64(measure)/float64(anchor), "ratio")
}
