package intake

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentctl/agentctl/mailbox"
)

// Files old writers keep writing outside the mailbox, in their own folders,
// are delivered and, in places the intake may take, removed; files of
// theirs that are no messages stay.
func TestExtraPlacesOfOneAgent(t *testing.T) {
	root := newRuntime(t, "Agent-1", "Agent-2")
	mb := openMailbox(t, root, "Agent-1")
	old := t.TempDir()
	workspace := filepath.Join(old, "agent_workspaces", "Agent-1", "inbox")
	folder := filepath.Join(old, "agent_mailboxes", "Agent-1")
	for _, d := range []string{workspace, folder} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	writeFile(t, filepath.Join(workspace, "CAPTAIN_MESSAGE_1.md"), []byte("# Go\n\n**From:** Agent-2\n**To:** Agent-1\n\nRun the tests.\n"))
	writeFile(t, filepath.Join(folder, "20260101T000000.json"), []byte(`{"sender_id": "Agent-2", "recipient_id": "Agent-1", "instructions": "Rebase."}`))
	writeFile(t, filepath.Join(folder, "status.json"), []byte(`{"status": "idle"}`))
	writeFile(t, filepath.Join(workspace, "old.json"), []byte(`{"from": "Agent-2", "to": "Agent-1", "content": "done long ago", "status": "completed"}`))
	writeFile(t, filepath.Join(folder, "notes.log"), []byte("not a message"))
	writeFile(t, filepath.Join(workspace, "INBOX_MESSAGE_1_read.md"), []byte("**From**: Agent-2\n\nread already"))
	now := time.Now().Add(time.Minute) // both files long settled
	c := consume(t, mb, settings{Known: []string{"Agent-1", "Agent-2"}, Watch: []string{workspace, filepath.Join(folder, "*.json")}, Take: []string{workspace, filepath.Join(folder, "*.json")}}, now)
	bodies := claimBodies(t, c, now)
	slices.Sort(bodies)
	if !slices.Equal(bodies, []string{"Rebase.", "Run the tests."}) {
		t.Fatalf("claimed %q", bodies)
	}
	for _, gone := range []string{filepath.Join(workspace, "CAPTAIN_MESSAGE_1.md"), filepath.Join(folder, "20260101T000000.json")} {
		if _, err := os.Stat(gone); !os.IsNotExist(err) {
			t.Errorf("%s is still there after its delivery", gone)
		}
	}
	mb1 := openMailbox(t, root, "Agent-1")
	reason, _ := os.ReadFile(filepath.Join(mb1.Dir, mailbox.DeadletterDir, findSuffix(names(t, filepath.Join(mb1.Dir, mailbox.DeadletterDir)), "-old.json"+mailbox.ReasonSuffix)))
	if !strings.Contains(string(reason), "the old system had handled it already (status completed)") {
		t.Errorf("a message the old system had handled: reason %q, want it dead-lettered, not worked again", reason)
	}
	if _, err := os.Stat(filepath.Join(workspace, "INBOX_MESSAGE_1_read.md")); err != nil {
		t.Errorf("a message its old reader marked read was touched: %v", err)
	}
	for _, kept := range []string{"status.json", "notes.log"} {
		if _, err := os.Stat(filepath.Join(folder, kept)); err != nil {
			t.Errorf("%s was touched: %v", kept, err)
		}
	}
}

