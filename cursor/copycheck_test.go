package cursor

import (
	"strings"
	"testing"
)

func TestCheckCopy(t *testing.T) {
	source := "# Parser split\n\nThe parser now lives in **three** files, see [the notes](https://example.com/a_b).\n\n" +
		"| file | lines |\n|---|--:|\n| lexer.go | 120 |\n\n```go\nfunc Parse(s string) {\n\treturn\n}\n```\n\n" +
		"Unicode: naïve café, 日本語 🚀.\n\n```agentctl\n{\"devlog\": \"done\"}\n```\n"
	// What the page shows: marks gone, code indented with U+00A0, table
	// cells tab-separated, the link's address hidden.
	rendered := "Parser split\nThe parser now lives in three files, see the notes.\nfile\tlines\nlexer.go\t120\n" +
		"func Parse(s string) {\n\u00a0\u00a0\u00a0\u00a0return\n}\nUnicode: naïve café, 日本語 🚀.\n{\"devlog\": \"done\"}\n"
	if err := checkCopy(source, rendered); err != nil {
		t.Errorf("the whole reply was refused: %v", err)
	}
	for name, copied := range map[string]string{
		"a code block's copy": "func Parse(s string) {\n\treturn\n}\n",
		"a cut reply":         source[:len(source)/2],
		"the previous reply":  "Earlier reply about something else.",
		"nothing":             "",
	} {
		err := checkCopy(copied, rendered)
		if err == nil {
			t.Errorf("%s was taken for the reply", name)
			continue
		}
		if !strings.Contains(err.Error(), "not the whole reply") {
			t.Errorf("%s: the reason does not say what is wrong: %v", name, err)
		}
	}
	if err := checkCopy("anything", " \n\t"); err != nil {
		t.Errorf("a rendering without words refused a copy: %v", err)
	}
}

// The transcript as VS Code's "Copy All" gives it: "name: text" turns
// joined by blank lines, the user's name empty.
func TestCheckTranscript(t *testing.T) {
	prev := "I read the message and have nothing to add.\n\n- It needs no change.\n"
	reply := "# Parser split\n\nThe parser now lives in **three** files.\n\n```go\nfunc Parse(s string) {\n\treturn\n}\n```\n\nDone; over to review.\n"
	prompt := "Message-ID: m-2\nvscodechat:markdown\n"
	transcript := ": Message-ID: m-1\nvscodechat:noblock\n\nScripted model: " + prev + "\n\n: " + prompt + "\n\nScripted model: " + reply
	if err := checkTranscript(reply, transcript, prompt); err != nil {
		t.Errorf("the whole reply was refused: %v", err)
	}
	for name, copied := range map[string]string{
		"a code block's copy": "func Parse(s string) {\n\treturn\n}\n",
		"a cut reply":         reply[:len(reply)/2],
		"the previous reply":  prev,
	} {
		err := checkTranscript(copied, transcript, prompt)
		if err == nil || !strings.Contains(err.Error(), "not the whole reply") {
			t.Errorf("%s: %v, want it refused as not the whole reply", name, err)
		}
	}
	if err := checkTranscript(reply, transcript, "a prompt never sent"); err == nil || !strings.Contains(err.Error(), "does not show the prompt") {
		t.Errorf("a transcript without the prompt: %v", err)
	}
	if err := checkTranscript(reply, ": "+prompt, prompt); err == nil || !strings.Contains(err.Error(), "no answer") {
		t.Errorf("a transcript without an answer yet: %v", err)
	}
}

// A reply is told new by its place in the transcript: the chat's last
// turn, right after the prompt's.
func TestCheckLatest(t *testing.T) {
	prev := "I read the message and have nothing to add.\n\n- It needs no change.\n"
	reply := "Parser split, as asked in\n\nMessage-ID: m-2\nvscodechat:markdown\n\nDone; over to review.\n"
	prompt := "Message-ID: m-2\nvscodechat:markdown\n"
	transcript := ": Message-ID: m-1\nvscodechat:noblock\n\nScripted model: " + prev + "\n\n: " + prompt + "\n\nScripted model: " + reply
	if err := checkLatest(reply, transcript, prompt); err != nil {
		t.Errorf("the reply, quoting its prompt, was refused: %v", err)
	}
	for name, c := range map[string]struct{ copied, transcript, want string }{
		"the reply before":            {prev, transcript, "not how the chat's transcript ends"},
		"a cut reply":                 {reply[:len(reply)/2], transcript, "not how the chat's transcript ends"},
		"the reply's last paragraph":  {"Done; over to review.\n", transcript, "does not start a turn"},
		"the reply to another prompt": {prev, ": Message-ID: m-1\nvscodechat:noblock\n\nScripted model: " + prev, "is not the prompt"},
		"a transcript of one turn":    {reply, "Scripted model: " + reply, "no turn before"},
	} {
		if err := checkLatest(c.copied, c.transcript, prompt); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want it refused saying %q", name, err, c.want)
		}
	}

	// The reply before holds every word of a shorter answer, in order:
	// the words check passes it, its place does not.
	transcript = ": m-1\n\nScripted model: Done.\n\nDone.\n\n: m-2\n\nScripted model: Done.\n"
	if err := checkTranscript("Done.\n\nDone.\n", transcript, "m-2"); err != nil {
		t.Fatalf("the words check: %v", err)
	}
	if err := checkAgainstTranscript("Done.\n\nDone.\n", transcript, "m-2"); err == nil || !strings.Contains(err.Error(), "not how") {
		t.Errorf("the reply before, holding the answer's words, was not refused: %v", err)
	}
	if err := checkAgainstTranscript("Done.\n", transcript, "m-2"); err != nil {
		t.Errorf("the reply was refused: %v", err)
	}
}

func TestComposedPrompt(t *testing.T) {
	in := "  \tMessage-ID: m-1\r\nline\rend\n"
	if got, notes := composedPrompt("", in); got != in || notes != nil {
		t.Errorf("a plain composer changed the prompt: %q, %q", got, notes)
	}
	got, notes := composedPrompt(ComposerMonaco, in)
	if got != "  \tMessage-ID: m-1\nline\nend\n" {
		t.Errorf("monaco composer: pasted %q", got)
	}
	if len(notes) != 2 || !strings.Contains(notes[0], "1 CRLF and 1 CR became LF") || !strings.Contains(notes[1], "3 bytes of whitespace") {
		t.Errorf("notes %q", notes)
	}
	if _, notes := composedPrompt(ComposerMonaco, "/explain this\nplease"); len(notes) != 1 || !strings.Contains(notes[0], `"/explain"`) {
		t.Errorf("a leading command: notes %q", notes)
	}
	if _, notes := composedPrompt(ComposerMonaco, "Message-ID: m-1\n\tindented"); notes != nil {
		t.Errorf("a prompt the composer keeps got notes %q", notes)
	}
}
