package intake

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/agentctl/agentctl/internal/agentname"
	"github.com/agentctl/agentctl/internal/atomicfile"
	"github.com/agentctl/agentctl/internal/layout"
	"github.com/agentctl/agentctl/mailbox"
	"github.com/agentctl/agentctl/mailbox/dreamos"
)

// Places outside the mailbox where old writers that are still running keep
// writing (Options.Watch and Options.Shared), read so that they need no
// change:
//
//   - any *.json, *.msg or *.md file there is one message, an inbox.json
//     a list of them; a place is only read, and what was delivered from
//     it remembered (watched.go), unless it is one of Options.Take: then a
//     message file is removed once delivered, so it is in one place only,
//     and an inbox.json is taken as our own is, under its writers' lock
//     (extrainboxjson.go), and given back empty in its writer's shape;
//   - a *.txt file there is one to which a writer appends Markdown
//     messages: it is read message by message as it grows and never
//     changed; how far it has been read is kept in .offsets/, and the last
//     message is taken only once the file has settled;
//   - in a shared place, a message is taken only by the intake of the
//     agent it is addressed to (by its content, else by the agent folder
//     or file it sits in, "agent_mailboxes/Agent-3/inbox.json",
//     "inboxes/Agent-3.txt", else by its file name), so that one glob
//     serves every agent, those whose folders the old writers make later
//     too; an inbox.json there is read, never emptied, unless the place is
//     taken: then only the intake of the agent whose folder holds it
//     takes it;
//     a broadcast ("to": "all"), and what no agent can take, are handled by
//     the intake with Options.SharedDeadletters set: it delivers a copy
//     of a broadcast to every agent but the sender and dead-letters the
//     rest; the others leave both alone.
//
// Names of extra files are absolute paths, never names in inbox/.

// OffsetsDir keeps, per appended file, how far it has been read.
const OffsetsDir = layout.OffsetsDir

// notMessages are the files of the old system's folders that are no messages.
var notMessages = []string{"status.json", "claim.json", "heartbeat.json", "cursor_agent_coords.json"}

// place says of a file of the extra places whether it is in a shared one,
// and whether its place may be emptied (Options.Take).
type place struct{ shared, take bool }

