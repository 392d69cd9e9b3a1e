// Package receipt owns what a receipt says of a message's outcome beyond
// the fields of mailbox.Receipt (Data): its one shape, written by Encode
// and read back by Read, for every settler of messages (the runner, the
// actions a person takes, the hub, agentctl drop) and every reader of
// receipts (agentctl inbox, mission control, agentctl reply).
//
// Package mailbox keeps the data as JSON it never looks into; this package
// sits just above it, below everything that settles or reads messages, so
// that the hub, which the runner's own tests use, can write it too. It
// opens no file: the store keeps the bytes, and this package only encodes
// and decodes them.
package receipt

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/agentctl/agentctl/mailbox"
)

// Data is what a receipt says of a message's outcome beyond the fields of
// mailbox.Receipt: what the runner's reply did, or what the person who
// settled it by hand decided. It travels in mailbox.Receipt.Data.
//
// The keys and value shapes are those of the untyped object receipts held
// before (see testdata/v0), so receipts already archived read
// unchanged, and a receipt written now is the bytes an earlier agentctl
// wrote for the same outcome: the fields are in the order of their keys,
// the order in which an untyped object was written. That is also why there
// is no version: nothing changed shape.
//
// Every field is optional, and left out of the JSON when not set.
type Data struct {
	// Applied are the effects a person's approval applied, in words
	// (agentctl approve).
	Applied []string `json:"applied,omitempty"`
	// BlockError is why the reply's agentctl block was refused whole.
	BlockError string `json:"block_error,omitempty"`
	// Board are the ids of the tasks the reply changed.
	Board []string `json:"board,omitempty"`
	// By is the person who approved or denied an approval request.
	By string `json:"by,omitempty"`
	// Carried are the ids of the digest notes the turn carried, and
	// CarriedBy, on such a note's own receipt, the message whose turn did.
	Carried   []string `json:"carried,omitempty"`
	CarriedBy string   `json:"carried_by,omitempty"`
	// DeadletterHistory is how the message died before a person brought
	// it back (agentctl retry), oldest first.
	DeadletterHistory []mailbox.Death `json:"deadletter_history,omitempty"`
	// Deferred are board changes kept until the boards can take them.
	Deferred []string `json:"deferred,omitempty"`
	// DriverNotes are the driver's notes on the turn.
	DriverNotes []string `json:"driver_notes,omitempty"`
	// Errors are the items refused and the effects that failed, and why.
	Errors []string `json:"errors,omitempty"`
	// NoBlock says why a reply ended "done without block".
	NoBlock string `json:"no_block,omitempty"`
	// Notice is the id of the notice that told the asking agent of a
	// denial.
	Notice string `json:"notice,omitempty"`
	// Parked are the ids of the approval requests holding effects for a
	// person.
	Parked []string `json:"parked,omitempty"`
	// Reason is why a person denied a request or dropped a message.
	Reason string `json:"reason,omitempty"`
	// ReplyID is the id of a person's answer (agentctl reply), and To who
	// it went to; for a message the hub forwarded, To is "hub".
	ReplyID string `json:"reply_id,omitempty"`
	// Report is the Dream.OS report the reply carried.
	Report *Report `json:"report,omitempty"`
	// Sent are the ids of the messages the reply sent.
	Sent []string `json:"sent,omitempty"`
	To   string   `json:"to,omitempty"`
	// Turn is false when the runner handled the message itself, without a
	// turn; it is never written true.
	Turn *bool `json:"turn,omitempty"`
	// Was is the state a dropped message was in (agentctl drop).
	Was string `json:"was,omitempty"`
}

// Report is a Dream.OS completion report as a receipt keeps it, field for
// field the runner's own (agents.Report), which converts to it.
type Report struct {
	Task          string   `json:"task,omitempty"`
	Actions       []string `json:"actions,omitempty"`
	CommitMessage string   `json:"commit_message,omitempty"`
	Status        string   `json:"status,omitempty"`
}

// NoTurn is Data.Turn of a message the runner handled itself.
func NoTurn() *bool {
	no := false
	return &no
}

// Encode is the one writer of receipt data: the JSON for
// mailbox.Receipt.Data, nil when d says nothing, as an empty untyped
// object was left out.
func Encode(d Data) (json.RawMessage, error) {
	data, err := json.Marshal(d)
	if err != nil {
		return nil, fmt.Errorf("cannot write the receipt's data: %w", err)
	}
	if bytes.Equal(data, []byte("{}")) {
		return nil, nil
	}
	return data, nil
}

// Read is the one reader of a receipt's data. A value of a shape
// no agentctl wrote (a receipt edited by hand) counts as missing, as it
// did for the untyped readers before: the rest is read, and the error
// names what was not. A receipt without data, or none at all, says
// nothing.
func Read(r *mailbox.Receipt) (Data, error) {
	var d Data
	if r == nil || len(r.Data) == 0 || bytes.Equal(r.Data, []byte("null")) {
		return d, nil
	}
	if json.Unmarshal(r.Data, &d) == nil {
		return d, nil
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(r.Data, &fields); err != nil {
		return Data{}, fmt.Errorf("the data of the receipt of %s cannot be read: %w", r.ID, err)
	}
	// One key at a time: a key whose value decodes whole is kept, and one
	// that does not leaves nothing half-read behind.
	d = Data{}
	var bad []string
	for key, value := range fields {
		one, err := json.Marshal(map[string]json.RawMessage{key: value})
		if err == nil {
			err = json.Unmarshal(one, &Data{})
		}
		if err != nil {
			bad = append(bad, key)
			continue
		}
		if err := json.Unmarshal(one, &d); err != nil {
			bad = append(bad, key)
		}
	}
	sort.Strings(bad)
	return d, fmt.Errorf("the receipt of %s has data no agentctl wrote, left out: %s", r.ID, strings.Join(bad, ", "))
}
