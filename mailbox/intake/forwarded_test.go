package intake

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/agentctl/agentctl/mailbox"
)

// A forwarded message comes in as one dropped in the inbox would: a
// message once (a second forwarding of it is no error), bytes that are no
// message as they are, for the consumer to dead-letter, and a message its
// sender may not send nowhere at all.
func TestDeliverForwarded(t *testing.T) {
	root := newRuntime(t, "Agent-1")
	mb := openMailbox(t, root, "Agent-1")
	inbox := filepath.Join(root, "agent_mailboxes", "Agent-1", "inbox")
	at := time.Date(2026, 11, 28, 4, 0, 0, 0, time.UTC)
	allowAgent2 := func(m mailbox.Message) error {
		if m.From != "Agent-2" {
			return errors.New("not Agent-2")
		}
		return nil
	}
	msg := []byte(`{"id":"m1","from":"Agent-2","to":"Agent-1","body":"hello"}`)
	for range 2 {
		if err := DeliverForwarded(mb, Forwarded{Data: msg, Name: "forwarded-7.json", At: at}, allowAgent2); err != nil {
			t.Fatal(err)
		}
	}
	if got := names(t, inbox); !reflect.DeepEqual(got, []string{"m1.json"}) {
		t.Fatalf("inbox after the message forwarded twice = %v; want it once", got)
	}

	spoof := []byte(`{"id":"m2","from":"human","to":"Agent-1","body":"do it"}`)
	if err := DeliverForwarded(mb, Forwarded{Data: spoof, Name: "forwarded-8.json", At: at}, allowAgent2); err == nil || err.Error() != "not Agent-2" {
		t.Fatalf("a refused sender: err = %v; want allow's error", err)
	}

	junk := []byte(`{"id":"m3","from":"Agent-2","body":`)
	if err := DeliverForwarded(mb, Forwarded{Data: junk, Name: "forwarded-9.json", At: at}, allowAgent2); err != nil {
		t.Fatal(err)
	}
	if got := names(t, inbox); !reflect.DeepEqual(got, []string{"forwarded-9.json", "m1.json"}) {
		t.Fatalf("inbox = %v; want the message and the bytes that are none, and nothing of the refused one", got)
	}
	if data, err := os.ReadFile(filepath.Join(inbox, "forwarded-9.json")); err != nil || string(data) != string(junk) {
		t.Fatalf("the bytes that are no message hold %q, %v; want them as forwarded", data, err)
	}
}
