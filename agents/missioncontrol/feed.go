package missioncontrol

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/agentctl/agentctl/agents/hub/hubseats"
	"github.com/agentctl/agentctl/cursor"
	"github.com/agentctl/agentctl/devlog"
	"github.com/agentctl/agentctl/internal/clock"
	"github.com/agentctl/agentctl/internal/layout"
	"github.com/agentctl/agentctl/mailbox"
	"github.com/agentctl/agentctl/projectboard"
)

// FeedOptions tunes a Feed; the zero value is what serve and top use.
type FeedOptions struct {
	// Settle gathers the events of one burst (a claim touches several
	// files) into one refresh.
	Settle time.Duration
	// Liveness is how often runners' pids are checked: a runner killed
	// with SIGKILL changes no file.
	Liveness time.Duration
	// Rescan re-reads everything this often, in case events were lost.
	Rescan time.Duration
	// Shown is how many messages of each folder of a mailbox a snapshot
	// holds (the first of the queue, the newest of the others); the rest
	// are paged. DefaultShown when zero.
	Shown int
	// Clock times the settling, liveness checks and rescans, and stamps
	// snapshots; clock.System when nil.
	Clock clock.Clock
}

func (o *FeedOptions) defaults() {
	if o.Settle <= 0 {
		o.Settle = 15 * time.Millisecond
	}
	if o.Liveness <= 0 {
		o.Liveness = 5 * time.Second
	}
	if o.Rescan <= 0 {
		o.Rescan = 2 * time.Minute
	}
	o.Clock = clock.Or(o.Clock)
}

// Feed keeps the current snapshot of a runtime, rebuilt from the runtime's
// own file events, and tells its subscribers when it changed. One Feed
// serves any number of viewers: nothing is read per viewer.
type Feed struct {
	opts   FeedOptions
	reader *Reader
	fsw    *fsnotify.Watcher
	dirs   map[string]Changed // watched folder → what an event in it changes

	mu      sync.Mutex
	snap    Snapshot
	data    []byte
	seq     uint64
	changed chan struct{} // closed and replaced on every change

	pages chan pageRequest // asked of Run, which alone owns the reader
	done  chan struct{}    // closed when Run returns
}

// NewFeed reads the runtime once and starts watching it; Run keeps the
// snapshot current.
func NewFeed(root string, s Settings, opts FeedOptions) (*Feed, error) {
	if opts.Rescan <= 0 && s.Poll > 0 {
		// Network and synced folders send no events: read as often as the
		// runners look.
		opts.Rescan = s.Poll
	}
	opts.defaults()
	fsw, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, err
	}
	f := &Feed{opts: opts, reader: NewReader(root, s), fsw: fsw, dirs: map[string]Changed{}, changed: make(chan struct{}),
		pages: make(chan pageRequest), done: make(chan struct{})}
	f.reader.Shown = opts.Shown
	f.watchAll()
	f.publish(f.reader.Read(Changed{All: true}, opts.Clock.Now()))
	return f, nil
}

func one(name string) map[string]bool { return map[string]bool{name: true} }

// watchAll watches the folders whose changes show: mailbox folders and
// the newest day folder of each archive, devlogs, boards, locks and, with
// remote agents, the hub's record of their seats. Folders that do not
// exist yet are watched through their parent.
//
// A runner's message reaches the archive by leaving processing/, its
// receipt last, but one a person settles (reply, drop, approve) moves
// from inbox/ into the day folder and gets its receipt written there
// last: only the day folder sees that. Older day folders take nothing
// new, so they go unwatched, however long the archive.
func (f *Feed) watchAll() {
	root := f.reader.Root
	f.watch(root, Changed{All: true})
	f.watch(layout.Mailboxes(root), Changed{All: true})
	for _, name := range f.reader.Settings.mailboxNames() {
		dir := mailbox.Dir(root, name)
		f.watch(dir, Changed{Mailbox: one(name)})
		for _, sub := range []string{mailbox.InboxDir, mailbox.ProcessingDir, mailbox.DeadletterDir, mailbox.ArchiveDir} {
			f.watch(filepath.Join(dir, sub), Changed{Mailbox: one(name)})
		}
		if day := newestDay(filepath.Join(dir, mailbox.ArchiveDir)); day != "" {
			f.watch(day, Changed{Mailbox: one(name)})
		}
	}
	f.watch(devlog.Dir(root), Changed{})
	f.watch(projectboard.Dir(root), Changed{Board: true})
	f.watch(cursor.LockDir(root), Changed{Locks: true})
	f.watch(layout.Costs(root), Changed{Costs: true})
	if len(f.reader.Settings.Remote) > 0 {
		f.watch(filepath.Dir(hubseats.File(root)), Changed{Seats: true})
	}
}

// newestDay is the archive's last day folder (they sort by name), or "".
func newestDay(archive string) string {
	entries, _ := os.ReadDir(archive)
	for i := len(entries) - 1; i >= 0; i-- {
		if entries[i].IsDir() && !strings.HasPrefix(entries[i].Name(), ".") {
			return filepath.Join(archive, entries[i].Name())
		}
	}
	return ""
}

func (f *Feed) watch(dir string, ch Changed) {
	if _, ok := f.dirs[dir]; ok {
		return
	}
	if err := f.fsw.Add(dir); err == nil {
		f.dirs[dir] = ch
	}
}

