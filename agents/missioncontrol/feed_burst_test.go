package missioncontrol

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentctl/agentctl/internal/clock/clocktest"
	"github.com/agentctl/agentctl/mailbox"
)

// TestFeedAfterABurstShowsWhatAFullReadShows runs random deliveries,
// dropped files, claims, completions, retries, dead letters, a person's
// settling and inbox.json writes while a feed watches, with a cap small
// enough that every folder overflows it, and some refreshes landing
// mid-burst. Once the burst is over, the picture the feed kept up from
// file events must be the one a fresh read of the whole runtime makes.
func TestFeedAfterABurstShowsWhatAFullReadShows(t *testing.T) {
	for _, seed := range []uint64{1, 2, 3} {
		t.Run(fmt.Sprint("seed=", seed), func(t *testing.T) { burst(t, seed) })
	}
}

func burst(t *testing.T, seed uint64) {
	const shown = 4
	root, cfg := testRuntime(t, "Agent-1", "Agent-2", "Agent-3")
	cfg.StallAfter = 10_000 * time.Hour // the test's clock moves; turns must not stall meanwhile
	start := time.Date(2026, 11, 20, 8, 0, 0, 0, time.UTC)
	clk := clocktest.New(start)
	f := startFeedWith(t, root, cfg, FeedOptions{Clock: clk, Shown: shown, Liveness: 10_000 * time.Hour, Rescan: 10_000 * time.Hour})
	rnd := rand.New(rand.NewPCG(seed, seed))

	names := cfg.mailboxNames()
	boxes := map[string]*mailbox.Mailbox{}
	consumers := map[string]*mailbox.Consumer{}
	for _, name := range names {
		mb, err := mailbox.Open(root, name)
		if err != nil {
			t.Fatal(err)
		}
		boxes[name] = mb
		if !cfg.isPerson(name) {
			c, err := mb.Consume(mailbox.Options{Known: names, MaxAttempts: 2}, start)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { c.Close() })
			consumers[name] = c
		}
	}
	claims := map[string]*mailbox.Claim{}
	priorities := []mailbox.Priority{mailbox.Urgent, mailbox.High, mailbox.Normal, mailbox.Low}
	for i := range 400 {
		now := start.Add(time.Duration(i) * 97 * time.Minute) // the archive gets a day folder after another
		to := names[rnd.IntN(len(names))]
		mb := boxes[to]
		msg := mailbox.Message{ID: fmt.Sprintf("m-%d-%d", seed, i), From: "Agent-1", To: to, Type: "task", Priority: priorities[rnd.IntN(4)],
			Subject: fmt.Sprint("burst ", i), Body: "b", CreatedAt: now, ThreadID: fmt.Sprint("t-", rnd.IntN(6))}
		if rnd.IntN(5) == 0 {
			msg.TaskID = "T-1"
		}
		c := consumers[to]
		switch op := rnd.IntN(10); {
		case op < 3:
			if err := mb.Deliver(msg); err != nil {
				t.Fatal(err)
			}
		case op == 3: // a person's file, written aside and renamed in
			tmp := filepath.Join(mb.Dir, mailbox.InboxDir, ".drop.tmp")
			if err := os.WriteFile(tmp, msg.Encode(), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(tmp, filepath.Join(mb.Dir, mailbox.InboxDir, mailbox.Stem(msg.ID)+".json")); err != nil {
				t.Fatal(err)
			}
		case op == 4: // a Dream.OS writer's inbox.json
			data, _ := json.Marshal([]mailbox.Message{msg})
			if rnd.IntN(2) == 0 {
				data = []byte("[]")
			}
			if err := os.WriteFile(filepath.Join(mb.Dir, mailbox.InboxJSON), data, 0o644); err != nil {
				t.Fatal(err)
			}
		case op == 5: // a dead letter written straight away
			if _, err := mb.WriteDeadLetter(mailbox.Letter{Name: mailbox.Stem(msg.ID) + ".json", Fresh: true, Data: msg.Encode(),
				Origin: "burst", ID: msg.ID, Reason: "burst " + fmt.Sprint(i)}, now); err != nil {
				t.Fatal(err)
			}
		case op == 6 && c == nil: // a person settles what waits
			pending, err := mb.List(mailbox.StatePending)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range pending {
				if strings.HasPrefix(e.File, mailbox.InboxDir+"/") && e.Problem == "" {
					if err := mb.Settle(e, mailbox.Receipt{Outcome: "dropped"}, now); err != nil {
						t.Fatal(err)
					}
					break
				}
			}
		case c != nil && claims[to] == nil: // a runner claims, and says so
			if err := c.Scan(now); err != nil {
				t.Fatal(err)
			}
			cl, err := c.Claim(now)
			if errors.Is(err, mailbox.ErrEmpty) {
				continue
			}
			if err != nil {
				t.Fatal(err)
			}
			claims[to] = cl
			hb := mailbox.Status{PID: os.Getpid(), State: "working", Current: cl.Message.ID, Subject: cl.Message.Subject, Since: now, StartedAt: start, UpdatedAt: now}
			hb.Host, _ = os.Hostname()
			if err := mb.WriteStatus(hb); err != nil {
				t.Fatal(err)
			}
		case c != nil: // ... and its turn ends one way or another
			cl := claims[to]
			var err error
			switch rnd.IntN(4) {
			case 0, 1:
				err = c.Complete(cl, mailbox.Receipt{Outcome: "done"}, now)
			case 2:
				_, err = c.Retry(cl, errors.New("the window was gone"), now)
			case 3:
				err = c.Deadletter(cl, "refused", now)
			}
			if err != nil {
				t.Fatal(err)
			}
			delete(claims, to)
			hb := mailbox.Status{PID: os.Getpid(), State: "idle", Since: now, StartedAt: start, UpdatedAt: now}
			hb.Host, _ = os.Hostname()
			if err := mb.WriteStatus(hb); err != nil {
				t.Fatal(err)
			}
		}
		if rnd.IntN(15) == 0 {
			clk.Advance(time.Second) // a refresh mid-burst, of what the feed has seen so far
		}
	}

	// A person's notes where only day folders belong, last.
	if err := os.WriteFile(filepath.Join(boxes["Agent-2"].Dir, mailbox.ArchiveDir, "notes.txt"), []byte("n"), 0o644); err != nil {
		t.Fatal(err)
	}

	// The cap is what this test is about: some folders must overflow it.
	over := false
	for _, name := range names {
		counts, err := boxes[name].Count()
		if err != nil {
			t.Fatal(err)
		}
		over = over || counts.Pending > shown || counts.Dead > shown || counts.Done > recentPerMailbox
	}
	if !over {
		t.Fatal("no folder holds more than the cap; the burst tests nothing of it")
	}

	var diff string
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("the feed's picture against a full read:\n%s", diff)
		}
	})
	clk.Pump(t, "the feed's picture equal to a full read", func() bool {
		kept, _, _, _ := f.Current()
		fresh := NewReader(root, cfg)
		fresh.Shown = shown
		diff = snapshotDiff(kept, fresh.Read(Changed{All: true}, clk.Now()))
		return diff == ""
	})

	// Pages past the cap hold, with the snapshot, every message of a
	// folder, in the order the folder is worked or was archived.
	for _, name := range names {
		for _, state := range mailbox.States {
			got := pageAll(t, f, name, state)
			entries, err := boxes[name].List(state)
			if err != nil {
				t.Fatal(err)
			}
			var want []string
			for _, e := range entries {
				want = append(want, e.Message.ID+"|"+e.File)
			}
			if state != mailbox.StatePending { // the archive's pages go by when it was archived, List by creation
				slices.Sort(got)
				slices.Sort(want)
			}
			if !slices.Equal(got, want) {
				t.Errorf("pages of %s %s:\n got %v\nwant %v", name, state, got, want)
			}
		}
	}
}

