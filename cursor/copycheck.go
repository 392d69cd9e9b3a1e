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

// checkTranscript is checkCopy for a driver that cannot read the page: the
// second reading is the chat's whole transcript as the app copies it by
// another command (VS Code's "Copy All": "name: text" turns joined by blank
// lines). The answer to prompt is what follows the last turn showing the
// prompt, less its speaker's "name: "; every word of it must appear in
// order in copied. A code block's copy, a reply copied before the app had
// all of it, or the previous reply lacks words of that answer and is
// refused.
func checkTranscript(copied, transcript, prompt string) error {
	p := strings.TrimSpace(prompt)
	i := strings.LastIndex(transcript, p)
	if p == "" || i < 0 {
		return fmt.Errorf("the chat's transcript (%d bytes) does not show the prompt, so its answer cannot be told", len(transcript))
	}
	_, answer, ok := strings.Cut(transcript[i+len(p):], "\n\n")
	if !ok {
		return fmt.Errorf("the chat's transcript shows no answer after the prompt")
	}
	if label, rest, ok := strings.Cut(answer, ": "); ok && !strings.Contains(strings.TrimSpace(label), "\n") {
		answer = rest
	}
	if err := checkCopy(copied, answer); err != nil {
		return fmt.Errorf("against the chat's transcript: %w", err)
	}
	return nil
}

// checkAgainstTranscript runs both checks of a copied reply against the
// chat's transcript: the words of the answer to prompt, then its place as
// the chat's last turn.
func checkAgainstTranscript(copied, transcript, prompt string) error {
	if err := checkTranscript(copied, transcript, prompt); err != nil {
		return err
	}
	return checkLatest(copied, transcript, prompt)
}

// checkLatest proves that copied is the chat's last turn and that it
// answers prompt, from the whole transcript as VS Code's "Copy All" gives
// it (its last turn is exactly what the reply's "Copy" gives, after
// "name: "): the transcript must end with the prompt's turn, a blank line,
// a speaker's "name: " and copied. So the reply is told new without a copy
// of the one before the prompt: a copy of an earlier reply, or of this one
// before the app had all of it, is not what ends the transcript taken after
// it.
func checkLatest(copied, transcript, prompt string) error {
	before, ok := strings.CutSuffix(transcript, copied)
	if !ok {
		return fmt.Errorf("the copy (%d bytes) is not how the chat's transcript ends, so it is not the chat's last reply", len(copied))
	}
	i := strings.LastIndex(before, "\n\n")
	if i < 0 {
		return fmt.Errorf("the chat's transcript shows no turn before the copy")
	}
	label, ok := strings.CutSuffix(before[i+2:], ": ")
	if !ok || strings.Contains(label, "\n") {
		return fmt.Errorf("the copy does not start a turn of the chat's transcript, so it is not the chat's last reply")
	}
	if p := strings.TrimSpace(prompt); p == "" || !strings.HasSuffix(strings.TrimRight(before[:i], " \t\n"), p) {
		return fmt.Errorf("the turn before the copied reply in the chat's transcript is not the prompt, so the reply does not answer it")
	}
	return nil
}
