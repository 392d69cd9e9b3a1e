// Package devlog owns the agents' devlogs: <root>/devlogs/<Agent>.md, one
// append-only Markdown file per agent that humans read with `tail -F`.
//
// Every event is one entry, written with a single O_APPEND write of the
// whole entry, so entries from several processes never interleave and a
// reader never needs a lock. Nothing here ever rewrites or truncates a
// devlog; rotating one away is the user's business, and a Follower keeps
// following across it.
//
// An entry is a "## " header line with the time, agent, message id and
// subject, then "- key: value" lines, then any free text (a reply, an error,
// a human's note) quoted with "    > " so that no line of it can look like a
// header. Read parses entries back for tail and for the lore; lines it does
// not recognise (a human's own notes, Dream.OS leftovers) are skipped.
//
// The package never decides which agents exist: callers check names with
// internal/agentname before they become file names.
package devlog

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"strings"
	"time"
)

// TimeFormat is how entry times are written: UTC with milliseconds, so that
// the text of two times sorts the way the times do.
const TimeFormat = "2006-01-02T15:04:05.000Z"

// Entry is one event in an agent's devlog.
type Entry struct {
	Time  time.Time
	Agent string
	// MessageID and Subject name the message the event is about; a human
	// note has neither.
	MessageID string
	Subject   string
	From      string
	// Outcome is a word such as done, failed, retry, deadletter or note.
	Outcome string
	Reply   string
	Error   string
	Actions []string
	// Note and Author make the entry a human note.
	Note   string
	Author string
}

// IsNote reports whether the entry is a human note rather than an event.
func (e Entry) IsNote() bool { return e.MessageID == "" && e.Note != "" }

const sep = " · "

// Format renders e as the exact bytes appended to a devlog, ending with a
// blank line.
func Format(e Entry) []byte {
	var b bytes.Buffer
	id := "msg " + oneWord(e.MessageID)
	subject := oneLine(e.Subject)
	if e.MessageID == "" {
		id = "note"
		if subject == "" {
			subject = firstWords(e.Note, 60)
		}
	}
	if subject == "" {
		subject = "(no subject)"
	}
	b.WriteString("## " + e.Time.UTC().Format(TimeFormat) + sep + oneWord(e.Agent) + sep + id + sep + subject + "\n")
	field := func(key, v string) {
		if v = oneLine(v); v != "" {
			b.WriteString("- " + key + ": " + v + "\n")
		}
	}
	field("from", e.From)
	field("by", e.Author)
	field("outcome", e.Outcome)
	for _, a := range e.Actions {
		field("action", a)
	}
	quoted := func(key, v string) {
		if strings.TrimSpace(v) == "" {
			return
		}
		b.WriteString("- " + key + ":\n")
		for _, l := range strings.Split(strings.TrimRight(v, "\n"), "\n") {
			b.WriteString(strings.TrimRight("    > "+strings.TrimRight(l, "\r"), " ") + "\n")
		}
	}
	quoted("note", e.Note)
	quoted("error", e.Error)
	quoted("reply", e.Reply)
	b.WriteString("\n")
	return b.Bytes()
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func oneWord(s string) string {
	if f := strings.Fields(s); len(f) > 0 {
		return strings.Join(f, "_")
	}
	return "-"
}

func firstWords(s string, max int) string {
	s = oneLine(s)
	if len([]rune(s)) <= max {
		return s
	}
	return string([]rune(s)[:max-1]) + "…"
}

// Read parses the entries in r. Text that is not part of an entry is
// skipped, so a devlog a human wrote into, or a Dream.OS file, still reads.
func Read(r io.Reader) ([]Entry, error) {
	var entries []Entry
	var cur *Entry
	var quoted *string
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 16*1024*1024)
	for sc.Scan() {
		line := strings.TrimRight(sc.Text(), "\r")
		if e, ok := parseHeader(line); ok {
			entries = append(entries, e)
			cur, quoted = &entries[len(entries)-1], nil
			continue
		}
		if cur == nil {
			continue
		}
		if rest, ok := strings.CutPrefix(line, "    >"); ok && quoted != nil {
			if *quoted != "" {
				*quoted += "\n"
			}
			*quoted += strings.TrimPrefix(rest, " ")
			continue
		}
		key, val, ok := strings.Cut(strings.TrimPrefix(line, "- "), ":")
		if !strings.HasPrefix(line, "- ") || !ok {
			quoted = nil
			continue
		}
		val = strings.TrimSpace(val)
		quoted = nil
		switch key {
		case "from":
			cur.From = val
		case "by":
			cur.Author = val
		case "outcome":
			cur.Outcome = val
		case "action":
			cur.Actions = append(cur.Actions, val)
		case "note":
			quoted = &cur.Note
		case "error":
			quoted = &cur.Error
		case "reply":
			quoted = &cur.Reply
		}
	}
	if err := sc.Err(); err != nil {
		return entries, fmt.Errorf("cannot read devlog: %w", err)
	}
	return entries, nil
}

func parseHeader(line string) (Entry, bool) {
	rest, ok := strings.CutPrefix(line, "## ")
	if !ok {
		return Entry{}, false
	}
	parts := strings.SplitN(rest, sep, 4)
	if len(parts) != 4 {
		return Entry{}, false
	}
	t, err := time.Parse(TimeFormat, parts[0])
	if err != nil {
		return Entry{}, false
	}
	e := Entry{Time: t, Agent: parts[1], Subject: parts[3]}
	switch {
	case parts[2] == "note":
	case strings.HasPrefix(parts[2], "msg "):
		e.MessageID = strings.TrimPrefix(parts[2], "msg ")
	default:
		return Entry{}, false
	}
	return e, true
}

// IsHeader reports whether a line starts an entry.
func IsHeader(line []byte) bool {
	_, ok := parseHeader(string(bytes.TrimRight(line, "\r\n")))
	return ok
}
