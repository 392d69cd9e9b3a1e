package lore

import (
	"time"

	"github.com/agentctl/agentctl/devlog"
	"github.com/agentctl/agentctl/projectboard"
)

// Gather collects a day's input from a runtime root: the devlog entries of
// the given agents and every task whose updated_at falls on that day. An
// unreadable board is reported in the error while the rest is still
// gathered, so the lore can be told from what can be read.
func Gather(root string, agents []string, date string) (Input, error) {
	if _, _, err := Day(date); err != nil {
		return Input{}, err
	}
	in := Input{Date: date}
	for _, a := range agents {
		entries, err := devlog.ReadAgent(root, a)
		if err != nil {
			return Input{}, err
		}
		in.Entries = append(in.Entries, entries...)
	}
	tasks, berr := (&projectboard.Store{Root: root}).Tasks()
	for _, t := range tasks {
		if at, err := time.Parse(time.RFC3339, t.UpdatedAt); err == nil {
			in.Changes = append(in.Changes, BoardChange{Time: at, TaskID: t.ID, Title: t.Title, Status: string(t.Status), Owner: t.Owner})
		}
	}
	return in, berr
}