// A shared folder holds every agent's messages: each consumer takes the
// ones addressed to its agent, by content or by file name; what is for no
// agent is dead-lettered by the one consumer charged with it.
func TestSharedPlaceRoutesByRecipient(t *testing.T) {
	root := newRuntime(t, "Agent-1", "Agent-2")
	shared := t.TempDir()
	writeFile(t, filepath.Join(shared, "a.json"), []byte(`{"to": "agent-1", "body": "for one"}`))
	writeFile(t, filepath.Join(shared, "msg_20250811_104104_Agent-5_to_Agent-2.json"), []byte(`{"body": "for two, by name"}`))
	writeFile(t, filepath.Join(shared, "response_1755248908737_Agent-1.json"), []byte(`{"from": "Agent-2", "body": "for one, by name"}`))
	writeFile(t, filepath.Join(shared, "lost.json"), []byte(`{"body": "for nobody"}`))
	writeFile(t, filepath.Join(shared, "20250428T224057Z_THEA_ALL.msg"), []byte(`{"sender": "THEA", "target": "ALL", "payload": {"body": "for all"}}`))
	now := time.Now().Add(time.Minute)
	opts := settings{Known: []string{"Agent-1", "Agent-2"}, Shared: []string{shared}, Take: []string{shared}}
	c2 := consume(t, openMailbox(t, root, "Agent-2"), opts, now)
	if got := claimBodies(t, c2, now); !slices.Equal(got, []string{"for two, by name"}) {
		t.Errorf("Agent-2 claimed %q", got)
	}
	opts.SharedDeadletters = true
	mb1 := openMailbox(t, root, "Agent-1")
	c1 := consume(t, mb1, opts, now)
	got := claimBodies(t, c1, now)
	slices.Sort(got)
	if !slices.Equal(got, []string{"for all", "for one", "for one, by name"}) {
		t.Errorf("Agent-1 claimed %q", got)
	}
	// The broadcast's copy for Agent-2 was delivered by Agent-1's consumer.
	if err := c2.Scan(now); err != nil {
		t.Fatal(err)
	}
	if got := claimBodies(t, c2, now); !slices.Equal(got, []string{"for all"}) {
		t.Errorf("Agent-2 then claimed %q, want the broadcast", got)
	}
	if left := names(t, shared); len(left) != 0 {
		t.Errorf("shared folder still holds %v", left)
	}
	reason, _ := os.ReadFile(filepath.Join(mb1.Dir, mailbox.DeadletterDir, findSuffix(names(t, filepath.Join(mb1.Dir, mailbox.DeadletterDir)), "-lost.json"+mailbox.ReasonSuffix)))
	if !strings.Contains(string(reason), "neither the message nor its file name says whom it is for") {
		t.Errorf("lost.json reason = %q", reason)
	}
}

// A .txt file to which a writer appends messages is read message by
// message as it grows, each exactly once across consumers, and a message
// still being written is not taken until the file settles.
func TestAppendedTextFile(t *testing.T) {
	root := newRuntime(t, "Agent-1", "Agent-2")
	mb := openMailbox(t, root, "Agent-1")
	path := filepath.Join(t.TempDir(), "Agent-1.txt")
	appendTo := func(s string) {
		f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString(s)
		f.Close()
	}
	opts := settings{Known: []string{"Agent-1", "Agent-2"}, Watch: []string{path}, Settle: time.Second}
	appendTo(numbered("1") + numbered("2") + "# mailbox.Message\n**From**: Agent-2\n")
	now := time.Now()
	c := consume(t, mb, opts, now)
	got := claimBodies(t, c, now)
	slices.Sort(got) // one file time for both: their order is not known
	if !slices.Equal(got, []string{"number 1", "number 2"}) {
		t.Fatalf("claimed %q, want the two whole messages only", got)
	}
	c.Close()

	appendTo("**To**: Agent-1\n---\nnumber 3\n")
	c = consume(t, mb, opts, now) // a new runner: nothing taken twice
	if got := claimBodies(t, c, now); len(got) != 0 {
		t.Fatalf("claimed %q before the file settled", got)
	}
	later := now.Add(time.Hour)
	if err := c.Tick(later); err != nil {
		t.Fatal(err)
	}
	if got := claimBodies(t, c, later); !slices.Equal(got, []string{"number 3"}) {
		t.Fatalf("claimed %q once settled, want number 3", got)
	}
	c.Close()

	os.Remove(filepath.Join(mb.Dir, OffsetsDir, names(t, filepath.Join(mb.Dir, OffsetsDir))[0])) // lost: read again from the start
	appendTo(numbered("4"))
	c = consume(t, mb, opts, later)
	if got := claimBodies(t, c, later); !slices.Equal(got, []string{"number 4"}) {
		t.Fatalf("claimed %q, want only number 4 (the others are duplicates)", got)
	}
	if data, _ := os.ReadFile(path); !strings.Contains(string(data), "number 1") {
		t.Error("the appended file was changed")
	}
}

