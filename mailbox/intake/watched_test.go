package intake

import (
	"bytes"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentctl/agentctl/mailbox"
)

// snapshot is every file under dir with its bytes and time.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		fi, _ := d.Info()
		out[p] = string(data) + "@" + fi.ModTime().String()
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// A place that is not taken is only read: its files stay byte for byte, no
// lock file appears beside its inbox.json, an unchanged file is delivered
// once across restarts, and a file whose content changed is delivered
// again as a new message.
func TestWatchedPlaceIsOnlyRead(t *testing.T) {
	root := newRuntime(t, "Agent-1", "Agent-2")
	mb := openMailbox(t, root, "Agent-1")
	place := t.TempDir()
	writeFile(t, filepath.Join(place, "a.json"), []byte(`{"from": "Agent-2", "to": "Agent-1", "id": "m-1", "content": "first"}`))
	writeFile(t, filepath.Join(place, "b.md"), []byte("**From:** Agent-2\n**To:** Agent-1\n\nsecond\n"))
	writeFile(t, filepath.Join(place, "old.json"), []byte(`{"from": "Agent-2", "to": "Agent-1", "content": "handled", "status": "read"}`))
	writeFile(t, filepath.Join(place, "inbox.json"), []byte(`[{"sender": "Agent-2", "recipient": "Agent-1", "content": "third"}]`))
	s := settings{Known: []string{"Agent-1", "Agent-2"}, Watch: []string{place}}
	now := time.Now().Add(time.Minute)
	before := snapshot(t, place)

	c := consume(t, mb, s, now)
	got := claimBodies(t, c, now)
	slices.Sort(got)
	if !slices.Equal(got, []string{"first", "second", "third"}) {
		t.Fatalf("claimed %q", got)
	}
	c.Close()
	if after := snapshot(t, place); !maps.Equal(before, after) {
		t.Fatalf("the watched place changed:\nbefore %v\nafter  %v", before, after)
	}
	if dl := names(t, filepath.Join(mb.Dir, mailbox.DeadletterDir)); len(dl) != 2 { // the letter and its reason
		t.Errorf("deadletter = %v, want the handled message once", dl)
	}

	// A restart: nothing again. Then the writer changes one file and
	// appends to inbox.json.
	now = now.Add(time.Minute)
	c = consume(t, mb, s, now)
	if got := claimBodies(t, c, now); len(got) != 0 {
		t.Fatalf("after a restart claimed %q again", got)
	}
	writeFile(t, filepath.Join(place, "a.json"), []byte(`{"from": "Agent-2", "to": "Agent-1", "id": "m-1", "content": "first, corrected"}`))
	writeFile(t, filepath.Join(place, "inbox.json"), []byte(`[{"sender": "Agent-2", "recipient": "Agent-1", "content": "third"},
 {"sender": "Agent-2", "recipient": "Agent-1", "content": "fourth"}]`))
	now = now.Add(time.Minute)
	if err := c.Scan(now); err != nil {
		t.Fatal(err)
	}
	got = claimBodies(t, c, now)
	slices.Sort(got)
	if !slices.Equal(got, []string{"first, corrected", "fourth"}) {
		t.Fatalf("after the writer's changes claimed %q", got)
	}
	if dl := names(t, filepath.Join(mb.Dir, mailbox.DeadletterDir)); len(dl) != 2 {
		t.Errorf("deadletter = %v, want the handled message once, across restarts", dl)
	}
	if _, err := os.Lstat(filepath.Join(place, "inbox.json.lock")); err == nil {
		t.Error("a lock file was created in the watched place")
	}
	if data, _ := os.ReadFile(filepath.Join(place, "a.json")); !bytes.Contains(data, []byte("corrected")) {
		t.Errorf("a.json was changed: %s", data)
	}
	if n := len(names(t, filepath.Join(mb.Dir, WatchedDir))); n != 4 {
		t.Errorf("%s holds %d files, want one per watched file", WatchedDir, n)
	}
	// A file the writer removes is forgotten.
	if err := os.Remove(filepath.Join(place, "b.md")); err != nil {
		t.Fatal(err)
	}
	if err := c.Scan(now); err != nil {
		t.Fatal(err)
	}
	if n := len(names(t, filepath.Join(mb.Dir, WatchedDir))); n != 3 {
		t.Errorf("%s holds %d files after a watched file went, want 3", WatchedDir, n)
	}
}

// A watched inbox.json is read under its writers' lock when the lock file
// is there: while a writer holds it nothing is read, and once it lets go
// the file is delivered. The lock file stays as the writers left it.
func TestWatchedInboxJSONWaitsForItsWriter(t *testing.T) {
	root := newRuntime(t, "Agent-1", "Agent-2")
	mb := openMailbox(t, root, "Agent-1")
	place := t.TempDir()
	writeFile(t, filepath.Join(place, "inbox.json"), []byte(`[{"sender": "Agent-2", "recipient": "Agent-1", "content": "written under the lock"}]`))
	lockPath := filepath.Join(place, "inbox.json.lock")
	writeFile(t, lockPath, nil)
	if err := os.Chmod(lockPath, 0o644); err != nil {
		t.Fatal(err)
	}
	ready, release := filepath.Join(root, "held"), filepath.Join(root, "release")
	writer := startRole(t, "hold-lock", "MAILBOX_ROOT="+root, "MAILBOX_AGENT=Agent-1", "MAILBOX_LOCK="+lockPath, "MAILBOX_READY="+ready, "MAILBOX_DONE="+release)
	defer writer.Process.Kill()
	waitForFile(t, ready)

	now := time.Now().Add(time.Minute)
	c := consume(t, mb, settings{Known: []string{"Agent-1", "Agent-2"}, Watch: []string{place}}, now)
	if got := claimBodies(t, c, now); len(got) != 0 {
		t.Fatalf("claimed %q while the writer held its lock", got)
	}
	writeFile(t, release, nil)
	if err := writer.Wait(); err != nil {
		t.Fatal(err)
	}
	now = now.Add(time.Minute)
	if err := c.Scan(now); err != nil {
		t.Fatal(err)
	}
	if got := claimBodies(t, c, now); !slices.Equal(got, []string{"written under the lock"}) {
		t.Fatalf("claimed %q once the writer let go", got)
	}
	if fi, err := os.Stat(lockPath); err != nil || fi.Mode().Perm() != 0o644 {
		t.Errorf("the writers' lock file is now %v (%v), want it left 0644", fi.Mode().Perm(), err)
	}
}

