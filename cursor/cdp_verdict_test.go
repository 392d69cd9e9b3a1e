package cursor

import (
	"strings"
	"testing"
)

func TestJudgeReply(t *testing.T) {
	const prompt = "the prompt\r\n"
	st := turnState{Prev: fingerprintText("same words"), PrevKnown: true}
	noCopy := CDPSettings{Reply: ".reply"}
	withCopy := CDPSettings{Reply: ".reply", Copy: ".copy"}
	fresh := replyState{Found: true, Fresh: true, MarksLeft: true}
	for _, tc := range []struct {
		name      string
		st        turnState
		cfg       CDPSettings
		r         cdpReading
		says      string // "" : taken
		calibrate bool
	}{
		{"new element, same words as before", st, noCopy, cdpReading{Text: "same words", Element: fresh}, "", false},
		{"new element, other words", st, noCopy, cdpReading{Text: "other", Element: fresh}, "", false},
		{"the old element, same words", st, noCopy, cdpReading{Text: "same words", Element: replyState{Found: true, MarksLeft: true}}, "the reply from before", false},
		{"old element reused, new words", st, noCopy, cdpReading{Text: "other", Element: replyState{Found: true, MarksLeft: true}}, "", false},
		{"replies redrawn, same words", st, noCopy, cdpReading{Text: "same words", Element: replyState{Found: true, Fresh: true}}, "the reply from before", false},
		{"resumed without state", turnState{}, noCopy, cdpReading{Text: "same words", Element: replyState{Found: true}}, "", false},
		{"the echo, as the composer stored it", st, noCopy, cdpReading{Text: "the prompt\n", Element: fresh}, "the prompt itself", false},
		{"empty reply", st, noCopy, cdpReading{Element: fresh}, "an empty reply", false},
		{"no reply element", st, noCopy, cdpReading{}, `cdp.reply ".reply" matches nothing`, true},
		{"no copy button", st, withCopy, cdpReading{Element: fresh}, `cdp.copy ".copy" matches nothing`, true},
		{"copy gave nothing", st, withCopy, cdpReading{CopyFound: true, Element: fresh}, "gave nothing", false},
		// A copy is taken only as far as the reply's rendering proves it:
		// without the reply, the page's last copy button may be a code
		// block's or the reply before's.
		{"copy, no reply element", st, withCopy, cdpReading{CopyFound: true, Text: "`go test`"}, `cdp.reply ".reply" matches nothing`, true},
		{"copy, the reply shows nothing", st, withCopy, cdpReading{CopyFound: true, Text: "`go test`", Element: fresh}, "shows nothing to check the copy against", false},
		{"copy of a reply of no words", st, withCopy, cdpReading{CopyFound: true, Text: "👍\n", Rendered: "👍", Element: fresh}, "", false},
		{"copy other than a reply of no words", st, withCopy, cdpReading{CopyFound: true, Text: "👍 and more", Rendered: "👍", Element: fresh}, "shows nothing to check the copy against", false},
		{"copy of the whole reply", st, withCopy, cdpReading{CopyFound: true, Text: "Run **go test** first", Rendered: "Run go test first", Element: fresh}, "", false},
		{"copy of a code block", st, withCopy, cdpReading{CopyFound: true, Text: "go test", Rendered: "Run go test first", Element: fresh}, "not what the page shows", false},
	} {
		why, calibrate := judgeReply(tc.st, prompt, "the prompt\n", tc.cfg, tc.r)
		if (tc.says == "") != (why == "") || !strings.Contains(why, tc.says) || calibrate != tc.calibrate {
			t.Errorf("%s: %q (calibrate %v), want %q (calibrate %v)", tc.name, why, calibrate, tc.says, tc.calibrate)
		}
		if tc.cfg.Copy == "" && strings.Contains(why, "copy") {
			t.Errorf("%s: %q speaks of a copy where the seat has no copy button", tc.name, why)
		}
	}
}

func TestComposerDiff(t *testing.T) {
	got := composerDiff("héllo wörld", "héllo")
	for _, want := range []string{"6 bytes where the prompt has 13", "first differ at byte 6", `" wörld"`} {
		if !strings.Contains(got, want) {
			t.Errorf("%q does not say %q", got, want)
		}
	}
	if fieldLineEnds("a\r\nb\rc\n") != "a\nb\nc\n" {
		t.Error("fieldLineEnds")
	}
}
