package mcp

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentctl/agentctl/agents/actions"
)

// SendIn is what send takes. There is no sender: it is the server's agent.
type SendIn struct {
	To       string `json:"to" jsonschema:"recipient: an agent (Agent-3), a person (human), or all for every agent but you"`
	Body     string `json:"body" jsonschema:"the message text"`
	Priority string `json:"priority,omitempty" jsonschema:"low, normal, high or urgent; normal when omitted"`
	Subject  string `json:"subject,omitempty" jsonschema:"subject line"`
	Type     string `json:"type,omitempty" jsonschema:"message type such as message or task; message when omitted"`
	ReplyTo  string `json:"reply_to,omitempty" jsonschema:"id of the message this answers, which puts it in that message's thread"`
	TaskID   string `json:"task_id,omitempty" jsonschema:"board task id the message is about"`
	Ack      bool   `json:"ack,omitempty" jsonschema:"ask for a receipt message once the message is done or dead-lettered"`
	// IdempotencyKey makes a retried call deliver once.
	IdempotencyKey string `json:"idempotency_key,omitempty" jsonschema:"any string naming this send: a call repeated with the same key delivers nothing new and returns the first call's ids (keys are kept 7 days)"`
}

// SendOut is what send delivered.
type SendOut struct {
	IDs []string `json:"ids" jsonschema:"ids of the messages delivered, one per recipient"`
	// Repeated: the key had delivered them before; nothing new was sent.
	Repeated bool `json:"repeated" jsonschema:"true when an earlier call with this idempotency key had delivered them and nothing new was sent"`
}

func (t *tools) addSend(s *sdk.Server) {
	sdk.AddTool(s, &sdk.Tool{Name: "send", Description: "Deliver a message from you to an agent's or a person's inbox, as 'agentctl send' does."}, t.send)
}

func (t *tools) send(ctx context.Context, _ *sdk.CallToolRequest, in SendIn) (*sdk.CallToolResult, SendOut, error) {
	d := actions.Draft{To: in.To, From: t.as, Type: in.Type, Priority: in.Priority, Subject: in.Subject, Body: in.Body,
		ReplyTo: in.ReplyTo, TaskID: in.TaskID, Ack: in.Ack}
	if in.IdempotencyKey == "" {
		sent, err := t.rt.Send(d)
		return nil, SendOut{IDs: idsOf(sent)}, toolError(err)
	}
	rec, err := t.keys.claim(ctx, in.IdempotencyKey, fingerprint(in))
	if err != nil {
		return nil, SendOut{}, toolError(err)
	}
	if rec.IDs != nil {
		return nil, SendOut{IDs: rec.IDs, Repeated: true}, nil
	}
	// A record without ids is new, or from a call that has not finished
	// (or never will): deliver its ids, which the mailboxes take once.
	d.IDFor = rec.idFor
	sent, err := t.rt.SendOnce(d)
	out := SendOut{IDs: idsOf(sent.Messages), Repeated: sent.Before}
	if err != nil {
		return nil, out, toolError(err)
	}
	return nil, out, toolError(t.keys.delivered(ctx, rec, out.IDs))
}

// fingerprint is what a key's request asked for, all but the key.
func fingerprint(in SendIn) string {
	in.IdempotencyKey = ""
	data, _ := json.Marshal(in)
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}
