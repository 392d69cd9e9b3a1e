package mailbox

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"

	"github.com/agentctl/agentctl/internal/atomicfile"
	"github.com/agentctl/agentctl/internal/layout"
)

// ProgressSuffix ends the name of a claim's progress log in processing/.
const ProgressSuffix = layout.ProgressSuffix

// Progress is the state of a claimed message. It is kept beside the
// message in processing/ as a log: each step appends one line holding the
// whole state, so `cat` shows the history and the last line is the truth.
// Appending rather than replacing a file keeps a step to one write and one
// fsync, where a replace would also create a file, which costs more than
// the fsync here.
type Progress struct {
	ID        string               `json:"id"`
	Agent     string               `json:"agent"`
	PID       int                  `json:"pid"`
	Host      string               `json:"host"`
	ClaimedAt time.Time            `json:"claimed_at"`
	Attempt   int                  `json:"attempt"`
	Stage     string               `json:"stage"`
	Stages    map[string]time.Time `json:"stages"`
	// Version numbers the shape of Data, for the caller; records written
	// before records carried it have none (0).
	Version int `json:"version,omitempty"`
	// Data is the caller's own bookkeeping (what it already did), kept
	// across crashes. This package never looks into it: it is JSON whose
	// shape the caller owns, encoded by the caller before each Record and
	// decoded by the caller from a resumed claim, and Version says which
	// shape it is. A caller whose shape changes keeps reading the old ones
	// (a runner upgraded while a message is in flight resumes it).
	Data json.RawMessage `json:"data,omitempty"`
	// Set while the message is being dead-lettered, so that a crash
	// half-way is finished the same way.
	Reason string `json:"reason,omitempty"`
	// Receipt is set by the last record of a completed message.
	Receipt *Receipt `json:"receipt,omitempty"`
	// LetGo is set by the last record of a consumer that stopped with the
	// message in flight on purpose (LetGo): its resume costs no attempt.
	LetGo bool `json:"let_go,omitempty"`
}

// Record marks that the claim reached stage (and saves what the caller
// put in cl.Progress.Data and Version) before the caller goes on, so a crash
// after this point resumes from here.
func (c *Consumer) Record(cl *Claim, stage string, now time.Time) error {
	return c.record(cl, stage, now, true)
}

// LetGo records that the consumer stops with cl in flight on purpose (its
// runner is shutting down) and holds it no more: the next consumer resumes
// it without counting an attempt, since a stop asked for from outside says
// nothing of the message. A consumer that dies without this record costs
// the message an attempt, so one that keeps killing its runner ends in
// deadletter/.
func (c *Consumer) LetGo(cl *Claim, now time.Time) error {
	cl.Progress.LetGo = true
	cl.Progress.Stages["let go"] = now
	if err := c.appendProgress(cl, true); err != nil {
		return fmt.Errorf("cannot let go of %s: %w", cl.Message.ID, err)
	}
	if c.inflight == cl {
		c.inflight = nil
	}
	c.log.close()
	return nil
}

// RecordUnsynced is Record without the fsync, for a stage whose record a
// power cut may take without changing what recovery does (one an earlier
// record implies): a crash of the process alone loses nothing written.
func (c *Consumer) RecordUnsynced(cl *Claim, stage string, now time.Time) error {
	return c.record(cl, stage, now, false)
}

func (c *Consumer) record(cl *Claim, stage string, now time.Time, durable bool) error {
	cl.Progress.Stage = stage
	cl.Progress.Stages[stage] = now
	if err := c.appendProgress(cl, durable); err != nil {
		return fmt.Errorf("cannot record %s of %s: %w", stage, cl.Message.ID, err)
	}
	return nil
}

// appendProgress adds the claim's state to its log in one write; durable
// asks for an fsync before returning.
func (c *Consumer) appendProgress(cl *Claim, durable bool) error {
	line, err := json.Marshal(cl.Progress)
	if err != nil {
		return err
	}
	f, err := c.log.open(c.processing(cl.stem, ProgressSuffix))
	if err != nil {
		return err
	}
	_, err = f.Write(append(line, '\n'))
	if err == nil && durable {
		err = f.Sync()
	}
	if err != nil {
		// Opened afresh next time, in case the handle is what failed.
		c.log.close()
		return err
	}
	if durable && !cl.logSynced {
		// The log's name was created without an fsync of the folder; make
		// it as durable as its contents once.
		if err = atomicfile.SyncDir(c.mb.path(ProcessingDir)); err == nil {
			cl.logSynced = true
		}
	}
	return err
}

// progressLog keeps the log of the claim in flight open between its
// records: a turn appends some six times, and opening the file for each
// was a fifth of a runner's CPU a message. It is closed before the log is
// moved or removed (Windows moves no open file) and when the consumer
// closes.
type progressLog struct {
	path string
	f    *os.File
}

// open returns the log at path, opened afresh unless the open one is still
// the file there: records appended to a log someone removed or moved
// away mid-turn would be lost with it, the receipt too.
func (l *progressLog) open(path string) (*os.File, error) {
	if l.f != nil && l.path == path {
		open, err := l.f.Stat()
		there, terr := os.Stat(path)
		if err == nil && terr == nil && os.SameFile(open, there) {
			return l.f, nil
		}
	}
	l.close()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, atomicfile.FilePerm)
	if err != nil {
		return nil, err
	}
	l.path, l.f = path, f
	return f, nil
}

// close lets go of the open log, if any. Every write was already made
// (and synced where asked), so its error says nothing new.
func (l *progressLog) close() {
	if l.f != nil {
		l.f.Close()
		l.f = nil
	}
}

// ReadProgress returns the last recorded state of the message with this id
// in processing/, for readers such as recovery checks and status.
func (m *Mailbox) ReadProgress(id string) (Progress, error) {
	return readProgressLog(m.path(ProcessingDir, Stem(id)+ProgressSuffix))
}

func (c *Consumer) loadProgress(stem string) (Progress, error) {
	return readProgressLog(c.processing(stem, ProgressSuffix))
}

// readProgressLog returns the last whole line of a progress log. A line
// torn by a crash mid-write does not parse and is skipped.
func readProgressLog(path string) (Progress, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Progress{}, err
	}
	lines := bytes.Split(bytes.TrimRight(data, "\n"), []byte("\n"))
	for i := len(lines) - 1; i >= 0; i-- {
		var p Progress
		if json.Unmarshal(lines[i], &p) == nil {
			return p, nil
		}
	}
	return Progress{}, fmt.Errorf("%s holds no whole progress record: %w", path, fs.ErrNotExist)
}

// endTornLine ends a log whose last write was cut short, so the next record
// starts on a line of its own.
func endTornLine(path string) error {
	data, err := os.ReadFile(path)
	if err != nil || len(data) == 0 || data[len(data)-1] == '\n' {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return err
	}
	_, err = f.Write([]byte("\n"))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
