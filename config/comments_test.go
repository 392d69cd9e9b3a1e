package config

import (
	"bytes"
	"reflect"
	"testing"

	"gopkg.in/yaml.v3"
)

// Blanking the comments changes nothing yaml reads, lines of text that
// look like comments included, and takes every comment of the template.
func TestBlankCommentsKeepsWhatYAMLReads(t *testing.T) {
	docs := map[string]string{
		"template":      string(Initial([]string{"Agent-1", "Agent-2"})),
		"block scalars": "a: |\n  # a heading, not a comment\n  text\n\n  # more\n# a comment\nb: >-\n    # folded\n    line\nc:\n  - |2\n     # in a list\n  - x\nd: |  # its comment\n  # text\ne: |\t# after a tab\n  # text\n",
		"quoted":        "a: \"one\n  # inside the string\n  two\"\nb: 'it''s\n  # inside too\n  '\n",
		"plain quotes":  "a: it's here\n# a comment\nb: say \"hi\n# a comment too\nc: x\n",
		"escaped":       "a: \"a \\\" b\n  # inside\n  c\"\nd: \"x\\\\\" # a comment\n# and a line of one\ne: 1\n",
		"flow":          "a: [x,\n  # a comment\n  'y # no',\n  \"z\"]\nb: {k: 'v\n  # inside\n  w'}\n",
		"crlf":          "a: 1\r\n# a comment\r\nb: |\r\n  # text\r\n",
		"tab":           "a:\n\t# odd\nb: 2\n",
		"hash in text":  "url: http://example.com/#top\nc: x#y\n",
	}
	for name, doc := range docs {
		var want, got any
		errWant := yaml.Unmarshal([]byte(doc), &want)
		blanked := blankComments([]byte(doc))
		errGot := yaml.Unmarshal(blanked, &got)
		if (errWant == nil) != (errGot == nil) || !reflect.DeepEqual(want, got) {
			t.Errorf("%s: yaml reads %#v (%v), blanked %#v (%v)\nblanked:\n%s", name, want, errWant, got, errGot, blanked)
		}
		if bytes.Count(blanked, []byte("\n")) != bytes.Count([]byte(doc), []byte("\n")) {
			t.Errorf("%s: lines moved:\n%s", name, blanked)
		}
	}
	for line := range bytes.Lines(blankComments([]byte(docs["template"]))) {
		if text := bytes.TrimSpace(line); len(text) > 0 && text[0] == '#' {
			t.Errorf("the template keeps a comment: %s", text)
		}
	}
}
