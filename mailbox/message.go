package mailbox

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"

	"github.com/agentctl/agentctl/mailbox/dreamos"
)

// Message is the canonical message that agentctl writes. Readers accept far
// more shapes (see Decode); writers always produce this one.
type Message struct {
	ID        string    `json:"id"`
	From      string    `json:"from"`
	To        string    `json:"to"`
	Type      string    `json:"type"`
	Priority  Priority  `json:"priority"`
	Subject   string    `json:"subject"`
	Body      string    `json:"body"`
	CreatedAt time.Time `json:"created_at"`
	ReplyTo   string    `json:"reply_to,omitempty"`
	ThreadID  string    `json:"thread_id,omitempty"`
	TaskID    string    `json:"task_id,omitempty"`
	// RequiresAck asks for a receipt message back to the sender once the
	// message is archived or dead-lettered.
	RequiresAck bool `json:"requires_ack,omitempty"`
	// DeliverAfter holds the message back until then (retries use it too).
	DeliverAfter *time.Time `json:"deliver_after,omitempty"`
	// ExpiresAt is when an unclaimed message stops being worth doing.
	ExpiresAt *time.Time `json:"expires_at,omitempty"`
	// Attempts counts the failed tries so far; LastError says why the last
	// one failed.
	Attempts  int    `json:"attempts,omitempty"`
	LastError string `json:"last_error,omitempty"`
	// Meta keeps every field of the original that has no canonical place,
	// so decoding a Dream.OS message loses nothing.
	Meta map[string]any `json:"meta"`
}

// Thread is the conversation m belongs to: its thread_id, or its own id
// when it starts one.
func (m Message) Thread() string {
	if m.ThreadID != "" {
		return m.ThreadID
	}
	return m.ID
}

// Encode returns the canonical JSON of m, indented for people who cat it.
func (m Message) Encode() []byte {
	if m.Meta == nil {
		m.Meta = map[string]any{}
	}
	data, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		// Only unencodable Meta values could fail, and Meta only ever holds
		// what encoding/json decoded.
		panic(fmt.Sprintf("cannot encode message %s: %v", m.ID, err))
	}
	return append(data, '\n')
}

// NewID returns a fresh message id: sortable by time, unique by chance, and
// in the msg_YYYYMMDD_HHMMSS_xxxx style Dream.OS used.
func NewID(now time.Time) string {
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err) // crypto/rand never fails on supported platforms
	}
	return "msg_" + now.UTC().Format("20060102_150405") + "_" + hex.EncodeToString(b[:])
}

// Priority orders the inbox: urgent before high before normal before low.
type Priority string

const (
	Urgent Priority = "urgent"
	High   Priority = "high"
	Normal Priority = "normal"
	Low    Priority = "low"
)

// Priorities lists the priorities from most to least pressing.
var Priorities = []Priority{Urgent, High, Normal, Low}

// Rank is 0 for urgent up to 3 for low; unknown values rank as normal.
func (p Priority) Rank() int {
	for i, q := range Priorities {
		if p == q {
			return i
		}
	}
	return 2
}

// ParsePriority reads a priority the way Dream.OS wrote them: words in any
// case ("URGENT", "regular", "MEDIUM", "critical").
func ParsePriority(s string) (Priority, error) {
	p, err := dreamos.ParsePriority(s)
	return Priority(p), err
}
