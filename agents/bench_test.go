package agents

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentctl/agentctl/cursor"
	"github.com/agentctl/agentctl/internal/process"
	"github.com/agentctl/agentctl/internal/testenv/poll"
	"github.com/agentctl/agentctl/mailbox"
)

// BenchmarkLoopExec measures the loop's own overhead: messages per second
// through one runner with the exec driver and a trivial agent (cat).
func BenchmarkLoopExec(b *testing.B) {
	root := newRuntime(b, demoAgents)
	d, err := cursor.NewExec(cursor.ExecSettings{Command: []string{"/bin/cat"}})
	if err != nil {
		b.Fatal(err)
	}
	for i := range b.N {
		deliverTo(b, root, mailbox.Message{ID: fmt.Sprintf("bench-%d", i), From: "Agent-2", To: "Agent-1", Body: "ping"})
	}
	b.ResetTimer()
	start := time.Now()
	startRunner(b, testSettings(root, "Agent-1", demoAgents, d))
	// Look rarely, not as poll.Until does: counting lists folders, and
	// would compete with the runner. A runner that never gets there hangs
	// the benchmark until -timeout.
	for counts(b, root, "Agent-1").Done < b.N {
		time.Sleep(50 * time.Millisecond)
	}
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "msgs/s")
}

// instantDriver answers at once, so pickup measures only the runner.
type instantDriver struct{}

func (instantDriver) Run(ctx context.Context, t cursor.Turn) (string, error) {
	if t.OnStage != nil {
		if err := t.OnStage(cursor.StageSubmitted); err != nil {
			return "", err
		}
	}
	return "ok", nil
}

// BenchmarkPickup measures pickup-to-claim with the runner idle: the time
// from a delivery returning to the runner's claim (from the receipt).
func BenchmarkPickup(b *testing.B) {
	root := newRuntime(b, demoAgents)
	startRunner(b, testSettings(root, "Agent-1", demoAgents, instantDriver{}))
	mb, _ := mailbox.Open(root, "Agent-1")
	var lat []time.Duration
	b.ResetTimer()
	for i := range b.N {
		time.Sleep(2 * time.Millisecond) // let the runner go idle
		id := fmt.Sprintf("pick-%d", i)
		at := time.Now()
		deliverTo(b, root, mailbox.Message{ID: id, From: "Agent-2", To: "Agent-1", Body: "ping"})
		poll.Until(b, "the message archived", func() bool { return counts(b, root, "Agent-1").Done == i+1 })
		done, _ := mb.List(mailbox.StateDone)
		for _, e := range done {
			if e.Message.ID == id && e.Receipt != nil {
				lat = append(lat, e.Receipt.ClaimedAt.Sub(at))
			}
		}
	}
	b.StopTimer()
	slices.Sort(lat)
	if len(lat) > 0 {
		b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
		b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
	}
}

// BenchmarkIdleRunner starts a real runner process, leaves it idle for
// AGENTS_IDLE_SECONDS (default 30) and reports its RSS and the CPU it
// used meanwhile. Run it alone: go test -run '^$' -bench IdleRunner -benchtime 1x ./agents
func BenchmarkIdleRunner(b *testing.B) {
	secs := 30
	if s, err := strconv.Atoi(os.Getenv("AGENTS_IDLE_SECONDS")); err == nil && s > 0 {
		secs = s
	}
	for range b.N {
		root := newRuntime(b, demoAgents)
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), "AGENTS_TEST_ROLE=runner", "AGENTS_ROOT="+root, "AGENTS_AGENT=Agent-1", "AGENTS_ALL="+strings.Join(demoAgents, ","))
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		poll.Until(b, "the runner's heartbeat", func() bool {
			_, err := os.Stat(filepath.Join(root, "agent_mailboxes", "Agent-1", "status.json"))
			return err == nil
		})
		time.Sleep(time.Second) // past start-up
		cpu0 := usage(b, process.CPUTicks, cmd.Process.Pid)
		time.Sleep(time.Duration(secs) * time.Second)
		cpu1 := usage(b, process.CPUTicks, cmd.Process.Pid)
		rss := usage(b, process.RSSKB, cmd.Process.Pid)
		cmd.Process.Signal(os.Interrupt)
		cmd.Wait()
		b.ReportMetric(float64(rss)/1024, "RSS-MB")
		b.ReportMetric(float64(cpu1-cpu0)*10/float64(secs), "CPU-ms/s") // 100 ticks per second
	}
}

// usage reads one figure of a process for a benchmark.
func usage(b *testing.B, read func(pid int) (int, error), pid int) int {
	n, err := read(pid)
	if err != nil {
		b.Fatal(err)
	}
	return n
}
