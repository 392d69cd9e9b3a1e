package mcp

import (
	"context"
	"fmt"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentctl/agentctl/mailbox"
)

// InboxIn is what inbox takes: nothing to list, an id to read one.
type InboxIn struct {
	ID string `json:"id,omitempty" jsonschema:"id of one of your messages to read, in any state; omit to list the pending ones"`
}

// InboxOut is the caller's pending messages, or the one asked for.
type InboxOut struct {
	Agent    string    `json:"agent" jsonschema:"whose inbox this is: yours"`
	Messages []Message `json:"messages" jsonschema:"pending messages in the order they will be worked on, or the one asked for"`
}

func (t *tools) addInbox(s *sdk.Server) {
	sdk.AddTool(s, &sdk.Tool{Name: "inbox", Description: "List your pending messages, or read one of your messages by id, as 'agentctl inbox' does. Changes nothing."}, t.inbox)
}

func (t *tools) inbox(ctx context.Context, _ *sdk.CallToolRequest, in InboxIn) (*sdk.CallToolResult, InboxOut, error) {
	out := InboxOut{Agent: t.as, Messages: []Message{}}
	mb, err := t.rt.OpenMailbox(t.as)
	if err != nil {
		return nil, out, toolError(err)
	}
	var entries []mailbox.Entry
	if in.ID == "" {
		entries, err = mb.List(mailbox.StatePending)
	} else {
		entries, err = mb.Locate(in.ID)
		if err == nil && len(entries) == 0 {
			entries, err = stillInInboxJSON(mb, in.ID)
		}
		if err == nil && len(entries) == 0 {
			err = fmt.Errorf("no message %s in %s's mailbox", in.ID, t.as)
		}
	}
	for _, e := range entries {
		out.Messages = append(out.Messages, messageOf(e))
	}
	return nil, out, toolError(err)
}

// stillInInboxJSON finds message id among the pending messages that an
// old writer appended to inbox.json and no runner has taken in yet: they
// have no file of their own for Locate to find.
func stillInInboxJSON(mb *mailbox.Mailbox, id string) ([]mailbox.Entry, error) {
	pending, err := mb.List(mailbox.StatePending)
	var found []mailbox.Entry
	for _, e := range pending {
		if e.Message.ID == id {
			found = append(found, e)
		}
	}
	return found, err
}
