package dreamos

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"time"
)

// Message is what the decoder found, in the canonical field names. The
// mailbox turns it into its own Message type field by field.
type Message struct {
	ID, From, To, Type string
	Priority           string // low, normal, high or urgent
	Subject, Body      string
	CreatedAt          time.Time
	ReplyTo, ThreadID  string
	TaskID             string
	RequiresAck        bool
	DeliverAfter       *time.Time
	ExpiresAt          *time.Time
	Attempts           int
	LastError          string
	Meta               map[string]any
}

// Source says where the bytes came from. It names the message in errors,
// gives id-less messages a stable id, and fills in what old formats left out.
type Source struct {
	// Name is the file name, or the place inside a file ("inbox.txt@120",
	// ".ingest/<spool>.json[3]"), unique to those bytes' place.
	Name string
	// ModTime stands in for a missing or unreadable creation time.
	ModTime time.Time
	// Owner is the agent whose mailbox the bytes were found in; it is the
	// recipient when the message names none.
	Owner string
}

// FallbacksKey is the Meta key under which fallbacks are noted: a list of
// {"field", "original", "used", "reason"} objects.
const FallbacksKey = "fallbacks"

// fallback notes that field could not be read as written and what was
// used instead.
func (m *Message) fallback(field string, original any, used, reason string) {
	if m.Meta == nil {
		m.Meta = map[string]any{}
	}
	list, _ := m.Meta[FallbacksKey].([]any)
	m.Meta[FallbacksKey] = append(list, map[string]any{
		"field": field, "original": original, "used": used, "reason": reason,
	})
}

// derivedPrefix starts every id DerivedID makes.
const derivedPrefix = "drop_"

// IsDerivedID reports whether id is one DerivedID made, which changes with
// the name of the file the message was read from.
func IsDerivedID(id string) bool { return strings.HasPrefix(id, derivedPrefix) }

// DerivedID names a message that came without a usable id. It depends only
// on the bytes and where they were found, so reading the same bytes from
// the same place twice gives the same id, and the mailbox stores the
// message once.
func DerivedID(raw []byte, name string) string {
	h := sha256.New()
	h.Write([]byte(name))
	h.Write([]byte{0})
	h.Write(raw)
	return derivedPrefix + hex.EncodeToString(h.Sum(nil))[:20]
}