// A .txt inbox its writer rewrites rather than appends to (emptied and
// begun again) is read again from its start: new messages now lie where
// read ones were, and reading on from the old offset lost them once the
// new text was as long as the old.
func TestAppendedTextFileRewrittenLosesNothing(t *testing.T) {
	root := newRuntime(t, "Agent-1", "Agent-2")
	mb := openMailbox(t, root, "Agent-1")
	path := filepath.Join(t.TempDir(), "Agent-1.txt")
	opts := settings{Known: []string{"Agent-1", "Agent-2"}, Watch: []string{path}, Settle: time.Second}
	now := time.Now()
	writeFile(t, path, []byte(numbered("1")+numbered("2")))
	c := consume(t, mb, opts, now)
	take := func() []string { return takeLater(t, c, &now) }
	if got := append(claimBodies(t, c, now), take()...); len(got) != 2 {
		t.Fatalf("claimed %q, want numbers 1 and 2", got)
	}
	// Rewritten: the same length, other messages; then longer.
	for _, text := range []string{numbered("3") + numbered("4"), numbered("5") + numbered("6") + numbered("7")} {
		writeFile(t, path, []byte(text))
		got := take()
		want := strings.Count(text, "number")
		if len(got) != want {
			t.Fatalf("after the rewrite claimed %q, want its %d messages", got, want)
		}
	}
	// Appended to again: only the new message.
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(numbered("8"))
	f.Close()
	if got := take(); !slices.Equal(got, []string{"number 8"}) {
		t.Fatalf("after an append claimed %q, want number 8 only", got)
	}
}

