package mailbox

import (
	"os"
	"strings"
	"testing"
	"time"
)

func TestDeliverBytesIsReadAsADroppedFile(t *testing.T) {
	root := newRuntime(t, "Agent-1")
	mb := openMailbox(t, root, "Agent-1")
	junk := []byte("\x00\x01 not a message")
	for range 2 { // the second time is the same bytes again: no error, one file
		if err := mb.DeliverBytes("forwarded-7.json", junk); err != nil {
			t.Fatal(err)
		}
	}
	if got := names(t, mb.path(InboxDir)); len(got) != 1 || got[0] != "forwarded-7.json" {
		t.Fatalf("inbox holds %v; want the bytes once", got)
	}
	for _, bad := range []string{".hidden.json", "a/b.json", "draft.json~"} {
		if err := mb.DeliverBytes(bad, junk); err == nil {
			t.Errorf("DeliverBytes(%q) took a name the consumer never reads", bad)
		}
	}
	now := time.Now().Add(time.Hour) // long after the bytes stopped changing
	consume(t, mb, Options{}, now)
	dead := names(t, mb.path(DeadletterDir))
	if len(dead) != 2 || !strings.HasSuffix(dead[0], "forwarded-7.json") {
		t.Fatalf("deadletter/ holds %v; want the bytes and their reason", dead)
	}
	data, err := os.ReadFile(mb.path(DeadletterDir, dead[0]))
	if err != nil || string(data) != string(junk) {
		t.Errorf("dead letter holds %q, %v; want the bytes delivered", data, err)
	}
}