// What follows the array of a watched inbox.json (the stale end of a
// rewrite, which may hold whole messages) goes to deadletter/ once, with
// its reason, and the file stays as it is: it was dropped without a word.
func TestWatchedInboxJSONTailIsKept(t *testing.T) {
	root := newRuntime(t, "Agent-1", "Agent-2")
	mb := openMailbox(t, root, "Agent-1")
	place := t.TempDir()
	tail := `, {"sender": "Agent-2", "recipient": "Agent-1", "content": "kept in the tail"}]`
	inbox := filepath.Join(place, "inbox.json")
	writeFile(t, inbox, []byte(`[{"sender": "Agent-2", "recipient": "Agent-1", "content": "first"}]`+tail))
	s := settings{Known: []string{"Agent-1", "Agent-2"}, Watch: []string{place}}
	now := time.Now().Add(time.Minute)
	before := snapshot(t, place)
	c := consume(t, mb, s, now)
	if got := claimBodies(t, c, now); !slices.Equal(got, []string{"first"}) {
		t.Fatalf("claimed %q", got)
	}
	if after := snapshot(t, place); !maps.Equal(before, after) {
		t.Errorf("the watched place changed:\nbefore %v\nafter  %v", before, after)
	}
	dead, err := mb.List(mailbox.StateDead)
	if err != nil || len(dead) != 1 || !strings.Contains(dead[0].Reason, "after the end of the JSON array") {
		t.Fatalf("deadletter/ holds %+v, %v; want the tail, with why", dead, err)
	}
	if data, err := os.ReadFile(filepath.Join(mb.Dir, dead[0].File)); err != nil || !bytes.Contains(data, []byte("kept in the tail")) {
		t.Fatalf("the dead letter %s holds %q, %v; want the tail", dead[0].File, data, err)
	}
	// The writer adds an entry; the tail, unchanged, is not kept again.
	writeFile(t, inbox, []byte(`[{"sender": "Agent-2", "recipient": "Agent-1", "content": "first"}, {"sender": "Agent-2", "recipient": "Agent-1", "content": "second"}]`+tail))
	if err := c.Scan(now.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	if got := claimBodies(t, c, now.Add(time.Minute)); !slices.Equal(got, []string{"second"}) {
		t.Fatalf("then claimed %q", got)
	}
	if dead, _ := mb.List(mailbox.StateDead); len(dead) != 1 {
		t.Errorf("deadletter/ holds %d letters; want the tail once", len(dead))
	}
}

// The same message without an id, dropped again into a watched
// inbox.json (a script that asks "status?" every hour), is a message of
// its own each time, whether the place is only read or taken: it was
// known by its bytes alone and dropped as delivered already.
func TestWatchedInboxJSONSameMessageAgainIsDeliveredAgain(t *testing.T) {
	const entry = `{"sender": "Agent-2", "recipient": "Agent-1", "content": "status?"}`
	for _, taken := range []bool{false, true} {
		t.Run(fmt.Sprintf("taken %v", taken), func(t *testing.T) {
			root := newRuntime(t, "Agent-1", "Agent-2")
			mb := openMailbox(t, root, "Agent-1")
			place := t.TempDir()
			box := filepath.Join(place, "inbox.json")
			s := settings{Known: []string{"Agent-1", "Agent-2"}, Watch: []string{place}}
			if taken {
				s.Take = []string{place}
			}
			write := func(data string, at time.Time) {
				t.Helper()
				writeFile(t, box, []byte(data))
				if err := os.Chtimes(box, at, at); err != nil {
					t.Fatal(err)
				}
			}
			hour := time.Now().Add(-3 * time.Hour)
			// Where the file is only read: twice in it, then once more
			// appended an hour later. Where it is taken (emptied): once,
			// then the same file again an hour later.
			first, again, want := "["+entry+",\n"+entry+"]", "["+entry+",\n"+entry+",\n"+entry+"]", 2
			if taken {
				first, again, want = "["+entry+"]", "["+entry+"]", 1
			}
			write(first, hour)
			now := time.Now().Add(time.Minute)
			c := consume(t, mb, s, now)
			if got := claimBodies(t, c, now); len(got) != want {
				t.Fatalf("claimed %q, want the message %d times", got, want)
			}
			write(again, hour.Add(time.Hour))
			if err := c.Scan(now); err != nil {
				t.Fatal(err)
			}
			if got := claimBodies(t, c, now); len(got) != 1 {
				t.Fatalf("after the writer's next drop claimed %q, want the message once more", got)
			}
			// A restart reads the same file again: nothing is new.
			c.Close()
			c = consume(t, mb, s, now.Add(time.Minute))
			if got := claimBodies(t, c, now.Add(time.Minute)); len(got) != 0 {
				t.Fatalf("after a restart claimed %q again", got)
			}
		})
	}
}