// Notes or history that a glob of appended inboxes matches, which
// migrate recorded as read, are never read as messages when a person
// edits them: a line deleted had the whole file read from its start, and
// a line inserted above had its end taken for a message. What is
// appended to them is still read.
func TestNotesEditedAreNotReadAsMessages(t *testing.T) {
	notes := numbered("old 1") + "a line of notes\n\n" + numbered("old 2")
	mb, path := rememberedNotes(t, notes)
	opts := settings{Known: []string{"Agent-1", "Agent-2"}, Watch: []string{path}, Settle: time.Second}
	now := time.Now()
	c := consume(t, mb, opts, now)
	take := func() []string { return takeLater(t, c, &now) }
	if got := take(); len(got) != 0 {
		t.Fatalf("claimed %q from notes recorded as read", got)
	}
	for _, edited := range []string{
		strings.Replace(notes, "a line of notes\n", "", 1),                               // a line deleted
		"a line inserted above\n\n" + strings.Replace(notes, "a line of notes\n", "", 1), // then one inserted
	} {
		writeFile(t, path, []byte(edited))
		if got := take(); len(got) != 0 {
			t.Fatalf("after an edit claimed %q from the notes", got)
		}
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(numbered("new"))
	f.Close()
	if got := take(); !slices.Equal(got, []string{"number new"}) {
		t.Fatalf("after an append claimed %q, want the message appended", got)
	}
	// Messages are appended to it: it is an inbox now, and emptied and
	// begun again, it is read from its start.
	writeFile(t, path, []byte(numbered("after")+numbered("the rewrite")+numbered("at length")+numbered("more than before")))
	if got := take(); len(got) != 4 {
		t.Fatalf("after the inbox was rewritten claimed %q, want its four messages", got)
	}
}

// A message appended to notes is read even when the notes are edited
// before it is: while it was still being written (the scan saw it, not
// yet settled), or while agentctl was down. The file is read on from
// where the notes now end; it used to be read on from its new end,
// past the message.
func TestAMessageAppendedToNotesOutlivesAnEditAboveIt(t *testing.T) {
	// The edits are further from the notes' end than the part of it kept
	// to find it again.
	notes := numbered("old 1") + "a line of notes\n\n" + numbered("old 2") + numbered("old 3") + numbered("old 4") + numbered("old 5")
	edited := "a line inserted above\n\n" + strings.Replace(notes, "a line of notes\n", "", 1)
	for _, down := range []bool{false, true} {
		mb, path := rememberedNotes(t, notes)
		opts := settings{Known: []string{"Agent-1", "Agent-2"}, Watch: []string{path}, Settle: time.Second}
		now := time.Now()
		if !down {
			c := consume(t, mb, opts, now)
			writeFile(t, path, []byte(notes+numbered("new")))
			if err := c.Scan(now); err != nil {
				t.Fatal(err)
			}
			if got := claimBodies(t, c, now); len(got) != 0 {
				t.Fatalf("claimed %q before the message settled", got)
			}
			writeFile(t, path, []byte(edited+numbered("new")))
			if got := takeLater(t, c, &now); !slices.Equal(got, []string{"number new"}) {
				t.Fatalf("notes edited under a message being written: claimed %q, want number new", got)
			}
			continue
		}
		writeFile(t, path, []byte(edited+numbered("new")))
		c := consume(t, mb, opts, now)
		if got := append(claimBodies(t, c, now), takeLater(t, c, &now)...); !slices.Equal(got, []string{"number new"}) {
			t.Fatalf("notes edited and appended to while agentctl was down: claimed %q, want number new", got)
		}
	}
}

// Notes whose end stands in more than one place (a history of the same
// message over and over) are not read again from an earlier copy of it
// when edited: read on from the file's new end, and the log says that a
// message appended before the edit would have been skipped.
func TestNotesOfRepeatedTextEditedAreNotReadAgain(t *testing.T) {
	notes := strings.Repeat(numbered("again"), 8)
	mb, path := rememberedNotes(t, notes)
	var events []mailbox.Event
	opts := settings{Known: []string{"Agent-1", "Agent-2"}, Watch: []string{path}, Settle: time.Second,
		OnEvent: func(e mailbox.Event) { events = append(events, e) }}
	now := time.Now()
	c := consume(t, mb, opts, now)
	writeFile(t, path, []byte("a line inserted above\n\n"+notes))
	if got := takeLater(t, c, &now); len(got) != 0 {
		t.Fatalf("after an edit claimed %q from the notes", got)
	}
	said := false
	for _, e := range events {
		said = said || e.Kind == "notes-edited" && e.File == path
	}
	if !said {
		t.Errorf("events %+v; want one saying the notes were read on from their new end", events)
	}
}

// Notes an editor saves by emptying the file and writing it again, seen
// empty in between, are not read as messages once written: the file is
// read on from its new end only once it has stayed as it is. A jump made
// from the empty file used to have the whole of it read as messages.
func TestNotesSeenEmptiedMidSaveAreNotReadAsMessages(t *testing.T) {
	notes := numbered("old 1") + "a line of notes\n\n" + numbered("old 2")
	mb, path := rememberedNotes(t, notes)
	opts := settings{Known: []string{"Agent-1", "Agent-2"}, Watch: []string{path}, Settle: time.Second}
	now := time.Now()
	c := consume(t, mb, opts, now)
	writeFile(t, path, nil)
	if err := c.Scan(now); err != nil {
		t.Fatal(err)
	}
	writeFile(t, path, []byte("a line written above\n\n"+notes))
	if got := takeLater(t, c, &now); len(got) != 0 {
		t.Fatalf("after a save seen half done claimed %q from the notes", got)
	}
}

// An empty file migrate found where a glob of appended inboxes points is
// an inbox its writers have not used yet, not notes: filled, then emptied
// and begun again, it is read from its start.
func TestAnEmptyInboxMigrateFoundIsNoNotes(t *testing.T) {
	root := newRuntime(t, "Agent-1", "Agent-2")
	mb := openMailbox(t, root, "Agent-1")
	path := filepath.Join(t.TempDir(), "Agent-1.txt")
	writeFile(t, path, nil)
	if err := RememberNotes(mb.Dir, path, nil, time.Now()); err != nil {
		t.Fatal(err)
	}
	opts := settings{Known: []string{"Agent-1", "Agent-2"}, Watch: []string{path}, Settle: time.Second}
	now := time.Now()
	c := consume(t, mb, opts, now)
	take := func() []string { return takeLater(t, c, &now) }
	writeFile(t, path, []byte(numbered("1")+numbered("2")))
	if got := take(); len(got) != 2 {
		t.Fatalf("claimed %q, want numbers 1 and 2", got)
	}
	writeFile(t, path, []byte(numbered("3")+numbered("4")+numbered("5")))
	if got := take(); len(got) != 3 {
		t.Fatalf("after the inbox was rewritten claimed %q, want numbers 3 to 5", got)
	}
}

// rememberedNotes is Agent-1's mailbox and a .txt inbox of its, named as
// an inbox (a file whose name says notes is never watched), that holds
// notes, which migrate recorded as such.
func rememberedNotes(t *testing.T, notes string) (*mailbox.Mailbox, string) {
	t.Helper()
	mb := openMailbox(t, newRuntime(t, "Agent-1", "Agent-2"), "Agent-1")
	path := filepath.Join(t.TempDir(), "Agent-1.txt")
	writeFile(t, path, []byte(notes))
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := RememberNotes(mb.Dir, path, []byte(notes), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
	return mb, path
}

// takeLater looks again an hour past *now, and once more a minute on (the
// last message is taken once the file has settled since the scan saw it
// change), and claims what is there, in order of body.
func takeLater(t *testing.T, c consumer, now *time.Time) []string {
	t.Helper()
	*now = now.Add(time.Hour)
	if err := c.Scan(*now); err != nil {
		t.Fatal(err)
	}
	*now = now.Add(time.Minute)
	if err := c.Tick(*now); err != nil {
		t.Fatal(err)
	}
	got := claimBodies(t, c, *now)
	slices.Sort(got)
	return got
}

// numbered is message n from Agent-2 to Agent-1 as the old writers
// append it to a .txt inbox, its body "number n".
func numbered(n string) string {
	return "# mailbox.Message\n**From**: Agent-2\n**To**: Agent-1\n---\nnumber " + n + "\n\n"
}

func claimBodies(t *testing.T, c consumer, now time.Time) []string {
	t.Helper()
	var bodies []string
	for {
		cl, err := c.Claim(now)
		if err != nil {
			return bodies
		}
		bodies = append(bodies, cl.Message.Body)
		if err := c.Complete(cl, mailbox.Receipt{}, now); err != nil {
			t.Fatal(err)
		}
	}
}

// A writer that stalls in the middle of a message leaves the file looking
// settled: a last message that does not end as the old writers end theirs
// (with a blank line) waits far longer than the settle period.
func TestAppendedMessageCutShortWaits(t *testing.T) {
	root := newRuntime(t, "Agent-1", "Agent-2")
	mb := openMailbox(t, root, "Agent-1")
	path := filepath.Join(t.TempDir(), "Agent-1.txt")
	writeFile(t, path, []byte("# mailbox.Message\n**From**: Agent-2\n**To**: Agent-1\n---\nfirst half of a long li"))
	mod := time.Now()
	if err := os.Chtimes(path, mod, mod); err != nil {
		t.Fatal(err)
	}
	c := consume(t, mb, settings{Known: []string{"Agent-1", "Agent-2"}, Watch: []string{path}, Settle: time.Second}, mod)
	for _, after := range []time.Duration{time.Second, 2 * time.Second, 5 * time.Second} {
		if err := c.Tick(mod.Add(after)); err != nil {
			t.Fatal(err)
		}
		if got := claimBodies(t, c, mod.Add(after)); len(got) != 0 {
			t.Fatalf("%s after the last write, claimed %q", after, got)
		}
	}
	if err := c.Tick(mod.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	if got := claimBodies(t, c, mod.Add(time.Minute)); !slices.Equal(got, []string{"first half of a long li"}) {
		t.Fatalf("a minute after the last write, claimed %q", got)
	}
}

// A message file over the size limit in a watched place goes to
// deadletter/ whole, never read and never lost.
func TestExtraOversizedFileIsDeadletteredWhole(t *testing.T) {
	root := newRuntime(t, "Agent-1")
	mb := openMailbox(t, root, "Agent-1")
	place := t.TempDir()
	big := []byte(`{"from": "Agent-2", "body": "` + strings.Repeat("x", 2000) + `"}`)
	writeFile(t, filepath.Join(place, "big.json"), big)
	now := time.Now().Add(time.Minute)
	consume(t, mb, settings{Known: []string{"Agent-1"}, Watch: []string{place}, Take: []string{place}, MaxMessageBytes: 1000}, now)
	dl := names(t, filepath.Join(mb.Dir, mailbox.DeadletterDir))
	kept, err := os.ReadFile(filepath.Join(mb.Dir, mailbox.DeadletterDir, findSuffix(dl, "-big.json")))
	if err != nil || string(kept) != string(big) {
		t.Fatalf("deadletter = %v; the oversized file was not kept whole (%v)", dl, err)
	}
	if reason, _ := os.ReadFile(filepath.Join(mb.Dir, mailbox.DeadletterDir, findSuffix(dl, "-big.json"+mailbox.ReasonSuffix))); !strings.Contains(string(reason), "over the 1000-byte limit") {
		t.Errorf("reason = %q", reason)
	}
}

// A watched inbox too large to read whole (an appended .txt, an
// inbox.json read or taken) is left unread and said so, once for each
// size it is seen at, not at every look.
func TestOversizedWatchedInboxIsSaidOnce(t *testing.T) {
	root := newRuntime(t, "Agent-1")
	dir := t.TempDir()
	txt := filepath.Join(dir, "Agent-1.txt")
	read := filepath.Join(dir, "read", "inbox.json")
	taken := filepath.Join(dir, "taken", "inbox.json")
	for _, p := range []string{read, taken} {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	big := `[{"sender": "Agent-2", "recipient": "Agent-1", "content": "` + strings.Repeat("x", 200) + `"}]`
	writeFile(t, txt, []byte("**From**: Agent-2\n\n"+strings.Repeat("x", 200)+"\n\n"))
	writeFile(t, read, []byte(big))
	writeFile(t, taken, []byte(big))
	said := map[string]int{}
	now := time.Now().Add(time.Minute)
	c := consume(t, openMailbox(t, root, "Agent-1"), settings{Known: []string{"Agent-1", "Agent-2"}, MaxInboxJSONBytes: 100,
		Watch: []string{txt, read, taken}, Take: []string{taken},
		OnEvent: func(e mailbox.Event) {
			if e.Kind == "unreadable" && strings.Contains(e.Reason, "max_inbox_json_bytes") {
				said[e.File]++
			}
		}}, now)
	if err := c.Scan(now.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{txt, read, taken} {
		if said[p] != 1 {
			t.Errorf("%s was said to be too large %d times over two looks, want once", p, said[p])
		}
	}
	if got := claimBodies(t, c, now); len(got) != 0 {
		t.Errorf("delivered %q from inboxes too large to read", got)
	}
	if data, _ := os.ReadFile(taken); string(data) != big {
		t.Errorf("the taken inbox.json too large to read was changed: %s", data)
	}
	writeFile(t, read, []byte(big+" "))
	if err := c.Scan(now.Add(2 * time.Minute)); err != nil {
		t.Fatal(err)
	}
	if said[read] != 2 {
		t.Errorf("grown, %s was said to be too large %d times in all, want twice", read, said[read])
	}
}

// A glob of a shared place never follows a link: a folder or a file it
// matches through one, planted by anyone who can write there, is left
// alone and said once, so files elsewhere are neither read into a prompt
// nor, with take, removed. Files the glob reaches without a link are
// taken as before.
func TestSharedGlobNeverFollowsALink(t *testing.T) {
	root := newRuntime(t, "Agent-1", "Agent-2")
	place := t.TempDir()
	victim := t.TempDir()
	writeFile(t, filepath.Join(victim, "todo.json"), []byte(`{"to": "Agent-1", "body": "private"}`))
	writeFile(t, filepath.Join(victim, "diary.md"), []byte("Dear diary"))
	for _, dir := range []string{"Agent-1", filepath.Join("Agent-2", "inbox")} {
		if err := os.MkdirAll(filepath.Join(place, "agent_workspaces", dir), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	writeFile(t, filepath.Join(place, "agent_workspaces", "Agent-2", "inbox", "real.json"), []byte(`{"to": "Agent-1", "body": "real"}`))
	if err := os.Symlink(victim, filepath.Join(place, "agent_workspaces", "Agent-1", "inbox")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(victim, "todo.json"), filepath.Join(place, "agent_workspaces", "Agent-2", "inbox", "linked.json")); err != nil {
		t.Fatal(err)
	}
	glob := filepath.Join(place, "agent_workspaces", "*", "inbox")
	var said []string
	now := time.Now().Add(time.Minute)
	c := consume(t, openMailbox(t, root, "Agent-1"), settings{Known: []string{"Agent-1", "Agent-2"}, Shared: []string{glob}, Take: []string{glob},
		SharedDeadletters: true, OnEvent: func(e mailbox.Event) {
			if e.Kind == "unreadable" {
				said = append(said, e.File)
			}
		}}, now)
	if err := c.Scan(now); err != nil {
		t.Fatal(err)
	}
	if got := claimBodies(t, c, now); !slices.Equal(got, []string{"real"}) {
		t.Errorf("Agent-1 claimed %q; want only the message reached without a link", got)
	}
	if left := names(t, victim); !slices.Equal(left, []string{"diary.md", "todo.json"}) {
		t.Errorf("the folder the link points to holds %v; want it untouched", left)
	}
	slices.Sort(said)
	want := []string{filepath.Join(place, "agent_workspaces", "Agent-1", "inbox"), filepath.Join(place, "agent_workspaces", "Agent-2", "inbox", "linked.json")}
	if !slices.Equal(said, want) {
		t.Errorf("said unreadable: %q; want each link once: %q", said, want)
	}
}

// A message the old system had handled is kept in one place: taken from a
// place after migrate archived it as history, it is a duplicate, not also
// a dead letter; dead-lettered first, its id is known, so migrate run
// later finds it here.
func TestHandledMessageIsKeptInOnePlace(t *testing.T) {
	root := newRuntime(t, "Agent-1", "Agent-2")
	mb := openMailbox(t, root, "Agent-1")
	place := t.TempDir()
	handled := []byte(`{"id": "old-1", "from": "Agent-2", "to": "Agent-1", "content": "done long ago", "status": "completed"}`)
	if err := mb.Record(mailbox.Message{ID: "old-1", From: "Agent-2", To: "Agent-1", Body: "done long ago"}, mailbox.Receipt{Outcome: "imported history"}, time.Now()); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(place, "old.json"), handled)
	writeFile(t, filepath.Join(place, "older.json"), []byte(`{"id": "old-2", "from": "Agent-2", "to": "Agent-1", "content": "done too", "status": "completed"}`))
	now := time.Now().Add(time.Minute)
	consume(t, mb, settings{Known: []string{"Agent-1", "Agent-2"}, Watch: []string{place}, Take: []string{place}}, now).Close()
	if left := names(t, place); len(left) != 0 {
		t.Errorf("the place still holds %v", left)
	}
	for id, want := range map[string][]string{"old-1": {mailbox.StateDone}, "old-2": {mailbox.StateDead}} {
		found, err := mb.Locate(id)
		var states []string
		for _, e := range found {
			states = append(states, e.State)
		}
		if err != nil || !slices.Equal(states, want) {
			t.Errorf("%s is %v, %v; want %v", id, states, err, want)
		}
	}
	if !mb.Seen("old-2") {
		t.Error("the dead-lettered message's id is not known to the mailbox")
	}
}