// classify says what an event changes.
func (f *Feed) classify(ev fsnotify.Event) Changed {
	if _, watched := f.dirs[ev.Name]; watched && ev.Has(fsnotify.Remove|fsnotify.Rename) {
		delete(f.dirs, ev.Name) // the kernel dropped its watch; watch it again once it is back
	}
	if _, watched := f.dirs[ev.Name]; !watched && ev.Has(fsnotify.Create) {
		if fi, err := os.Lstat(ev.Name); err == nil && fi.IsDir() {
			f.watchAll() // watches the new folder if it is one of ours
		}
	}
	dir, name := filepath.Dir(ev.Name), filepath.Base(ev.Name)
	what, ok := f.dirs[dir]
	if !ok {
		return Changed{}
	}
	root := f.reader.Root
	switch {
	case dir == devlog.Dir(root):
		agent, isLog := strings.CutSuffix(name, layout.DevlogSuffix)
		if !isLog {
			return Changed{}
		}
		return Changed{Devlog: one(agent)}
	case what.Seats:
		if name != filepath.Base(hubseats.File(root)) {
			return Changed{} // the server's store and undeliverable messages
		}
		return what
	case what.All:
		switch {
		case name == f.reader.Settings.ConfigFile:
			return Changed{} // the configuration is read at start
		case name == layout.TokenFile, strings.HasPrefix(name, "."):
			// serve's own token, written as it starts, and temp files:
			// reading every mailbox again for them would only delay
			// the first page.
			return Changed{}
		}
		return what
	case strings.HasPrefix(name, "."):
		return Changed{} // temp files and markers; the rename that follows counts
	}
	if len(what.Mailbox) == 1 {
		for m := range what.Mailbox { // the one mailbox the folder is of
			return mailboxChange(mailbox.Dir(root, m), m, ev.Name)
		}
	}
	return what
}

// mailboxChange says what an event at path in the mailbox of name
// changes: the one file it names, so that only that file is read again;
// its status; or, when one of its folders came or went, all of it.
func mailboxChange(dir, name, path string) Changed {
	rel, err := filepath.Rel(dir, path)
	if err != nil {
		return Changed{Mailbox: one(name)}
	}
	rel = filepath.ToSlash(rel)
	switch rel {
	case mailbox.StatusJSON:
		return Changed{Status: one(name)}
	case mailbox.InboxDir, mailbox.ProcessingDir, mailbox.DeadletterDir, mailbox.ArchiveDir:
		return Changed{Mailbox: one(name)}
	case mailbox.InboxJSON, mailbox.InboxJSONLock:
		return Changed{Files: map[string][]string{name: {mailbox.InboxJSON}}}
	}
	if !strings.Contains(rel, "/") {
		return Changed{} // skip.json and the like: nothing the views show
	}
	return Changed{Files: map[string][]string{name: {rel}}}
}

// Run keeps the snapshot current until ctx ends.
func (f *Feed) Run(ctx context.Context) error {
	defer close(f.done)
	defer f.fsw.Close()
	clk := f.opts.Clock
	now := clk.Now()
	nextLiveness, nextRescan := now.Add(f.opts.Liveness), now.Add(f.opts.Rescan)
	var pending Changed
	var settle time.Time // zero: no burst of events is settling
	for {
		due := nextLiveness
		for _, t := range []time.Time{nextRescan, settle} {
			if !t.IsZero() && t.Before(due) {
				due = t
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case req := <-f.pages:
			req.reply <- f.reader.page(req.Page)
			continue
		case ev, ok := <-f.fsw.Events:
			if !ok {
				return errors.New("the file watcher stopped")
			}
			ch := f.classify(ev)
			if ch.Empty() {
				continue
			}
			pending.Merge(ch)
			if settle.IsZero() {
				settle = clk.Now().Add(f.opts.Settle)
			}
			continue
		case err, ok := <-f.fsw.Errors:
			if !ok {
				return errors.New("the file watcher stopped")
			}
			if errors.Is(err, fsnotify.ErrEventOverflow) {
				pending.Merge(Changed{All: true})
				settle = clk.Now().Add(f.opts.Settle)
			}
			continue
		case <-clk.At(due):
		}
		now := clk.Now()
		if !now.Before(nextLiveness) {
			pending.Merge(Changed{Liveness: true})
			nextLiveness = now.Add(f.opts.Liveness)
		}
		if !now.Before(nextRescan) {
			pending.Merge(Changed{All: true})
			nextRescan = now.Add(f.opts.Rescan)
		}
		settle = time.Time{}
		if pending.Empty() {
			continue
		}
		f.publish(f.reader.Read(pending, now))
		pending = Changed{}
	}
}

// publish makes s current if it differs from the current snapshot.
func (f *Feed) publish(s Snapshot) {
	data, err := json.Marshal(s)
	if err != nil {
		return // a Snapshot holds only strings, numbers and times
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if bytes.Equal(data, f.data) {
		return
	}
	f.snap, f.data = s, data
	f.seq++
	close(f.changed)
	f.changed = make(chan struct{})
}

// Current returns the current snapshot, its JSON, its sequence number and a
// channel closed when a newer one is published.
func (f *Feed) Current() (Snapshot, []byte, uint64, <-chan struct{}) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.snap, f.data, f.seq, f.changed
}