// extraFiles lists the files the extra places hold now. A place is a
// folder (its files), a glob, or a file.
func (in *Intake) extraFiles() (map[string]place, error) {
	out := map[string]place{}
	add := func(pattern string, shared bool) error {
		take := slices.Contains(in.opts.Take, pattern)
		var paths []string
		if strings.ContainsAny(pattern, "*?[") {
			var err error
			if paths, err = filepath.Glob(pattern); err != nil {
				return fmt.Errorf("cannot watch %s: %w", pattern, err)
			}
		} else if fi, err := os.Stat(pattern); err == nil && fi.IsDir() {
			entries, err := os.ReadDir(pattern)
			if err != nil {
				// Another program's folder: say so and go on with the rest.
				in.emit("unreadable", "", pattern, err.Error())
				return nil
			}
			for _, e := range entries {
				if p := filepath.Join(pattern, e.Name()); !in.isLink(p, e) {
					paths = append(paths, p)
				}
			}
		} else {
			paths = []string{pattern} // a file, perhaps not written yet
		}
		if strings.ContainsAny(pattern, "*?[") {
			// A glob may name folders ("agent_workspaces/*/inbox"): their
			// files, in every folder it matches now, agents' folders made
			// after it was written included. What it matches through a
			// link is left alone: anyone who can write in the place could
			// otherwise point it at files elsewhere, to be read into a
			// prompt and, taken, removed.
			var files []string
			for _, p := range paths {
				if in.throughLink(globBase(pattern), p) {
					continue
				}
				if fi, err := os.Stat(p); err == nil && fi.IsDir() {
					entries, err := os.ReadDir(p)
					if err != nil {
						in.emit("unreadable", "", p, err.Error())
						continue
					}
					for _, e := range entries {
						if f := filepath.Join(p, e.Name()); !in.isLink(f, e) {
							files = append(files, f)
						}
					}
					continue
				}
				files = append(files, p)
			}
			paths = files
		}
		for _, p := range paths {
			name := filepath.Base(p)
			if mailbox.Ignored(name) || strings.HasPrefix(name, ".") || slices.Contains(notMessages, strings.ToLower(name)) || strings.HasSuffix(name, ".lock") {
				continue
			}
			if HandledName(name) || HistoryName(name) != "" || DocumentName(name) {
				continue // handled, kept aside, or written for people: no work
			}
			if fi, err := os.Lstat(p); err == nil && !fi.IsDir() && mailbox.MessageExt(strings.ToLower(filepath.Ext(name))) {
				out[p] = place{shared: out[p].shared || shared, take: out[p].take || take}
			}
		}
		return nil
	}
	for _, p := range in.opts.Watch {
		if err := add(p, false); err != nil {
			return nil, err
		}
	}
	for _, p := range in.opts.Shared {
		if err := add(p, true); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// globBase is the folder of pattern above its first component with a
// wildcard: what the person wrote, not what the glob found.
func globBase(pattern string) string {
	base := pattern
	for strings.ContainsAny(base, "*?[") {
		base = filepath.Dir(base)
	}
	return base
}

// throughLink reports whether path, matched by a glob below base, is or
// passes through a symbolic link below base, and says so once.
func (in *Intake) throughLink(base, path string) bool {
	for p := path; len(p) > len(base) && strings.HasPrefix(p, base); p = filepath.Dir(p) {
		fi, err := os.Lstat(p)
		if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
			continue
		}
		in.sayLinked(path, p)
		return true
	}
	return false
}

// isLink reports whether the entry at path of a watched folder is a
// symbolic link, and says so once.
func (in *Intake) isLink(path string, e fs.DirEntry) bool {
	if e.Type()&fs.ModeSymlink == 0 {
		return false
	}
	in.sayLinked(path, path)
	return true
}

// sayLinked says, once per path, that path is left alone for the link at
// link.
func (in *Intake) sayLinked(path, link string) {
	if in.linked[path] {
		return
	}
	if in.linked == nil {
		in.linked = map[string]bool{}
	}
	in.linked[path] = true
	in.emit("unreadable", "", path, fmt.Sprintf("%s is a symbolic link, which is never followed out of a watched place; left alone", link))
}

// scanExtra looks at every file of the extra places.
func (in *Intake) scanExtra(now time.Time) error {
	files, err := in.extraFiles()
	if err != nil {
		return err
	}
	paths := make([]string, 0, len(files))
	for p := range files {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	for _, p := range paths {
		if in.stopped() {
			return nil
		}
		if err := in.ingestExtra(p, files[p], now); err != nil {
			return err
		}
	}
	in.forgetGone()
	return nil
}

// noticeExtra looks at one path a file event named, if it is one of the
// extra places' files.
func (in *Intake) noticeExtra(path string, now time.Time) error {
	files, err := in.extraFiles()
	if err != nil {
		return err
	}
	pl, ok := files[path]
	if !ok {
		in.settling.Forget(path)
		return nil
	}
	return in.ingestExtra(path, pl, now)
}

func (in *Intake) ingestExtra(path string, pl place, now time.Time) error {
	shared := pl.shared
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		in.settling.Forget(path)
		return nil
	}
	if err != nil {
		in.emit("unreadable", "", path, err.Error()) // another program's file: never a reason to stop
		return nil
	}
	if !fi.Mode().IsRegular() {
		return nil // a link or device another program put there: not ours to move
	}
	if strings.EqualFold(filepath.Ext(path), ".txt") {
		return in.ingestAppended(path, fi, shared, now)
	}
	if filepath.Base(path) == mailbox.InboxJSON {
		return in.ingestExtraInboxJSON(path, fi, pl, now)
	}
	if !pl.take {
		return in.ingestReadOnly(path, fi, shared, now)
	}
	if fi.Size() > in.store.MaxMessageBytes {
		if shared && !in.opts.SharedDeadletters {
			return nil
		}
		// Moved whole, never read: on another file system it stays put.
		reason := fmt.Sprintf("it is %d bytes, over the %d-byte limit for one message", fi.Size(), in.store.MaxMessageBytes)
		err := in.deadletter(mailbox.Letter{Name: now.UTC().Format("20060102T150405Z") + "-" + filepath.Base(path), Fresh: true,
			From: path, Origin: path, Reason: reason}, now)
		if err != nil {
			in.emit("unreadable", "", path, reason+"; left where it is: "+err.Error())
		}
		return nil
	}
	data, err := mailbox.ReadRegular(path, fi)
	if errors.Is(err, mailbox.ErrChanged) || errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		in.emit("unreadable", "", path, err.Error())
		return nil
	}
	if !dreamos.IsCompleteJSON(data) && !in.settling.Settled(path, fi, now) {
		return nil
	}
	in.settling.Forget(path)
	msg, err := in.decodeExtra(data, path, fi.ModTime(), shared)
	if errors.Is(err, errNotMine) {
		return nil
	}
	if err == nil {
		err = handledError(msg)
	}
	if err != nil {
		return in.deadletterExtra(path, fi, data, err, now)
	}
	if err := in.deliverExtra(msg, path); err != nil {
		return err
	}
	if _, err := mailbox.RemoveRead(path, fi, data); err != nil {
		return fmt.Errorf("cannot remove ingested %s: %w", path, err)
	}
	return nil
}

