package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"text/tabwriter"

	"github.com/agentctl/agentctl/agents/actions"
	"github.com/agentctl/agentctl/internal/sizecap"
	"github.com/agentctl/agentctl/projectboard"
)

const boardUsage = `
Usage:
  agentctl board list [--status S] [--owner A] [--json]
  agentctl board show ID [--json]
  agentctl board add --title T [--owner A] [--priority P] [--status S] [--board FILE [--new]] [--id ID]
  agentctl board set ID key=value...
  agentctl board import FILE [--name NAME]

Reads and changes the task boards, the *.yaml files in <root>/project_board/
that you may also edit by hand. A change rewrites only the lines it changes
(comments, order and formatting stay as they are), sets updated_at, and is
refused if a board does not parse: fix the file first, agentctl never
overwrites it.

add puts the task on the only board, or board.yaml; --board names another
that exists, or with --new one to start.

set takes status (todo, in_progress, review, blocked, done), owner (an agent
from agentctl.yaml, or empty to unassign), title, priority, notes and
depends_on (comma-separated ids of tasks on the boards, never the task's
own).

import converts a Dream.OS JSON board (working_tasks.json,
task_ready_queue.json, backlog/*.json, a cycle plan or contracts.json), or
one kept as YAML in the same shape, into a new board, dropping unrendered
{{...}} placeholders and keeping every other field as written: a field
named as a board's own key whose value came from another field (an id
beside task_id) is kept as dreamos_KEY, with a warning.

Examples:
  agentctl board list --status in_progress
  agentctl board show T-3
  agentctl board add --title "Make ingest lossless" --owner Agent-2
  agentctl board set T-3 status=done owner=Agent-3
  agentctl board set T-3 notes="waiting for review" depends_on=T-1,T-2
  agentctl board import ~/dreamos/runtime/agent_comms/central_task_boards/working_tasks.json
`

func runBoard(ctx context.Context, env *Env, args []string) error {
	if len(args) == 0 {
		return UsageError{Msg: "board: want list, show, add, set or import"}
	}
	if args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		NewFlagSet(env, "board", boardUsage).Usage()
		return ErrHelpShown
	}
	if len(args) < 2 || !isHelpFlag(args[1]) {
		if err := NeedRuntime(env); err != nil {
			return err
		}
	}
	store := &projectboard.Store{Root: env.Root}
	switch args[0] {
	case "list", "ls":
		return boardList(env, store, args[1:])
	case "show":
		return boardShow(env, store, args[1:])
	case "add":
		return boardAdd(ctx, env, store, args[1:])
	case "set":
		return boardSet(ctx, env, store, args[1:])
	case "import":
		return boardImport(ctx, env, store, args[1:])
	}
	msg := fmt.Sprintf("board: unknown action %q", args[0])
	if s := Suggest(args[0], []string{"list", "show", "add", "set", "import"}); s != "" {
		msg += fmt.Sprintf(" (did you mean %s?)", s)
	}
	return UsageError{Msg: msg + "; want list, show, add, set or import"}
}

func boardList(env *Env, store *projectboard.Store, args []string) error {
	fs := NewFlagSet(env, "board list", boardUsage)
	status := fs.String("status", "", "show only tasks with status `S`")
	owner := fs.String("owner", "", "show only tasks owned by agent `A`")
	asJSON := fs.Bool("json", false, "print the tasks as a JSON array")
	rest, err := ParseArgs(fs, args)
	if err != nil {
		return err
	}
	if err := WantArgs(fs, rest, 0, 0, "no arguments"); err != nil {
		return err
	}
	shown, berr := BoardOf(env, store).Tasks(*status, *owner)
	if berr != nil && shown == nil {
		return berr
	}
	if *asJSON {
		enc := json.NewEncoder(env.Stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(shown); err != nil {
			return err
		}
	} else if len(shown) > 0 {
		tw := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "ID\tSTATUS\tOWNER\tPRIORITY\tTITLE\tBOARD")
		for _, t := range shown {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s:%d\n", t.ID, t.Status, boardDash(t.Owner), boardDash(t.Priority), boardOneLine(t.Title), t.Board, t.Line)
		}
		tw.Flush()
	} else if berr == nil {
		fmt.Fprintln(env.Stdout, "no tasks")
	}
	return berr
}

func boardDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func boardOneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func boardShow(env *Env, store *projectboard.Store, args []string) error {
	fs := NewFlagSet(env, "board show", boardUsage)
	asJSON := fs.Bool("json", false, "print the task as JSON")
	rest, err := ParseArgs(fs, args)
	if err != nil {
		return err
	}
	if err := WantArgs(fs, rest, 1, 1, "one task ID"); err != nil {
		return err
	}
	t, err := store.Find(rest[0])
	if err != nil {
		return taskError(err)
	}
	if *asJSON {
		enc := json.NewEncoder(env.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(t)
	}
	b, err := projectboard.ReadBoard(filepath.Join(projectboard.Dir(env.Root), t.Board))
	if err != nil {
		return err
	}
	text, exact := b.TaskText(t.ID)
	if !exact {
		Notef(env, "%s has line breaks agentctl does not edit (a carriage return without a line feed, or a Unicode line separator): the task is shown as read, not as written", t.Board)
	}
	fmt.Fprintf(env.Stdout, "# %s:%d\n%s", t.Board, t.Line, text)
	return nil
}

// taskError gives a board's error the fix, where it is known.
func taskError(err error) error { return actions.TaskError(err) }

// BoardOf is the board changes of package actions, the owners checked
// against agentctl.yaml, read only when an owner is set.
func BoardOf(env *Env, store *projectboard.Store) actions.Board {
	return actions.Board{Store: store, Agents: func() ([]string, error) {
		cfg, err := LoadConfig(env)
		return cfg.AgentNames(), err
	}}
}

func boardAdd(ctx context.Context, env *Env, store *projectboard.Store, args []string) error {
	fs := NewFlagSet(env, "board add", boardUsage)
	title := fs.String("title", "", "the task's `title` (required)")
	owner := fs.String("owner", "", "agent `A` who owns the task")
	priority := fs.String("priority", "", "priority `P`, such as high or 2")
	status := fs.String("status", "todo", "initial status `S`")
	board := fs.String("board", "", "board `FILE` in project_board/ (default: the only board, or board.yaml)")
	id := fs.String("id", "", "task `ID` (default: the next free T-N)")
	isNew := fs.Bool("new", false, "start the board --board names if it does not exist (else refused while other boards do)")
	rest, err := ParseArgs(fs, args)
	if err != nil {
		return err
	}
	if err := WantArgs(fs, rest, 0, 0, "no arguments besides flags"); err != nil {
		return err
	}
	if strings.TrimSpace(*title) == "" {
		return UsageError{Msg: "board add: --title is required", Fix: `agentctl board add --title "What to do"`}
	}
	t, err := BoardOf(env, store).AddTask(ctx, actions.NewTask{Title: *title, Owner: *owner, Priority: *priority, Status: *status, Board: *board, ID: *id, New: *isNew})
	if err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "added %s to %s\n", t.ID, t.Board)
	return nil
}

func boardSet(ctx context.Context, env *Env, store *projectboard.Store, args []string) error {
	fs := NewFlagSet(env, "board set", boardUsage)
	rest, err := ParseArgs(fs, args)
	if err != nil {
		return err
	}
	if err := WantArgs(fs, rest, 2, -1, "a task ID and at least one key=value"); err != nil {
		return err
	}
	t, err := BoardOf(env, store).SetTask(ctx, rest[0], rest[1:])
	if err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "%s: status %s, owner %s (%s:%d)\n", t.ID, t.Status, boardDash(t.Owner), t.Board, t.Line)
	return nil
}

var unsafeName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[^A-Za-z0-9_-]+`) })

func boardImport(ctx context.Context, env *Env, store *projectboard.Store, args []string) error {
	fs := NewFlagSet(env, "board import", boardUsage)
	name := fs.String("name", "", "name of the new board (default: the file's name)")
	rest, err := ParseArgs(fs, args)
	if err != nil {
		return err
	}
	if err := WantArgs(fs, rest, 1, 1, "one Dream.OS JSON file"); err != nil {
		return err
	}
	data, err := sizecap.ReadFile(rest[0])
	if err != nil {
		return fmt.Errorf("cannot import: %w", err)
	}
	var imp *projectboard.Import
	if ext := strings.ToLower(filepath.Ext(rest[0])); ext == ".yaml" || ext == ".yml" {
		imp, err = projectboard.ImportDreamOSYAML(filepath.Base(rest[0]), data) // a Dream.OS board kept as YAML
	} else {
		imp, err = projectboard.ImportDreamOS(filepath.Base(rest[0]), data)
	}
	if err != nil {
		return fmt.Errorf("cannot import: %w", err)
	}
	if len(imp.IDs) == 0 {
		return WithHint(fmt.Errorf("cannot import %s: it holds no tasks", rest[0]), "nothing to import; a new board starts with 'agentctl board add --board NAME --new'")
	}
	base := *name
	if base == "" {
		base = strings.TrimSuffix(filepath.Base(rest[0]), filepath.Ext(rest[0]))
	}
	base = strings.Trim(unsafeName().ReplaceAllString(strings.TrimSuffix(base, projectboard.Suffix), "_"), "_")
	if base == "" {
		return UsageError{Msg: "board import: give the new board a --name"}
	}
	if err := store.CreateBoard(ctx, base+projectboard.Suffix, imp.Data); err != nil {
		if errors.Is(err, os.ErrExist) {
			return WithHint(fmt.Errorf("cannot import: board %s exists already", base+projectboard.Suffix), "choose another with --name")
		}
		return taskError(fmt.Errorf("cannot import: %w", err))
	}
	for _, w := range imp.Warnings {
		Warnf(env, "%s", w)
	}
	fmt.Fprintf(env.Stdout, "imported %d tasks into %s\n", len(imp.IDs), filepath.Join(projectboard.Dir(env.Root), base+projectboard.Suffix))
	return nil
}

// isHelpFlag reports an argument that asks for the usage, which needs no
// runtime.
func isHelpFlag(a string) bool { return a == "-h" || a == "-help" || a == "--help" }