// pageAll reads a folder page by page, three at a time.
func pageAll(t *testing.T, f *Feed, name, state string) []string {
	t.Helper()
	var out []string
	offset := 0
	for {
		p, err := f.Page(context.Background(), Page{Mailbox: name, State: state, Offset: offset, Limit: 3})
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range p.Letters {
			out = append(out, l.ID+"|"+l.file)
		}
		if p.Next == 0 {
			if len(out) != p.Total {
				t.Errorf("%s %s: %d paged, total %d", name, state, len(out), p.Total)
			}
			return out
		}
		offset = p.Next
	}
}

// snapshotDiff shows the first lines where two snapshots differ, or "".
func snapshotDiff(a, b Snapshot) string {
	ja, _ := json.MarshalIndent(a, "", " ")
	jb, _ := json.MarshalIndent(b, "", " ")
	if string(ja) == string(jb) {
		return ""
	}
	la, lb := strings.Split(string(ja), "\n"), strings.Split(string(jb), "\n")
	for i := range min(len(la), len(lb)) {
		if la[i] != lb[i] {
			from := max(0, i-8)
			return fmt.Sprintf("kept:\n%s\nfull read:\n%s", strings.Join(la[from:min(len(la), i+4)], "\n"), strings.Join(lb[from:min(len(lb), i+4)], "\n"))
		}
	}
	return fmt.Sprintf("kept %d lines, full read %d", len(la), len(lb))
}