// ingestExtraInboxJSON takes in an inbox.json of the extra places. One to
// be taken is emptied only by the runner of the agent whose folder holds
// it, as its old reader did (in a place of the agent's own, by its
// runner). One not to be taken, or in a shared folder that names no
// agent, so no one's to take, is read by each runner for its agent's
// entries, and left as it is.
func (in *Intake) ingestExtraInboxJSON(path string, fi fs.FileInfo, pl place, now time.Time) error {
	owner := ""
	if pl.shared {
		owner = in.placeAgent(path)
	}
	switch {
	case pl.take && (!pl.shared || owner == in.mb.Agent):
		return in.ingestWatchedInboxJSON(path, now)
	case pl.take && owner != "":
		return nil // another agent's: its runner takes it
	}
	return in.ingestReadOnlyInboxJSON(path, fi, pl.shared, now)
}

// deliverExtra delivers a message found outside the mailbox: to this
// agent, or, for a broadcast ("to": "all") in a shared place, a copy to
// every agent but its sender, as 'agentctl send --to all' does.
func (in *Intake) deliverExtra(msg mailbox.Message, from string) error {
	if msg.To != "all" {
		return in.c.DeliverFound(msg, from)
	}
	for _, agent := range in.store.Known {
		if strings.EqualFold(agent, msg.From) {
			continue
		}
		one := msg
		one.To = agent
		if agent == in.mb.Agent {
			if err := in.c.DeliverFound(one, from); err != nil {
				return err
			}
			continue
		}
		other, err := mailbox.Open(in.mb.Root, agent)
		if err == nil {
			err = other.Deliver(one)
		}
		if err != nil && !errors.Is(err, mailbox.ErrDuplicate) {
			return err
		}
	}
	return nil
}

// HandledStatus is the status a Dream.OS writer gave a message it was done
// with ("delivered", "completed", ...), or "". Such messages found in the
// old system's places are not worked again.
func HandledStatus(msg mailbox.Message) string {
	status, _ := msg.Meta["status"].(string)
	if q, ok := msg.Meta["queue"].(map[string]any); ok && status == "" {
		status, _ = q["status"].(string)
	}
	switch strings.ToLower(status) {
	case "delivered", "processed", "completed", "complete", "done", "read", "archived", "acknowledged", "handled":
		return status
	}
	return ""
}

