package intake

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentctl/agentctl/mailbox"
	"github.com/agentctl/agentctl/mailbox/dreamos"
)

// Entries of inbox.json that are not message objects once made every start
// panic; each goes to deadletter/ with its reason and the good one beside
// them is delivered.
func TestInboxJSONUnusableEntriesAreDeadlettered(t *testing.T) {
	root := newRuntime(t, "Agent-1", "Agent-2")
	mb := openMailbox(t, root, "Agent-1")
	writeFile(t, filepath.Join(mb.Dir, mailbox.InboxJSON), []byte(`[null, 1, "x", [], {"messages": null},
		{"message_id": "good", "sender": "Agent-2", "recipient": "Agent-1", "content": "hi"}]`))
	now := time.Now()
	c := consume(t, mb, settings{Known: []string{"Agent-1", "Agent-2"}}, now)
	if got := claimAll(t, c, now); !slices.Equal(got, []string{"good"}) {
		t.Fatalf("claimed %v, want [good]", got)
	}
	dl := names(t, filepath.Join(mb.Dir, mailbox.DeadletterDir))
	for i, want := range []string{"neither a body nor a subject", "not an object", "not an object", "not an object", "neither a body nor a subject"} {
		reasonFile := findSuffix(dl, "-inbox.json-"+string(rune('0'+i))+".json"+mailbox.ReasonSuffix)
		reason, err := os.ReadFile(filepath.Join(mb.Dir, mailbox.DeadletterDir, reasonFile))
		if err != nil || !strings.Contains(string(reason), want) {
			t.Errorf("entry %d: reason %q (%v), want one saying %q", i, reason, err, want)
		}
	}
	if len(dl) != 10 {
		t.Errorf("deadletter = %v, want 5 entries with their reasons", dl)
	}
}

// A message with a numeric id appended twice is the same message twice: it
// keeps its id as decimal text and is stored once.
func TestInboxJSONNumericIDIsKept(t *testing.T) {
	root := newRuntime(t, "Agent-1", "Agent-2")
	mb := openMailbox(t, root, "Agent-1")
	entry := []byte(`[{"id": 42, "sender": "Agent-2", "recipient": "Agent-1", "content": "the answer"}]`)
	writeFile(t, filepath.Join(mb.Dir, mailbox.InboxJSON), entry)
	now := time.Now()
	c := consume(t, mb, settings{Known: []string{"Agent-1", "Agent-2"}}, now)
	if got := claimAll(t, c, now); !slices.Equal(got, []string{"42"}) {
		t.Fatalf("claimed %v, want [42]", got)
	}
	writeFile(t, filepath.Join(mb.Dir, mailbox.InboxJSON), entry)
	if err := c.Notice(now, mailbox.InboxJSON); err != nil {
		t.Fatal(err)
	}
	if got := claimAll(t, c, now); len(got) != 0 {
		t.Fatalf("the same message again was claimed as %v", got)
	}
}

