package mailbox

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/agentctl/agentctl/internal/clock"
)

// Change is a batch of things to look at again: names in inbox/ (or
// InboxJSON), or a full rescan when events may have been lost.
type Change struct {
	Names  []string
	Rescan bool
}

// WatchOptions configures a Watcher.
type WatchOptions struct {
	// Poll replaces file events by a rescan every PollInterval, for network
	// and synced folders where events never arrive.
	Poll         bool
	PollInterval time.Duration
	// RescanInterval asks for a full rescan this often even with events on.
	RescanInterval time.Duration
	// Extra are the places outside the mailbox that old writers write to
	// (Options.Watch and Options.Shared): their folders are watched too,
	// and a change there is reported by its absolute path.
	Extra []string
	// Clock times the rescans; clock.System when nil.
	Clock clock.Clock
}

// extraDirs are the folders holding the extra places: a folder itself, the
// folder of a file or of a glob's last element. A glob's folders are the
// ones it matches now at every level ("agent_workspaces", then each
// "agent_workspaces/Agent-n", then each ".../inbox"), so that a folder an
// old writer makes for a new agent is seen as it is made. Folders that do
// not exist (yet) are left to the periodic rescan.
func extraDirs(patterns []string) []string {
	var dirs []string
	add := func(dir string) {
		if fi, err := os.Stat(dir); err == nil && fi.IsDir() && !slices.Contains(dirs, dir) {
			dirs = append(dirs, dir)
		}
	}
	for _, p := range patterns {
		if strings.ContainsAny(p, "*?[") {
			for _, d := range globDirs(p) {
				add(d)
			}
			continue
		}
		dir := p
		if fi, err := os.Stat(p); err != nil || !fi.IsDir() {
			dir = filepath.Dir(p)
		}
		add(dir)
	}
	return dirs
}

// globDirs lists the folders a glob matches at each of its levels from
// the last one without wildcards.
func globDirs(pattern string) []string {
	parts := strings.Split(filepath.Clean(pattern), string(filepath.Separator))
	first := slices.IndexFunc(parts, func(s string) bool { return strings.ContainsAny(s, "*?[") })
	if first < 0 {
		return nil
	}
	join := func(n int) string {
		j := strings.Join(parts[:n], string(filepath.Separator))
		if j == "" {
			return string(filepath.Separator)
		}
		return j
	}
	dirs := []string{join(first)}
	for n := first + 1; n <= len(parts); n++ {
		matches, _ := filepath.Glob(join(n))
		dirs = append(dirs, matches...)
	}
	return dirs
}

// Watcher turns file events in a mailbox into Changes. One goroutine owns
// all of its state; Close cancels it and waits for it.
type Watcher struct {
	C      <-chan Change
	cancel context.CancelFunc
	wg     sync.WaitGroup
	fsw    *fsnotify.Watcher
}

// Watch starts watching the mailbox. It watches folders, never files: a
// watch on a file is lost when an editor replaces it.
func Watch(m *Mailbox, opts WatchOptions) (*Watcher, error) {
	if opts.PollInterval <= 0 {
		opts.PollInterval = time.Second
	}
	if opts.RescanInterval <= 0 {
		opts.RescanInterval = 30 * time.Second
	}
	ctx, cancel := context.WithCancel(context.Background())
	out := make(chan Change)
	w := &Watcher{C: out, cancel: cancel}
	var events <-chan fsnotify.Event
	var errs <-chan error
	interval := opts.RescanInterval
	if opts.Poll {
		interval = min(opts.PollInterval, opts.RescanInterval)
	} else {
		fsw, err := fsnotify.NewWatcher()
		if err != nil {
			cancel()
			return nil, fmt.Errorf("cannot watch %s: %w", m.Dir, err)
		}
		for _, dir := range append([]string{m.Dir, m.path(InboxDir)}, extraDirs(opts.Extra)...) {
			if err := fsw.Add(dir); err != nil {
				fsw.Close()
				cancel()
				return nil, fmt.Errorf("cannot watch %s: %w", dir, err)
			}
		}
		w.fsw, events, errs = fsw, fsw.Events, fsw.Errors
	}
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		w.loop(ctx, m, opts.Extra, out, events, errs, clock.Or(opts.Clock), interval)
	}()
	return w, nil
}