// handledError dead-letters, rather than works again, what the old system
// had handled already: 'agentctl retry' brings it back if it was not.
func handledError(msg mailbox.Message) error {
	if s := HandledStatus(msg); s != "" {
		return &handled{status: s, id: msg.ID}
	}
	return nil
}

// handled is a message the old system had handled already.
type handled struct{ status, id string }

func (h *handled) Error() string {
	return fmt.Sprintf("the old system had handled it already (status %s)", h.status)
}

// HandledName reports a message file its old reader renamed once it had
// handled it: "INBOX_MESSAGE_..._processed.md", "..._read.md".
func HandledName(name string) bool {
	stem := strings.ToLower(strings.TrimSuffix(name, filepath.Ext(name)))
	for _, suffix := range []string{"_processed", "_read", "_done", "_archived", ".processed"} {
		if strings.HasSuffix(stem, suffix) {
			return true
		}
	}
	return false
}

// isWatchedSpool tells the spool of a watched inbox.json ("x<hash>.json")
// from one of our own ("<time>-<random>.json").
func isWatchedSpool(name string) bool { return strings.HasPrefix(name, "x") }

// errNotMine: a shared place's message for another agent, left for it.
var errNotMine = errors.New("addressed to another agent")

// recipientInName finds the recipient a Dream.OS file name spells:
// "..._Agent-5_to_Agent-1.json", "response_1755248908737_Agent-1.json".
var recipientInName = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)(?:^|[_\-.])to[_\-.]([a-z][a-z0-9]*[-_]?\d+)|_([a-z]+-\d+)\.[a-z]+$`)
})

// RecipientInName is the recipient a Dream.OS message file's name spells,
// or "": "msg_..._Agent-5_to_Agent-1.json" and
// "response_1755248908737_Agent-1.json" are for Agent-1.
func RecipientInName(path string) string {
	if i := strings.LastIndexByte(path, '@'); i > 0 && strings.Trim(path[i+1:], "0123456789") == "" {
		path = path[:i] // a message inside an appended file: path@offset
	}
	p := recipientInName().FindStringSubmatch(filepath.Base(path))
	if p == nil {
		return ""
	}
	return p[1] + p[2]
}

// AgentFolder is the agent whose folder holds the file at path in the old
// per-agent layouts (".../Agent-3/x.json", ".../Agent-3/inbox/x.md"), or
// "": in a shared place such as "agent_workspaces/*/inbox" the folder says
// whom a message that names no one is for, as it did for its old reader.
func AgentFolder(path string) string {
	if i := strings.LastIndexByte(path, '@'); i > 0 && strings.Trim(path[i+1:], "0123456789") == "" {
		path = path[:i]
	}
	dir := filepath.Dir(path)
	if strings.EqualFold(filepath.Base(dir), "inbox") {
		dir = filepath.Dir(dir)
	}
	if name := filepath.Base(dir); agentFolder().MatchString(name) {
		return name
	}
	return ""
}

// AgentFile is the agent an appended inbox file of the old layouts is
// named after ("inboxes/Agent-3.txt", "inboxes/Agent-4_incoming.txt"), or
// "": in a shared glob such as "inboxes/Agent*.txt" the name says whom a
// message that names no one is for.
func AgentFile(path string) string {
	if i := strings.LastIndexByte(path, '@'); i > 0 && strings.Trim(path[i+1:], "0123456789") == "" {
		path = path[:i]
	}
	stem := strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	if i := len(stem) - len("_incoming"); i > 0 && strings.EqualFold(stem[i:], "_incoming") {
		stem = stem[:i]
	}
	if agentFolder().MatchString(stem) {
		return stem
	}
	return ""
}

// placeAgent is the agent of this runtime whose folder or file, in the old
// per-agent layouts, holds path, or "". What sits there is that agent's
// unless it names another, as for its old reader: a broadcast in it is that
// agent's copy, the writer having put one in every agent's place.
func (in *Intake) placeAgent(path string) string {
	for _, a := range []string{AgentFolder(path), AgentFile(path)} {
		if to, err := agentname.Resolve(in.store.Known, a); a != "" && err == nil {
			return to
		}
	}
	return ""
}

var agentFolder = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?i)^agent[-_]?\d+$`) })

