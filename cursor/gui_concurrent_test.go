//go:build linux && !nogui

package cursor

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"testing"
)

// turnsPerProcess is how many turns each driver process takes in
// TestGUIThreeProcessesNeverMisroute.
const turnsPerProcess = 4

func init() { helperMains["gui-turns"] = guiTurnsMain }

// guiTurnsMain is one agentctl-like process driving one window: it runs the
// turns and prints one JSON line per turn.
func guiTurnsMain() {
	var w WindowSettings
	if err := json.Unmarshal([]byte(os.Getenv("CURSOR_TEST_WINDOW")), &w); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	g, err := NewGUI(w, testGUI(), Options{LockDir: os.Getenv("CURSOR_TEST_LOCKDIR")})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	agent := os.Getenv("CURSOR_TEST_AGENT")
	n, _ := strconv.Atoi(os.Getenv("CURSOR_TEST_TURNS"))
	enc := json.NewEncoder(os.Stdout)
	for i := 0; i < n; i++ {
		prompt := fmt.Sprintf("to %s, turn %d: ünïcode 😀\tand a tab\r\nsecond line", agent, i)
		reply, err := g.Run(context.Background(), Turn{Prompt: prompt})
		rec := map[string]string{"prompt": prompt, "reply": reply}
		if err != nil {
			rec["err"] = err.Error()
		}
		enc.Encode(rec)
	}
	g.Close()
}

func TestGUIThreeProcessesNeverMisroute(t *testing.T) {
	for _, si := range standIns {
		t.Run(si.name, func(t *testing.T) { threeProcesses(t, si.start) })
	}
}

// threeProcesses runs three agentctl-like processes at once, each driving
// its own window, and checks every prompt reached its own window and every
// reply came back to its own process.
func threeProcesses(t *testing.T, start func(testing.TB, chatOptions) *chatWindow) {
	lockDir := t.TempDir()
	agents := []string{"Agent-1", "Agent-2", "Agent-3"}
	windows := make([]*chatWindow, len(agents))
	for i, a := range agents {
		windows[i] = start(t, chatOptions{title: "Cursor - " + a, x: 10 + 430*i, y: 10})
	}
	type turn struct{ Prompt, Reply, Err string }
	results := make([][]turn, len(agents))
	var wg sync.WaitGroup
	for i, a := range agents {
		w, _ := json.Marshal(windows[i].window())
		cmd := exec.Command(os.Args[0])
		cmd.Env = append(os.Environ(), "CURSOR_TEST_ROLE=gui-turns", "CURSOR_TEST_WINDOW="+string(w),
			"CURSOR_TEST_LOCKDIR="+lockDir, "CURSOR_TEST_AGENT="+a, "CURSOR_TEST_TURNS="+strconv.Itoa(turnsPerProcess))
		cmd.Stderr = os.Stderr
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			sc := bufio.NewScanner(out)
			for sc.Scan() {
				var r turn
				json.Unmarshal(sc.Bytes(), &r)
				results[i] = append(results[i], r)
			}
			cmd.Wait()
		}()
	}
	wg.Wait()

	for i, a := range agents {
		if len(results[i]) != turnsPerProcess {
			t.Fatalf("%s: %d turns reported, want %d", a, len(results[i]), turnsPerProcess)
		}
		var sent []string
		for _, r := range results[i] {
			if r.Err != "" {
				t.Errorf("%s: turn failed: %s", a, r.Err)
			} else if r.Reply != "You wrote:\n"+r.Prompt {
				t.Errorf("%s: reply %q for prompt %q", a, r.Reply, r.Prompt)
			}
			sent = append(sent, r.Prompt)
		}
		got := windows[i].prompts(t)
		if fmt.Sprintf("%q", got) != fmt.Sprintf("%q", sent) {
			t.Errorf("window of %s received %q\nwant exactly %q", a, got, sent)
		}
	}
}
