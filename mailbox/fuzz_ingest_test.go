package mailbox

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// FuzzIngestInboxJSON ingests arbitrary bytes as inbox.json into a real
// mailbox. Ingest must never panic, and what it delivers and dead-letters
// must account for the whole input, judged against a reading of the bytes
// that holds them in memory: a file that is not an array of messages (nor
// one message object) is dead-lettered whole; otherwise each entry is
// delivered (or found a duplicate of one delivered) or dead-lettered with
// its bytes, and anything after the array is dead-lettered as the tail.
func FuzzIngestInboxJSON(f *testing.F) {
	samples, _ := filepath.Glob(filepath.Join(samplesDir, "*"))
	for _, s := range samples {
		if data, err := os.ReadFile(s); err == nil {
			f.Add(data)
		}
	}
	for _, s := range []string{
		`[null]`, `[1]`, `["x"]`, `[[]]`, `[{"messages": null}]`, `[null, {"body": "ok"}]`,
		`[{"id": 42, "body": "x"}, {"id": 42, "body": "x"}]`, `[{"body": "same"}, {"body": "same"}]`,
		`[]`, ` [ ] `, "\n", `[{"body": "a"}] stale end"}]`, `{"body": "one object"}`, `{"body": "x"} {"body": "y"}`,
		`{{ "body": "x" }}`, `[{"body": "a"},`, `[{"body": "a"} {"body": "b"}]`, `[{"body": "a"}}`, `]`, `null`, `"x"`,
		`[{"to": "Agent-2", "body": "not mine"}, {"to": "Agent-9", "body": "nobody's"}]`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		root := newRuntime(t, "Agent-1", "Agent-2")
		mb := openMailbox(t, root, "Agent-1")
		writeFile(t, mb.path(InboxJSON), data)
		var events []Event
		c, err := mb.Consume(Options{Known: []string{"Agent-1", "Agent-2"}, OnEvent: func(e Event) { events = append(events, e) }}, time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC))
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		checkIngestAccounts(t, mb, data, events)
	})
}

// checkIngestAccounts checks that what one ingest of inbox.json holding
// data delivered and dead-lettered is exactly data's content.
func checkIngestAccounts(t *testing.T, mb *Mailbox, data []byte, events []Event) {
	t.Helper()
	if left, _ := os.ReadDir(mb.path(IngestDir)); len(left) != 0 {
		t.Fatalf(".ingest/ still holds %v", left)
	}
	dead := map[string][]byte{} // dead letter name without its spool prefix → bytes
	for _, name := range names(t, mb.path(DeadletterDir)) {
		if strings.HasSuffix(name, ReasonSuffix) {
			continue
		}
		b, err := os.ReadFile(mb.path(DeadletterDir, name))
		if err != nil {
			t.Fatal(err)
		}
		_, origin, _ := strings.Cut(name, "Z-")
		_, origin, _ = strings.Cut(origin, "-") // after the spool's random part
		dead[origin] = b
		if _, err := os.Stat(mb.path(DeadletterDir, name+ReasonSuffix)); err != nil {
			t.Errorf("dead letter %s has no reason: %v", name, err)
		}
	}
	delivered := len(names(t, mb.path(InboxDir)))
	ingested := map[string]bool{}
	for _, e := range events {
		if e.Kind == "ingested" || e.Kind == "duplicate" {
			ingested[e.File] = true
		}
	}

	if len(bytes.TrimSpace(data)) == 0 {
		if len(dead)+delivered+len(events) != 0 {
			t.Fatalf("blank inbox.json: dead letters %v, %d delivered, events %+v", dead, delivered, events)
		}
		return
	}
	if left, _ := os.ReadFile(mb.path(InboxJSON)); strings.TrimSpace(string(left)) != "[]" {
		t.Errorf("inbox.json = %q, want []", left)
	}
	entries, tail, ok := referenceInboxJSON(data)
	if !ok {
		if len(dead) != 1 || !bytes.Equal(dead[InboxJSON], data) || delivered != 0 {
			t.Fatalf("an invalid inbox.json must be dead-lettered whole and nothing else: dead letters %q, %d delivered", dead, delivered)
		}
		return
	}
	want := 0
	if tail > 0 {
		want++
		if !bytes.Equal(dead[InboxJSON+"-tail"], data[tail:]) {
			t.Errorf("tail dead-lettered as %q, want %q", dead[InboxJSON+"-tail"], data[tail:])
		}
	}
	for i, raw := range entries {
		got, isDead := dead[fmt.Sprintf("%s-%d.json", InboxJSON, i)]
		isIngested := ingested[fmt.Sprintf("%s[%d]", InboxJSON, i)]
		switch {
		case isDead && isIngested:
			t.Errorf("entry %d was both delivered and dead-lettered", i)
		case isDead:
			want++
			if !bytes.Equal(got, raw) {
				t.Errorf("entry %d dead-lettered as %q, want %q", i, got, raw)
			}
		case !isIngested:
			t.Errorf("entry %d %q was neither delivered nor dead-lettered", i, raw)
		}
	}
	if len(dead) != want {
		t.Errorf("%d dead letters, want %d: %q", len(dead), want, dead)
	}
	n := 0
	for _, e := range events {
		if e.Kind == "ingested" {
			n++
		}
	}
	if delivered != n {
		t.Errorf("inbox/ holds %d messages, %d were reported ingested", delivered, n)
	}
}

// referenceInboxJSON reads inbox.json the simple way, whole in memory:
// the first JSON value is an array of entries or one object, and tail is
// where anything after it begins.
func referenceInboxJSON(data []byte) (entries []json.RawMessage, tail int, ok bool) {
	dec := json.NewDecoder(bytes.NewReader(data))
	var first json.RawMessage
	if dec.Decode(&first) != nil {
		return nil, 0, false
	}
	switch first[0] {
	case '[':
		if json.Unmarshal(first, &entries) != nil {
			return nil, 0, false
		}
	case '{':
		entries = []json.RawMessage{first}
	default:
		return nil, 0, false
	}
	if end := int(dec.InputOffset()); len(bytes.TrimSpace(data[end:])) > 0 {
		tail = end
	}
	return entries, tail, true
}
