package hub

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/agentctl/agentctl/cursor"
	"github.com/agentctl/agentctl/internal/atomicfile"
	"github.com/agentctl/agentctl/internal/layout"
)

// JournalDir is where a seat keeps its journal, under the runtime folder
// of its own machine.
func JournalDir(root, agent string) (string, error) {
	a, err := layout.For(root, agent)
	if err != nil {
		return "", err
	}
	return a.Journal(), nil
}

// Journal is a seat's record of its turns, one file per turn, each step
// written before the next begins, so that a seat killed, or cut off from
// the hub, mid-turn resumes the turn instead of sending its prompt again,
// and answers every later ask of a finished turn from the record.
//
// A turn's file is a log: each step appends the whole entry as one line
// and syncs it, the one sync a step costs (a file's first line also syncs
// the folder). The last line that reads whole is the turn's state: a line
// cut short by a crash was never synced, so its step was not taken yet.
// Each line starts on a line of its own, after whatever such a crash left.
//
// Every line carries the version of its shape (journalVersion). readEntry
// is the one reader: it takes the shapes of earlier releases (no version)
// as they meant, and a line of a newer release as one it cannot read.
// Whatever is read is written back in this release's shape at the turn's
// next step.
type Journal struct {
	dir string
}

// journalVersion is the shape of the entries this release writes. Version
// 0, no version at all, is the shape of earlier releases: a whole file of
// one entry or lines, the stage "waiting", no "unsent".
const journalVersion = 1

// Entry is one turn as the journal knows it.
type Entry struct {
	// Version is the shape the entry was written in (journalVersion).
	Version int    `json:"version,omitempty"`
	Turn    string `json:"turn"`
	// Stage is the last point the turn passed: received, started (a
	// command runs the prompt), pressed (the key that sends the prompt to
	// a chat), submitted, or answered.
	Stage string `json:"stage"`
	// Ask is the ask being served: a seat started after a crash finishes
	// the turn and answers it before the server offers the ask again.
	Ask         *Ask          `json:"ask,omitempty"`
	ResumeState string        `json:"resume_state,omitempty"`
	Child       *cursor.Child `json:"child,omitempty"`
	// The answer, once there is one.
	Answer *Answer `json:"answer,omitempty"`
	// Unsent: the answer has not reached the hub yet, and Prune keeps it
	// however old, since the hub may still ask for the turn.
	Unsent   bool      `json:"unsent,omitempty"`
	Received time.Time `json:"received_at"`
	Updated  time.Time `json:"updated_at"`
}

// Stages of an entry.
const (
	stageReceived  = "received"
	stageStarted   = "started"
	stagePressed   = string(cursor.StagePressed)
	stageSubmitted = string(cursor.StageSubmitted)
	stageAnswered  = "answered"
)

// Delivered reports whether the agent may have the prompt already: then
// the turn is resumed, never sent again.
func (e Entry) Delivered() bool {
	switch e.Stage {
	case stageStarted, stagePressed, stageSubmitted, stageAnswered:
		return true
	}
	return false
}

// OpenJournal opens (creating) the journal in dir.
func OpenJournal(dir string) (*Journal, error) {
	if err := atomicfile.MkdirAll(dir); err != nil {
		return nil, fmt.Errorf("cannot create the seat's journal: %w", err)
	}
	return &Journal{dir: dir}, nil
}

// file names a turn's record: turn ids come from message ids, which other
// programs chose, so they are hashed rather than trusted as file names.
func (j *Journal) file(turn string) string {
	sum := sha256.Sum256([]byte(turn))
	return filepath.Join(j.dir, hex.EncodeToString(sum[:12])+layout.RecordSuffix)
}

// Load returns the entry of turn; ok is false when the journal has none.
func (j *Journal) Load(turn string) (e Entry, ok bool, err error) {
	data, err := os.ReadFile(j.file(turn))
	if errors.Is(err, fs.ErrNotExist) {
		return Entry{}, false, nil
	}
	if err != nil {
		return Entry{}, false, fmt.Errorf("cannot read the journal of turn %s: %w", turn, err)
	}
	e, whole := readEntry(data)
	if !whole || e.Turn != turn {
		// A record that cannot be read may still say the prompt went out:
		// count it as delivered, so the turn resumes rather than pastes.
		return Entry{Turn: turn, Stage: stageSubmitted}, true, nil
	}
	return e, true, nil
}

