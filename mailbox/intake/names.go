package intake

import (
	"path/filepath"
	"regexp"
	"strings"
	"sync"
)

// What the old system kept beside its live messages, told by name alone:
// the runner never reads these from a watched place, and migrate imports
// them as history or documents, never as work.

type historyName struct {
	re  *regexp.Regexp
	why string
}

var historyNames = sync.OnceValue(func() []historyName {
	return []historyName{
		{regexp.MustCompile(`(?i)corrupt`), "a corrupted snapshot of a queue, not live work"},
		{regexp.MustCompile(`(?i)backup|\.bak$|[_.-]old([_.-]|$)`), "a backup, not live work"},
		{regexp.MustCompile(`(?i)snapshot`), "a snapshot, not live work"},
		{regexp.MustCompile(`(?i)[_.-]processed`), "marked processed by its old reader"},
	}
})

// HistoryName is why a file's name says it holds messages of the past (a
// backup, a snapshot, a corrupted queue), or "".
func HistoryName(name string) string {
	stem := strings.TrimSuffix(name, filepath.Ext(name))
	for _, h := range historyNames() {
		if h.re.MatchString(stem) {
			return h.why
		}
	}
	return ""
}

var documentName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?i)analysis|report|notes|summary|^readme`) })

// DocumentName reports a text or Markdown file whose name says it is notes,
// a report or an analysis: written for people, not a message.
func DocumentName(name string) bool {
	ext := strings.ToLower(filepath.Ext(name))
	return (ext == ".txt" || ext == ".md") && documentName().MatchString(name)
}