// decodeExtra decodes a message found outside the mailbox and checks that
// it is this agent's. In a shared place the recipient comes from the
// message, else from the file name; a message for another agent is
// errNotMine, one for no agent an error only for the intake that
// dead-letters for the shared places.
func (in *Intake) decodeExtra(data []byte, name string, mod time.Time, shared bool) (mailbox.Message, error) {
	owner := in.mb.Agent
	if shared {
		owner = in.placeAgent(name)
	}
	msg, err := mailbox.Decode(data, mailbox.Source{Name: name, ModTime: mod, Owner: owner})
	if err != nil {
		if shared && !in.opts.SharedDeadletters {
			return mailbox.Message{}, errNotMine
		}
		return mailbox.Message{}, err
	}
	if shared {
		if msg.To == "all" {
			if !in.opts.SharedDeadletters {
				return mailbox.Message{}, errNotMine // one intake spreads broadcasts
			}
			return msg, nil
		}
		if msg.To == "" {
			msg.To = cmp.Or(RecipientInName(name), AgentFolder(name), AgentFile(name))
		}
		to, err := agentname.Resolve(in.store.Known, msg.To)
		switch {
		case err != nil && in.opts.SharedDeadletters:
			if msg.To == "" {
				return msg, in.unclear(msg, errors.New("found in a shared folder, but neither the message nor its file name says whom it is for"))
			}
			return msg, in.unclear(msg, fmt.Errorf("recipient %q is not an agent of this runtime", msg.To))
		case err != nil || to != in.mb.Agent:
			return mailbox.Message{}, errNotMine
		}
	}
	// "AGENT-5" on a bracketed header: the sender as this runtime spells
	// it, so a reply finds its mailbox.
	if from, err := agentname.Resolve(in.store.Known, msg.From); err == nil {
		msg.From = from
	}
	return msg, in.unclear(msg, in.c.CheckRecipient(&msg))
}

// deadletterExtra puts a file of an extra place into deadletter/ with its
// reason, by copy (the place may be on another file system), or before the
// person for review when its recipient is unclear, and removes it there.
func (in *Intake) deadletterExtra(path string, read fs.FileInfo, data []byte, why error, now time.Time) error {
	in.settling.Forget(path)
	if err := in.refuse(mailbox.Letter{Name: now.UTC().Format("20060102T150405Z") + "-" + filepath.Base(path), Fresh: true,
		Data: data, Origin: path}, why, now); err != nil {
		return err
	}
	if _, err := mailbox.RemoveRead(path, read, data); err != nil {
		return fmt.Errorf("cannot remove dead-lettered %s: %w", path, err)
	}
	return nil
}

// slowWriter is how many settle periods the last message of an appended
// file waits when it does not end as the old writers end their messages.
const slowWriter = 10

// endsMessage reports text ending as an appended message does: with a blank
// line.
func endsMessage(raw []byte) bool {
	raw = bytes.ReplaceAll(raw, []byte("\r\n"), []byte("\n"))
	return bytes.HasSuffix(raw, []byte("\n\n"))
}

// offsetState is how far an appended file has been read.
type offsetState struct {
	Path   string `json:"path"`
	Offset int64  `json:"offset"`
	// Read is the digest of the bytes before Offset, and ModTime the
	// file's time then (unix nanoseconds): a file rewritten since, rather
	// than appended to, is read again from its start, since its new
	// messages may lie before the offset (what was delivered and stands
	// where it stood is a duplicate). States of earlier releases, without
	// them, are trusted as they are.
	Read    string `json:"read,omitempty"`
	ModTime int64  `json:"mod_time,omitempty"`
	// Notes: the file holds notes or history, not messages (migrate says
	// so of one a glob of appended inboxes matches). Rewritten, it is read
	// on from where its last notes (Tail) now end, or else from its new
	// end: an edit in it is never taken for messages, and a message
	// appended before the edit, or while agentctl was down, is still read.
	Notes bool   `json:"notes,omitempty"`
	Tail  []byte `json:"tail,omitempty"`
}

