package cursor

import (
	"fmt"
	"strings"
	"unicode"
)

// composedPrompt is what the driver pastes for prompt into an input box of
// kind composer (WindowSettings.Composer), and notes for the turn's receipt
// on whatever the chat will not pass on as it was sent. A Monaco composer
// (VS Code's) turns CRLF and lone CR into LF on paste, so the driver does
// that itself, and the chat then compares with what it really sent; the
// chat drops leading whitespace and takes a leading /word as a command of
// its own, which no paste can prevent, so those are only noted.
func composedPrompt(composer ComposerKind, prompt string) (string, []string) {
	if composer != ComposerMonaco {
		return prompt, nil
	}
	var notes []string
	text := prompt
	if strings.Contains(text, "\r") {
		n := strings.Count(text, "\r\n")
		text = strings.ReplaceAll(text, "\r\n", "\n")
		cr := strings.Count(text, "\r")
		text = strings.ReplaceAll(text, "\r", "\n")
		notes = append(notes, fmt.Sprintf("line ends changed for the composer, which keeps only LF: %d CRLF and %d CR became LF", n, cr))
	}
	if trimmed := strings.TrimLeftFunc(text, unicode.IsSpace); trimmed != text {
		notes = append(notes, fmt.Sprintf("the prompt starts with %d bytes of whitespace, which the chat drops", len(text)-len(trimmed)))
	}
	if strings.HasPrefix(text, "/") {
		word, _, _ := strings.Cut(text, " ")
		word, _, _ = strings.Cut(word, "\n")
		notes = append(notes, fmt.Sprintf("the prompt starts with %q, which the chat may take as a command of its own rather than pass on", word))
	}
	return text, notes
}
