//go:build linux && !nogui

package cursor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentctl/agentctl/config"
	"github.com/agentctl/agentctl/internal/testenv/codeserver"
	"github.com/agentctl/agentctl/internal/testenv/poll"
	"github.com/agentctl/agentctl/internal/testenv/syncbuf"
)

// vscodeChat is code-server's VS Code, with the scripted participant of
// fixtures/vscodechat, in a Chromium app window on the test's display.
type vscodeChat struct {
	s     *codeserver.Server
	win   *codeserver.Window
	title string
}

// startVSCode runs code-server and opens its workbench in a Chromium app
// window titled title, and waits until the chat takes prompts. DevTools
// is used only for that wait; the driver never sees it.
func startVSCode(t testing.TB, title string, replies string) *vscodeChat {
	t.Helper()
	needDisplay(t)
	command := codeserver.Need(t)
	ctx, cancel := poll.Context(t)
	defer cancel()
	s, err := codeserver.Start(ctx, command, codeserver.Options{Dir: t.TempDir(),
		Fixture: filepath.Join("..", "fixtures", "vscodechat"), Title: title, Replies: []string{replies}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Stop)
	win, err := s.OpenWindow(ctx, t.TempDir(), 10, 10)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(win.Close)
	return &vscodeChat{s: s, win: win, title: title}
}

// window is the calibration a user records for VS Code's chat, as the
// driver takes it: with the vscode profile's copy route and composer.
func (c *vscodeChat) window() WindowSettings {
	cal := c.win.Calibration()
	w := config.Window{Title: cal.Title, Profile: cal.Profile}.WithProfile()
	return WindowSettings{
		Title: cal.Title, Input: &Point{X: cal.Input.X, Y: cal.Input.Y}, Busy: &Point{X: cal.Busy.X, Y: cal.Busy.Y},
		Reply:    &Rect{X: cal.Reply.X, Y: cal.Reply.Y, W: cal.Reply.W, H: cal.Reply.H},
		CopyKeys: w.CopyKeys, CopyFromInput: w.CopyFromInput, CheckKeys: w.CheckKeys, Composer: ComposerKind(w.Composer),
		ErrorMark: w.ErrorMark,
	}
}

// driverLog shows the driver's steps under go test -v, and otherwise
// keeps them to show if tb fails.
func driverLog(tb testing.TB) io.Writer {
	if testing.Verbose() {
		return os.Stderr
	}
	return syncbuf.OnFailure(tb, "the driver's log")
}

// vscodeGUI is testGUI with room for a 40 KB reply rendered under load,
// and for VS Code taking a prompt late after one: right after such a
// reply, an Enter in its composer took over a second to show.
func vscodeGUI() Timings {
	g := testGUI()
	g.TurnTimeout = 4 * time.Minute
	g.Submit = 5 * time.Second
	return g
}

// lastExchange is what the participant recorded last, failing t when it
// recorded nothing.
func (c *vscodeChat) lastExchange(t testing.TB) codeserver.Exchange {
	t.Helper()
	all, err := c.s.Exchanges()
	if err != nil || len(all) == 0 {
		t.Fatalf("the participant recorded %d exchanges (%v)", len(all), err)
	}
	return all[len(all)-1]
}

// lastTimes are the model's times for the last exchange: the participant
// receiving the prompt and recording the finished reply.
func (c *vscodeChat) lastTimes(t testing.TB) (received, replied time.Time) {
	t.Helper()
	data, err := os.ReadFile(c.s.Record)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var e struct {
			Time  time.Time `json:"time"`
			Event string    `json:"event"`
			End   string    `json:"end"`
		}
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatal(err)
		}
		switch {
		case e.Event == "received":
			received = e.Time
		case e.Event == "" && e.End != "":
			replied = e.Time
		}
	}
	if received.IsZero() || replied.Before(received) {
		t.Fatalf("the participant's record has no finished reply after its last prompt")
	}
	return received, replied
}

// longReply is about 40 KB of Markdown with code blocks all through it, so
// a copy of any one block, or of the part shown on screen, is not it. Few
// blocks: VS Code renders each as an editor of its own, minutes for a
// hundred on a loaded machine.
func longReply() string {
	var b strings.Builder
	b.WriteString("# A long answer\n\n")
	for i := 1; b.Len() < 40_000; i++ {
		fmt.Fprintf(&b, "## Part %d\n\nParagraph %d says *this* and **that**, naïve café 日本語 %d.\n\n", i, i, i*7)
		fmt.Fprintf(&b, "- item %d one\n- item %d two\n\n", i, i)
		if i%12 == 0 {
			fmt.Fprintf(&b, "```go\nfunc part%d() int {\n\treturn %d // tab inside\n}\n```\n\n", i, i)
		}
	}
	b.WriteString("The end of the long answer.\n")
	return b.String()
}

