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
