package cursor

import (
	"fmt"
	"strings"
	"unicode"
)

// checkCopy proves that copied, the app's own copy of a reply (its
// Markdown source), is the whole reply the page shows, rendered: every
// word of the rendering appears in the copy, in the same order. Markdown
// adds marks around words but never drops one, so the whole reply passes,
// while a code block's copy, a reply copied before the app finished
// writing it, or the previous reply's copy lacks words the page shows and
// is refused. It returns nil or why the copy is not the reply.
//
// Words are runs of letters and digits; everything else (marks, spaces,
// U+00A0 in rendered code, line ends) only separates them.
func checkCopy(copied, rendered string) error {
	want := words(rendered)
	if len(want) == 0 {
		return nil
	}
	have := words(copied)
	i := 0
	for _, w := range have {
		if i < len(want) && w == want[i] {
			i++
		}
	}
	if i == len(want) {
		return nil
	}
	return fmt.Errorf("the copy lacks what the page shows from word %d of %d on (%q, in %q); it is not the whole reply",
		i+1, len(want), want[i], wordsNear(want, i))
}

func words(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) && !unicode.IsMark(r) })
}

// wordsNear is a few words around want[i], to find the spot in the page.
func wordsNear(want []string, i int) string {
	from, to := max(0, i-3), min(len(want), i+4)
	return strings.Join(want[from:to], " ")
}
