package wintest

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentctl/agentctl/internal/testenv/poll"
)

// guiPrompt carries what prompts contain: Unicode, emoji, tabs, CRLF,
// trailing spaces and a code fence.
const guiPrompt = "héllo 😀\tcol2   \r\nsecond line\n```go\nfunc f() {\n\treturn \"x\"\n}\n```\n"

func (w *Wine) clipboard(t *testing.T, set string) string {
	t.Helper()
	args := []string{"-clipboard-get"}
	if set != "" {
		args = []string{"-clipboard-set", set}
	}
	r := RunCmd(t, w.Command(filepath.Join(w.Bin, "winchat.exe"), args...))
	if r.Code != 0 {
		t.Fatalf("clipboard: exit %d: %s", r.Code, r.Stderr)
	}
	return r.Stdout
}

// One seat on a Windows desktop: calibrated, checked by doctor, a prompt
// round trip through the stand-in chat window, and a runner's turn, with a
// decoy window beside it that never gets a key and the user's clipboard
// given back.
func TestWindowsGUISeat(t *testing.T) {
	w := Need(t)
	s := newSwarm(t, w, "1")
	chat := w.StartChat(t, "Agent-1 - Cursor", 20, 20, "-think", "0.8", "-pause", "0.25", "-chunks", "3")
	// Opened last, the decoy holds the focus: keys sent without activating
	// the agent's window would land there.
	decoy := w.StartChat(t, "Agent-1 - Notes", 460, 20, "-decoy")

	w.MustRun(t, append([]string{"--root", s.root}, chat.CalibrateArgs("Agent-1")...)...)
	doctor := w.Run(t, "--root", s.root, "doctor")
	if doctor.Code != 0 || !strings.Contains(doctor.Stdout, "Agent-1") {
		t.Fatalf("doctor: exit %d\n%s%s", doctor.Code, doctor.Stdout, doctor.Stderr)
	}

	const users = "the user's own clipboard"
	w.clipboard(t, users)
	cmd := w.Agentctl("--root", s.root, "prompt", "-v", "Agent-1", "-")
	cmd.Stdin = strings.NewReader(guiPrompt)
	r := RunCmd(t, cmd)
	if r.Code != 0 {
		t.Fatalf("prompt: exit %d: %s", r.Code, r.Stderr)
	}
	if got := chat.Texts(t, "prompt"); len(got) != 1 || got[0] != guiPrompt {
		t.Fatalf("the window received %q, want %q\n%s\ndecoy: %v", got, guiPrompt, r.Stderr, decoy.Events(t))
	}
	replied := chat.Texts(t, "replied")
	if len(replied) != 1 || r.Stdout != replied[0] {
		t.Fatalf("prompt printed %q; the window answered %q", r.Stdout, replied)
	}
	if got := w.clipboard(t, ""); got != users {
		t.Errorf("the clipboard holds %q after the turn, want the user's %q", got, users)
	}

	// A runner takes a turn with the same window.
	id := strings.TrimSpace(w.MustRun(t, "--root", s.root, "send", "--to", "Agent-1", "Reply with the word ready.").Stdout)
	runner := w.Agentctl("--root", s.root, "run", "Agent-1")
	if err := runner.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- runner.Wait() }()
	defer func() {
		CtrlC(runner)
		ctx, cancel := poll.Context(t)
		defer cancel()
		if ctx.Err() != nil {
			// The test gave up waiting: no time is left to see Ctrl+C work.
			runner.Process.Kill()
			<-done
			return
		}
		select {
		case <-done:
		case <-ctx.Done():
			runner.Process.Kill()
			t.Error("the runner did not stop on Ctrl+C")
		}
	}()
	receipt := s.awaitGlob(t, "agent_mailboxes/Agent-1/archive/*/"+id+".receipt.jsonl")
	prompts := chat.Texts(t, "prompt")
	if len(prompts) != 2 || !strings.Contains(prompts[1], "Reply with the word ready.") {
		t.Errorf("the window's prompts: %q", prompts)
	}
	// The stand-in answers with the prompt it got, which shows the reply
	// protocol's block indented, not fenced: the turn ends done, without
	// the block its prompt asked for.
	if data := readFile(t, receipt); !strings.Contains(data, `"outcome":"done without block"`) {
		t.Errorf("receipt: %s", data)
	}
	if events := decoy.Events(t); len(events) > 0 {
		t.Errorf("the decoy window received input: %v", events)
	}
}

// Two agents' turns at once on one desktop, from two processes: the
// desktop input lock they share keeps their keys and clipboard apart.
func TestWindowsTwoSeatsAtOnce(t *testing.T) {
	w := Need(t)
	s := newSwarm(t, w, "2")
	var chats []*Chat
	for i, agent := range []string{"Agent-1", "Agent-2"} {
		c := w.StartChat(t, agent+" - Cursor", 20+440*i, 20, "-think", "0.8", "-pause", "0.25", "-chunks", "3")
		w.MustRun(t, append([]string{"--root", s.root}, c.CalibrateArgs(agent)...)...)
		chats = append(chats, c)
	}
	type turn struct {
		prompt string
		cmd    *exec.Cmd
		out    strings.Builder
	}
	turns := make([]*turn, 2)
	for i := range turns {
		tr := &turn{prompt: fmt.Sprintf("for Agent-%d only: %s", i+1, guiPrompt)}
		tr.cmd = w.Agentctl("--root", s.root, "prompt", fmt.Sprintf("Agent-%d", i+1), "-")
		tr.cmd.Stdin = strings.NewReader(tr.prompt)
		tr.cmd.Stdout, tr.cmd.Stderr = &tr.out, os.Stderr
		if err := tr.cmd.Start(); err != nil {
			t.Fatal(err)
		}
		turns[i] = tr
	}
	for i, tr := range turns {
		if err := tr.cmd.Wait(); err != nil {
			t.Fatalf("Agent-%d's prompt: %v", i+1, err)
		}
		if got := chats[i].Texts(t, "prompt"); len(got) != 1 || got[0] != tr.prompt {
			t.Errorf("Agent-%d's window received %q, want only %q", i+1, got, tr.prompt)
		}
		if replied := chats[i].Texts(t, "replied"); len(replied) != 1 || tr.out.String() != replied[0] {
			t.Errorf("Agent-%d's prompt printed %q; its window answered %q", i+1, tr.out.String(), replied)
		}
	}
}

