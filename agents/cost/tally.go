package cost

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"time"

	"github.com/agentctl/agentctl/internal/layout"
)

// Tally keeps the running day's summary of a runtime's ledger, reading
// only the lines appended since it last looked: a runner asks before
// every prompt, and a busy swarm's day holds thousands of turns. Not safe
// for concurrent use.
type Tally struct {
	root   string
	day    string
	offset int64
	sum    Summary
}

// NewTally returns a tally of root's ledger; it reads nothing yet.
func NewTally(root string) *Tally { return &Tally{root: root} }

// Today returns the summary of now's UTC day, reading what was appended
// since the last call. A line still being written is left for the next.
func (t *Tally) Today(now time.Time) (Summary, error) {
	if d := now.UTC().Format(layout.DayFormat); d != t.day {
		t.day, t.offset, t.sum = d, 0, Sum(nil)
	}
	f, err := os.Open(Path(t.root, now))
	if errors.Is(err, fs.ErrNotExist) {
		return t.sum, nil
	}
	if err != nil {
		return t.sum, fmt.Errorf("cannot read the cost ledger: %w", err)
	}
	defer f.Close()
	if _, err := f.Seek(t.offset, io.SeekStart); err != nil {
		return t.sum, fmt.Errorf("cannot read the cost ledger: %w", err)
	}
	r := bufio.NewReader(f)
	for {
		line, err := r.ReadBytes('\n')
		if err != nil {
			break // a cut or unfinished last line waits for its newline
		}
		t.offset += int64(len(line))
		var turn Turn
		if json.Unmarshal(line, &turn) == nil && turn.whole() {
			a := t.sum.Agents[turn.Agent]
			a.add(turn)
			t.sum.Agents[turn.Agent] = a
			t.sum.Swarm.add(turn)
		}
	}
	return t.sum, nil
}
