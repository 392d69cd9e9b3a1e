package devlog

import (
	"bytes"
	"context"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/agentctl/agentctl/internal/clock/clocktest"
)

// notifyBuffer is the follower's output; every write wakes the test.
type notifyBuffer struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	wrote chan struct{}
}

func newNotifyBuffer() *notifyBuffer { return &notifyBuffer{wrote: make(chan struct{}, 1)} }

func (b *notifyBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	select {
	case b.wrote <- struct{}{}:
	default:
	}
	return b.buf.Write(p)
}

func (b *notifyBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// waitFor waits until the output holds want. With poll set, it moves the
// follower's clock to its next look whenever the follower went to sleep
// without showing it; otherwise it waits for the follower's writes. A
// broken follower hangs until the test binary's timeout.
func (b *notifyBuffer) waitFor(t *testing.T, want string, poll *clocktest.Clock) {
	t.Helper()
	for !strings.Contains(b.String(), want) {
		if poll != nil {
			<-poll.Sleeping()
			poll.Advance(PollInterval)
			continue
		}
		<-b.wrote
	}
}

func note(agent, text string) Entry { return Entry{Time: t0, Agent: agent, Note: text} }

// TestFollowAcrossRotation follows one existing devlog and one that does
// not exist yet, through a rename-and-recreate and a truncation, with real
// fsnotify events and then with polling alone.
func TestFollowAcrossRotation(t *testing.T) {
	for _, mode := range []string{"events", "poll"} {
		t.Run(mode, func(t *testing.T) {
			root := t.TempDir()
			if err := Append(root, note("Agent-1", "before the follower started")); err != nil {
				t.Fatal(err)
			}
			p1, _ := Path(root, "Agent-1")
			p2, _ := Path(root, "Agent-2")
			out := newNotifyBuffer()
			fl, sizes := NewFollower(out, p1, p2)
			if sizes[0] == 0 || sizes[1] != 0 {
				t.Fatalf("start sizes %v", sizes)
			}
			clk := clocktest.New(t0)
			fl.Clock = clk // never moved with events: they alone must do
			var tick *clocktest.Clock
			if mode == "poll" {
				tick, fl.NoEvents = clk, true
			}
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error)
			go func() { done <- fl.Run(ctx) }()
			defer func() { cancel(); <-done }()

			step := func(agent, text string) {
				t.Helper()
				if err := Append(root, note(agent, text)); err != nil {
					t.Fatal(err)
				}
				out.waitFor(t, text, tick)
			}
			step("Agent-1", "first live entry")
			step("Agent-2", "a devlog created while following")
			// logrotate style: rename away, keep writing to the old file
			// briefly, then a new file appears under the same name.
			if err := os.Rename(p1, p1+".1"); err != nil {
				t.Fatal(err)
			}
			f, _ := os.OpenFile(p1+".1", os.O_APPEND|os.O_WRONLY, 0)
			f.Write(Format(note("Agent-1", "late write to the rotated file")))
			f.Close()
			step("Agent-1", "first entry of the new file")
			if !strings.Contains(out.String(), "late write to the rotated file") {
				t.Errorf("lost the rotated file's last entry")
			}
			// copytruncate style: the same file emptied, then regrown past
			// the old offset before the follower looks.
			if err := os.Truncate(p2, 0); err != nil {
				t.Fatal(err)
			}
			step("Agent-2", "after truncation "+strings.Repeat("long ", 40)+"end")
			if strings.Contains(out.String(), "before the follower started") {
				t.Errorf("printed an entry from before the start")
			}
			if n := strings.Count(out.String(), "## "); n != 5 {
				t.Errorf("got %d entries, want 5:\n%s", n, out.String())
			}
		})
	}
}

// TestFollowPrintsLinesAsTheyComplete appends by hand, the way a human
// does with echo >>: each line is printed as soon as its newline is
// written, without waiting for a blank line or a later append; half a line
// is held back until it is finished, and nothing is printed twice.
func TestFollowPrintsLinesAsTheyComplete(t *testing.T) {
	for _, mode := range []string{"events", "poll"} {
		t.Run(mode, func(t *testing.T) {
			root := t.TempDir()
			p1, _ := Path(root, "Agent-1")
			p2, _ := Path(root, "Agent-2")
			if err := Append(root, note("Agent-1", "before")); err != nil {
				t.Fatal(err)
			}
			out := newNotifyBuffer()
			fl, _ := NewFollower(out, p1, p2)
			clk := clocktest.New(t0)
			fl.Clock = clk // never moved with events: they alone must do
			var tick *clocktest.Clock
			if mode == "poll" {
				tick, fl.NoEvents = clk, true
			}
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error)
			go func() { done <- fl.Run(ctx) }()
			defer func() { cancel(); <-done }()
			appendTo := func(path, text string) {
				t.Helper()
				f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
				if err != nil {
					t.Fatal(err)
				}
				defer f.Close()
				if _, err := f.WriteString(text); err != nil {
					t.Fatal(err)
				}
			}

			appendTo(p1, "a human's note\n")
			out.waitFor(t, "a human's note\n", tick)

			// Half a line, then a whole line in the other devlog: once the
			// follower has printed that, it has seen the half line too.
			appendTo(p1, "half a li")
			appendTo(p2, "marker\n")
			out.waitFor(t, "marker\n", tick)
			if strings.Contains(out.String(), "half a li") {
				t.Fatalf("printed half a line:\n%s", out.String())
			}
			appendTo(p1, "ne, now finished\nand one more\n")
			out.waitFor(t, "and one more\n", tick)

			// A line the rotated file never finished is not glued to the
			// first line of the new file.
			appendTo(p1, "never finished")
			if err := os.Rename(p1, p1+".1"); err != nil {
				t.Fatal(err)
			}
			appendTo(p1, "first line of the new file\n")
			out.waitFor(t, "first line of the new file\n", tick)

			want := "a human's note\nmarker\nhalf a line, now finished\nand one more\nfirst line of the new file\n"
			if got := out.String(); got != want {
				t.Errorf("output:\n%q\nwant:\n%q", got, want)
			}
		})
	}
}
