package intake

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/agentctl/agentctl/internal/atomicfile"
	"github.com/agentctl/agentctl/internal/layout"
	"github.com/agentctl/agentctl/internal/lockfile"
	"github.com/agentctl/agentctl/mailbox"
	"github.com/agentctl/agentctl/mailbox/dreamos"
)

// A watched place that is not taken (Options.Take) is another program's,
// often a git checkout: nothing in it is ever changed, moved, removed or
// created. What was delivered from it is remembered instead, in the
// mailbox's WatchedDir: per file, its size, time and digest, and for an
// inbox.json the digests of its entries. An unchanged file is delivered
// once, across restarts; a file whose content changed is a new message
// whose id is derived from its path and new bytes, so a delivery repeated
// after a crash, before the memory was written, is a duplicate.

// WatchedDir keeps what each watched file held when it was delivered.
const WatchedDir = layout.WatchedDir

// watchedState is what was delivered from one watched file.
type watchedState struct {
	Path    string   `json:"path"`
	Size    int64    `json:"size"`
	ModTime int64    `json:"mod_time"` // unix nanoseconds
	Digest  string   `json:"digest"`
	Entries []string `json:"entries,omitempty"` // inbox.json: digests of the entries delivered
}

// Digest names bytes in the memory of watched files.
func Digest(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:16])
}

func watchedPath(mailboxDir, path string) string {
	sum := sha256.Sum256([]byte(path))
	return filepath.Join(mailboxDir, WatchedDir, hex.EncodeToString(sum[:])[:24]+layout.RecordSuffix)
}

func readWatched(mailboxDir, path string) (watchedState, bool) {
	data, err := os.ReadFile(watchedPath(mailboxDir, path))
	var st watchedState
	if err != nil || json.Unmarshal(data, &st) != nil || st.Path != path {
		return watchedState{}, false
	}
	return st, true
}

func writeWatched(mailboxDir string, st watchedState) error {
	if err := atomicfile.MkdirAll(filepath.Join(mailboxDir, WatchedDir)); err != nil {
		return fmt.Errorf("cannot remember what %s held: %w", st.Path, err)
	}
	data, _ := json.Marshal(st)
	if err := atomicfile.WriteFile(watchedPath(mailboxDir, st.Path), append(data, '\n')); err != nil {
		return fmt.Errorf("cannot remember what %s held: %w", st.Path, err)
	}
	return nil
}

// unchanged reports a file seen before with the same size and time: not
// read again.
func (st watchedState) unchanged(fi fs.FileInfo) bool {
	return st.Path != "" && st.Size == fi.Size() && st.ModTime == fi.ModTime().UnixNano()
}

// RememberWatched records that the file at path, holding data, was dealt
// with (delivered, archived as history, or not a message), so that the
// runner of the agent whose mailbox folder is mailboxDir, watching it,
// does not deliver it again. migrate calls it for what it imported from
// the places it adds to the watch lists.
func RememberWatched(mailboxDir, path string, fi fs.FileInfo, data []byte) error {
	st := watchedState{Path: path, Size: fi.Size(), ModTime: fi.ModTime().UnixNano(), Digest: Digest(data)}
	if filepath.Base(path) == mailbox.InboxJSON {
		entries, _, err := dreamos.InboxJSONEntries(data)
		if err == nil {
			for _, e := range entries {
				st.Entries = append(st.Entries, Digest(CanonicalEntry(e)))
			}
		}
	}
	return writeWatched(mailboxDir, st)
}

// ingestReadOnly delivers a message file of a place that is not taken,
// if its content is new.
func (in *Intake) ingestReadOnly(path string, fi fs.FileInfo, shared bool, now time.Time) error {
	st, known := readWatched(in.mb.Dir, path)
	if known && st.unchanged(fi) {
		in.settling.Forget(path)
		return nil
	}
	remember := func(digest string) error {
		return writeWatched(in.mb.Dir, watchedState{Path: path, Size: fi.Size(), ModTime: fi.ModTime().UnixNano(), Digest: digest})
	}
	if fi.Size() > in.store.MaxMessageBytes {
		in.emit("unreadable", "", path, fmt.Sprintf("it is %d bytes, over the %d-byte limit for one message; left where it is", fi.Size(), in.store.MaxMessageBytes))
		return remember("")
	}
	data, err := mailbox.ReadRegular(path, fi)
	if errors.Is(err, mailbox.ErrChanged) || errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		in.emit("unreadable", "", path, err.Error())
		return nil
	}
	digest := Digest(data)
	if known && st.Digest == digest {
		in.settling.Forget(path)
		return remember(digest) // touched, not changed
	}
	if !dreamos.IsCompleteJSON(data) && !in.settling.Settled(path, fi, now) {
		return nil
	}
	in.settling.Forget(path)
	msg, err := in.decodeExtra(data, path, fi.ModTime(), shared)
	if errors.Is(err, errNotMine) {
		return remember(digest)
	}
	if err == nil {
		err = handledError(msg)
	}
	var u *unclearError
	if (err == nil || errors.As(err, &u)) && known && st.Digest != "" {
		// The same file with new content: a new message, whatever id
		// the old writer kept in it.
		if msg.ID != "" {
			msg.Meta["dreamos_id"] = msg.ID
		}
		msg.ID = dreamos.DerivedID(data, path)
		if u != nil {
			u.msg = msg
		}
	}
	if err != nil {
		name := fmt.Sprintf("%s-%s", digest[:12], filepath.Base(path))
		if err := in.refuse(mailbox.Letter{Name: name, Data: data, Origin: path}, err, now); err != nil {
			return err
		}
	} else if err := in.deliverExtra(msg, path); err != nil {
		return err
	}
	return remember(digest)
}