// A writer holding inbox.json.lock keeps the consumer from inbox.json only:
// it starts, says what it waits for, looks again within a second, and
// ingests once the lock is free.
func TestInboxJSONLockHeldByAnotherProcess(t *testing.T) {
	root := newRuntime(t, "Agent-1", "Agent-2")
	mb := openMailbox(t, root, "Agent-1")
	writeFile(t, filepath.Join(mb.Dir, mailbox.InboxJSON), []byte(`[{"message_id": "after-the-wait", "sender": "Agent-2", "content": "hi"}]`))
	if err := mb.Deliver(testMessage("meanwhile", "Agent-1", mailbox.Normal)); err != nil {
		t.Fatal(err)
	}
	ready, release := filepath.Join(root, "held"), filepath.Join(root, "release")
	holder := startRole(t, "hold-lock", "MAILBOX_ROOT="+root, "MAILBOX_AGENT=Agent-1", "MAILBOX_READY="+ready, "MAILBOX_DONE="+release)
	defer holder.Process.Kill()
	waitForFile(t, ready)

	var events []mailbox.Event
	now := time.Now()
	c := consume(t, mb, settings{Known: []string{"Agent-1", "Agent-2"}, OnEvent: func(e mailbox.Event) { events = append(events, e) }}, now)
	if got := claimAll(t, c, now); !slices.Equal(got, []string{"meanwhile"}) {
		t.Fatalf("claimed %v while the lock was held, want [meanwhile]", got)
	}
	holderName := fmt.Sprintf("pid %d (", holder.Process.Pid)
	if len(events) != 1 || events[0].Kind != "lock-busy" || events[0].File != mailbox.InboxJSONLock || !strings.Contains(events[0].Reason, holderName) {
		t.Fatalf("events = %+v, want one lock-busy naming %s", events, holderName)
	}
	if w := c.Waiting(); !strings.HasPrefix(w, "inbox.json.lock has been held by "+holderName) || !strings.HasSuffix(w, " for 0s") {
		t.Errorf("Waiting() = %q", w)
	}
	if due, ok := c.NextWake(); !ok || due.After(now.Add(time.Second)) {
		t.Errorf("NextWake = %v, %v; want within a second of %v", due, ok, now)
	}

	// Still held a second later: another look, no second event.
	if err := c.Tick(now.Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	if len(events) != 1 || !strings.HasSuffix(c.Waiting(), " for 1s") {
		t.Errorf("after a second: events %+v, Waiting() = %q", events, c.Waiting())
	}

	writeFile(t, release, nil)
	if err := holder.Wait(); err != nil {
		t.Fatal(err)
	}
	if err := c.Tick(now.Add(2 * time.Second)); err != nil {
		t.Fatal(err)
	}
	if len(events) < 2 || events[1].Kind != "lock-free" {
		t.Errorf("events = %+v, want lock-free after lock-busy", events)
	}
	if w := c.Waiting(); w != "" {
		t.Errorf("Waiting() = %q once the lock was taken", w)
	}
	if due, ok := c.NextWake(); ok {
		t.Errorf("NextWake = %v with nothing to wait for", due)
	}
	if got := claimAll(t, c, now); !slices.Equal(got, []string{"after-the-wait"}) {
		t.Fatalf("claimed %v, want [after-the-wait]", got)
	}
}

// An inbox.json over the size limit is set aside whole, by rename, and
// never read.
func TestOversizedInboxJSONIsDeadletteredUnread(t *testing.T) {
	root := newRuntime(t, "Agent-1")
	mb := openMailbox(t, root, "Agent-1")
	big := []byte(`[{"message_id": "big", "body": "` + strings.Repeat("x", 2000) + `"}]`)
	writeFile(t, filepath.Join(mb.Dir, mailbox.InboxJSON), big)
	before, err := os.Stat(filepath.Join(mb.Dir, mailbox.InboxJSON))
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	c := consume(t, mb, settings{Known: []string{"Agent-1"}, MaxInboxJSONBytes: 1000}, now)
	if c.Pending() != 0 {
		t.Fatalf("%d messages delivered from an oversized inbox.json", c.Pending())
	}
	dl := names(t, filepath.Join(mb.Dir, mailbox.DeadletterDir))
	kept := filepath.Join(mb.Dir, mailbox.DeadletterDir, findSuffix(dl, "-inbox.json"))
	after, err := os.Stat(kept)
	if err != nil || !os.SameFile(before, after) {
		t.Fatalf("deadletter = %v; inbox.json was not moved there whole (%v)", dl, err)
	}
	reason, _ := os.ReadFile(kept + mailbox.ReasonSuffix)
	if want := fmt.Sprintf("was %d bytes, over the 1000-byte limit (mailbox.max_inbox_json_bytes)", len(big)); !strings.Contains(string(reason), want) {
		t.Errorf("reason %q does not say %q", reason, want)
	}
	if left, _ := os.ReadFile(filepath.Join(mb.Dir, mailbox.InboxJSON)); strings.TrimSpace(string(left)) != "[]" {
		t.Errorf("inbox.json = %q, want []", left)
	}
}

// A spool file left by a consumer that died while delivering from it is
// finished by the next one, and going through it again delivers nothing
// twice, also for entries without an id.
func TestSpoolFinishedAgainDeliversNothingTwice(t *testing.T) {
	root := newRuntime(t, "Agent-1", "Agent-2")
	mb := openMailbox(t, root, "Agent-1")
	spool := []byte(`[{"sender": "Agent-2", "content": "no id"}, {"sender": "Agent-2", "content": "no id"},
		{"message_id": "m-1", "content": "with an id"}, {"content": 7}]`)
	name := "20261122T100000Z-0123456789ab.json"
	if err := os.MkdirAll(filepath.Join(mb.Dir, mailbox.IngestDir), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(mb.Dir, mailbox.IngestDir, name), spool)
	now := time.Now()
	var events []mailbox.Event
	recording := false
	c := consume(t, mb, settings{Known: []string{"Agent-1", "Agent-2"}, OnEvent: func(e mailbox.Event) {
		if recording {
			events = append(events, e)
		}
	}}, now)
	first := claimAll(t, c, now)
	if len(first) != 3 {
		t.Fatalf("claimed %v, want two id-less messages and m-1", first)
	}
	if left := names(t, filepath.Join(mb.Dir, mailbox.IngestDir)); len(left) != 0 {
		t.Fatalf(".ingest/ still holds %v", left)
	}
	dl := names(t, filepath.Join(mb.Dir, mailbox.DeadletterDir))

	// The crash came after every delivery but before the removal.
	writeFile(t, filepath.Join(mb.Dir, mailbox.IngestDir, name), spool)
	recording = true
	if err := c.Scan(now.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	if got := claimAll(t, c, now); len(got) != 0 {
		t.Errorf("the spool gone through again delivered %v", got)
	}
	if got := names(t, filepath.Join(mb.Dir, mailbox.DeadletterDir)); !slices.Equal(got, dl) {
		t.Errorf("deadletter changed from %v to %v", dl, got)
	}
	if len(events) != 3 {
		t.Errorf("events = %+v, want a duplicate for each delivered entry", events)
	}
	for _, e := range events {
		if e.Kind != "duplicate" {
			t.Errorf("event %+v; going through a spool again should find only duplicates", e)
		}
	}
}

// What a consumer took out of inbox.json and has not delivered yet is
// still listed and counted as pending, and what it delivered already is
// listed once, where it is now.
func TestSpooledEntriesAreListedAsPending(t *testing.T) {
	root := newRuntime(t, "Agent-1", "Agent-2")
	mb := openMailbox(t, root, "Agent-1")
	spool := "20261122T100000Z-0123456789ab.json"
	if err := os.MkdirAll(filepath.Join(mb.Dir, mailbox.IngestDir), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(mb.Dir, mailbox.IngestDir, spool), []byte(`[{"message_id": "delivered", "body": "a"}, {"sender": "Agent-2", "body": "waiting"}]`))
	if err := mb.Deliver(testMessage("delivered", "Agent-1", mailbox.Normal)); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(mb.Dir, mailbox.InboxJSON), []byte(`[{"message_id": "in-inbox-json", "body": "c"}]`))
	got, err := mb.List(mailbox.StatePending)
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, e := range got {
		files = append(files, e.File)
	}
	slices.Sort(files)
	want := []string{".ingest/" + spool + "[1]", "inbox.json[0]", "inbox/delivered.json"}
	if !slices.Equal(files, want) {
		t.Errorf("pending = %v, want %v", files, want)
	}
	if n, err := mb.Count(); err != nil || n.Pending != 3 {
		t.Errorf("Count = %+v, %v; want 3 pending", n, err)
	}
}

// An inbox.json entry without an id is listed, while it still waits there,
// under the id it is delivered with once taken in: the id a person reads
// in 'agentctl inbox' is the one 'agentctl reply' then finds.
func TestInboxJSONEntryIsListedUnderItsDeliveredID(t *testing.T) {
	root := newRuntime(t, "Agent-1", "Agent-2")
	mb := openMailbox(t, root, "Agent-1")
	writeFile(t, filepath.Join(mb.Dir, mailbox.InboxJSON), []byte(`[{"from": "Agent-2", "to": "Agent-1", "content": "which branch?"}]`))
	listed, err := mb.List(mailbox.StatePending)
	if err != nil || len(listed) != 1 || listed[0].Message.ID == "" {
		t.Fatalf("listed %+v, %v; want the entry with an id", listed, err)
	}
	id := listed[0].Message.ID
	if err := Idle(mb, mailbox.Options{Known: []string{"Agent-1", "Agent-2"}}, Options{}, time.Now()); err != nil {
		t.Fatal(err)
	}
	found, err := mb.Locate(id)
	if err != nil || len(found) != 1 || found[0].State != mailbox.StatePending || found[0].Message.Body != "which branch?" {
		t.Fatalf("Locate(%s) after the taking = %+v, %v; want the delivered message", id, found, err)
	}
}

// An entry larger than a dropped message may be is dead-lettered like one.
func TestInboxJSONEntryOverMessageLimit(t *testing.T) {
	root := newRuntime(t, "Agent-1")
	mb := openMailbox(t, root, "Agent-1")
	writeFile(t, filepath.Join(mb.Dir, mailbox.InboxJSON), []byte(`[{"message_id": "big", "body": "`+strings.Repeat("x", 200)+`"}, {"message_id": "small", "body": "y"}]`))
	now := time.Now()
	c := consume(t, mb, settings{Known: []string{"Agent-1"}, MaxMessageBytes: 100}, now)
	if got := claimAll(t, c, now); !slices.Equal(got, []string{"small"}) {
		t.Fatalf("claimed %v, want [small]", got)
	}
	dl := names(t, filepath.Join(mb.Dir, mailbox.DeadletterDir))
	reason, _ := os.ReadFile(filepath.Join(mb.Dir, mailbox.DeadletterDir, findSuffix(dl, "-inbox.json-0.json"+mailbox.ReasonSuffix)))
	if !strings.Contains(string(reason), "over the 100-byte limit for one message") {
		t.Errorf("deadletter %v, reason %q", dl, reason)
	}
}

// An inbox.json that is one task object (its text in the description) is
// delivered, and its writer gets back the object shape, empty, not "[]".
func TestInboxJSONOneTaskObjectKeepsItsShape(t *testing.T) {
	root := newRuntime(t, "Agent-1", "Agent-2")
	mb := openMailbox(t, root, "Agent-1")
	writeFile(t, filepath.Join(mb.Dir, mailbox.InboxJSON), []byte("\ufeff"+`{"task_id": "T-9", "title": "Fix the parser", "description": "The parser drops CRLF lines.", "assigned_by": "Agent-2"}`))
	now := time.Now()
	c := consume(t, mb, settings{Known: []string{"Agent-1", "Agent-2"}}, now)
	if got := claimAll(t, c, now); len(got) != 1 {
		t.Fatalf("claimed %v, want one message", got)
	}
	left, _ := os.ReadFile(filepath.Join(mb.Dir, mailbox.InboxJSON))
	if strings.TrimSpace(string(left)) != "{}" {
		t.Errorf("inbox.json = %q, want {}", left)
	}
	entries, err := mb.List(mailbox.StateDone)
	if err != nil || len(entries) != 1 {
		t.Fatalf("done = %v, %v", entries, err)
	}
	if m := entries[0].Message; m.Body != "The parser drops CRLF lines." || m.Subject != "Fix the parser" || m.TaskID != "T-9" {
		t.Errorf("delivered as %+v", m)
	}
}

func TestIngestInboxJSON(t *testing.T) {
	root := newRuntime(t, "Agent-1", "Agent-2")
	mb := openMailbox(t, root, "Agent-1")
	entries := []map[string]any{
		{"message_id": "dream-1", "sender": "Agent-2", "recipient": "Agent-1", "body": map[string]any{"text": "hello"}, "priority": "HIGH"},
		{"sender": "Agent-2", "recipient": "Agent-1", "content": "no id here"},
		{"sender": "Agent-2", "recipient": "Agent-1", "content": "no id here"}, // the same again: a second message
		{"sender": "Agent-2", "recipient": "Agent One", "content": "bad recipient"},
		{"message_id": "dream-1", "sender": "Agent-2", "recipient": "Agent-1", "content": "same id again"},
	}
	data, _ := json.MarshalIndent(entries, "", "  ")
	writeFile(t, filepath.Join(mb.Dir, mailbox.InboxJSON), data)
	now := time.Now()
	c := consume(t, mb, settings{Known: []string{"Agent-1", "Agent-2"}}, now)
	ids := claimAll(t, c, now)
	if len(ids) != 3 || ids[0] != "dream-1" {
		t.Fatalf("claimed %v, want dream-1 first and two id-less messages", ids)
	}
	left, _ := os.ReadFile(filepath.Join(mb.Dir, mailbox.InboxJSON))
	if strings.TrimSpace(string(left)) != "[]" {
		t.Errorf("inbox.json = %q, want []", left)
	}
	dl := names(t, filepath.Join(mb.Dir, mailbox.DeadletterDir))
	if len(dl) != 2 || !strings.HasSuffix(dl[0], "inbox.json-3.json") {
		t.Fatalf("deadletter = %v", dl)
	}
}

func TestIngestCorruptedInboxJSON(t *testing.T) {
	root := newRuntime(t, "Agent-4")
	mb := openMailbox(t, root, "Agent-4")
	sample := readSample(t, "victor-dreamos__ops__messaging__message_queue__queue_20251130_025028_corrupted.json")
	writeFile(t, filepath.Join(mb.Dir, mailbox.InboxJSON), sample)
	now := time.Now()
	// The queue holds messages for several agents: only Agent-4's are kept
	// here, the rest are dead-lettered as misaddressed.
	known := []string{"Agent-1", "Agent-2", "Agent-3", "Agent-4", "Agent-5", "Agent-6", "Agent-7", "Agent-8"}
	c := consume(t, mb, settings{Known: known}, now)
	ids := claimAll(t, c, now)
	entries, tail, err := dreamos.InboxJSONEntries(sample)
	if err != nil || tail == 0 {
		t.Fatal(err)
	}
	dl := names(t, filepath.Join(mb.Dir, mailbox.DeadletterDir))
	if len(ids)+(len(dl)-2)/2 != len(entries) {
		t.Errorf("%d claimed + %d dead-lettered entries != %d entries", len(ids), (len(dl)-2)/2, len(entries))
	}
	tailFile := findSuffix(dl, "-inbox.json-tail")
	got, _ := os.ReadFile(filepath.Join(mb.Dir, mailbox.DeadletterDir, tailFile))
	if !bytes.Equal(got, sample[tail:]) {
		t.Errorf("the stale tail was not kept in deadletter/ (%s)", tailFile)
	}
	if left, _ := os.ReadFile(filepath.Join(mb.Dir, mailbox.InboxJSON)); strings.TrimSpace(string(left)) != "[]" {
		t.Errorf("inbox.json = %.80q, want []", left)
	}
}

func TestInvalidInboxJSONIsNeverReadAsEmpty(t *testing.T) {
	root := newRuntime(t, "Agent-1")
	mb := openMailbox(t, root, "Agent-1")
	bad := []byte(`{{ "sender": "Agent-2", "body": "x" }}`)
	writeFile(t, filepath.Join(mb.Dir, mailbox.InboxJSON), bad)
	now := time.Now()
	consume(t, mb, settings{Known: []string{"Agent-1"}}, now)
	dl := names(t, filepath.Join(mb.Dir, mailbox.DeadletterDir))
	kept, _ := os.ReadFile(filepath.Join(mb.Dir, mailbox.DeadletterDir, findSuffix(dl, "-inbox.json")))
	if !bytes.Equal(kept, bad) {
		t.Fatalf("deadletter = %v; the invalid inbox.json was not kept whole", dl)
	}
	// Its writer wrote an object: it gets an empty object back.
	if left, _ := os.ReadFile(filepath.Join(mb.Dir, mailbox.InboxJSON)); strings.TrimSpace(string(left)) != "{}" {
		t.Errorf("inbox.json = %q, want {}", left)
	}
}

// A writer stuck holding inbox.json.lock does not stop the consumer; what
// it waits for, holder named, is what Waiting says.
func TestHeldInboxJSONLockNamesItsHolder(t *testing.T) {
	root := newRuntime(t, "Agent-1")
	mb := openMailbox(t, root, "Agent-1")
	writeFile(t, filepath.Join(mb.Dir, mailbox.InboxJSON), []byte(`[{"id": "m-1", "from": "Agent-2", "to": "Agent-1", "body": "hi"}]`))
	ready, release := filepath.Join(root, "ready"), filepath.Join(root, "release")
	writer := startRole(t, "hold-lock", "MAILBOX_ROOT="+root, "MAILBOX_AGENT=Agent-1", "MAILBOX_READY="+ready, "MAILBOX_DONE="+release)
	defer func() {
		writeFile(t, release, nil)
		writer.Wait()
	}()
	waitForFile(t, ready)
	c, err := open(mb, settings{LockWait: 50 * time.Millisecond}, time.Now())
	if err != nil {
		t.Fatalf("the first scan with inbox.json.lock held: %v", err)
	}
	defer c.Close()
	waiting := c.Waiting()
	if !strings.Contains(waiting, mailbox.InboxJSONLock) {
		t.Fatalf("Waiting() = %q, want it to name %s", waiting, mailbox.InboxJSONLock)
	}
	if want := fmt.Sprintf("pid %d", writer.Process.Pid); runtime.GOOS == "linux" && !strings.Contains(waiting, want) {
		t.Errorf("Waiting() = %q does not name the holder, %s", waiting, want)
	}
}

// A runner told to stop while it takes in a long inbox.json stops within
// one delivery: what it did not deliver waits whole in its spool, and the
// next look delivers the rest, each entry exactly once.
func TestStopEndsALongIngestBetweenTwoMessages(t *testing.T) {
	const total = 300
	root := newRuntime(t, "Agent-1", "Agent-2")
	mb := openMailbox(t, root, "Agent-1")
	entries := make([]map[string]any, total)
	for i := range entries {
		entries[i] = map[string]any{"sender": "Agent-2", "recipient": "Agent-1", "content": fmt.Sprintf("entry %d", i)}
	}
	data, _ := json.Marshal(entries)
	writeFile(t, filepath.Join(mb.Dir, mailbox.InboxJSON), data)

	stop := make(chan struct{})
	ingested := 0
	onEvent := func(e mailbox.Event) {
		if e.Kind == "ingested" {
			if ingested++; ingested == 10 {
				close(stop)
			}
		}
	}
	c, err := open(mb, settings{Known: []string{"Agent-1", "Agent-2"}, OnEvent: onEvent, Stop: stop}, time.Now())
	if err != nil {
		t.Fatalf("a stopped look is not an error: %v", err)
	}
	c.Close()
	if ingested != 10 {
		t.Fatalf("%d entries delivered after the stop at the tenth, want 10", ingested)
	}
	if spools := names(t, filepath.Join(mb.Dir, mailbox.IngestDir)); len(spools) != 1 {
		t.Fatalf(".ingest/ holds %v, want the spool with what is left", spools)
	}

	c = consume(t, mb, settings{Known: []string{"Agent-1", "Agent-2"}}, time.Now())
	claimAll(t, c, time.Now())
	bodies := archivedBodies(t, mb)
	if len(bodies) != total {
		t.Fatalf("%d distinct entries archived, want %d", len(bodies), total)
	}
	for body, n := range bodies {
		if n != 1 {
			t.Errorf("%q archived %d times", body, n)
		}
	}
}
