package devlog

import (
	"testing"
	"time"
)

// BenchmarkAppend measures appending one typical entry.
func BenchmarkAppend(b *testing.B) {
	root := b.TempDir()
	e := sampleEntry(1)
	b.SetBytes(int64(len(Format(e))))
	start := time.Now()
	for i := 0; i < b.N; i++ {
		if err := Append(root, e); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(time.Since(start).Microseconds())/float64(b.N), "µs/entry")
}

// BenchmarkLast measures printing the last 10 entries of a 20,000-entry
// devlog (about 5 MB): the cost must not grow with the file.
func BenchmarkLast(b *testing.B) {
	root := b.TempDir()
	for i := 0; i < 20000; i++ {
		if err := Append(root, sampleEntry(i)); err != nil {
			b.Fatal(err)
		}
	}
	path, _ := Path(root, "Agent-3")
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := Last(path, 10, -1); err != nil {
			b.Fatal(err)
		}
	}
}
