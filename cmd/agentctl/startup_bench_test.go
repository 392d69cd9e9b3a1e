package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// These benchmarks run the built agentctl as a person does, each against
// an anchor run in the same loop (so a busy machine slows both), and
// report the ratio: scripts/bench prints them as one table.

// buildBench builds agentctl, agentctl-full beside it as an install puts
// it (init, which the benchmarks run first, is its), and a hello-world Go
// program into dir, all as agentctl is released (CGO_ENABLED=0): a build
// with cgo, which go picks by itself where a C compiler is installed, is
// linked dynamically, and the loader alone made version take 40% longer.
func buildBench(b *testing.B, dir string) (agentctl, hello string) {
	b.Helper()
	agentctl = programs(b, dir, true)
	hello = buildProgram(b, dir, "hello", "package main\n\nimport \"os\"\n\nfunc main() { os.Stdout.WriteString(\"hello\\n\") }\n")
	return agentctl, hello
}

// buildProgram builds a one-file Go program (main.go's text) named name
// into dir.
func buildProgram(b *testing.B, dir, name, main string) string {
	b.Helper()
	src := filepath.Join(dir, name+"-src")
	if err := os.MkdirAll(src, 0o755); err != nil {
		b.Fatal(err)
	}
	files := map[string]string{"go.mod": "module " + name + "\n\ngo 1.22\n", "main.go": main}
	for file, text := range files {
		if err := os.WriteFile(filepath.Join(src, file), []byte(text), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	bin := filepath.Join(dir, name)
	cmd := exec.Command("go", "build", "-o", bin, ".")
	cmd.Dir, cmd.Env = src, append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("go build %s: %v\n%s", name, err, out)
	}
	return bin
}

// timed runs cmd and returns how long it took, failing on an error.
func timed(b *testing.B, cmd *exec.Cmd) time.Duration {
	b.Helper()
	start := time.Now()
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("%s: %v\n%s", strings.Join(cmd.Args, " "), err, out)
	}
	return time.Since(start)
}

// cpuTimed runs cmd like timed, and returns the CPU time it used too:
// steadier than the wall time on a loaded machine.
func cpuTimed(b *testing.B, cmd *exec.Cmd) (wall, cpu time.Duration) {
	b.Helper()
	wall = timed(b, cmd)
	return wall, cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
}

// cpuClock sums the wall and CPU times of the measure and of the anchor.
type cpuClock struct{ measure, anchor, measureCPU, anchorCPU time.Duration }

func (c *cpuClock) addAnchor(b *testing.B, cmd *exec.Cmd) {
	w, cpu := cpuTimed(b, cmd)
	c.anchor, c.anchorCPU = c.anchor+w, c.anchorCPU+cpu
}

func (c *cpuClock) addMeasure(b *testing.B, cmd *exec.Cmd) {
	w, cpu := cpuTimed(b, cmd)
	c.measure, c.measureCPU = c.measure+w, c.measureCPU+cpu
}

// report prints reportRatio's figures and the same in CPU time.
func (c *cpuClock) report(b *testing.B) {
	reportRatio(b, c.measure, c.anchor)
	b.ReportMetric(float64(c.measureCPU.Microseconds())/float64(b.N), "CPU-µs/measure")
	b.ReportMetric(float64(c.anchorCPU.Microseconds())/float64(b.N), "CPU-µs/anchor")
	b.ReportMetric(float64(c.measureCPU)/float64(c.anchorCPU), "CPU-ratio")
}

// reportRatio prints the measure, the anchor and their ratio per run.
func reportRatio(b *testing.B, measure, anchor time.Duration) {
	b.ReportMetric(float64(measure.Microseconds())/float64(b.N), "µs/measure")
	b.ReportMetric(float64(anchor.Microseconds())/float64(b.N), "µs/anchor")
	b.ReportMetric(float64(measure)/float64(anchor), "ratio")
}

// BenchmarkStartupVersion: agentctl version against a hello-world Go
// binary (target ≤ 2×).
func BenchmarkStartupVersion(b *testing.B) {
	agentctl, hello := buildBench(b, b.TempDir())
	var c cpuClock
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		c.addAnchor(b, exec.Command(hello))
		c.addMeasure(b, exec.Command(agentctl, "version"))
	}
	c.report(b)
}

