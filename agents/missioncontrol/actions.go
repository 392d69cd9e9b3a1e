package missioncontrol

import "context"

// Actions are the changes a person makes from mission control.
// RuntimeActions makes them with the very functions behind `agentctl
// send`, `retry`, `reply`, `approve`, `deny`, `board set` and `skip`
// (package actions). Each returns a sentence saying what happened; an
// error may carry a Hint() with the fix.
type Actions interface {
	Send(ctx context.Context, r SendRequest) (string, error)
	Retry(ctx context.Context, r RetryRequest) (string, error)
	Reply(ctx context.Context, r ReplyRequest) (string, error)
	Approve(ctx context.Context, r ApprovalRequest) (string, error)
	Deny(ctx context.Context, r ApprovalRequest) (string, error)
	SetTask(ctx context.Context, r TaskRequest) (string, error)
	Skip(ctx context.Context, r SkipRequest) (string, error)
}

// SendRequest is the send form: the fields of `agentctl send`.
type SendRequest struct {
	To       string `json:"to"`
	From     string `json:"from"`
	Type     string `json:"type"`
	Priority string `json:"priority"`
	Subject  string `json:"subject"`
	Body     string `json:"body"`
	TaskID   string `json:"task_id"`
}

// RetryRequest names a dead letter and, optionally, its mailbox.
type RetryRequest struct {
	Ref     string `json:"ref"`
	Mailbox string `json:"mailbox"`
}

// ReplyRequest answers a message in a person's mailbox.
type ReplyRequest struct {
	Person string `json:"person"`
	ID     string `json:"id"`
	Text   string `json:"text"`
}

// ApprovalRequest settles an approval request in a person's mailbox: the
// effect it holds is applied (approve) or refused (deny, with a reason).
type ApprovalRequest struct {
	Person string `json:"person"`
	ID     string `json:"id"`
	Reason string `json:"reason"`
}

// TaskRequest changes a board task, as `board set ID key=value...`.
type TaskRequest struct {
	ID      string   `json:"id"`
	Changes []string `json:"changes"`
}

// SkipRequest abandons the turn an agent is taking.
type SkipRequest struct {
	Agent  string `json:"agent"`
	Reason string `json:"reason"`
}
