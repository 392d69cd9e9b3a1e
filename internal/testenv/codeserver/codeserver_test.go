//go:build linux

package codeserver

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/agentctl/agentctl/internal/testenv/chromium"
	"github.com/agentctl/agentctl/internal/testenv/poll"
)

// The fixture itself: VS Code's chat view opens with the workbench, a
// prompt pasted into its composer reaches the scripted participant
// exactly, and the participant records the reply it streamed.
func TestScriptedChatAnswersAPastedPrompt(t *testing.T) {
	command := Need(t)
	ctx, cancel := poll.Context(t)
	defer cancel()
	replies := t.TempDir()
	reply := "## Hello\n\n- one\n- *two*\n\n```agentctl\n{\"devlog\": \"hi {{message_id}}\"}\n```\n"
	if err := os.WriteFile(filepath.Join(replies, "hello.md"), []byte(reply), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := Start(ctx, command, Options{Dir: t.TempDir(), Fixture: filepath.Join("..", "..", "..", "fixtures", "vscodechat"),
		Title: "Agent-9 — chat", Replies: []string{replies}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	b, err := chromium.Start(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer b.Stop()
	if _, err := b.Open(s.URL); err != nil {
		t.Fatal(err)
	}
	if err := s.WaitChat(ctx, b.Endpoint, "Agent-9 — chat"); err != nil {
		t.Fatal(err)
	}
	ws, err := pageSocket(ctx, b.Endpoint, "Agent-9 — chat")
	if err != nil {
		t.Fatal(err)
	}
	quiet := func(string, ...any) {}
	page, err := chromedp.NewBrowser(context.Background(), ws, chromedp.WithBrowserLogf(quiet), chromedp.WithBrowserErrorf(quiet))
	if err != nil {
		t.Fatal(err)
	}
	prompt := "Message-ID: m-42\nvscodechat:hello\n\tindented, 日本語 🚀"
	paste := `(p => { const ta = document.querySelector(".interactive-input-part .monaco-editor textarea"); ta.focus();
		const dt = new DataTransfer(); dt.setData("text/plain", p);
		ta.dispatchEvent(new ClipboardEvent("paste", {clipboardData: dt, bubbles: true, cancelable: true})); })(` + jsString(prompt) + `)`
	if err := page.Execute(ctx, "Runtime.evaluate", map[string]any{"expression": paste}, nil); err != nil {
		t.Fatal(err)
	}
	// VS Code applies a paste a moment later, and an Enter pressed before
	// that, or while the editor is still busy with it, is not taken: press
	// it once the composer shows the text, and again only while the
	// composer still holds it, so the prompt is sent once.
	composerText := func() string {
		var res struct {
			Result struct {
				Value string `json:"value"`
			} `json:"result"`
		}
		page.Execute(ctx, "Runtime.evaluate", map[string]any{"returnByValue": true,
			"expression": `document.querySelector(".interactive-input-part .view-lines").textContent`}, &res)
		return res.Result.Value
	}
	enter := func() {
		for _, typ := range []string{"keyDown", "keyUp"} {
			key := map[string]any{"type": typ, "key": "Enter", "code": "Enter", "windowsVirtualKeyCode": 13}
			if typ == "keyDown" {
				key["text"] = "\r"
			}
			if err := page.Execute(ctx, "Input.dispatchKeyEvent", key, nil); err != nil {
				t.Fatal(err)
			}
		}
	}
	for composerText() == "" {
		if ctx.Err() != nil {
			t.Fatal("the pasted prompt never showed in the composer")
		}
		time.Sleep(20 * time.Millisecond)
	}
	enter()
	pressed := time.Now()
	for {
		got, err := s.Exchanges()
		if err != nil {
			t.Fatal(err)
		}
		if len(got) == 0 && time.Since(pressed) > 3*time.Second && composerText() != "" {
			enter()
			pressed = time.Now()
		}
		if len(got) > 0 {
			want := Exchange{Prompt: prompt, Scenario: "hello", End: "done",
				Reply: "## Hello\n\n- one\n- *two*\n\n```agentctl\n{\"devlog\": \"hi m-42\"}\n```\n"}
			if len(got) != 1 || got[0] != want {
				t.Fatalf("the participant recorded %+v, want %+v", got, want)
			}
			return
		}
		select {
		case <-ctx.Done():
			var res json.RawMessage
			diag, stop := context.WithTimeout(context.Background(), 5*time.Second)
			defer stop()
			page.Execute(diag, "Runtime.evaluate", map[string]any{"returnByValue": true,
				"expression": `document.querySelector(".interactive-session").innerText`}, &res)
			t.Fatalf("the participant never received the prompt; the chat shows %s", res)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