// readEntry is the turn's state in a turn's file: its last line that
// reads whole, or the file as one entry, as seats of earlier releases
// wrote it, in this release's shape. ok is false when nothing reads whole,
// or when what does was written by a newer release, whose shape this one
// cannot be sure it reads right.
func readEntry(data []byte) (e Entry, ok bool) {
	lines := bytes.Split(data, []byte("\n"))
	for i := len(lines) - 1; i >= 0 && !ok; i-- {
		e = Entry{}
		ok = len(bytes.TrimSpace(lines[i])) > 0 && json.Unmarshal(lines[i], &e) == nil
	}
	if !ok {
		e = Entry{}
		ok = json.Unmarshal(data, &e) == nil
	}
	if !ok || e.Version > journalVersion {
		return Entry{}, false
	}
	if e.Version == 0 && e.Stage == "waiting" {
		// The chat showed the prompt, its reply not begun: submitted.
		e.Stage = stageSubmitted
	}
	e.Version = journalVersion
	return e, true
}

// Save appends e to its turn's record durably: a crash right after Save
// finds it.
func (j *Journal) Save(e Entry) error { return j.save(e, true) }

// Sent records that the hub has the answer of turn, so that Prune may
// remove it once old. Unsynced: a record of it lost in a power cut only
// keeps the turn longer.
func (j *Journal) Sent(turn string) error {
	e, ok, err := j.Load(turn)
	if err != nil || !ok || !e.Unsent {
		return err
	}
	e.Unsent = false
	return j.save(e, false)
}

func (j *Journal) save(e Entry, sync bool) error {
	e.Version = journalVersion
	data, err := json.Marshal(e)
	if err != nil {
		return err
	}
	if err := j.append(j.file(e.Turn), data, sync); err != nil {
		return fmt.Errorf("cannot record turn %s in the seat's journal: %w", e.Turn, err)
	}
	return nil
}

func (j *Journal) append(path string, data []byte, sync bool) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	created := false
	if errors.Is(err, fs.ErrNotExist) {
		f, err = os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE|os.O_EXCL, atomicfile.FilePerm)
		created = true
	}
	if err != nil {
		return err
	}
	line := make([]byte, 0, len(data)+2)
	line = append(append(append(line, '\n'), data...), '\n')
	_, err = f.Write(line)
	if err == nil && sync {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil && created {
		err = atomicfile.SyncDir(j.dir)
	}
	return err
}

// Unanswered lists the turns that were asked and not answered, and whose
// prompt the agent may have: a seat stopped or killed mid-turn. A turn
// still at "received" is left for its ask, which the server offers again
// (it was never acknowledged): taken up unasked, it could go to an agent
// the hub no longer asks, or asks elsewhere.
func (j *Journal) Unanswered() ([]Entry, error) {
	names, err := j.names()
	if err != nil {
		return nil, err
	}
	var out []Entry
	for _, name := range names {
		data, err := os.ReadFile(filepath.Join(j.dir, name))
		if err != nil {
			continue
		}
		// Only a whole record is finished unasked; anything less waits for
		// the server to offer its ask again, and Load reads it generously.
		e, whole := readEntry(data)
		if whole && e.Answer == nil && e.Ask != nil && e.Delivered() &&
			e.Turn != "" && e.Ask.Turn == e.Turn && e.Ask.Ask != "" && name == filepath.Base(j.file(e.Turn)) {
			out = append(out, e)
		}
	}
	return out, nil
}

func (j *Journal) names() ([]string, error) {
	entries, err := os.ReadDir(j.dir)
	if err != nil {
		return nil, fmt.Errorf("cannot read the seat's journal: %w", err)
	}
	var names []string
	for _, de := range entries {
		if strings.HasSuffix(de.Name(), layout.RecordSuffix) && !strings.HasPrefix(de.Name(), ".") {
			names = append(names, de.Name())
		}
	}
	return names, nil
}

// Prune removes the records of turns last touched before cutoff that are
// settled: answered, or never given to the agent. The hub settles such a
// turn long before, and asks nothing of it again. A turn given to the agent
// and not answered stays whatever its age: its ask waits on the server for
// as long as the seat is away (a week switched off is a case the hub
// keeps turns for), and without its record the seat would give the prompt
// to the agent a second time. So does an answer the hub has not had
// (Entry.Unsent), which the hub's ask, offered again, is answered from,
// and a record that cannot be read, which may have said the prompt went
// out.
func (j *Journal) Prune(cutoff time.Time) (removed int, err error) {
	names, err := j.names()
	if err != nil {
		return 0, err
	}
	for _, name := range names {
		path := filepath.Join(j.dir, name)
		fi, err := os.Stat(path)
		if err != nil || !fi.ModTime().Before(cutoff) {
			continue
		}
		data, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		if e, whole := readEntry(data); !whole || e.Answer == nil && e.Delivered() || e.Unsent {
			continue
		}
		if os.Remove(path) == nil {
			removed++
		}
	}
	return removed, nil
}
