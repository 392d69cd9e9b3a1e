package mcp

import (
	"context"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// AnswerIn is what answer takes.
type AnswerIn struct {
	ID   string `json:"id" jsonschema:"id of the message in your inbox to answer: pending, or the one you are working on"`
	Body string `json:"body" jsonschema:"the answer's text"`
}

// AnswerOut is the answer delivered.
type AnswerOut struct {
	ID string `json:"id" jsonschema:"id of the answer; a message is answered once"`
	To string `json:"to" jsonschema:"who asked, whose inbox the answer went to"`
	// Archived: the question was pending and is now archived as answered.
	Archived bool `json:"archived" jsonschema:"true when the question was pending and is now archived as answered; the message you are working on is left to your runner"`
}

func (t *tools) addAnswer(s *sdk.Server) {
	sdk.AddTool(s, &sdk.Tool{Name: "answer", Description: "Answer a message in your inbox: the answer goes to its sender in its thread (reply_to, thread and task kept), as 'agentctl reply' does for a person."}, t.answer)
}

func (t *tools) answer(ctx context.Context, _ *sdk.CallToolRequest, in AnswerIn) (*sdk.CallToolResult, AnswerOut, error) {
	r, err := t.rt.Answer(ctx, t.as, in.ID, in.Body)
	out := AnswerOut{ID: r.Answer.ID, To: r.Answer.To, Archived: r.Settled}
	return nil, out, toolError(err)
}
