package mcp

import (
	"context"
	"fmt"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentctl/agentctl/agents/actions"
	"github.com/agentctl/agentctl/config"
)

// ReplyHumanIn is what reply_human takes.
type ReplyHumanIn struct {
	Body     string `json:"body" jsonschema:"what to tell or ask the person"`
	Subject  string `json:"subject,omitempty" jsonschema:"subject line"`
	Priority string `json:"priority,omitempty" jsonschema:"low, normal, high or urgent; normal when omitted"`
	Question bool   `json:"question,omitempty" jsonschema:"true to ask a question the person answers with 'agentctl reply'; the answer comes to your inbox"`
	ReplyTo  string `json:"reply_to,omitempty" jsonschema:"id of the person's message this answers"`
	TaskID   string `json:"task_id,omitempty" jsonschema:"board task id the message is about"`
}

// ReplyHumanOut is the message delivered.
type ReplyHumanOut struct {
	ID string `json:"id" jsonschema:"id of the message delivered"`
	To string `json:"to" jsonschema:"the person's mailbox it went to"`
}

func (t *tools) addReplyHuman(s *sdk.Server) {
	sdk.AddTool(s, &sdk.Tool{Name: "reply_human", Description: "Write to the person in the loop (the human mailbox, or the first person agentctl.yaml names), as 'agentctl send --to human' does from you."}, t.replyHuman)
}

func (t *tools) replyHuman(ctx context.Context, _ *sdk.CallToolRequest, in ReplyHumanIn) (*sdk.CallToolResult, ReplyHumanOut, error) {
	typ := "message"
	if in.Question {
		typ = "question"
	}
	human := t.rt.Config.Human()
	if human == "" {
		return nil, ReplyHumanOut{}, fmt.Errorf("this runtime has no person to write to\nhint: name one under people: in %s", config.Path(t.rt.Root))
	}
	sent, err := t.rt.Send(actions.Draft{To: human, From: t.as, Type: typ, Priority: in.Priority, Subject: in.Subject,
		Body: in.Body, ReplyTo: in.ReplyTo, TaskID: in.TaskID})
	out := ReplyHumanOut{To: human}
	if len(sent) > 0 {
		out.ID, out.To = sent[0].ID, sent[0].To
	}
	return nil, out, toolError(err)
}
