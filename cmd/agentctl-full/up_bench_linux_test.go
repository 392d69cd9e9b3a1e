package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentctl/agentctl/internal/process"
	"github.com/agentctl/agentctl/internal/profiling"
	"github.com/agentctl/agentctl/internal/testenv/poll"
	"github.com/agentctl/agentctl/mailbox"
)

// BenchmarkUpMemory: what agentctl up with N idle exec seats costs in
// memory (targets: 8 seats ≤ 80 MB in all, 64 seats ≤ 10 MB each). The
// figure is the PSS of up and its runners summed: each process's own
// memory, plus its share of the pages they all map (the program's code),
// so shared pages count once; the RSS sum, which counts them in every
// process, is printed beside it. The program is built as released
// (CGO_ENABLED=0).
func BenchmarkUpMemory(b *testing.B) {
	agentctl := buildReleased(b, b.TempDir())
	for _, n := range []int{8, 64} {
		b.Run(fmt.Sprintf("seats=%d", n), func(b *testing.B) {
			for range b.N {
				pss, rss := upMemory(b, agentctl, n, "")
				b.ReportMetric(float64(pss)/1024, "PSS-MB")
				b.ReportMetric(float64(pss)/1024/float64(n), "PSS-MB/seat")
				b.ReportMetric(float64(rss)/1024, "RSS-sum-MB")
				mb := float64(pss) / 1024
				var over string
				switch {
				case n <= 8 && mb > 80:
					over = fmt.Sprintf("up with %d seats' %.0f MB", n, mb)
				case n > 8 && mb/float64(n) > 10:
					over = fmt.Sprintf("up with %d seats' %.1f MB a seat", n, mb/float64(n))
				}
				if over != "" {
					// Once more with the runners' profilers on.
					profiles := filepath.Join(b.TempDir(), "profiles")
					upMemory(b, agentctl, n, profiles)
					keepProfiles(b, profiles, over)
				}
			}
		})
	}
}

// upMemory starts up with n exec seats, waits until every runner serves
// its mailbox and a second has passed, and sums the PSS and RSS of up and
// its runners, in KiB. Where profiles is set, the runners write their
// profiles there when up stops them.
func upMemory(b *testing.B, agentctl string, n int, profiles string) (pss, rss int) {
	root := filepath.Join(b.TempDir(), "runtime")
	agents := make([]string, n)
	var conf strings.Builder
	conf.WriteString("agents:\n")
	for i := range agents {
		agents[i] = fmt.Sprintf("Agent-%d", i+1)
		fmt.Fprintf(&conf, "  - {name: %s, driver: exec, exec: {command: [cat]}}\n", agents[i])
	}
	timed(b, exec.Command(agentctl, "--root", root, "init", "--agents", fmt.Sprint(n)))
	if err := os.WriteFile(filepath.Join(root, "agentctl.yaml"), []byte(conf.String()), 0o600); err != nil {
		b.Fatal(err)
	}
	up := exec.Command(agentctl, "--root", root, "up")
	if profiles != "" {
		up.Env = append(os.Environ(), profiling.EnvDir+"="+profiles)
	}
	if err := up.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() {
		up.Process.Signal(os.Interrupt)
		up.Wait()
	}()
	pids := []int{up.Process.Pid}
	for _, a := range agents {
		poll.Until(b, "a runner of "+a, func() bool {
			pid, ok := mailbox.RunnerPID(root, a)
			if ok {
				pids = append(pids, pid)
			}
			return ok
		})
	}
	time.Sleep(time.Second) // past start-up
	for _, pid := range pids {
		p, err := process.PSSKB(pid)
		if err != nil {
			b.Fatal(err)
		}
		r, err := process.RSSKB(pid)
		if err != nil {
			b.Fatal(err)
		}
		pss, rss = pss+p, rss+r
	}
	return pss, rss
}

// buildReleased builds agentctl and this program beside it into dir, as
// they are installed and released (CGO_ENABLED=0), and returns agentctl's
// path: what a person runs, and what 'agentctl up' and its runners and
// their turns' guards run.
func buildReleased(b *testing.B, dir string) string {
	b.Helper()
	agentctl := filepath.Join(dir, "agentctl")
	for bin, pkg := range map[string]string{agentctl: "../agentctl", filepath.Join(dir, "agentctl-full"): "."} {
		build := exec.Command("go", "build", "-o", bin, pkg)
		build.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := build.CombinedOutput(); err != nil {
			b.Fatalf("go build %s: %v\n%s", pkg, err, out)
		}
	}
	return agentctl
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