// A prompt and a reply longer than an edit control takes by default
// (30,000 characters) arrive whole.
func TestWindowsLongPromptAndReply(t *testing.T) {
	w := Need(t)
	s := newSwarm(t, w, "1")
	chat := w.StartChat(t, "Agent-1 - Cursor", 20, 20, "-think", "0.8", "-pause", "0.25", "-chunks", "6")
	w.MustRun(t, append([]string{"--root", s.root}, chat.CalibrateArgs("Agent-1")...)...)
	var b strings.Builder
	for i := 0; b.Len() < 40_000; i++ {
		fmt.Fprintf(&b, "line %d: ünïcode 😀\tand a tab, ```code``` and text   \r\n", i)
	}
	prompt := b.String()
	cmd := w.Agentctl("--root", s.root, "prompt", "-v", "Agent-1", "-")
	cmd.Stdin = strings.NewReader(prompt)
	r := RunCmd(t, cmd)
	if r.Code != 0 {
		t.Fatalf("prompt: exit %d: %s", r.Code, r.Stderr)
	}
	if got := chat.Texts(t, "prompt"); len(got) != 1 || got[0] != prompt {
		t.Fatalf("the window received %d prompts, the first of %d bytes; want one of %d bytes", len(got), len(first(got)), len(prompt))
	}
	if replied := chat.Texts(t, "replied"); len(replied) != 1 || r.Stdout != replied[0] {
		t.Fatalf("prompt printed %d bytes; the window answered %d", len(r.Stdout), len(first(replied)))
	}
	t.Logf("the turn's steps:\n%s", r.Stderr)
}

func first(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return s[0]
}

// Guided calibration: the user points at each control and presses Enter;
// what is recorded works for a turn.
func TestWindowsGuidedCalibration(t *testing.T) {
	w := Need(t)
	s := newSwarm(t, w, "1")
	chat := w.StartChat(t, "Agent-1 - Cursor", 20, 20, "-think", "0.8", "-pause", "0.25", "-chunks", "3")
	l := chat.Layout
	// The input box, the copy button, the reply region's corners, and the
	// busy indicator (the send button that turns into a stop button).
	points := [][2]int{l.Input, l.Copy, {l.Reply[0], l.Reply[1]}, {l.Reply[0] + l.Reply[2], l.Reply[1] + l.Reply[3]}, l.Busy}

	cmd := w.Agentctl("--root", s.root, "calibrate", "Agent-1", "--title", "^Agent-1 - Cursor$")
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// A calibration that asks for more than the test answers would wait
	// for ever; the test ends it instead, when its waits would give up.
	ctx, cancel := poll.Context(t)
	defer cancel()
	watchdog := context.AfterFunc(ctx, func() { cmd.Process.Kill() })
	defer watchdog()
	out := bufio.NewReader(stdout)
	var said strings.Builder
	for _, p := range points {
		for !strings.HasSuffix(said.String(), "press Enter here: ") {
			b, err := out.ReadByte()
			if err != nil {
				t.Fatalf("calibrate stopped asking: %v\n%s", err, said.String())
			}
			said.WriteByte(b)
		}
		said.Reset()
		at := fmt.Sprintf("%d,%d", l.Origin[0]+p[0], l.Origin[1]+p[1])
		if r := RunCmd(t, w.Command(filepath.Join(w.Bin, "winchat.exe"), "-pointer", at)); r.Code != 0 {
			t.Fatalf("cannot point at %s: %s", at, r.Stderr)
		}
		io.WriteString(stdin, "\r\n")
	}
	rest, _ := io.ReadAll(out)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("calibrate: %v\n%s", err, rest)
	}
	yaml := readFile(t, s.path("agentctl.yaml"))
	for _, want := range []string{
		fmt.Sprintf("input: [%d, %d]", l.Input[0], l.Input[1]),
		fmt.Sprintf("copy: [%d, %d]", l.Copy[0], l.Copy[1]),
		fmt.Sprintf("reply: [%d, %d, %d, %d]", l.Reply[0], l.Reply[1], l.Reply[2], l.Reply[3]),
		fmt.Sprintf("busy: [%d, %d]", l.Busy[0], l.Busy[1]),
	} {
		if !strings.Contains(yaml, want) {
			t.Errorf("agentctl.yaml lacks %q:\n%s", want, yaml)
		}
	}
	r := w.Run(t, "--root", s.root, "prompt", "Agent-1", "ready?")
	if r.Code != 0 || r.Stdout != "You wrote:\nready?" {
		t.Errorf("a turn with the guided calibration: exit %d, %q, %s", r.Code, r.Stdout, r.Stderr)
	}
}
