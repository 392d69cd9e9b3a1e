package actions

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/agentctl/agentctl/internal/agentname"
	"github.com/agentctl/agentctl/projectboard"
)

// Board changes the tasks of a runtime's boards.
type Board struct {
	Store *projectboard.Store
	// Agents returns the agents a task may be given to. It is asked only
	// when an owner is set: the boards need no agentctl.yaml otherwise.
	Agents func() ([]string, error)
}

// Settable are the task keys SetTask changes.
var Settable = []string{"status", "owner", "title", "priority", "notes", "depends_on"}

// SetTask applies key=value changes to task id, checking every key and
// value before it touches a board.
func (b Board) SetTask(ctx context.Context, id string, kvs []string) (projectboard.Task, error) {
	type pair struct{ key, value string }
	var pairs []pair
	for _, kv := range kvs {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return projectboard.Task{}, inputError(fmt.Sprintf("board set: %q is not key=value", kv), "agentctl board set T-3 status=done")
		}
		var err error
		switch k {
		case "status":
			if _, err := projectboard.ParseStatus(v); err != nil {
				return projectboard.Task{}, inputError("board set: "+err.Error(), "")
			}
		case "owner":
			if v, err = b.ResolveOwner(v); err != nil {
				return projectboard.Task{}, err
			}
		case "depends_on":
			if err := b.checkDependencies(id, v); err != nil {
				return projectboard.Task{}, err
			}
		case "title", "priority", "notes":
		default:
			return projectboard.Task{}, inputError(fmt.Sprintf("board set: %q cannot be set", k), "settable keys: "+strings.Join(Settable, ", "))
		}
		pairs = append(pairs, pair{k, v})
	}
	if len(pairs) == 0 {
		return projectboard.Task{}, inputError("board set: nothing to change", "agentctl board set T-3 status=done")
	}
	t, err := b.Store.Update(ctx, id, func(t *projectboard.Task) error {
		for _, p := range pairs {
			switch p.key {
			case "status":
				t.Status = projectboard.Status(p.value)
			case "owner":
				t.Owner = p.value
			case "title":
				t.Title = p.value
			case "priority":
				t.Priority = p.value
			case "notes":
				t.Notes = p.value
			case "depends_on":
				t.DependsOn = nil
				for _, d := range strings.Split(p.value, ",") {
					if d = strings.TrimSpace(d); d != "" {
						t.DependsOn = append(t.DependsOn, d)
					}
				}
			}
		}
		return nil
	})
	if err != nil {
		return t, TaskError(fmt.Errorf("cannot update task: %w", err))
	}
	return t, nil
}

// checkDependencies refuses a task that would depend on itself, or on a
// task no board holds (a typo, most likely, which would keep the task
// waiting for good).
func (b Board) checkDependencies(id, list string) error {
	var known map[string]bool // the boards' ids, read once, when first needed
	unsure := false           // a board that cannot be read may hold any id
	for _, d := range strings.Split(list, ",") {
		d = strings.TrimSpace(d)
		switch {
		case d == "":
		case strings.EqualFold(d, id):
			return inputError(fmt.Sprintf("board set: %s cannot depend on itself", id), "")
		default:
			if known == nil {
				tasks, err := b.Store.Tasks()
				unsure = err != nil
				known = make(map[string]bool, len(tasks))
				for _, t := range tasks {
					known[t.ID] = true
				}
			}
			if !known[d] && !unsure {
				return inputError(fmt.Sprintf("board set: depends_on: no task %s on any board", d), "run 'agentctl board list' to see the task ids")
			}
		}
	}
	return nil
}

// ResolveOwner checks an owner against the agents; empty means
// unassigned.
func (b Board) ResolveOwner(owner string) (string, error) {
	if owner == "" {
		return "", nil
	}
	names, err := b.Agents()
	if err != nil {
		return "", fmt.Errorf("cannot check owner %q: %w", owner, err)
	}
	name, err := agentname.Resolve(names, owner)
	if err != nil {
		return "", WithHint(fmt.Errorf("cannot assign the task: %w", err), "known agents: "+strings.Join(names, ", "))
	}
	return name, nil
}

// TaskError gives a board's error the fix, where it is known.
func TaskError(err error) error {
	var pe *projectboard.ParseError
	if errors.As(err, &pe) {
		return WithHint(err, "fix the file at the line shown; agentctl leaves invalid boards untouched")
	}
	if errors.Is(err, projectboard.ErrNoTask) {
		return WithHint(err, "run 'agentctl board list' to see the task ids")
	}
	var le *projectboard.LockError
	if errors.As(err, &le) {
		return WithHint(err, "a board change holds this lock for milliseconds, so its holder is stuck; stop it, then try again")
	}
	return err
}