// BenchmarkStatus: agentctl status on a new runtime folder against git
// status in a small repository.
func BenchmarkStatus(b *testing.B) {
	dir := b.TempDir()
	agentctl, _ := buildBench(b, dir)
	root := filepath.Join(dir, "runtime")
	timed(b, exec.Command(agentctl, "--root", root, "init"))
	repo := filepath.Join(dir, "repo")
	for _, args := range [][]string{{"init", "-q", repo}, {"-C", repo, "-c", "user.name=b", "-c", "user.email=b@example.com", "commit", "-q", "--allow-empty", "-m", "start"}} {
		timed(b, exec.Command("git", args...))
	}
	if err := os.WriteFile(filepath.Join(repo, "a.txt"), []byte("a\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	var c cpuClock
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		c.addAnchor(b, exec.Command("git", "-C", repo, "status"))
		c.addMeasure(b, exec.Command(agentctl, "--root", root, "status"))
	}
	c.report(b)
}

// bigBoard10k is a board of 10,000 hand-formatted tasks, eight lines each.
func bigBoard10k() []byte {
	var sb strings.Builder
	sb.WriteString("# big board\ntasks:\n")
	for i := 0; i < 10000; i++ {
		fmt.Fprintf(&sb, "  - id: B-%d   # task %d\n    title: \"Task %d\"\n    status: todo\n    owner: \"\"\n    notes: |\n      line one\n      line two\n\n", i, i, i)
	}
	return []byte(sb.String())
}

// boardRoot is a runtime folder with one board of 10,000 tasks.
func boardRoot(b *testing.B, dir, agentctl string) (root, board string) {
	root = filepath.Join(dir, "runtime")
	timed(b, exec.Command(agentctl, "--root", root, "init"))
	board = filepath.Join(root, "project_board", "big.yaml")
	if err := os.MkdirAll(filepath.Dir(board), 0o755); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(board, bigBoard10k(), 0o644); err != nil {
		b.Fatal(err)
	}
	return root, board
}

// BenchmarkBoardAdd10k: agentctl board add on a board of 10,000 tasks
// against appending a line to it from a shell (target ≤ 3×).
func BenchmarkBoardAdd10k(b *testing.B) {
	dir := b.TempDir()
	agentctl, _ := buildBench(b, dir)
	root, board := boardRoot(b, dir, agentctl)
	var measure, anchor time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		anchor += timed(b, exec.Command("sh", "-c", `echo "# appended" >> "$1"`, "sh", board))
		measure += timed(b, exec.Command(agentctl, "--root", root, "board", "add", "--board", "big.yaml", "--id", fmt.Sprintf("N-%d", i), "--title", "new task"))
	}
	reportRatio(b, measure, anchor)
}

// BenchmarkBoardSet10k: agentctl board set on a board of 10,000 tasks
// against sed -i changing one line of the same file (target ≤ 3×).
func BenchmarkBoardSet10k(b *testing.B) {
	dir := b.TempDir()
	agentctl, _ := buildBench(b, dir)
	root, board := boardRoot(b, dir, agentctl)
	statuses := []string{"in_progress", "review", "done"}
	var measure, anchor time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		// sed changes the first half's tasks, board set the second half's,
		// so sed's line numbers never move.
		line := 2 + 8*(i%5000) + 3
		anchor += timed(b, exec.Command("sed", "-i", fmt.Sprintf("%ds/status: .*/status: %s/", line, statuses[i%3]), board))
		measure += timed(b, exec.Command(agentctl, "--root", root, "board", "set", fmt.Sprintf("B-%d", 5000+i%5000), "status="+statuses[i%3]))
	}
	reportRatio(b, measure, anchor)
}

// deliverOnce is the anchor of BenchmarkSend: a process that writes one
// file durably into a folder the way a careful one-shot tool does (a
// temporary file fsynced, renamed into place, the folder fsynced).
const deliverOnce = `package main

import (
	"os"
	"path/filepath"
)

func main() {
	dir, name := os.Args[1], os.Args[2]
	f, err := os.CreateTemp(dir, ".tmp-*")
	if err != nil {
		panic(err)
	}
	if _, err := f.WriteString(os.Args[3]); err != nil {
		panic(err)
	}
	if err := f.Sync(); err != nil {
		panic(err)
	}
	f.Close()
	if err := os.Rename(f.Name(), filepath.Join(dir, name)); err != nil {
		panic(err)
	}
	d, err := os.Open(dir)
	if err != nil {
		panic(err)
	}
	if err := d.Sync(); err != nil {
		panic(err)
	}
	d.Close()
}
`

// BenchmarkSend: agentctl send to an agent against a one-shot process
// that writes, fsyncs and renames one file and fsyncs its folder (target
// ≤ 1.5×).
func BenchmarkSend(b *testing.B) {
	dir := b.TempDir()
	agentctl, _ := buildBench(b, dir)
	anchor := buildProgram(b, dir, "deliver-once", deliverOnce)
	root := filepath.Join(dir, "runtime")
	timed(b, exec.Command(agentctl, "--root", root, "init"))
	// The anchor writes beside the inbox, on the same file system.
	plain := filepath.Join(root, "agent_mailboxes", "plain")
	if err := os.MkdirAll(plain, 0o755); err != nil {
		b.Fatal(err)
	}
	var c cpuClock
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		c.addAnchor(b, exec.Command(anchor, plain, fmt.Sprintf("m-%d.json", i), `{"body": "ping"}`))
		c.addMeasure(b, exec.Command(agentctl, "--root", root, "send", "--to", "Agent-1", "ping"))
	}
	c.report(b)
}
