//go:build linux

package cursor_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/agentctl/agentctl/agents"
	"github.com/agentctl/agentctl/config"
	"github.com/agentctl/agentctl/config/driverconf"
	"github.com/agentctl/agentctl/cursor"
	"github.com/agentctl/agentctl/internal/testenv/chromium"
	"github.com/agentctl/agentctl/internal/testenv/codeserver"
	"github.com/agentctl/agentctl/internal/testenv/poll"
	"github.com/agentctl/agentctl/internal/testenv/syncbuf"
	"github.com/agentctl/agentctl/mailbox"
	"github.com/chromedp/chromedp"
)

// The cdp driver against VS Code's real chat view (code-server in a
// headless Chromium), answered by the scripted participant of
// fixtures/vscodechat, which records every prompt it received and every
// reply it gave: each turn must return that reply byte for byte, and the
// participant must have received the prompt sent. One code-server and one
// Chromium serve every case of a test function (a start takes 5-40 s);
// cases run one after another in the one chat.

const vscodeTitle = "Agent-7 — chat"

type vscodeChat struct {
	s       *codeserver.Server
	b       *chromium.Browser
	replies string // a folder of scripted replies the test writes
}

func startVSCodeChat(t testing.TB) *vscodeChat {
	t.Helper()
	command := codeserver.Need(t)
	ctx, cancel := poll.Context(t)
	defer cancel()
	v := &vscodeChat{replies: t.TempDir()}
	var err error
	v.s, err = codeserver.Start(ctx, command, codeserver.Options{Dir: t.TempDir(),
		Fixture: filepath.Join("..", "fixtures", "vscodechat"), Title: vscodeTitle, Replies: []string{v.replies}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(v.s.Stop)
	if v.b, err = chromium.Start(ctx, t.TempDir()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(v.b.Stop)
	if _, err := v.b.Open(v.s.URL); err != nil {
		t.Fatal(err)
	}
	if err := v.s.WaitChat(ctx, v.b.Endpoint, vscodeTitle); err != nil {
		t.Fatal(err)
	}
	return v
}

// seat is a cdp seat on the chat with nothing but VS Code's profile.
func (v *vscodeChat) seat() config.CDP {
	return config.CDP{Endpoint: v.b.Endpoint, Target: "^" + regexp.QuoteMeta(vscodeTitle) + "$", Profile: config.ProfileVSCode}
}

// vscodeGUI is the timing of the tests: generous, for a loaded machine.
func vscodeGUI() cursor.Timings {
	return cursor.Timings{
		MaxPause:    3 * time.Second,
		Submit:      2 * time.Second,
		TurnTimeout: 5 * time.Minute, // bounds a hang; a loaded machine is slow
	}
}

func (v *vscodeChat) driver(t testing.TB, seat config.CDP) *cursor.CDP {
	t.Helper()
	d, err := cursor.NewCDP(driverconf.CDP(seat), vscodeGUI(), cursor.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func (v *vscodeChat) exchanges(t testing.TB) []codeserver.Exchange {
	t.Helper()
	ex, err := v.s.Exchanges()
	if err != nil {
		t.Fatal(err)
	}
	return ex
}

// turn runs one turn and checks it against what the participant
// recorded: one new exchange, the prompt received as sent (CRLF as LF,
// as the composer stores it, and then noted), the reply returned byte
// for byte. It returns the reply and the turn's notes.
func (v *vscodeChat) turn(t *testing.T, d cursor.Driver, prompt string) (string, []string) {
	t.Helper()
	before := len(v.exchanges(t))
	var notes []string
	start := time.Now()
	reply, err := d.Run(context.Background(), cursor.Turn{Prompt: prompt, OnNote: func(n string) { notes = append(notes, n) }})
	if err != nil {
		t.Fatalf("turn: %v", err)
	}
	ex := v.exchanges(t)
	if len(ex) != before+1 {
		var got []string
		for _, e := range ex[before:] {
			got = append(got, fmt.Sprintf("%q", clipText(e.Prompt)))
		}
		t.Fatalf("the participant recorded %d exchanges for the turn, want 1: %s", len(ex)-before, strings.Join(got, ", "))
	}
	got := ex[len(ex)-1]
	want := strings.ReplaceAll(prompt, "\r\n", "\n")
	if got.Prompt != want {
		t.Fatalf("the participant received %d bytes, want %d; first difference at byte %d", len(got.Prompt), len(want), firstDiff(got.Prompt, want))
	}
	if want != prompt && !strings.Contains(strings.Join(notes, " "), "CRLF") {
		t.Fatalf("the composer changed the line ends, and the notes %q do not say so", notes)
	}
	if got.End != "done" {
		t.Fatalf("the participant's reply ended %q", got.End)
	}
	if reply != got.Reply {
		t.Fatalf("reply of %d bytes differs from the participant's %d bytes at byte %d:\n%q\nwant\n%q",
			len(reply), len(got.Reply), firstDiff(reply, got.Reply), clipText(reply), clipText(got.Reply))
	}
	t.Logf("%d-byte prompt, %d-byte reply in %s", len(prompt), len(reply), time.Since(start).Round(time.Millisecond))
	return reply, notes
}

func firstDiff(a, b string) int {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	return i
}

func clipText(s string) string {
	if len(s) > 600 {
		return s[:300] + " … " + s[len(s)-300:]
	}
	return s
}

// longReply is a reply of about 40 KB: paragraphs, lists, emphasis,
// Unicode and a code block, ending in an agentctl block.
func longReply() string {
	var b strings.Builder
	b.WriteString("# A long answer\n\n")
	for i := 0; b.Len() < 40*1024; i++ {
		fmt.Fprintf(&b, "Paragraph %d: the **parser** keeps _state_ per file; naïve café 日本語 🚀, `code %d`.\n\n- item %d.a\n- item %d.b\n\n", i, i, i, i)
		if i%40 == 0 {
			fmt.Fprintf(&b, "```go\nfunc f%d() int {\n\treturn %d // a tab before\n}\n```\n\n", i, i)
		}
	}
	b.WriteString("```agentctl\n{\"devlog\": \"long answer to {{message_id}}\"}\n```\n")
	return b.String()
}

func TestCDPVSCodeReplies(t *testing.T) {
	v := startVSCodeChat(t)
	// Streamed in pieces of 1000 characters: a model's pace would make
	// the turn minutes long, and the test is of the reading, not the pace.
	for name, data := range map[string]string{"long.md": longReply(), "long.json": `{"chunk": 1000, "delay_ms": 20}`} {
		if err := os.WriteFile(filepath.Join(v.replies, name), []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	d := v.driver(t, v.seat())
	// VS Code draws a reply progressively, some hundreds of characters a
	// second however fast the model wrote it, and the reply is done only
	// once it is drawn: about two minutes for the long one.
	gui := vscodeGUI()
	gui.TurnTimeout = 8 * time.Minute
	patient, err := cursor.NewCDP(driverconf.CDP(v.seat()), gui, cursor.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for i, name := range []string{"default", "markdown", "noblock", "progress", "bursty", "slow", "long"} {
		t.Run(name, func(t *testing.T) {
			d := d
			if name == "long" {
				d = patient
			}
			reply, _ := v.turn(t, d, fmt.Sprintf("Message-ID: m-%d\nvscodechat:%s please", i, name))
			if name != "noblock" && !strings.Contains(reply, "```agentctl\n") {
				t.Fatalf("the reply lost its agentctl fence: %q", clipText(reply))
			}
		})
	}
	t.Run("two identical replies in a row", func(t *testing.T) {
		prompt := "Message-ID: m-same\nvscodechat:default again"
		first, _ := v.turn(t, d, prompt)
		second, _ := v.turn(t, d, prompt)
		if first != second {
			t.Fatalf("the scripted replies differ: %q and %q", first, second)
		}
	})
	t.Run("new chat", func(t *testing.T) {
		before := len(v.exchanges(t))
		reply, err := d.Run(context.Background(), cursor.Turn{Prompt: "Message-ID: m-new\nvscodechat:noblock fresh", NewChat: true})
		ex := v.exchanges(t)
		if err != nil || len(ex) != before+1 || reply != ex[len(ex)-1].Reply {
			t.Fatalf("in a new chat: %q, %v", reply, err)
		}
	})
}

func TestCDPVSCodeErrorsAreNoReply(t *testing.T) {
	v := startVSCodeChat(t)
	d := v.driver(t, v.seat())
	for _, tc := range []struct{ scenario, says string }{
		{"error", "The model is overloaded; try again later."},
		{"cancelled", "cancelled"},
	} {
		t.Run(tc.scenario, func(t *testing.T) {
			before := len(v.exchanges(t))
			reply, err := d.Run(context.Background(), cursor.Turn{Prompt: "Message-ID: m-e\nvscodechat:" + tc.scenario})
			if !errors.Is(err, cursor.ErrNoReply) || !strings.Contains(err.Error(), tc.says) || reply != "" {
				t.Fatalf("%q, %v; want no reply, saying %q", reply, err, tc.says)
			}
			if ex := v.exchanges(t); len(ex) != before+1 || ex[len(ex)-1].End != tc.scenario {
				t.Fatalf("the participant recorded %+v", ex[before:])
			}
			t.Log(err)
		})
	}
	t.Run("a reply after them", func(t *testing.T) {
		v.turn(t, d, "Message-ID: m-after\nvscodechat:default")
	})
}

func TestCDPVSCodePrompts(t *testing.T) {
	v := startVSCodeChat(t)
	d := v.driver(t, v.seat())
	var big strings.Builder
	big.WriteString("Message-ID: m-big\nvscodechat:noblock\n")
	for i := 0; big.Len() < 50*1024; i++ {
		fmt.Fprintf(&big, "line %d: ünïcode 😀 👩‍💻\tand a tab   \r\n", i)
	}
	cases := []struct{ name, prompt string }{
		{"unicode and tabs", "Message-ID: m-u\nvscodechat:noblock\n\tindented, 日本語 🚀 ZWJ 👩‍💻, math ∑ x² ≠ y\n\t\ttwo tabs   and trailing spaces   "},
		{"crlf", "Message-ID: m-crlf\r\nvscodechat:noblock\r\nsecond line\r\n\r\nafter a blank line\r\n"},
		{"50KB", big.String()},
	}
	cases = append(cases, promptsOfTemplates(t)...)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, notes := v.turn(t, d, tc.prompt)
			t.Logf("notes: %q", notes)
		})
	}
	for _, tc := range []struct{ name, prompt, says string }{
		{"leading whitespace", "  Message-ID: m-ws\nvscodechat:noblock", "whitespace"},
		{"slash command", "/help vscodechat:noblock", "slash command"},
		{"participant", "@workspace vscodechat:noblock", "participant"},
	} {
		t.Run("refused "+tc.name, func(t *testing.T) {
			before := len(v.exchanges(t))
			_, err := d.Run(context.Background(), cursor.Turn{Prompt: tc.prompt})
			if !errors.Is(err, cursor.ErrPromptRefused) || !strings.Contains(err.Error(), tc.says) || !strings.Contains(err.Error(), "nothing was sent") {
				t.Fatalf("err = %v, want the prompt refused, saying %q", err, tc.says)
			}
			if n := len(v.exchanges(t)); n != before {
				t.Fatalf("the participant received %d prompts", n-before)
			}
		})
	}
	t.Run("a prompt after them", func(t *testing.T) {
		v.turn(t, d, "Message-ID: m-last\nvscodechat:default")
	})
}

// An editor that ignores keys sent as page events (one that checks
// isTrusted) still gets the prompt exactly, in place of what a person
// left in it: the driver sees the editor copy a line, not its selection,
// and presses the keys as input instead.
func TestCDPVSCodeEditorIgnoringPageKeys(t *testing.T) {
	v := startVSCodeChat(t)
	page := v.page(t)
	js := `(() => {
	  const c = document.querySelector(".interactive-session .interactive-input-part .monaco-editor textarea");
	  window.addEventListener("keydown", e => { if (!e.isTrusted && c.contains(e.target)) e.stopImmediatePropagation(); }, true);
	  c.focus();
	  const dt = new DataTransfer();
	  dt.setData("text/plain", "left by a person\nover two lines");
	  c.dispatchEvent(new ClipboardEvent("paste", {clipboardData: dt, bubbles: true, cancelable: true}));
	})()`
	if err := page.Execute(context.Background(), "Runtime.evaluate", map[string]any{"expression": js}, nil); err != nil {
		t.Fatal(err)
	}
	// The first turn meets the page slowed thirtyfold, as on a busy
	// machine: VS Code applies a paste later, and cancels it if the
	// selection moves meanwhile.
	throttle(t, page, 30)
	log := syncbuf.OnFailure(t, "the driver's log")
	// Slowed thirtyfold on a loaded machine, VS Code takes minutes to draw
	// the reply: the turn's timeout bounds a hang here, it measures nothing.
	gui := vscodeGUI()
	gui.TurnTimeout = 10 * time.Minute
	d, err := cursor.NewCDP(driverconf.CDP(v.seat()), gui, cursor.Options{Log: log})
	if err != nil {
		t.Fatal(err)
	}
	v.turn(t, d, "Message-ID: m-keys\nvscodechat:noblock\nsecond line")
	if !strings.Contains(log.String(), "pressing them as input") {
		t.Fatal("the driver's log does not say it pressed the keys as input")
	}
	throttle(t, page, 1)
	v.turn(t, d, "Message-ID: m-keys-2\nvscodechat:default\nagain")
}

// throttle slows the page's scripts rate times (1: full speed).
func throttle(t *testing.T, page *chromedp.Browser, rate float64) {
	t.Helper()
	if err := page.Execute(context.Background(), "Emulation.setCPUThrottlingRate", map[string]any{"rate": rate}, nil); err != nil {
		t.Fatal(err)
	}
}

// promptsOfTemplates renders agentctl's built-in templates for a message
// whose body picks a scripted reply.
func promptsOfTemplates(t *testing.T) []struct{ name, prompt string } {
	t.Helper()
	var out []struct{ name, prompt string }
	for _, typ := range []string{"default", "task", "board-task", "resume"} {
		msg := mailbox.Message{ID: "m-tmpl-" + typ, From: "Agent-1", To: "Agent-7", Type: typ, Priority: mailbox.Normal,
			Subject: "split the parser", TaskID: "T-7",
			Body: "Please split the parser into three files.\n\tKeep `Parse` exported; *no* API change.\nvscodechat:default"}
		prompt, err := agents.Templates{}.Render(agents.PromptData{Agent: "Agent-7", Others: []string{"Agent-1", "Agent-2"}, Message: msg})
		if err != nil {
			t.Fatal(err)
		}
		if typ == "resume" {
			prompt = "Message-ID: m-tmpl-resume\n" + prompt // the resume template is the body alone
		}
		out = append(out, struct{ name, prompt string }{"template " + typ, prompt})
	}
	return out
}

func TestCDPVSCodeNeedsACopyActionOrReadRendered(t *testing.T) {
	v := startVSCodeChat(t)
	seat := v.seat()
	seat.CopyMenu = "" // nothing set: the profile's copy action stands
	if _, err := cursor.NewCDP(driverconf.CDP(seat), vscodeGUI(), cursor.Options{}); err != nil {
		t.Fatalf("the profile's copy action was not taken: %v", err)
	}
	bare := seat
	bare.Profile = config.ProfileCursor // a profile with no copy action
	_, err := cursor.NewCDP(driverconf.CDP(bare), vscodeGUI(), cursor.Options{})
	for _, s := range []string{"cdp.copy", "cdp.copy_menu", "cdp.read: rendered"} {
		if !errors.Is(err, cursor.ErrNotCalibrated) || !strings.Contains(err.Error(), s) {
			t.Fatalf("err = %v, want not calibrated, naming %s", err, s)
		}
	}
	t.Run("a menu item that is not there", func(t *testing.T) {
		wrong := v.seat()
		wrong.CopyMenu = "Copy Everything"
		before := len(v.exchanges(t))
		_, err := v.driver(t, wrong).Run(context.Background(), cursor.Turn{Prompt: "Message-ID: m-w\nvscodechat:noblock"})
		if !errors.Is(err, cursor.ErrNotCalibrated) || !strings.Contains(err.Error(), `"Copy Everything"`) || !strings.Contains(err.Error(), `"Copy All"`) {
			t.Fatalf("err = %v, want not calibrated, naming the item and those the menu has", err)
		}
		if len(v.exchanges(t)) != before+1 {
			t.Fatal("the prompt was not sent once")
		}
		t.Log(err)
	})
	t.Run("read rendered", func(t *testing.T) {
		r := v.seat()
		r.Read = config.ReadRendered
		var notes []string
		reply, err := v.driver(t, r).Run(context.Background(), cursor.Turn{Prompt: "Message-ID: m-r\nvscodechat:noblock", OnNote: func(n string) { notes = append(notes, n) }})
		if err != nil {
			t.Fatal(err)
		}
		ex := v.exchanges(t)
		// The rendering has no Markdown marks: "**No**" shows as "No".
		if want := ex[len(ex)-1].Reply; reply == want || !strings.Contains(reply, "No block follows.") {
			t.Fatalf("rendered reply %q, participant's %q", reply, want)
		}
		if !strings.Contains(strings.Join(notes, " "), "rendering") {
			t.Fatalf("notes %q do not say the reply was read from the rendering", notes)
		}
	})
}
