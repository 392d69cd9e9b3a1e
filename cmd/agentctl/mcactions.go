package main

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/agentctl/agentctl/agents/missioncontrol"
	"github.com/agentctl/agentctl/config"
	"github.com/agentctl/agentctl/projectboard"
)

// cliActions are mission control's changes, made by the functions behind
// the commands of the same names.
type cliActions struct {
	env *Env
	cfg config.Config
}

func (a *cliActions) Send(ctx context.Context, r missioncontrol.SendRequest) (string, error) {
	sent, err := sendMessage(a.env, a.cfg, draft{To: r.To, From: r.From, Type: r.Type, Priority: r.Priority, Subject: r.Subject, Body: r.Body, TaskID: r.TaskID})
	var ids []string
	for _, m := range sent {
		ids = append(ids, m.ID+" to "+m.To)
	}
	if err != nil {
		return "", err
	}
	return "sent " + strings.Join(ids, ", "), nil
}

func (a *cliActions) Retry(ctx context.Context, r missioncontrol.RetryRequest) (string, error) {
	msg, target, dl, err := retryDeadLetter(a.env, a.cfg, r.Ref, "", r.Mailbox)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("%s is back in %s's inbox (it was dead: %s)", msg.ID, target.Agent, dash(dl.Reason)), nil
}

func (a *cliActions) Reply(ctx context.Context, r missioncontrol.ReplyRequest) (string, error) {
	if strings.TrimSpace(r.Text) == "" {
		return "", usageError{msg: "reply: no answer text"}
	}
	person := r.Person
	if person == "" {
		person = a.cfg.Human()
	}
	answer, before, err := replyAs(a.env, a.cfg, person, r.ID, r.Text)
	if err != nil {
		return "", err
	}
	if before {
		return fmt.Sprintf("%s was answered before (%s); this text was not sent, and the question is now archived", r.ID, answer.ID), nil
	}
	return fmt.Sprintf("answered %s: %s is in %s's inbox", r.ID, answer.ID, answer.To), nil
}

func (a *cliActions) Approve(ctx context.Context, r missioncontrol.ApprovalRequest) (string, error) {
	done, err := approveRequest(ctx, a.env, a.cfg, r.Person, r.ID)
	if err != nil {
		return "", err
	}
	return strings.Join(done, "; "), nil
}

func (a *cliActions) Deny(ctx context.Context, r missioncontrol.ApprovalRequest) (string, error) {
	notice, err := denyRequest(a.env, a.cfg, r.Person, r.ID, r.Reason)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("denied %s; %s told (%s)", r.ID, notice.To, notice.ID), nil
}

func (a *cliActions) SetTask(ctx context.Context, r missioncontrol.TaskRequest) (string, error) {
	t, err := setTask(ctx, a.env, &projectboard.Store{Root: a.env.Root}, r.ID, r.Changes)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("%s: status %s, owner %s", t.ID, t.Status, boardDash(t.Owner)), nil
}

// skipWait is how long a skip from mission control waits for the runner.
const skipWait = 30 * time.Second

func (a *cliActions) Skip(ctx context.Context, r missioncontrol.SkipRequest) (string, error) {
	var out bytes.Buffer
	env := &Env{Root: a.env.Root, Stdin: strings.NewReader(""), Stdout: &out, Stderr: &out}
	if err := skipTurn(ctx, env, a.cfg, r.Agent, "", r.Reason, skipWait); err != nil {
		return "", err
	}
	return strings.Join(strings.Fields(strings.ReplaceAll(out.String(), "\n", "; ")), " "), nil
}
