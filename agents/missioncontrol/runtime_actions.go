package missioncontrol

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/agentctl/agentctl/agents/actions"
	"github.com/agentctl/agentctl/agents/actions/turns"
)

// RuntimeActions are Actions made by package actions, the functions behind
// the commands of the same names, and said in a sentence each.
type RuntimeActions struct {
	Runtime turns.Runtime
	Board   actions.Board
}

// skipWait is how long a skip from mission control waits for the runner.
const skipWait = 30 * time.Second

func (a *RuntimeActions) Send(ctx context.Context, r SendRequest) (string, error) {
	sent, err := a.Runtime.Send(actions.Draft{To: r.To, From: r.From, Type: r.Type, Priority: r.Priority, Subject: r.Subject, Body: r.Body, TaskID: r.TaskID})
	if err != nil {
		return "", err
	}
	var ids []string
	for _, m := range sent {
		ids = append(ids, m.ID+" to "+m.To)
	}
	return "sent " + strings.Join(ids, ", "), nil
}

func (a *RuntimeActions) Retry(ctx context.Context, r RetryRequest) (string, error) {
	done, err := a.Runtime.Retry(ctx, r.Ref, "", r.Mailbox)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("%s is back in %s's inbox (it was dead: %s)", done.Message.ID, done.Mailbox.Agent, dash(done.Was.Reason)), nil
}

func (a *RuntimeActions) Reply(ctx context.Context, r ReplyRequest) (string, error) {
	done, err := a.Runtime.Reply(ctx, r.Person, r.ID, r.Text)
	if err != nil {
		return "", err
	}
	if done.SentBefore {
		return fmt.Sprintf("%s was answered before (%s); this text was not sent, and the question is now archived", r.ID, done.Answer.ID), nil
	}
	return fmt.Sprintf("answered %s: %s is in %s's inbox", r.ID, done.Answer.ID, done.Answer.To), nil
}

func (a *RuntimeActions) Approve(ctx context.Context, r ApprovalRequest) (string, error) {
	done, err := a.Runtime.Approve(ctx, r.Person, r.ID)
	if err != nil {
		return "", err
	}
	return strings.Join(done, "; "), nil
}

func (a *RuntimeActions) Deny(ctx context.Context, r ApprovalRequest) (string, error) {
	notice, err := a.Runtime.Deny(ctx, r.Person, r.ID, r.Reason)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("denied %s; %s told (%s)", r.ID, notice.To, notice.ID), nil
}

func (a *RuntimeActions) SetTask(ctx context.Context, r TaskRequest) (string, error) {
	t, err := a.Board.SetTask(ctx, r.ID, r.Changes)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("%s: status %s, owner %s", t.ID, t.Status, dash(t.Owner)), nil
}

func (a *RuntimeActions) Skip(ctx context.Context, r SkipRequest) (string, error) {
	var said []string
	var warnings bytes.Buffer
	s, err := a.Runtime.Skip(ctx, turns.SkipRequest{
		Agent: r.Agent, Reason: r.Reason, Wait: skipWait, Log: &warnings,
		OnAsk: func(a turns.Skipped) {
			said = append(said, fmt.Sprintf("asked %s's runner (pid %d) to skip %s; waiting up to %s", a.Agent, a.RunnerPID, a.ID, skipWait))
		},
	})
	if err != nil {
		return "", err
	}
	if w := strings.TrimSpace(warnings.String()); w != "" {
		said = append(said, w)
	}
	switch s.By {
	case turns.SkippedHere:
		said = append(said, fmt.Sprintf("%s skipped: no runner was up; it is in %s's deadletter/", s.ID, s.Agent))
	case turns.SkippedAfterRunner:
		said = append(said, fmt.Sprintf("%s skipped: the runner stopped meanwhile; it is in %s's deadletter/", s.ID, s.Agent))
	default:
		said = append(said, fmt.Sprintf("%s skipped: it is in %s's %s", s.ID, s.Agent, s.File))
	}
	said = append(said, "bring it back with: agentctl retry "+s.ID)
	return strings.Join(strings.Fields(strings.Join(said, "; ")), " "), nil
}

// dash stands for an empty value in a sentence.
func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
