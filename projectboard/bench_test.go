package projectboard

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// BenchmarkUpdate measures one agent's change to a task of a board with
// 500 tasks: lock, read, parse, edit, verify, atomic replace.
func BenchmarkUpdate(b *testing.B) {
	s, root := newRoot(b)
	var sb strings.Builder
	sb.WriteString("# big board\ntasks:\n")
	for i := 0; i < 500; i++ {
		fmt.Fprintf(&sb, "  - id: B-%d   # task %d\n    title: \"Task %d\"\n    status: todo\n    owner: Agent-%d\n    notes: |\n      line one\n      line two\n\n", i, i, i, i%8)
	}
	path := filepath.Join(Dir(root), "big.yaml")
	if err := os.WriteFile(path, []byte(sb.String()), 0o644); err != nil {
		b.Fatal(err)
	}
	statuses := []Status{InProgress, Review, Done}
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		_, err := s.Update(context.Background(), fmt.Sprintf("B-%d", i%500), func(t *Task) error {
			t.Status = statuses[i%3]
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(time.Since(start).Microseconds())/float64(b.N), "µs/update")
	b.ReportMetric(float64(len(sb.String())), "board-bytes")
}

// BenchmarkParse measures loading the hand-formatted sample board.
func BenchmarkParse(b *testing.B) {
	data, err := os.ReadFile(filepath.Join("..", "fixtures", "boards", "handwritten.yaml"))
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	for i := 0; i < b.N; i++ {
		if _, err := Parse("h.yaml", data); err != nil {
			b.Fatal(err)
		}
	}
}
