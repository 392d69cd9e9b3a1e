package cursor

import (
	"testing"
)

func TestMonacoComposerHoldsThePromptWhileItsWindowIsTheTail(t *testing.T) {
	s := &cdpTurn{kind: composerMonaco, stored: "Message-ID: m-1\nline two 😀\nline three"}
	for _, tc := range []struct {
		window string
		holds  bool
	}{
		{"Message-ID: m-1\nline two 😀\nline three", true},
		{"ine three", true},
		{"\uFFFD\nline three", true}, // the window began inside a UTF-16 pair
		{"", false},                  // sent: the composer emptied
		{"line two", false},          // not the tail
		{"Message-ID: m-2", false},
	} {
		if got := s.holdsPrompt(tc.window); got != tc.holds {
			t.Errorf("window %q: holds = %v, want %v", tc.window, got, tc.holds)
		}
	}
	field := &cdpTurn{kind: "field", stored: "abc"}
	if field.holdsPrompt("bc") || !field.holdsPrompt("abc") {
		t.Error("a field must hold the whole prompt")
	}
}

func TestVSCodeRefusesPromptsItWouldChange(t *testing.T) {
	vscode := &CDP{cfg: CDPSettings{Profile: ProfileVSCode}}
	cursorSeat := &CDP{cfg: CDPSettings{Profile: ProfileCursor}}
	for _, p := range []string{" lead", "\tlead", "\nlead", "/help me", "@workspace hi"} {
		if vscode.refusal(p) == "" {
			t.Errorf("%q was not refused for VS Code", p)
		}
		if cursorSeat.refusal(p) != "" {
			t.Errorf("%q was refused for Cursor", p)
		}
	}
	for _, p := range []string{"Message-ID: m-1\n/help", "a @b", "trailing  \n"} {
		if why := vscode.refusal(p); why != "" {
			t.Errorf("%q refused: %s", p, why)
		}
	}
}

func TestNumberedRowDecidesWhetherAReplyIsNew(t *testing.T) {
	cfg := CDPSettings{CopyMenu: "Copy", Read: ReadCopy}
	st := turnState{PrevKnown: true} // the copy before the prompt was not needed
	old := cdpReading{Text: "same words", Rendered: "same words", CopyFound: true,
		Element: replyState{Found: true, Numbered: true, MarksLeft: true}}
	if why, _ := judgeReply(st, "prompt", "prompt", cfg, old); why == "" {
		t.Fatal("a reply in a row numbered before the prompt was taken as new")
	}
	fresh := old
	fresh.Element.Fresh = true
	if why, _ := judgeReply(st, "prompt", "prompt", cfg, fresh); why != "" {
		t.Fatalf("a reply in a new row was refused: %s", why)
	}
	cut := fresh
	cut.Text = "same"
	if why, _ := judgeReply(st, "prompt", "prompt", cfg, cut); why == "" {
		t.Fatal("a copy lacking words the page shows was taken")
	}
}