// layoutRecheck is how long the watcher waits, after the last event of a
// mailbox folder removed or made, before it asks for the rescan that
// repairs or reports it.
const layoutRecheck = 250 * time.Millisecond

// loop batches what happened while the consumer was busy, so a burst of
// events for one file costs one look: that is the debounce, and it adds no
// delay when the consumer is idle.
func (w *Watcher) loop(ctx context.Context, m *Mailbox, patterns []string, out chan<- Change, events <-chan fsnotify.Event, errs <-chan error, clk clock.Clock, interval time.Duration) {
	inbox := m.path(InboxDir)
	extra := extraDirs(patterns)
	rescan := clock.After(clk, interval)
	var batch Change
	seen := map[string]bool{}
	var recheck <-chan time.Time
	for {
		var send chan<- Change
		if batch.Rescan || len(batch.Names) > 0 {
			send = out
		}
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-events:
			if !ok {
				events = nil
				continue
			}
			dir, name := filepath.Dir(ev.Name), filepath.Base(ev.Name)
			switch {
			case ev.Name == m.Dir || dir == m.Dir && slices.Contains(layoutDirs, name):
				// A folder of the mailbox (or the mailbox) was removed or
				// made again: the scan repairs or reports it, and a new
				// inbox/ needs a new watch, its old one died with it.
				// The scan waits until the folders have been still for
				// layoutRecheck: rm -r removes a mailbox's folders one by
				// one before the mailbox, and a folder repaired meanwhile
				// would make it fail ("directory not empty"), so that the
				// runner fought the person removing its agent.
				recheck = clock.After(clk, layoutRecheck)
				if ev.Name == inbox && ev.Has(fsnotify.Create) && w.fsw != nil {
					w.fsw.Add(inbox) // fails only if it is gone again; the next event says so
				}
			case (dir == inbox || dir == m.Dir && name == InboxJSON) && !seen[name]:
				seen[name] = true
				batch.Names = append(batch.Names, name)
			case slices.Contains(extra, dir) && ev.Has(fsnotify.Create) && isDir(ev.Name):
				// A folder made where a glob looks (a new agent's): watch
				// what the globs match now, and look at all of it, for
				// what was written into it before its watch was up.
				for _, d := range extraDirs(patterns) {
					if !slices.Contains(extra, d) && w.fsw != nil && w.fsw.Add(d) == nil {
						extra = append(extra, d)
					}
				}
				batch.Rescan = true
			case slices.Contains(extra, dir) && !seen[ev.Name]:
				// Reported by absolute path: the consumer tells it from
				// a name in inbox/ by that.
				abs, err := filepath.Abs(ev.Name)
				if err == nil {
					seen[ev.Name] = true
					batch.Names = append(batch.Names, abs)
				}
			}
		case _, ok := <-errs:
			if !ok {
				errs = nil
				continue
			}
			// An error (typically fsnotify.ErrEventOverflow) means events
			// were dropped: only a rescan can tell what changed.
			batch.Rescan = true
		case <-rescan:
			rescan = clock.After(clk, interval)
			batch.Rescan = true
		case <-recheck:
			recheck = nil
			batch.Rescan = true
		case send <- batch:
			batch = Change{}
			clear(seen)
		}
	}
}

// Close stops the watcher and waits for its goroutine.
func (w *Watcher) Close() error {
	w.cancel()
	w.wg.Wait()
	if w.fsw != nil {
		return w.fsw.Close()
	}
	return nil
}

func isDir(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.IsDir()
}
