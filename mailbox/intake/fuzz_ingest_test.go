package intake

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentctl/agentctl/mailbox"
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
		`{"messages": [{"body": "a"}, null], "metadata": {"n": 2}}`, "\ufeff[{\"body\": \"bom\"}]", `{"messages": null}`,
		`{"queue": [], "inbox": [{"body": "b"}]}`, `{"messages": [{"body": "a"}]} tail`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		root := newRuntime(t, "Agent-1", "Agent-2")
		mb := openMailbox(t, root, "Agent-1")
		writeFile(t, filepath.Join(mb.Dir, mailbox.InboxJSON), data)
		var events []mailbox.Event
		c, err := open(mb, settings{Known: []string{"Agent-1", "Agent-2"}, OnEvent: func(e mailbox.Event) { events = append(events, e) }}, time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC))
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		checkIngestAccounts(t, mb, data, events)
	})
}

// checkIngestAccounts checks that what one ingest of inbox.json holding
// data delivered and dead-lettered is exactly data's content.
func checkIngestAccounts(t *testing.T, mb *mailbox.Mailbox, data []byte, events []mailbox.Event) {
	t.Helper()
	if left, _ := os.ReadDir(filepath.Join(mb.Dir, mailbox.IngestDir)); len(left) != 0 {
		t.Fatalf(".ingest/ still holds %v", left)
	}
	dead := map[string][]byte{} // dead letter name without its spool prefix → bytes
	for _, name := range names(t, filepath.Join(mb.Dir, mailbox.DeadletterDir)) {
		if strings.HasSuffix(name, mailbox.ReasonSuffix) {
			continue
		}
		b, err := os.ReadFile(filepath.Join(mb.Dir, mailbox.DeadletterDir, name))
		if err != nil {
			t.Fatal(err)
		}
		_, origin, _ := strings.Cut(name, "Z-")
		_, origin, _ = strings.Cut(origin, "-") // after the spool's random part
		dead[origin] = b
		if _, err := os.Stat(filepath.Join(mb.Dir, mailbox.DeadletterDir, name+mailbox.ReasonSuffix)); err != nil {
			t.Errorf("dead letter %s has no reason: %v", name, err)
		}
	}
	delivered := len(names(t, filepath.Join(mb.Dir, mailbox.InboxDir)))
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
	entries, tail, ok := referenceInboxJSON(data)
	checkEmptyShape(t, mb, data, ok)
	if !ok {
		if len(dead) != 1 || !bytes.Equal(dead[mailbox.InboxJSON], data) || delivered != 0 {
			t.Fatalf("an invalid inbox.json must be dead-lettered whole and nothing else: dead letters %q, %d delivered", dead, delivered)
		}
		return
	}
	want := 0
	if tail > 0 {
		want++
		if !bytes.Equal(dead[mailbox.InboxJSON+"-tail"], data[tail:]) {
			t.Errorf("tail dead-lettered as %q, want %q", dead[mailbox.InboxJSON+"-tail"], data[tail:])
		}
	}
	for i, raw := range entries {
		got, isDead := dead[fmt.Sprintf("%s-%d.json", mailbox.InboxJSON, i)]
		isIngested := ingested[fmt.Sprintf("%s[%d]", mailbox.InboxJSON, i)]
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

// referenceInboxJSON reads inbox.json the simple way, whole in memory,
// after a byte order mark: the first JSON value is an array of entries, a
// container object holding them under "messages" (or "inbox", "queue",
// "pending"), or one object, and tail is where anything after it begins.
func referenceInboxJSON(data []byte) (entries []json.RawMessage, tail int, ok bool) {
	bom := 0
	if bytes.HasPrefix(data, []byte("\ufeff")) {
		bom = 3
	}
	dec := json.NewDecoder(bytes.NewReader(data[bom:]))
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
		var obj map[string]json.RawMessage
		if json.Unmarshal(first, &obj) == nil && len(obj) == 0 {
			break // "{}" is the empty shape agentctl gives back: nothing
		}
		if _, list := referenceContainer(first); list != nil {
			entries = list
		} else {
			entries = []json.RawMessage{first}
		}
	default:
		return nil, 0, false
	}
	if end := bom + int(dec.InputOffset()); len(bytes.TrimSpace(data[end:])) > 0 {
		tail = end
	}
	return entries, tail, true
}

func referenceContainer(obj json.RawMessage) (key string, list []json.RawMessage) {
	var fields map[string]json.RawMessage
	json.Unmarshal(obj, &fields)
	for _, k := range []string{"messages", "inbox", "queue", "pending"} {
		if json.Unmarshal(fields[k], &list) == nil && list != nil {
			return k, list
		}
	}
	return "", nil
}

// checkEmptyShape checks that inbox.json was given back in its writer's
// shape: "[]" for an array or anything else, "{}" for one message object
// or a broken object, the container with an empty list and its other keys unchanged.
func checkEmptyShape(t *testing.T, mb *mailbox.Mailbox, data []byte, valid bool) {
	t.Helper()
	left, _ := os.ReadFile(filepath.Join(mb.Dir, mailbox.InboxJSON))
	first := bytes.TrimLeft(bytes.TrimPrefix(data, []byte("\ufeff")), " \t\r\n")
	if first[0] != '{' {
		if strings.TrimSpace(string(left)) != "[]" {
			t.Errorf("inbox.json = %q, want []", left)
		}
		return
	}
	var whole json.RawMessage
	json.NewDecoder(bytes.NewReader(first)).Decode(&whole)
	key, list := referenceContainer(whole)
	if !valid || list == nil {
		if strings.TrimSpace(string(left)) != "{}" {
			t.Errorf("inbox.json = %q, want {}", left)
		}
		return
	}
	var was, now map[string]json.RawMessage
	json.Unmarshal(whole, &was)
	if err := json.Unmarshal(left, &now); err != nil || string(now[key]) != "[]" || len(now) != len(was) {
		t.Fatalf("inbox.json = %q, want the container with an empty %q list", left, key)
	}
	for k, v := range was {
		var a, b bytes.Buffer
		json.Compact(&a, v)
		json.Compact(&b, now[k])
		if k != key && a.String() != b.String() {
			t.Errorf("inbox.json key %q = %s, was %s", k, now[k], v)
		}
	}
}
