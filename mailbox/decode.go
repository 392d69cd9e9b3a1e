package mailbox

import (
	"github.com/agentctl/agentctl/mailbox/dreamos"
)

// Source says where raw message bytes came from (see dreamos.Source).
type Source = dreamos.Source

// Decode turns the bytes of any message shape agentctl knows into a
// canonical Message; package dreamos does the reading. Fields that could
// not be read fell back and are noted in Meta["fallbacks"]. The error says,
// in words fit for a deadletter reason, why the bytes are no message.
func Decode(data []byte, src Source) (Message, error) {
	d, err := dreamos.Decode(data, src)
	if err != nil {
		return Message{}, err
	}
	return Message{
		ID: d.ID, From: d.From, To: d.To, Type: d.Type, Priority: Priority(d.Priority),
		Subject: d.Subject, Body: d.Body, CreatedAt: d.CreatedAt, ReplyTo: d.ReplyTo,
		ThreadID: d.ThreadID, TaskID: d.TaskID, RequiresAck: d.RequiresAck,
		DeliverAfter: d.DeliverAfter, ExpiresAt: d.ExpiresAt, Attempts: d.Attempts,
		LastError: d.LastError, Meta: d.Meta,
	}, nil
}

// IsCompleteJSON reports whether data holds exactly one whole JSON value.
func IsCompleteJSON(data []byte) bool { return dreamos.IsCompleteJSON(data) }

// Fallbacks lists the fields of m that could not be read as written, as
// "field: reason" lines, for the devlog and for people.
func Fallbacks(m Message) []string {
	list, _ := m.Meta[dreamos.FallbacksKey].([]any)
	var out []string
	for _, f := range list {
		if f, ok := f.(map[string]any); ok {
			field, _ := f["field"].(string)
			reason, _ := f["reason"].(string)
			out = append(out, field+": "+reason)
		}
	}
	return out
}
