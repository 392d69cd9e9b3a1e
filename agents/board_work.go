package agents

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"github.com/agentctl/agentctl/agents/receipt"
	"github.com/agentctl/agentctl/mailbox"
	"github.com/agentctl/agentctl/projectboard"
)

// typeBoardTask is the type of the message an idle runner delivers to its
// own inbox for a task it means to take from the boards. The take happens
// when the message is claimed, under the boards' lock; the message makes
// the work visible in the inbox and resumable like any other.
const typeBoardTask = "board-task"

// notTaken is a take the boards refused: someone else was first.
type notTaken struct{ why string }

func (e *notTaken) Error() string { return e.why }

// offerBoardTask delivers to the agent's own inbox a board-task message for
// the first task it may take: todo, owned by it or unowned and matching its
// labels, with every depends_on done. The message's id is derived from the
// task's text as it stands, so looking again at an unchanged board offers
// nothing new, while a task put back to todo is offered again.
func (r *Runner) offerBoardTask(now time.Time) error {
	store := projectboard.Store{Root: r.s.Root}
	boards, _ := store.Boards() // an invalid board is left out; the others still have work
	var tasks []projectboard.Task
	text := map[string]string{}
	for _, b := range boards {
		for _, t := range b.Tasks {
			tasks = append(tasks, t)
			text[t.ID], _ = b.TaskText(t.ID)
		}
	}
	for _, t := range takeable(tasks, r.s.Agent, r.s.WorkLabels) {
		m := mailbox.Message{
			ID: derivedID("board-task", r.s.Agent, text[t.ID]), From: r.s.Agent, To: r.s.Agent,
			Type: typeBoardTask, Priority: mailbox.Normal, Subject: t.ID + ": " + t.Title, TaskID: t.ID, CreatedAt: now.UTC(),
			Body: fmt.Sprintf("Your runner took %s from the board %s for you (it was todo, %s, and everything it depends on is done).",
				t.ID, t.Board, map[bool]string{true: "yours", false: "unowned"}[t.Owner == r.s.Agent]),
		}
		fresh, err := r.deliver(m)
		if err != nil {
			return err
		}
		if fresh {
			r.log.Info().Str("event", "board-offer").Str("task", t.ID).Str("id", m.ID).Msg("idle: a task from the board is next")
			return r.c.Notice(now, mailbox.Stem(m.ID)+mailbox.MessageSuffix)
		}
	}
	return nil
}

// takeable lists, most pressing first, the tasks agent may take.
func takeable(tasks []projectboard.Task, agent string, labels []string) []projectboard.Task {
	status := statuses(tasks)
	var out []projectboard.Task
	for _, t := range tasks {
		if t.Status != projectboard.Todo || (t.Owner != agent && (t.Owner != "" || !labelsMatch(t, labels))) {
			continue
		}
		if depsDone(t, status) {
			out = append(out, t)
		}
	}
	slices.SortStableFunc(out, func(a, b projectboard.Task) int {
		if d := priorityRank(a.Priority) - priorityRank(b.Priority); d != 0 {
			return d
		}
		return boolRank(a.Owner != agent) - boolRank(b.Owner != agent)
	})
	return out
}

func boolRank(b bool) int {
	if b {
		return 1
	}
	return 0
}

// priorityRank orders the priorities people write on boards.
func priorityRank(p string) int {
	switch strings.ToLower(strings.TrimSpace(p)) {
	case "urgent", "critical", "p0":
		return 0
	case "high", "p1":
		return 1
	case "low", "p3":
		return 3
	}
	return 2
}

// labelsMatch: an unowned task is the agent's to take when the agent has
// no labels, or the task's labels (or role) name one of them.
func labelsMatch(t projectboard.Task, labels []string) bool {
	if len(labels) == 0 {
		return true
	}
	var have []string
	for _, key := range []string{"labels", "label", "roles", "role"} {
		switch v := t.Extra[key].(type) {
		case string:
			have = append(have, v)
		case []any:
			for _, x := range v {
				if s, ok := x.(string); ok {
					have = append(have, s)
				}
			}
		}
	}
	return slices.ContainsFunc(have, func(h string) bool {
		return slices.ContainsFunc(labels, func(l string) bool { return strings.EqualFold(l, h) })
	})
}

// takeBoardTask makes the task of a board-task message the agent's, in one
// locked step on the boards: it must still be todo and unowned or the
// agent's, so that of two runners offered one task only one takes it. It
// reports false when the message was settled instead (someone else took
// the task), and true for every other message.
func (r *Runner) takeBoardTask(ctx context.Context, log zerolog.Logger, cl *claim) (bool, error) {
	msg := cl.Message
	if strings.ToLower(msg.Type) != typeBoardTask || cl.turn.Took {
		return true, nil
	}
	store := projectboard.Store{Root: r.s.Root, Clock: r.s.Clock}
	tasks, _ := store.Tasks()
	_, err := store.Update(ctx, msg.TaskID, func(t *projectboard.Task) error {
		switch {
		case t.Status == projectboard.InProgress && t.Owner == r.s.Agent:
			return nil // taken before a crash
		case t.Status != projectboard.Todo:
			return &notTaken{fmt.Sprintf("%s is %s now", t.ID, t.Status)}
		case t.Owner != "" && t.Owner != r.s.Agent:
			return &notTaken{fmt.Sprintf("%s is owned by %s now", t.ID, t.Owner)}
		case !depsDone(*t, statuses(tasks)):
			return &notTaken{fmt.Sprintf("%s depends on a task that is not done", t.ID)}
		}
		t.Status, t.Owner = projectboard.InProgress, r.s.Agent
		return nil
	})
	var refused *notTaken
	switch {
	case errors.As(err, &refused), errors.Is(err, projectboard.ErrNoTask) && projectboard.Refused(err):
		why := err.Error()
		log.Info().Str("event", "not-taken").Str("task", msg.TaskID).Str("reason", why).Msg("board task not taken")
		return false, r.settleByRunner(cl, "not taken: "+why)
	case err != nil:
		return false, r.failed(ctx, log, cl, fmt.Errorf("cannot take %s from the board: %w", msg.TaskID, err))
	}
	cl.turn.Took = true
	if err := r.record(cl, "took", r.now()); err != nil {
		return false, err
	}
	r.hb.count("taken from the board")
	log.Info().Str("event", "took").Str("task", msg.TaskID).Msg("took the task from the board")
	return true, nil
}

// depsDone reports whether every task t depends on is done.
func depsDone(t projectboard.Task, status map[string]projectboard.Status) bool {
	return !slices.ContainsFunc(t.DependsOn, func(d string) bool { return status[d] != projectboard.Done })
}

func statuses(tasks []projectboard.Task) map[string]projectboard.Status {
	m := make(map[string]projectboard.Status, len(tasks))
	for _, t := range tasks {
		m[t.ID] = t.Status
	}
	return m
}

// settleByRunner archives a message the runner settled without a turn,
// with a devlog entry.
func (r *Runner) settleByRunner(cl *claim, outcome string) error {
	now := r.now()
	if err := r.devlogOnce(cl, devlogEntry(r.s.Agent, cl.Message, now, outcome, "", "")); err != nil {
		return err
	}
	data, err := receipt.Encode(receipt.Data{Turn: receipt.NoTurn()})
	if err != nil {
		return err
	}
	if err := r.complete(cl, mailbox.Receipt{Outcome: outcome, Data: data}, now); err != nil {
		return err
	}
	r.hb.count(outcomeRunner)
	return nil
}
