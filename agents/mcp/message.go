package mcp

import (
	"time"

	"github.com/agentctl/agentctl/mailbox"
)

// Message is a message as the tools show it.
type Message struct {
	ID        string    `json:"id"`
	From      string    `json:"from"`
	To        string    `json:"to"`
	Type      string    `json:"type,omitempty"`
	Priority  string    `json:"priority,omitempty"`
	Subject   string    `json:"subject,omitempty"`
	Body      string    `json:"body"`
	CreatedAt time.Time `json:"created_at"`
	ReplyTo   string    `json:"reply_to,omitempty"`
	ThreadID  string    `json:"thread_id,omitempty"`
	TaskID    string    `json:"task_id,omitempty"`
	State     string    `json:"state" jsonschema:"pending (waiting), processing (the one being worked on), done or dead"`
	Outcome   string    `json:"outcome,omitempty" jsonschema:"how a done message ended: done, answered, ..."`
	Problem   string    `json:"problem,omitempty" jsonschema:"why the message file could not be read, if it could not"`
}

func messageOf(e mailbox.Entry) Message {
	m := e.Message
	out := Message{ID: m.ID, From: m.From, To: m.To, Type: m.Type, Priority: string(m.Priority), Subject: m.Subject,
		Body: m.Body, CreatedAt: m.CreatedAt, ReplyTo: m.ReplyTo, ThreadID: m.ThreadID, TaskID: m.TaskID,
		State: e.State, Problem: e.Problem}
	if e.Receipt != nil {
		out.Outcome = e.Receipt.Outcome
	}
	return out
}

func idsOf(msgs []mailbox.Message) []string {
	ids := []string{}
	for _, m := range msgs {
		ids = append(ids, m.ID)
	}
	return ids
}
