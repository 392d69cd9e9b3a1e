package agents

import (
	"errors"
	"fmt"
	"time"

	"github.com/agentctl/agentctl/internal/agentname"
	"github.com/agentctl/agentctl/mailbox"
	"github.com/agentctl/agentctl/projectboard"
)

// TypeDependencyFulfilled is the type of the message the owner of a task
// gets when a task it depends on is done.
const TypeDependencyFulfilled = "task-dependency-fulfilled"

// dependencyNotice is one notice owed: dependent's owner hears that done
// is done.
type dependencyNotice struct {
	done, dependent projectboard.Task
	to              string
}

// dependencyNotices computes the notices the boards call for: one per
// (done task, task that depends on it and is not done, with an owner that
// is a configured agent or person).
func dependencyNotices(tasks []projectboard.Task, names []string) []dependencyNotice {
	byID := make(map[string]projectboard.Task, len(tasks))
	for _, t := range tasks {
		byID[t.ID] = t
	}
	var out []dependencyNotice
	for _, x := range tasks {
		if x.Status == projectboard.Done || x.Owner == "" {
			continue
		}
		to, err := agentname.Resolve(names, x.Owner)
		if err != nil {
			continue
		}
		for _, d := range x.DependsOn {
			if dt, ok := byID[d]; ok && dt.Status == projectboard.Done {
				out = append(out, dependencyNotice{done: dt, dependent: x, to: to})
			}
		}
	}
	return out
}

// noticeMessage is the message of n. Its id is derived from the two tasks
// only, so every runner and reconcile that notices the same transition
// delivers the same message, which the mailbox stores once.
func (n dependencyNotice) message(now time.Time) mailbox.Message {
	return mailbox.Message{
		ID: derivedID("dependency-fulfilled", n.done.ID, n.dependent.ID), From: "board", To: n.to,
		Type: TypeDependencyFulfilled, Priority: mailbox.Normal, TaskID: n.dependent.ID, CreatedAt: now.UTC(),
		Subject: fmt.Sprintf("%s is done: %s can go ahead", n.done.ID, n.dependent.ID),
		Body: fmt.Sprintf("%s (%s) is done. Your task %s (%s), which depends on it, is %s.",
			n.done.ID, n.done.Title, n.dependent.ID, n.dependent.Title, n.dependent.Status),
		Meta: map[string]any{"dependency": n.done.ID},
	}
}

// Dependencies sends the dependency notices the boards call for, each
// exactly once however many runners look (see dependencyNotice.message).
// Unreadable boards are left out until they are fixed.
func (rc *Recovery) Dependencies(now time.Time) ([]Finding, error) {
	store := projectboard.Store{Root: rc.Root}
	tasks, _ := store.Tasks()
	var found []Finding
	for _, n := range dependencyNotices(tasks, append(append([]string(nil), rc.Agents...), rc.People...)) {
		m := n.message(now)
		fresh, err := deliver(rc.Root, m)
		if errors.Is(err, mailbox.ErrNoMailbox) {
			continue // told once its mailbox exists
		}
		if err != nil {
			return found, fmt.Errorf("cannot tell %s that %s is done: %w", n.to, n.done.ID, err)
		}
		if fresh {
			rc.Log.Info().Str("event", "dependency-notice").Str("to", n.to).Str("done", n.done.ID).Str("task", n.dependent.ID).Str("sent_id", m.ID).Msg("told the owner a dependency is done")
			found = append(found, Finding{Agent: n.to, Kind: "dependency-notice", ID: m.ID, Detail: m.Subject})
		}
	}
	return found, nil
}
