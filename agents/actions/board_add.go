package actions

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/agentctl/agentctl/projectboard"
)

// NewTask is a task a person or an agent adds to a board.
type NewTask struct {
	Title, Owner, Priority string
	// Status is todo when empty.
	Status string
	// Board is a file in the boards folder, ".yaml" optional; empty picks
	// the only board, or board.yaml.
	Board string
	// ID is the next free T-N when empty.
	ID string
}

// AddTask adds n to a board, checking the status and the owner before it
// touches one.
func (b Board) AddTask(ctx context.Context, n NewTask) (projectboard.Task, error) {
	if strings.TrimSpace(n.Title) == "" {
		return projectboard.Task{}, inputError("board add: the task needs a title", `agentctl board add --title "What to do"`)
	}
	if n.Status == "" {
		n.Status = string(projectboard.Todo)
	}
	st, err := projectboard.ParseStatus(n.Status)
	if err != nil {
		return projectboard.Task{}, inputError(err.Error(), "")
	}
	who, err := b.ResolveOwner(n.Owner)
	if err != nil {
		return projectboard.Task{}, err
	}
	name, err := b.pickBoard(n.Board)
	if err != nil {
		return projectboard.Task{}, err
	}
	t, err := b.Store.Add(ctx, name, projectboard.Task{ID: n.ID, Title: n.Title, Status: st, Owner: who, Priority: n.Priority})
	var invalid *projectboard.ParseError
	if n.ID == "" && errors.As(err, &invalid) {
		return t, InvalidBoards(err) // the next free id could be on it
	}
	if err != nil {
		return t, TaskError(fmt.Errorf("cannot add the task: %w", err))
	}
	return t, nil
}

// Tasks lists the tasks of every board with status (any when empty) and
// owner (anyone when empty). Boards that cannot be read give an error
// beside the tasks of the others.
func (b Board) Tasks(status, owner string) ([]projectboard.Task, error) {
	if status != "" {
		if _, err := projectboard.ParseStatus(status); err != nil {
			return nil, inputError(err.Error(), "")
		}
	}
	tasks, berr := b.Store.Tasks()
	shown := []projectboard.Task{}
	for _, t := range tasks {
		if (status == "" || string(t.Status) == status) && (owner == "" || strings.EqualFold(t.Owner, owner)) {
			shown = append(shown, t)
		}
	}
	if berr != nil {
		return shown, InvalidBoards(berr)
	}
	return shown, nil
}

// InvalidBoards explains boards that could not be read.
func InvalidBoards(err error) error {
	return WithHint(fmt.Errorf("some boards cannot be read:\n  %s", strings.ReplaceAll(err.Error(), "\n", "\n  ")),
		"fix the file at the line shown; agentctl leaves invalid boards untouched")
}

// pickBoard chooses the board a new task goes to.
func (b Board) pickBoard(name string) (string, error) {
	if name != "" {
		if !strings.HasSuffix(name, ".yaml") {
			name += ".yaml"
		}
		return name, nil
	}
	files, _ := filepath.Glob(filepath.Join(projectboard.Dir(b.Store.Root), "*.yaml"))
	switch {
	case len(files) == 1:
		return filepath.Base(files[0]), nil
	case len(files) == 0:
		return "board.yaml", nil
	}
	for _, f := range files {
		if filepath.Base(f) == "board.yaml" {
			return "board.yaml", nil
		}
	}
	names := make([]string, len(files))
	for i, f := range files {
		names[i] = filepath.Base(f)
	}
	return "", inputError("board add: there are several boards; say which with --board", "boards: "+strings.Join(names, ", "))
}