// ingestReadOnlyInboxJSON delivers the entries of a watched inbox.json
// that is not taken and that were not delivered before; in a shared place
// ("agent_mailboxes/*/inbox.json") only those for this agent, the folder
// saying whom an entry that names no one is for. It never writes
// the file; it reads it under the writers' lock only when the lock file
// is there already (opened read-only: never created), and otherwise
// takes only whole JSON, or a file long unchanged.
func (in *Intake) ingestReadOnlyInboxJSON(path string, fi fs.FileInfo, shared bool, now time.Time) error {
	st, known := readWatched(in.mb.Dir, path)
	if known && st.unchanged(fi) || in.tooLarge(path, fi) {
		return nil
	}
	var data []byte
	var err error
	if lf, lerr := os.Lstat(path + ".lock"); lerr == nil && lf.Mode().IsRegular() {
		lock := lockfile.Open(path + ".lock")
		if _, lerr := lockfile.Take(context.Background(), lock, lockfile.Wait{For: in.opts.LockWait, Poll: readLockPoll, Shared: true, Clock: in.opts.Clock}); lerr != nil {
			_ = lock.Close()
			in.settling.Restart(path, fi, now) // a writer is at it: Tick looks again
			return nil
		}
		data, err = mailbox.ReadRegular(path, fi)
		_ = lock.Close()
	} else {
		data, err = mailbox.ReadRegular(path, fi)
	}
	if err != nil {
		return nil // changed or gone meanwhile: its own event follows
	}
	if !dreamos.IsCompleteJSON(data) && !in.settling.Settled(path, fi, now) {
		return nil
	}
	in.settling.Forget(path)
	next := watchedState{Path: path, Size: fi.Size(), ModTime: fi.ModTime().UnixNano(), Digest: Digest(data)}
	entries, tail, err := dreamos.InboxJSONEntries(data)
	if err != nil {
		in.emit("unreadable", "", path, err.Error()+"; left where it is")
		return writeWatched(in.mb.Dir, next)
	}
	if tail > 0 {
		if err := in.keepTail(path, data, tail, len(entries), shared, st, &next, now); err != nil {
			return err
		}
	}
	// Entries are known by their bytes, as many times as they were seen:
	// a second entry like the first (a script that drops the same
	// id-less message again) is a message of its own.
	delivered := map[string]int{}
	for _, d := range st.Entries {
		delivered[d]++
	}
	found := map[string]int{}
	for i, raw := range entries {
		raw = CanonicalEntry(raw)
		d := Digest(raw)
		next.Entries = append(next.Entries, d)
		if found[d]++; found[d] <= delivered[d] {
			continue
		}
		// Named by the file alone: an entry's derived id depends on its
		// bytes, not on where in the array it sits today.
		name := fmt.Sprintf("%s[%d]", path, i)
		msg, err := in.decodeExtra(raw, path, fi.ModTime(), shared)
		if errors.Is(err, errNotMine) {
			continue
		}
		if err == nil && found[d] > 1 && dreamos.IsDerivedID(msg.ID) {
			msg.ID = dreamos.DerivedID(raw, fmt.Sprintf("%s#%d", path, found[d]))
		}
		if err == nil {
			err = handledError(msg)
		}
		if err != nil {
			if err := in.refuse(mailbox.Letter{Name: d[:12] + "-" + mailbox.InboxJSON, Data: raw, Origin: name}, err, now); err != nil {
				return err
			}
			continue
		}
		if err := in.deliverExtra(msg, name); err != nil {
			return err
		}
	}
	return writeWatched(in.mb.Dir, next)
}

// keepTail dead-letters, once, what follows the array of a watched
// inbox.json: the stale end of an interrupted rewrite, which may still
// hold whole messages its writer meant to keep. Nothing is read out of it;
// the person decides, as for the runtime's own inbox.json. In a shared
// place only the intake charged with what no agent takes keeps it.
func (in *Intake) keepTail(path string, data []byte, at, entries int, shared bool, st watchedState, next *watchedState, now time.Time) error {
	tail := data[at:]
	d := Digest(tail)
	next.Entries = append(next.Entries, d)
	if slices.Contains(st.Entries, d) || shared && !in.opts.SharedDeadletters {
		return nil
	}
	reason := fmt.Sprintf("data after the end of the JSON array at byte %d of %s, left by an interrupted rewrite, which may hold messages its writer meant to keep; the %d entries before it are read one by one, and the file is left as it is", at, path, entries)
	return in.deadletter(mailbox.Letter{Name: d[:12] + "-" + mailbox.InboxJSON + "-tail", Data: tail, Origin: path, Reason: reason}, now)
}

// CanonicalEntry is an entry of an inbox.json in one spelling (keys
// sorted, no white space), so that an entry is known again when its writer
// rewrites the whole file with another indentation; entries without an id
// get theirs derived from it. What is not JSON is left as it is.
func CanonicalEntry(raw []byte) []byte {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return raw
	}
	out, err := json.Marshal(v)
	if err != nil {
		return raw
	}
	return out
}

// forgetGone drops the memory of watched files that no longer exist, so
// that it holds no more than the places hold.
func (in *Intake) forgetGone() {
	dir := in.path(WatchedDir)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		if atomicfile.IsTemp(e.Name()) {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		var st watchedState
		if err != nil || json.Unmarshal(data, &st) != nil {
			continue
		}
		if _, err := os.Lstat(st.Path); errors.Is(err, fs.ErrNotExist) {
			_ = os.Remove(filepath.Join(dir, e.Name()))
		}
	}
}

// readLockPoll is how often a reader of a watched inbox.json tries its
// writers' lock again.
const readLockPoll = 10 * time.Millisecond