// tailLen is how much of a notes file's end its state keeps to find the
// notes' end again in the file rewritten; a shorter end (a note of a word
// or two) could be found anywhere, and is not used.
const (
	tailLen    = 256
	minTailLen = 64
)

// notesTail is the end of notes: their last tailLen bytes but white space,
// which an edit at the end changes most often.
func notesTail(notes []byte) []byte {
	notes = bytes.TrimRightFunc(notes, unicode.IsSpace)
	return bytes.Clone(notes[max(0, len(notes)-tailLen):])
}

func (in *Intake) offsetPath(path string) string { return offsetFile(in.mb.Dir, path) }

func offsetFile(mailboxDir, path string) string {
	sum := sha256.Sum256([]byte(path))
	return filepath.Join(mailboxDir, OffsetsDir, hex.EncodeToString(sum[:])[:24]+layout.RecordSuffix)
}

// readOffset is how far path was read; zero (read again from the start:
// what was delivered is a duplicate) when nothing usable is recorded.
func (in *Intake) readOffset(path string) offsetState {
	data, err := os.ReadFile(in.offsetPath(path))
	var st offsetState
	if err != nil || json.Unmarshal(data, &st) != nil || st.Path != path || st.Offset < 0 {
		return offsetState{Path: path}
	}
	return st
}

// readOn is where to go on reading data, the file as it is now, from st:
// the offset while the file begins with the bytes read before it, else
// its start. Reading on after the last message read, where the rewritten
// file still holds it, would lose a new message written before a copy of
// it ("ok" again).
// Notes rewritten where their end cannot be found again are read on from
// the file's new end: jumped says so, since a message appended to them
// and not read yet is then skipped.
func (st offsetState) readOn(data []byte) (off int64, jumped bool) {
	switch {
	case st.Offset <= int64(len(data)) && (st.Read == "" || Digest(data[:st.Offset]) == st.Read):
		return st.Offset, false
	case st.Notes:
		// Where the notes' end stands again, if it stands in one place
		// only: a history of repeated messages would be read again from
		// an earlier copy.
		if i := bytes.Index(data, st.Tail); len(st.Tail) >= minTailLen && i >= 0 && i == bytes.LastIndex(data, st.Tail) {
			return int64(i + len(st.Tail)), false
		}
		return int64(len(data)), true
	}
	return 0, false
}

// RememberAppended records that the appended text file at path was read
// as far as read, its first bytes, when its time was mod, for the intake
// of the mailbox in mailboxDir, which goes on from there: what migrate
// imported from an inbox an old writer keeps appending to is not read
// again, and what it left is.
func RememberAppended(mailboxDir, path string, read []byte, mod time.Time) error {
	return rememberAppended(mailboxDir, offsetState{Path: path, Offset: int64(len(read)), Read: Digest(read), ModTime: mod.UnixNano()})
}

// RememberNotes records that the text file at path, which holds notes or
// history rather than messages (a glob of appended inboxes matches it),
// is read only from its present end, read being its bytes and mod its
// time: what is appended to it is read as messages, and what is edited
// in it never is.
func RememberNotes(mailboxDir, path string, read []byte, mod time.Time) error {
	// An empty file has no notes to keep from being read, and may well be
	// an inbox its writers have not used yet.
	st := offsetState{Path: path, Offset: int64(len(read)), Read: Digest(read), ModTime: mod.UnixNano()}
	if len(bytes.TrimSpace(read)) > 0 {
		st.Notes, st.Tail = true, notesTail(read)
	}
	return rememberAppended(mailboxDir, st)
}

