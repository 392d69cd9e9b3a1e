package mailbox

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// claimAll claims and archives everything claimable, returning the ids.
func claimAll(t *testing.T, c *Consumer, now time.Time) []string {
	t.Helper()
	var ids []string
	for {
		cl, err := c.Claim(now)
		if errors.Is(err, ErrEmpty) {
			return ids
		}
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, cl.Message.ID)
		if err := c.Complete(cl, Receipt{}, now); err != nil {
			t.Fatal(err)
		}
	}
}

func TestIngestDroppedDreamOSFiles(t *testing.T) {
	root := newRuntime(t, "Agent-1")
	mb := openMailbox(t, root, "Agent-1")
	for _, s := range []string{
		"agentcellphone__agent_workspaces__Agent-1__inbox__2025-07-02T07-50-01_agent-2_to_agent-1.json",
		"victoros__runtime__agent_comms__agent_mailboxes__Agent-1__agent8_autonomy_query_20231116T110000Z.json",
		"victor-dreamos__agent_workspaces__Agent-1__inbox__CAPTAIN_MESSAGE_2025-12-02T10-48-52-968834_msg_20251202_104852_6def4a.md",
		"victor-dreamos__agent_workspaces__Agent-1__inbox__INBOX_MESSAGE_20251206_063526_041170_4a9687d0.md",
	} {
		writeFile(t, inboxPath(mb, sampleName(s)), readSample(t, s))
	}
	now := time.Now()
	c := consume(t, mb, Options{Known: []string{"Agent-1", "Agent-2"}, Settle: time.Second}, now)
	// The JSON files are complete and taken at once; the Markdown files
	// wait until they have been still for the settle period.
	if c.Pending() != 2 {
		t.Fatalf("pending after the first scan = %d, want 2", c.Pending())
	}
	if due, ok := c.NextWake(); !ok || due.After(now.Add(time.Second)) {
		t.Fatalf("NextWake = %v, %v", due, ok)
	}
	if err := c.Tick(now.Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	ids := claimAll(t, c, now.Add(time.Second))
	slices.Sort(ids)
	if len(ids) != 4 || ids[0] != "2025-07-02T07-50-01_agent-2_to_agent-1" {
		t.Fatalf("claimed %v", ids)
	}
	if got := names(t, mb.path(InboxDir)); len(got) != 0 {
		t.Errorf("inbox still holds %v", got)
	}
	if got := names(t, mb.path(DeadletterDir)); len(got) != 0 {
		t.Errorf("deadletter holds %v", got)
	}
	// The urgent Markdown message was claimed first.
	if !strings.Contains(strings.Join(ids, ","), "msg_20251202_104852_6def4a") {
		t.Errorf("the CAPTAIN message is missing from %v", ids)
	}
}

func TestIngestWaitsForAFileBeingWritten(t *testing.T) {
	root := newRuntime(t, "Agent-1")
	mb := openMailbox(t, root, "Agent-1")
	now := time.Now()
	c := consume(t, mb, Options{Known: []string{"Agent-1"}, Settle: time.Second}, now)
	full := testMessage("slow-copy", "Agent-1", Normal).Encode()
	path := inboxPath(mb, "copy.json")
	writeFile(t, path, full[:len(full)/2])
	if err := c.Notice(now, "copy.json"); err != nil {
		t.Fatal(err)
	}
	if c.Pending() != 0 || len(names(t, mb.path(DeadletterDir))) != 0 {
		t.Fatal("a half-written file was consumed")
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.Write(full[len(full)/2:])
	f.Close()
	if err := c.Notice(now.Add(10*time.Millisecond), "copy.json"); err != nil {
		t.Fatal(err)
	}
	if got := claimAll(t, c, now); !slices.Equal(got, []string{"slow-copy"}) {
		t.Fatalf("claimed %v", got)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the dropped file was left behind: %v", err)
	}
}

func TestIgnoresTempAndDotFiles(t *testing.T) {
	root := newRuntime(t, "Agent-1")
	mb := openMailbox(t, root, "Agent-1")
	junk := []string{".hidden.json", ".msg.json.tmp123", "draft.json~", "draft.json.swp", "x.json.part", "#draft.json#"}
	for _, n := range junk {
		writeFile(t, inboxPath(mb, n), []byte(`{"body": "not yet"}`))
	}
	now := time.Now()
	c := consume(t, mb, Options{Known: []string{"Agent-1"}}, now)
	if err := c.Tick(now.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if c.Pending() != 0 || len(names(t, mb.path(DeadletterDir))) != 0 {
		t.Errorf("temp files were touched: pending %d, deadletter %v", c.Pending(), names(t, mb.path(DeadletterDir)))
	}
	if got := len(names(t, mb.path(InboxDir))); got != len(junk)-2 { // names() hides the two dot-files
		t.Errorf("inbox lost files: %v", names(t, mb.path(InboxDir)))
	}
}

// Every kind of bad input ends in deadletter/ with a reason, and the
// consumer goes on with the good message behind them.
func TestBadInputIsDeadletteredWithReason(t *testing.T) {
	root := newRuntime(t, "Agent-1", "Agent-2")
	mb := openMailbox(t, root, "Agent-1")
	secret := filepath.Join(t.TempDir(), "secret.json")
	writeFile(t, secret, testMessage("secret", "Agent-1", Normal).Encode())
	big := bytes.Repeat([]byte("x"), 50<<20)
	cases := map[string]struct {
		data   []byte
		reason string
	}{
		"truncated.json": {[]byte(`{"from": "Agent-2", "body": "hel`), "ends early"},
		"empty.json":     {nil, "empty"},
		"big.json":       {big, "over the 4194304-byte limit"},
		"binary.json":    {[]byte{0x89, 'P', 'N', 'G', 0, 0xff, 0xfe}, "not UTF-8"},
		"unknown.json":   {[]byte(`{"to": "Agent-9", "body": "x"}`), `recipient "Agent-9" is not an agent`},
		"other.json":     {[]byte(`{"to": "Agent-2", "body": "x"}`), "addressed to Agent-2, not Agent-1"},
		"slash.json":     {[]byte(`{"to": "../Agent-2", "body": "x"}`), `recipient "../Agent-2"`},
		"dotdot.json":    {[]byte(`{"to": "..", "body": "x"}`), `recipient ".."`},
		"image.png":      {[]byte("hello"), "only *.json, *.msg, *.md and *.txt"},
		"nothing.json":   {[]byte(`{"from": "Agent-2", "priority": "high"}`), "no text found"},
		"misrouted.md":   {readSample(t, "victor-dreamos__agent_workspaces__archive__invalid_workspaces__Agent_INBOX_MESSAGE_20251206_081844_899125_1fe934c2.md"), `recipient "Agent" is not an agent`},
		"claim.json":     {readSample(t, "victoros__runtime__agent_comms__agent_mailboxes__Agent-1__claim.json"), "not a JSON message object"},
	}
	// Readable apart from one field: delivered, the field fallen back.
	fallbacks := map[string]string{
		"types.json":       `{"from": ["Agent-2"], "body": "x"}`,
		"placeholder.json": string(readSample(t, "victoros__runtime__agent_comms__directive_resume_autonomy_template.json")),
		"notes.txt":        "hello",
	}
	for name, data := range fallbacks {
		writeFile(t, inboxPath(mb, name), []byte(data))
	}
	for name, c := range cases {
		writeFile(t, inboxPath(mb, name), c.data)
	}
	if err := os.Symlink(secret, inboxPath(mb, "link.json")); err != nil {
		t.Fatal(err)
	}
	if err := mb.Deliver(testMessage("good", "Agent-1", Low)); err != nil {
		t.Fatal(err)
	}

	now := time.Now()
	c := consume(t, mb, Options{Known: []string{"Agent-1", "Agent-2"}, Settle: time.Second}, now)
	if err := c.Tick(now.Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	if err := c.Tick(now.Add(2 * time.Second)); err != nil {
		t.Fatal(err)
	}
	if got := claimAll(t, c, now); len(got) != 1+len(fallbacks) || !slices.Contains(got, "good") {
		t.Fatalf("claimed %v, want the good message and the %d with fallbacks; inbox %v, dead %v", got, len(fallbacks), names(t, mb.path(InboxDir)), names(t, mb.path(DeadletterDir)))
	}
	cases["link.json"] = struct {
		data   []byte
		reason string
	}{nil, "symbolic link"}
	dl := names(t, mb.path(DeadletterDir))
	for name, c := range cases {
		var reasonFile string
		for _, n := range dl {
			if strings.HasSuffix(n, "-"+name+ReasonSuffix) {
				reasonFile = n
			}
		}
		if reasonFile == "" {
			t.Errorf("%s: not in deadletter/ (%v)", name, dl)
			continue
		}
		reason, _ := os.ReadFile(mb.path(DeadletterDir, reasonFile))
		if !strings.Contains(string(reason), c.reason) {
			t.Errorf("%s: reason %q does not say %q", name, reason, c.reason)
		}
		moved := strings.TrimSuffix(reasonFile, ReasonSuffix)
		if name != "link.json" && name != "big.json" {
			if data, err := os.ReadFile(mb.path(DeadletterDir, moved)); err != nil || !bytes.Equal(data, c.data) {
				t.Errorf("%s: dead letter does not hold the original bytes (%v)", name, err)
			}
		}
	}
	if fi, err := os.Lstat(mb.path(DeadletterDir, strings.TrimSuffix(findSuffix(dl, "-link.json"), ""))); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the symlink itself should be in deadletter/: %v", err)
	}
	if got := names(t, mb.path(InboxDir)); len(got) != 0 {
		t.Errorf("inbox still holds %v", got)
	}
}

func findSuffix(names []string, suffix string) string {
	for _, n := range names {
		if strings.HasSuffix(n, suffix) {
			return n
		}
	}
	return ""
}

func TestScanRemovesOldLeftoverTempFiles(t *testing.T) {
	root := newRuntime(t, "Agent-1")
	mb := openMailbox(t, root, "Agent-1")
	old, fresh := inboxPath(mb, ".m1.json.tmp123"), inboxPath(mb, ".m2.json.tmp456")
	writeFile(t, old, []byte("{"))
	writeFile(t, fresh, []byte("{"))
	hourAgo := time.Now().Add(-2 * time.Hour)
	if err := os.Chtimes(old, hourAgo, hourAgo); err != nil {
		t.Fatal(err)
	}
	var events []Event
	consume(t, mb, Options{Known: []string{"Agent-1"}, OnEvent: func(e Event) { events = append(events, e) }}, time.Now())
	if _, err := os.Stat(old); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("an hour-old leftover was kept: %v", err)
	}
	if _, err := os.Stat(fresh); err != nil {
		t.Errorf("a temp file still being written was removed: %v", err)
	}
	if len(events) != 1 || events[0].Kind != "cleaned" {
		t.Errorf("events = %+v", events)
	}
}

// A file dropped while no runner ran is delivered by the start's scan and
// can be claimed at once, not only after the next rescan.
func TestDroppedFileClaimableAfterStartScan(t *testing.T) {
	root := newRuntime(t, "Agent-1", "Agent-2")
	mb := openMailbox(t, root, "Agent-1")
	writeFile(t, inboxPath(mb, "note from Agent-2.json"), []byte(`{"id": "dropped", "from": "Agent-2", "body": "x"}`))
	now := time.Now()
	c := consume(t, mb, Options{Known: []string{"Agent-1", "Agent-2"}}, now)
	if got := claimAll(t, c, now); !slices.Equal(got, []string{"dropped"}) {
		t.Fatalf("claimed %v, want [dropped]", got)
	}
}

// A consumer given no list of agents still takes its own agent's mail;
// it used to dead-letter every message as addressed to no known agent.
func TestConsumerWithoutKnownTakesItsOwnMail(t *testing.T) {
	root := newRuntime(t, "Agent-1", "Agent-2")
	mb := openMailbox(t, root, "Agent-1")
	if err := mb.Deliver(testMessage("mine", "agent-1", Normal)); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	c, err := mb.Consume(Options{}, now)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if got := claimAll(t, c, now); !slices.Equal(got, []string{"mine"}) {
		t.Errorf("claimed %v, want [mine]; dead %v", got, names(t, mb.path(DeadletterDir)))
	}
}

// A file taken from inbox/ (or a taken place) is removed once delivered
// only if it is still the file that was read: a writer that dropped a new
// message under the same name meanwhile, or wrote more into the file,
// would otherwise lose what it wrote.
func TestRemoveReadKeepsWhatAWriterPutThereSince(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "to_agent.json")
	write := func(data string) fs.FileInfo {
		t.Helper()
		if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
		fi, err := os.Lstat(path)
		if err != nil {
			t.Fatal(err)
		}
		return fi
	}
	read := write(`{"body": "first"}`)
	if kept, err := RemoveRead(path, read, []byte(`{"body": "first"}`)); kept || err != nil {
		t.Fatalf("RemoveRead of the file read = kept %v, %v", kept, err)
	}
	if _, err := os.Lstat(path); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the file read is still there: %v", err)
	}

	// A new file under the same name, put there by rename as careful
	// writers do.
	read = write(`{"body": "first"}`)
	next := filepath.Join(dir, ".next")
	if err := os.WriteFile(next, []byte(`{"body": "second"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(next, path); err != nil {
		t.Fatal(err)
	}
	if kept, err := RemoveRead(path, read, []byte(`{"body": "first"}`)); !kept || err != nil {
		t.Fatalf("RemoveRead of a replaced file = kept %v, %v; want it kept", kept, err)
	}
	if data, _ := os.ReadFile(path); string(data) != `{"body": "second"}` {
		t.Fatalf("the new message is %q", data)
	}

	// Other text written into the same file: kept. A newline written
	// after the JSON read is the same message: removed.
	appendTo := func(s string) {
		t.Helper()
		f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString(s)
		f.Close()
	}
	read = write(`{"body": "third"}`)
	appendTo(`{"body": "fourth"}`)
	if kept, err := RemoveRead(path, read, []byte(`{"body": "third"}`)); !kept || err != nil {
		t.Fatalf("RemoveRead of a file written since = kept %v, %v; want it kept", kept, err)
	}
	read = write(`{"body": "fifth"}`)
	appendTo("\n")
	if kept, err := RemoveRead(path, read, []byte(`{"body": "fifth"}`)); kept || err != nil {
		t.Fatalf("RemoveRead of a file that gained a newline = kept %v, %v; want it removed", kept, err)
	}
	// Gone meanwhile: nothing to do.
	if kept, err := RemoveRead(path, read, nil); kept || err != nil {
		t.Fatalf("RemoveRead of a file gone = kept %v, %v", kept, err)
	}
}
