package actions

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
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
	// New lets Board name a board that does not exist yet, which the
	// task then starts; otherwise a board not there is refused while
	// others are, as the likely typo it is.
	New bool
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
	name, err := b.pickBoard(n.Board, n.New)
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
	berr = errors.Join(berr, onSeveralBoards(tasks))
	shown := []projectboard.Task{}
	for _, t := range tasks {
		if (status == "" || string(t.Status) == status) && (owner == "" || strings.EqualFold(t.Owner, owner)) {
			shown = append(shown, t)
		}
	}
	var pe *projectboard.ParseError
	if errors.As(berr, &pe) {
		return shown, InvalidBoards(berr)
	}
	return shown, berr
}

// onSeveralBoards says which task ids are on more than one board: each is
// listed, and every change to it refused, until it is on one.
func onSeveralBoards(tasks []projectboard.Task) error {
	boards := map[string][]string{}
	var ids []string
	for _, t := range tasks {
		if len(boards[t.ID]) == 1 {
			ids = append(ids, t.ID)
		}
		boards[t.ID] = append(boards[t.ID], t.Board)
	}
	if len(ids) == 0 {
		return nil
	}
	var lines []string
	for _, id := range ids {
		lines = append(lines, fmt.Sprintf("task %s is on %s", id, strings.Join(boards[id], " and ")))
	}
	return WithHint(fmt.Errorf("%s: changes to it are refused until it is on one board", strings.Join(lines, "; ")),
		"rename or remove one of them in its board file")
}

// InvalidBoards explains boards that could not be read.
func InvalidBoards(err error) error {
	return WithHint(fmt.Errorf("some boards cannot be read:\n  %s", strings.ReplaceAll(err.Error(), "\n", "\n  ")),
		"fix the file at the line shown; agentctl leaves invalid boards untouched")
}

// pickBoard chooses the board a new task goes to; a board named that does
// not exist is refused, while others do, unless it is to be made (isNew).
func (b Board) pickBoard(name string, isNew bool) (string, error) {
	files, _ := filepath.Glob(filepath.Join(projectboard.Dir(b.Store.Root), "*"+projectboard.Suffix))
	names := make([]string, len(files))
	for i, f := range files {
		names[i] = filepath.Base(f)
	}
	if name != "" {
		if !strings.HasSuffix(name, projectboard.Suffix) {
			name += projectboard.Suffix
		}
		// A name that is no file name is the store's to refuse.
		if !isNew && len(names) > 0 && !slices.Contains(names, name) && name == filepath.Base(name) {
			return "", inputError(fmt.Sprintf("board add: there is no board %s", name), "boards: "+strings.Join(names, ", ")+"; to start a new board, add --new")
		}
		return name, nil
	}
	switch {
	case len(files) == 1:
		return filepath.Base(files[0]), nil
	case len(files) == 0:
		return projectboard.DefaultBoard, nil
	}
	if slices.Contains(names, projectboard.DefaultBoard) {
		return projectboard.DefaultBoard, nil
	}
	return "", inputError("board add: there are several boards; say which with --board", "boards: "+strings.Join(names, ", "))
}
