package cursor

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"

	"github.com/agentctl/agentctl/internal/process"
	"github.com/agentctl/agentctl/internal/testenv/poll"
)

func init() {
	// acp-seat runs one turn of the stand-in as a runner would, prints
	// the agent it started, and waits to be killed.
	helperMains["acp-seat"] = func() {
		var s ACPSettings
		if err := json.Unmarshal([]byte(os.Getenv("CURSOR_TEST_ACP")), &s); err != nil {
			panic(err)
		}
		d, err := NewACP(s)
		if err != nil {
			panic(err)
		}
		var child Child
		if _, err := d.Run(context.Background(), Turn{Prompt: "echo:x", OnStart: func(c Child) error { child = c; return nil }}); err != nil {
			panic(err)
		}
		data, _ := json.Marshal(child)
		fmt.Println(string(data))
		select {}
	}
}

// groupGone waits until nothing of c's process group runs. The stand-in
// outlives its input for ever: a group never ended hangs the test.
func groupGone(t *testing.T, c Child, what string) {
	t.Helper()
	poll.Until(t, fmt.Sprintf("process group %d to end %s", c.PGID, what), func() bool {
		alive, err := process.GroupAlive(c.PGID)
		return err == nil && !alive
	})
}

// outliving is the stand-in as Claude's adapter behaves: the end of its
// input does not end it.
func outliving(t *testing.T) ACPSettings {
	s := acpStandIn(t)
	s.Env = append(s.Env, "ACPAGENT_OUTLIVE_STDIN=1")
	return s
}

func TestACPAgentRunsInItsOwnGroupAndCloseEndsIt(t *testing.T) {
	d := newACP(t, outliving(t))
	var child Child
	if _, err := d.Run(turnCtx(t), Turn{Prompt: "echo:x", OnStart: func(c Child) error { child = c; return nil }}); err != nil {
		t.Fatal(err)
	}
	if child.PID == 0 || child.PGID != child.PID || child.PGID == syscall.Getpgrp() || child.StartTime == 0 {
		t.Fatalf("the agent was reported as %+v; want a group of its own and a start time", child)
	}
	d.Close()
	groupGone(t, child, "after Close")
}

func TestACPAgentDiesWithItsRunner(t *testing.T) {
	settings, _ := json.Marshal(outliving(t))
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "CURSOR_TEST_ROLE=acp-seat", "CURSOR_TEST_ACP="+string(settings))
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("the seat printed no agent: %v", err)
	}
	var child Child
	if err := json.Unmarshal([]byte(strings.TrimSpace(line)), &child); err != nil || child.PGID == 0 {
		t.Fatalf("the seat printed %q (%v)", line, err)
	}
	if alive, _ := process.GroupAlive(child.PGID); !alive {
		t.Fatalf("the agent %+v is gone while its runner lives", child)
	}
	cmd.Process.Kill()
	cmd.Wait()
	groupGone(t, child, "after its runner was killed")
}
