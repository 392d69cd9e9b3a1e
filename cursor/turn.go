package cursor

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"
)

// turnState is what a turn learned about the chat before its prompt was
// sent, so that it never takes what was there already for the new reply.
// A runner keeps it (encoded) with the turn's progress, so that a turn
// resumed after a crash knows it too.
type turnState struct {
	// Prev fingerprints what the copy action gave before the prompt was
	// sent: the previous reply, or "" when it gave nothing.
	Prev string `json:"prev,omitempty"`
	// PrevKnown is false for a turn resumed without a recorded state.
	PrevKnown bool `json:"prev_known,omitempty"`
	// Idle fingerprints the busy indicator at rest; "" without one.
	Idle string `json:"idle,omitempty"`
}

func (s turnState) encode() string {
	b, _ := json.Marshal(s)
	return string(b)
}

// decodeState reads a recorded state. Anything else (nothing recorded, or
// a state written by an older agentctl) is a state that knows nothing.
func decodeState(recorded string) turnState {
	var s turnState
	if !strings.HasPrefix(recorded, "{") || json.Unmarshal([]byte(recorded), &s) != nil {
		return turnState{}
	}
	return s
}

// stale says why a copied text cannot be this turn's reply, or "" when it
// can. A model that really answers with its prompt or with the previous
// reply word for word is not told apart from a chat that has not answered
// yet: the turn then waits and times out naming the reason, rather than
// return something it cannot prove new.
func (s turnState) stale(prompt, copied string) string {
	switch {
	case copied == "":
		return "nothing (an empty copy)"
	case copied == prompt || strings.TrimSpace(copied) == strings.TrimSpace(prompt):
		return "the prompt itself (the chat's echo of it)"
	case s.PrevKnown && fingerprintText(copied) == s.Prev:
		return "the reply from before this prompt was sent"
	}
	return ""
}

// fingerprint names pixels or text compactly enough to keep in a progress
// record.
func fingerprint(b []byte) string {
	if b == nil {
		return ""
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

func fingerprintText(s string) string { return fingerprint([]byte(s)) }