func rememberAppended(mailboxDir string, st offsetState) error {
	if err := atomicfile.MkdirAll(filepath.Join(mailboxDir, OffsetsDir)); err != nil {
		return err
	}
	data, _ := json.Marshal(st)
	return atomicfile.WriteFile(offsetFile(mailboxDir, st.Path), append(data, '\n'))
}

// ingestAppended takes the messages appended to path since the last look.
// Each message's derived id comes from the file and the offset where it
// starts, so a message taken again after a crash (before its offset was
// recorded) is a duplicate and stored once.
func (in *Intake) ingestAppended(path string, fi fs.FileInfo, shared bool, now time.Time) error {
	if in.tooLarge(path, fi) {
		return nil // never half-read
	}
	st := in.readOffset(path)
	if st.Offset == fi.Size() && (st.ModTime == 0 || st.ModTime == fi.ModTime().UnixNano()) {
		in.settling.Forget(path)
		return nil
	}
	data, err := mailbox.ReadRegular(path, fi)
	if errors.Is(err, mailbox.ErrChanged) || errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		in.emit("unreadable", "", path, err.Error())
		return nil
	}
	settled := in.settling.Settled(path, fi, now)
	off, jumped := st.readOn(data)
	if jumped {
		if !settled {
			// Perhaps an editor's save seen half done (emptied, then
			// written): the jump is made from the file as it stays.
			return nil
		}
		in.emit("notes-edited", "", path, "notes were rewritten where their end cannot be found again; read on from the file's new end, so a message appended to them before the edit and not read yet is skipped")
	}
	// What was read is digested as it goes, not read whole again for each
	// message.
	// A file that messages are appended to is an inbox from then on,
	// whatever migrate took it for: rewritten, it is read from its start.
	read, readTo, notes := sha256.New(), off, st.Notes
	read.Write(data[:off])
	remember := func(to int64) error {
		read.Write(data[readTo:to])
		readTo = to
		st := offsetState{Path: path, Offset: to, Read: hex.EncodeToString(read.Sum(nil)[:16]), ModTime: fi.ModTime().UnixNano()}
		if notes {
			st.Notes, st.Tail = true, notesTail(data[:to])
		}
		if err := rememberAppended(in.mb.Dir, st); err != nil {
			return fmt.Errorf("cannot record how far %s was read: %w", path, err)
		}
		return nil
	}
	parts := dreamos.Split(data[off:])
	if n := len(parts); settled && n > 0 && !endsMessage(data[off+int64(parts[n-1].Start):off+int64(parts[n-1].End)]) &&
		now.Sub(fi.ModTime()) < slowWriter*in.store.Settle {
		// A writer stalled in the middle of a message looks settled too;
		// the old writers end each message with a blank line, so one that
		// does not is given far longer.
		in.settling.Restart(path, fi, now)
		settled = false
	}
	for i, p := range parts {
		if i == len(parts)-1 && !settled {
			return nil // perhaps still being written; Tick looks again
		}
		start := off + int64(p.Start)
		raw := data[start : off+int64(p.End)]
		name := fmt.Sprintf("%s@%d", path, start)
		msg, err := in.decodeExtra(raw, name, fi.ModTime(), shared)
		if err == nil {
			err = handledError(msg)
		}
		switch {
		case errors.Is(err, errNotMine):
		case err != nil:
			dst := fmt.Sprintf("%s-%d.txt", strings.TrimSuffix(filepath.Base(path), filepath.Ext(path)), start)
			if err := in.refuse(mailbox.Letter{Name: dst, Data: raw, Origin: name}, err, now); err != nil {
				return err
			}
		default:
			if err := in.deliverExtra(msg, name); err != nil {
				return err
			}
			notes = false
		}
		if err := remember(off + int64(p.End)); err != nil {
			return err
		}
	}
	if len(parts) == 0 {
		return remember(int64(len(data))) // white space only, or nothing new
	}
	in.settling.Forget(path)
	return nil
}