// writeReply puts a scripted reply and its shape into the Replies folder.
func writeReply(t testing.TB, dir, name, text, shape string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name+".md"), []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	if shape != "" {
		if err := os.WriteFile(filepath.Join(dir, name+".json"), []byte(shape), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// The GUI driver against VS Code's own chat view: every scripted reply,
// long or short, slow or bursty, comes back byte for byte as the
// participant gave it, through the copy route of the vscode profile (keys
// from the composer to the last reply's context menu), whatever the
// reply's height; the prompt arrives as sent.
func TestGUIVSCodeReplies(t *testing.T) {
	replies := t.TempDir()
	writeReply(t, replies, "long", longReply(), `{"chunk": 400, "delay_ms": 5}`)
	// A short reply whose model thinks a moment first, as every real one
	// does: the stop button of a reply that comes and goes within one
	// screenshot under load is no sign of a submission.
	writeReply(t, replies, "short", "Short **and** done: {{message_id}}.\n", `{"think_ms": 400}`)
	chat := startVSCode(t, "Agent-7 — VS Code chat", replies)
	g, err := NewGUI(chat.window(), vscodeGUI(), Options{LockDir: t.TempDir(), Log: driverLog(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(g.Close)
	setUserClipboard(t, "the user's own clipboard")

	// Neighbours differ: markdown, slow and bursty share one text, and a
	// copy equal to the one before the prompt is never taken for the reply.
	for i, name := range []string{"default", "markdown", "noblock", "slow", "default", "bursty", "long", "short", "long", "markdown"} {
		t.Run(fmt.Sprintf("%d-%s", i, name), func(t *testing.T) {
			prompt := fmt.Sprintf("Message-ID: m-%d\nvscodechat:%s\nAnswer\tthe message.", i, name)
			var notes []string
			got, err := g.Run(context.Background(), Turn{Prompt: prompt, OnNote: func(n string) { notes = append(notes, n) }})
			if err != nil {
				t.Fatal(err)
			}
			ex := chat.lastExchange(t)
			if ex.Prompt != prompt || ex.Scenario != name || ex.End != "done" {
				t.Fatalf("the participant recorded %q (%s, %s), want the prompt %q answered", ex.Prompt, ex.Scenario, ex.End, prompt)
			}
			if got != ex.Reply {
				t.Fatalf("the driver returned %d bytes, the participant gave %d:\n got %.300q\nwant %.300q", len(got), len(ex.Reply), got, ex.Reply)
			}
			if notes = slices.DeleteFunc(notes, func(n string) bool { return n == errorMarkUnseen }); len(notes) != 0 {
				t.Errorf("notes on a prompt the composer keeps as it is: %q", notes)
			}
			assertClipboard(t, "the user's own clipboard")
		})
	}
}

// A reply VS Code ends with an error or a cancel shows only as a red mark
// at its end; its copies hold what came before. Where the chat's end is
// in view (a reply shorter than the view), such a reply is refused, and a
// finished one passes; where it is not, the reply passes with a note
// saying the seat could not look.
func TestGUIVSCodeErrorsAndCancels(t *testing.T) {
	replies := t.TempDir()
	writeReply(t, replies, "short-cancelled", "Half of an answer, then", `{"cancel": true}`)
	writeReply(t, replies, "code-red", "Strings in red:\n\n```go\nvar s = \"quota exceeded\"\n```\n", "")
	writeReply(t, replies, "long", longReply(), `{"chunk": 400, "delay_ms": 5}`)
	chat := startVSCode(t, "Agent-6 — VS Code chat", replies)
	g, err := NewGUI(chat.window(), vscodeGUI(), Options{LockDir: t.TempDir(), Log: driverLog(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(g.Close)
	const refused, passed, unseen = "refused", "passed", "unseen"
	for i, c := range []struct{ name, want string }{
		{"error", refused}, {"default", passed}, {"short-cancelled", refused}, {"code-red", passed},
		{"cancelled", unseen}, {"noblock", passed}, {"long", unseen}, {"error", refused},
	} {
		t.Run(fmt.Sprintf("%d-%s", i, c.name), func(t *testing.T) {
			prompt := fmt.Sprintf("Message-ID: m-%d\nvscodechat:%s", i, c.name)
			var notes []string
			got, err := g.Run(context.Background(), Turn{Prompt: prompt, OnNote: func(n string) { notes = append(notes, n) }})
			ex := chat.lastExchange(t)
			if ex.Prompt != prompt {
				t.Fatalf("the participant's last prompt is %q, want %q (err %v)", ex.Prompt, prompt, err)
			}
			noted := slices.Contains(notes, errorMarkUnseen)
			switch c.want {
			case refused:
				if ex.End == "done" || !errors.Is(err, ErrNoReply) || !strings.Contains(err.Error(), "error mark") {
					t.Fatalf("a reply ended %q gave %d bytes and err %v, want it refused for its error mark", ex.End, len(got), err)
				}
				t.Log(err)
			case passed, unseen:
				if err != nil || got != ex.Reply {
					t.Fatalf("a reply of %d bytes ended %q gave %d bytes and err %v, want it passed on", len(ex.Reply), ex.End, len(got), err)
				}
				if noted != (c.want == unseen) {
					t.Fatalf("notes %q; want the note that the reply's end was unseen: %v", notes, c.want == unseen)
				}
			}
		})
	}
}

// What the Monaco composer does to a pasted prompt, in the real app: tabs,
// Unicode and a trailing newline arrive as sent; CRLF arrives as LF, which
// the driver pastes itself and notes; leading whitespace is dropped by the
// chat, and noted. A copy route that finds another reply than the answer
// (here the one before it) is refused with the reason, never passed on.
func TestGUIVSCodePromptsAndRefusals(t *testing.T) {
	replies := t.TempDir()
	writeReply(t, replies, "echo", "Got {{prompt_bytes}} bytes for {{message_id}}, with *care*.\n", `{"think_ms": 400}`)
	writeReply(t, replies, "other", "A different answer about {{message_id}} entirely.\n", `{"think_ms": 400}`)
	chat := startVSCode(t, "Agent-8 — VS Code chat", replies)
	g, err := NewGUI(chat.window(), vscodeGUI(), Options{LockDir: t.TempDir(), Log: driverLog(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(g.Close)

	for _, c := range []struct {
		name, prompt, received, note string
	}{
		{"tabs and unicode", "Message-ID: m-1\n\tindented\ttab, 日本語 🚀 vscodechat:echo\n", "", ""},
		{"crlf", "Message-ID: m-2\r\nline two\r\nvscodechat:echo", "Message-ID: m-2\nline two\nvscodechat:echo", "2 CRLF and 0 CR became LF"},
		{"leading whitespace", "  \tMessage-ID: m-3\nvscodechat:echo", "Message-ID: m-3\nvscodechat:echo", "3 bytes of whitespace"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var notes []string
			got, err := g.Run(context.Background(), Turn{Prompt: c.prompt, OnNote: func(n string) { notes = append(notes, n) }})
			if err != nil {
				t.Fatal(err)
			}
			want := c.received
			if want == "" {
				want = c.prompt
			}
			ex := chat.lastExchange(t)
			if ex.Prompt != want || got != ex.Reply {
				t.Fatalf("the participant got %q and answered %q; the driver returned %q; want the prompt %q", ex.Prompt, ex.Reply, got, want)
			}
			if c.note == "" && len(notes) > 0 || c.note != "" && (len(notes) != 1 || !strings.Contains(notes[0], c.note)) {
				t.Errorf("notes %q, want one saying %q", notes, c.note)
			}
		})
	}

	t.Run("the reply before is refused", func(t *testing.T) {
		w := chat.window()
		// From the composer: the last reply, then the prompt above it,
		// then the reply before: a route a misconfigured seat could have.
		w.CopyKeys, w.CopyFromInput = []string{"ctrl+up", "up", "up", "menu", "down", "enter"}, true
		wrong, err := NewGUI(w, vscodeGUI(), Options{LockDir: t.TempDir(), Log: driverLog(t)})
		if err != nil {
			t.Fatal(err)
		}
		defer wrong.Close()
		_, err = wrong.Run(context.Background(), Turn{Prompt: "Message-ID: m-4\nvscodechat:other"})
		if !errors.Is(err, ErrNoReply) || !strings.Contains(err.Error(), "not the whole reply") {
			t.Fatalf("a copy of the reply before was not refused as such: %v", err)
		}
		if ex := chat.lastExchange(t); ex.Scenario != "other" || ex.End != "done" {
			t.Fatalf("the participant recorded %+v", ex)
		}
	})
}
