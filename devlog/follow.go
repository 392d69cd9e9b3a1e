package devlog

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/agentctl/agentctl/internal/clock"
)

// Follower prints what is appended to a set of devlogs as it arrives, like
// `tail -F`: it keeps following a file that is renamed away and recreated,
// or truncated, and starts on files that do not exist yet.
//
// It watches the files' folders with fsnotify (a watch on the file itself is
// dropped when the file is replaced) and also looks on every tick, because
// events can be lost and never arrive on network folders. Text is written
// to Out as soon as its line is complete (at its newline), never half a
// line and never twice. What one read finds is written in one piece, so an
// entry appended in one write (as Append does) comes out whole, and with
// several files such entries never mix.
type Follower struct {
	Out io.Writer
	// Clock says when to look at every file even without an event, every
	// PollInterval; clock.System when nil.
	Clock clock.Clock
	// NoEvents turns fsnotify off, leaving only the looks every PollInterval.
	NoEvents bool

	files []*followed
}

// PollInterval is how often a Follower looks without events by default.
const PollInterval = time.Second

type followed struct {
	path    string
	f       *os.File
	info    os.FileInfo
	off     int64
	tail    []byte // the last bytes read, to notice a truncate-and-regrow
	pending []byte // read but not yet written: a line still being appended
}

// NewFollower starts following paths from their current ends. It returns,
// for each path, the size it starts from, so the caller can first show the
// last entries before that point without gap or overlap.
func NewFollower(out io.Writer, paths ...string) (*Follower, []int64) {
	fl := &Follower{Out: out}
	sizes := make([]int64, len(paths))
	for i, p := range paths {
		ff := &followed{path: p}
		if f, err := os.Open(p); err == nil {
			if st, err := f.Stat(); err == nil {
				ff.f, ff.info, ff.off = f, st, st.Size()
				sizes[i] = st.Size()
				if st.Size() > 0 {
					ff.tail = readTail(f, st.Size())
				}
			} else {
				f.Close()
			}
		}
		fl.files = append(fl.files, ff)
	}
	return fl, sizes
}

func readTail(f *os.File, off int64) []byte {
	n := min(off, 64)
	b := make([]byte, n)
	if _, err := f.ReadAt(b, off-n); err != nil {
		return nil
	}
	return b
}

// Run follows until ctx ends.
func (fl *Follower) Run(ctx context.Context) error {
	defer func() {
		for _, ff := range fl.files {
			if ff.f != nil {
				ff.f.Close()
			}
		}
	}()
	var events <-chan fsnotify.Event
	var errs <-chan error
	if !fl.NoEvents {
		w, err := fsnotify.NewWatcher()
		if err == nil {
			defer w.Close()
			dirs := map[string]bool{}
			for _, ff := range fl.files {
				dir := filepath.Dir(ff.path)
				if !dirs[dir] {
					dirs[dir] = true
					// A folder that cannot be watched (missing, or a
					// file system without events) is still polled.
					w.Add(dir)
				}
			}
			events, errs = w.Events, w.Errors
		}
	}
	clk := clock.Or(fl.Clock)
	for _, ff := range fl.files { // catch up on anything since NewFollower
		if err := fl.check(ff); err != nil {
			return err
		}
	}
	look := clock.After(clk, PollInterval)
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev := <-events:
			for _, ff := range fl.files {
				if filepath.Clean(ev.Name) == filepath.Clean(ff.path) {
					if err := fl.check(ff); err != nil {
						return err
					}
				}
			}
		case <-errs: // overflow: events were lost, so look at everything
			for _, ff := range fl.files {
				if err := fl.check(ff); err != nil {
					return err
				}
			}
		case <-look:
			for _, ff := range fl.files {
				if err := fl.check(ff); err != nil {
					return err
				}
			}
			look = clock.After(clk, PollInterval)
		}
	}
}

// check reads whatever is new in one followed file, switching to a new file
// under the same name and starting over after a truncation.
func (fl *Follower) check(ff *followed) error {
	st, err := os.Stat(ff.path)
	if ff.f != nil && err != nil {
		// Renamed away or removed: keep reading the old file, which a
		// writer may still append to, until a new one takes the name.
		return fl.read(ff)
	}
	if ff.f != nil && !os.SameFile(st, ff.info) {
		// A new file has the name: finish the old one, then switch.
		if err := fl.read(ff); err != nil {
			return err
		}
		ff.f.Close()
		// A last line the old file never finished is not the start of
		// the new file's first line.
		ff.f, ff.info, ff.off, ff.tail, ff.pending = nil, nil, 0, nil, nil
	}
	if err != nil {
		return nil // not there yet; a later event or tick brings it
	}
	if ff.f == nil {
		f, err := os.Open(ff.path)
		if err != nil {
			return nil
		}
		ff.f, ff.info, ff.off, ff.tail = f, st, 0, nil
	}
	return fl.read(ff)
}

// read appends the file's new bytes to pending and writes out the complete
// lines among them.
func (fl *Follower) read(ff *followed) error {
	buf := make([]byte, 64*1024)
	for {
		// Read again the last bytes already seen along with the new ones:
		// if they differ, the file was truncated (and perhaps regrown) and
		// is read again from the top. One read sees one state of the file.
		n, err := ff.f.ReadAt(buf, ff.off-int64(len(ff.tail)))
		if err != nil && err != io.EOF {
			return fmt.Errorf("cannot read devlog: %w", err)
		}
		got := buf[:n]
		if len(got) < len(ff.tail) || !bytes.Equal(got[:len(ff.tail)], ff.tail) {
			ff.off, ff.tail, ff.pending = 0, nil, nil
			continue
		}
		fresh := got[len(ff.tail):]
		if len(fresh) == 0 {
			break
		}
		// A read racing a truncate-and-append can return old bytes then
		// new ones; after it, the seen bytes must still be in place.
		check := make([]byte, len(ff.tail))
		if m, _ := ff.f.ReadAt(check, ff.off-int64(len(ff.tail))); m < len(check) || !bytes.Equal(check, ff.tail) {
			ff.off, ff.tail, ff.pending = 0, nil, nil
			continue
		}
		ff.pending = append(ff.pending, fresh...)
		ff.off += int64(len(fresh))
		ff.tail = append(ff.tail, fresh...)
		if len(ff.tail) > 64 {
			ff.tail = append([]byte(nil), ff.tail[len(ff.tail)-64:]...)
		}
	}
	return fl.flush(ff)
}

// flush writes pending up to the end of its last complete line. A line
// without its newline yet stays pending: it may still be being written.
func (fl *Follower) flush(ff *followed) error {
	cut := bytes.LastIndexByte(ff.pending, '\n') + 1
	if cut == 0 {
		return nil
	}
	if _, err := fl.Out.Write(ff.pending[:cut]); err != nil {
		return err
	}
	ff.pending = append([]byte(nil), ff.pending[cut:]...)
	return nil
}
