package projectboard

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// bigBoard is a board of n hand-formatted tasks, eight lines each after a
// two-line header, with a comment, a quoted title and a literal block.
func bigBoard(n int) []byte {
	var sb strings.Builder
	sb.WriteString("# big board\ntasks:\n")
	for i := 0; i < n; i++ {
		fmt.Fprintf(&sb, "  - id: B-%d   # task %d\n    title: \"Task %d\"\n    status: todo\n    owner: Agent-%d\n    notes: |\n      line one\n      line two\n\n", i, i, i, i%8)
	}
	return []byte(sb.String())
}

// bigBoardStatusLine is the line of task i's status in bigBoard, as long
// as no change has added lines before it.
func bigBoardStatusLine(i int) int { return 2 + 8*i + 3 }

// BenchmarkUpdate measures one agent's change to a task of a board with
// 500 tasks: lock, read, parse, edit, verify, atomic replace.
func BenchmarkUpdate(b *testing.B) {
	s, root := newRoot(b)
	data := bigBoard(500)
	path := filepath.Join(Dir(root), "big.yaml")
	if err := os.WriteFile(path, data, 0o644); err != nil {
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
	b.ReportMetric(float64(len(data)), "board-bytes")
}

// BenchmarkUpdateVsSed sets it against the cheapest change a person could
// make to the same file: a one-line "sed -i", run as a process, on the same
// board. Each iteration does one of each, timed apart, and reports both and
// their ratio, at three sizes so the growth shows too.
func BenchmarkUpdateVsSed(b *testing.B) {
	if _, err := exec.LookPath("sed"); err != nil {
		b.Fatal("the comparison needs sed: ", err)
	}
	for _, n := range []int{100, 1000, 10000} {
		b.Run(fmt.Sprintf("tasks=%d", n), func(b *testing.B) {
			s, root := newRoot(b)
			data := bigBoard(n)
			path := filepath.Join(Dir(root), "big.yaml")
			if err := os.WriteFile(path, data, 0o644); err != nil {
				b.Fatal(err)
			}
			statuses := []Status{InProgress, Review, Done}
			var sed, update time.Duration
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				// sed changes the first half's tasks, Update the second
				// half's, so sed's line numbers never move.
				j, k := i%(n/2), n/2+i%(n/2)
				script := fmt.Sprintf("%ds/status: .*/status: %s/", bigBoardStatusLine(j), statuses[i%3])
				start := time.Now()
				if out, err := exec.Command("sed", "-i", script, path).CombinedOutput(); err != nil {
					b.Fatalf("sed: %v: %s", err, out)
				}
				sed += time.Since(start)
				start = time.Now()
				_, err := s.Update(context.Background(), fmt.Sprintf("B-%d", k), func(t *Task) error {
					t.Status = statuses[i%3]
					return nil
				})
				update += time.Since(start)
				if err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(sed.Microseconds())/float64(b.N), "µs/sed")
			b.ReportMetric(float64(update.Microseconds())/float64(b.N), "µs/update")
			b.ReportMetric(float64(update)/float64(sed), "×sed")
			b.ReportMetric(float64(len(data)), "board-bytes")
		})
	}
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

// BenchmarkParseBig measures reading a board of 10,000 tasks, with the
// board reader and with yaml.v3 alone, which it stands in for.
func BenchmarkParseBig(b *testing.B) {
	data := bigBoard(10000)
	b.Run("Parse", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		for i := 0; i < b.N; i++ {
			if _, err := Parse("big.yaml", data); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("yaml.v3", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		for i := 0; i < b.N; i++ {
			if _, err := yamlRoot("big.yaml", data); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkUpdateFresh measures a change to a task of a board of 10,000
// tasks by a process that has read no board before, as a command that
// changes one task and exits, the quick way and the full way alike.
func BenchmarkUpdateFresh(b *testing.B) {
	for _, full := range []bool{false, true} {
		b.Run(fmt.Sprint("full=", full), func(b *testing.B) {
			s, root := newRoot(b)
			s.full = full
			data := bigBoard(10000)
			if err := os.WriteFile(filepath.Join(Dir(root), "big.yaml"), data, 0o644); err != nil {
				b.Fatal(err)
			}
			statuses := []Status{InProgress, Review, Done}
			var took time.Duration
			for i := 0; i < b.N; i++ {
				forgetBoards() // as a new process
				start := time.Now()
				_, err := s.Update(context.Background(), fmt.Sprintf("B-%d", i%10000), func(t *Task) error {
					t.Status = statuses[i%3]
					return nil
				})
				took += time.Since(start)
				if err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(took.Microseconds())/float64(b.N), "µs/update")
		})
	}
}

// forgetBoards drops the boards this process keeps.
func forgetBoards() {
	kept.Lock()
	defer kept.Unlock()
	clear(kept.boards)
}
