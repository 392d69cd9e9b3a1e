package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentctl/agentctl/config"
	"github.com/agentctl/agentctl/fixtures/fakemodel"
	"github.com/agentctl/agentctl/internal/testenv/agentcli"
	"github.com/agentctl/agentctl/internal/testenv/poll"
)

// A real agentctl run killed by SIGKILL while the real tool of each exec
// preset waits on its model leaves no process of the turn: not the tool,
// not what it started below it (Codex's native binary under its Node.js
// launcher, Gemini CLI's relaunched Node.js), not the seat's host.
func TestKilledRunnerLeavesNoProcessOfARealTool(t *testing.T) {
	for _, c := range []struct{ tool, preset string }{
		{agentcli.Claude, config.PresetClaude},
		{agentcli.Codex, config.PresetCodex},
		{agentcli.Gemini, config.PresetGemini},
	} {
		t.Run(c.tool, func(t *testing.T) {
			t.Parallel()
			srv := fakemodel.Start(t)
			tool := agentcli.Get(t, c.tool, srv.URL)
			dir := t.TempDir()
			root := filepath.Join(dir, "runtime")
			mustAgentctl(t, root, "init", "--agents", "2")
			const prompt = "Work on the long job."
			mustAgentctl(t, root, "send", "--to", "Agent-1", "--from", "Agent-2", "--subject", "long job", prompt+"\nfakemodel: hang")
			runner := exec.Command("agentctl", "--root", root, "run", "Agent-1", "--preset", c.preset)
			runner.Env = append(tool.Environ(), "PATH="+filepath.Dir(tool.Path)+string(os.PathListSeparator)+os.Getenv("PATH"))
			runner.Dir = dir
			var stderr bytes.Buffer
			runner.Stderr = &stderr
			if err := runner.Start(); err != nil {
				t.Fatal(err)
			}
			killed := false
			t.Cleanup(func() {
				if !killed {
					runner.Process.Kill()
					runner.Wait()
				}
			})
			poll.Until(t, "the tool's request to hang", func() bool {
				for _, r := range srv.Turns() {
					if r.Count(prompt) > 0 {
						return true
					}
				}
				return false
			})
			below := descendants(runner.Process.Pid)
			t.Cleanup(func() {
				for _, pid := range below {
					syscall.Kill(pid, syscall.SIGKILL)
				}
			})
			// The seat's host, and the tool below it.
			var names []string
			guarded := false
			for _, pid := range below {
				name := commandOf(pid)
				if strings.Contains(name, " __exec-host ") {
					for _, under := range descendants(pid) {
						guarded = guarded || strings.Contains(commandOf(under), filepath.Base(tool.Path))
					}
				}
				names = append(names, name[:min(len(name), 100)])
			}
			if !guarded {
				t.Fatalf("the runner's processes %q are not a host with %s below it", names, tool.Path)
			}
			runner.Process.Kill()
			runner.Wait()
			killed = true
			killedAt := time.Now()
			poll.Until(t, "the turn's processes to end with the runner", func() bool {
				for _, pid := range below {
					if !gone(pid) {
						return false
					}
				}
				return true
			})
			// How soon is the subject: a tool whose request hangs may give
			// up of itself after minutes, which is not ending with the
			// runner. A minute is ample for a kill on a loaded machine.
			if took := time.Since(killedAt); took > time.Minute {
				t.Errorf("the turn's processes ended %s after the runner, not with it", took.Round(time.Second))
			}
			t.Logf("%d processes of the turn ended: %q", len(below), names)
			if t.Failed() {
				t.Logf("runner's stderr:\n%s", stderr.String())
			}
		})
	}
}

// descendants are the processes below pid, as /proc shows them now.
func descendants(pid int) []int {
	children := map[int][]int{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid …; comm may hold spaces and parentheses.
		i := bytes.LastIndexByte(stat, ')')
		if i < 0 {
			continue
		}
		fields := strings.Fields(string(stat[i+1:]))
		if len(fields) < 2 {
			continue
		}
		if ppid, err := strconv.Atoi(fields[1]); err == nil {
			children[ppid] = append(children[ppid], p)
		}
	}
	var out []int
	for queue := children[pid]; len(queue) > 0; queue = queue[1:] {
		out = append(out, queue[0])
		queue = append(queue, children[queue[0]]...)
	}
	return out
}

// commandOf is pid's command line, its arguments joined by spaces.
func commandOf(pid int) string {
	b, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	return strings.TrimSpace(string(bytes.ReplaceAll(b, []byte{0}, []byte{' '})))
}
