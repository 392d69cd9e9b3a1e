package hub

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/agentctl/agentctl/internal/testenv/poll"
	"github.com/agentctl/agentctl/mailbox"
)

// files lists the names in dir, or nothing when it does not exist.
func files(dir string) []string {
	var names []string
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if !e.IsDir() && !strings.HasPrefix(e.Name(), ".") {
			names = append(names, e.Name())
		}
	}
	return names
}

// A message dropped into the agent's inbox on the seat's machine lands in
// the hub's mailbox once, however often it is published, and is archived
// on the seat's machine as forwarded. One that says it is from someone
// not seated on that machine goes nowhere: the forwarder dead-letters it,
// and the hub refuses it if it comes anyway.
func TestForwardedMessageLandsAtTheHubOnce(t *testing.T) {
	dir := t.TempDir()
	srv := testServer(t, "127.0.0.1:0", filepath.Join(dir, "store"))
	hubRoot, seatRoot := filepath.Join(dir, "hub"), filepath.Join(dir, "desk-2")
	known := []string{"Agent-1", "Agent-5", "Agent-6", "human"}
	seated := []string{"Agent-5", "Agent-6"} // on desk-2
	for _, name := range known {
		if err := mailbox.Create(hubRoot, name); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	hubConn := testConn(t, srv.ClientURL())
	intakeDone := make(chan error, 1)
	go func() {
		intakeDone <- Intake(ctx, IntakeSettings{Root: hubRoot, Known: known, Senders: seated, Conn: hubConn})
	}()
	fwdDone := make(chan error, 1)
	go func() {
		fwdDone <- Forward(ctx, ForwardSettings{Root: seatRoot, Agent: "Agent-5", Senders: seated, Consumer: mailbox.Options{Known: known},
			Conn: testConn(t, srv.ClientURL())})
	}()

	var mb *mailbox.Mailbox
	poll.Until(t, "Forward to create the mailbox on the seat's machine", func() bool {
		var err error
		mb, err = mailbox.Open(seatRoot, "Agent-5")
		return err == nil
	})
	msg := mailbox.Message{ID: "msg_dropped_on_desk2", From: "Agent-6", To: "Agent-5", Subject: "s", Body: "b", CreatedAt: time.Now().UTC()}
	if err := mb.Deliver(msg); err != nil {
		t.Fatal(err)
	}
	spoof := mailbox.Message{ID: "msg_as_human", From: "human", To: "Agent-5", Subject: "urgent", Body: "b", Priority: mailbox.Urgent, CreatedAt: time.Now().UTC()}
	if err := mb.Deliver(spoof); err != nil {
		t.Fatal(err)
	}
	poll.Until(t, "the message from human dead-lettered on desk-2", func() bool {
		return len(files(filepath.Join(mb.Dir, mailbox.DeadletterDir))) == 2 // the message and its reason
	})
	hubInbox := filepath.Join(mailbox.Dir(hubRoot, "Agent-5"), mailbox.InboxDir)
	poll.Until(t, "the message in the hub's inbox", func() bool { return len(files(hubInbox)) == 1 })
	poll.Until(t, "the message archived as forwarded on desk-2", func() bool {
		days, _ := os.ReadDir(filepath.Join(mb.Dir, mailbox.ArchiveDir))
		return len(days) == 1 && len(files(filepath.Join(mb.Dir, mailbox.ArchiveDir, days[0].Name()))) == 2
	})

	// Published again past the server's de-duplication (a forwarder that
	// crashed before archiving, long ago): the hub's mailbox refuses it.
	js, _ := jetstream.New(hubConn)
	if _, err := js.Publish(ctx, deliverSubject("Agent-5", "Agent-6"), msg.Encode(), jetstream.WithMsgID("another id")); err != nil {
		t.Fatal(err)
	}
	// Bytes that are no message, and a message for nobody here.
	if _, err := js.Publish(ctx, deliverSubject("Agent-5", "Agent-6"), []byte("\x00\x01 not a message"), jetstream.WithMsgID("junk")); err != nil {
		t.Fatal(err)
	}
	if _, err := js.Publish(ctx, deliverSubject("Agent-9", "Agent-6"), msg.Encode(), jetstream.WithMsgID("nobody")); err != nil {
		t.Fatal(err)
	}
	// The message from human, published as Agent-6 and as human.
	if _, err := js.Publish(ctx, deliverSubject("Agent-5", "Agent-6"), spoof.Encode(), jetstream.WithMsgID("spoof")); err != nil {
		t.Fatal(err)
	}
	if _, err := js.Publish(ctx, deliverSubject("Agent-5", "human"), spoof.Encode(), jetstream.WithMsgID("as human")); err != nil {
		t.Fatal(err)
	}
	poll.Until(t, "what cannot be delivered kept with its reason", func() bool { return len(files(UndeliverableDir(hubRoot))) == 6 })
	reasons, _ := filepath.Glob(filepath.Join(UndeliverableDir(hubRoot), "*.reason.txt"))
	var all string
	for _, r := range reasons {
		all += readText(t, r)
	}
	for _, want := range []string{`says it is from "human", but its machine may send only as Agent-6`, `"human" is no agent seated on another machine`, `forwarded to "Agent-9"`} {
		if !strings.Contains(all, want) {
			t.Errorf("the reasons kept say:\n%s\nwant %q", all, want)
		}
	}
	poll.Until(t, "the bytes kept in the inbox for the consumer to judge", func() bool { return len(files(hubInbox)) == 2 })
	names := files(hubInbox)
	if strings.Contains(strings.Join(names, " "), "msg_as_human") {
		t.Errorf("hub inbox holds %v: the message from human got through", names)
	}
	if !strings.Contains(strings.Join(names, " "), "msg_dropped_on_desk2") || !strings.Contains(strings.Join(names, " "), "forwarded-") {
		t.Errorf("hub inbox holds %v; want the message once and the forwarded bytes", names)
	}
	cancel()
	for _, done := range []chan error{intakeDone, fwdDone} {
		if err := <-done; err != nil {
			t.Errorf("stopped with %v", err)
		}
	}
}

func readText(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// A message larger than the hub's server takes in one message (1 MiB by
// default) is dead-lettered on the seat's machine with the reason, not
// sent again and again for ever; the next message goes on.
func TestForwarderDeadLettersAMessageTooBigForTheHub(t *testing.T) {
	dir := t.TempDir()
	srv := testServer(t, "127.0.0.1:0", filepath.Join(dir, "store"))
	hubRoot, seatRoot := filepath.Join(dir, "hub"), filepath.Join(dir, "desk-2")
	known := []string{"Agent-5", "Agent-6"}
	for _, name := range known {
		if err := mailbox.Create(hubRoot, name); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go Intake(ctx, IntakeSettings{Root: hubRoot, Known: known, Senders: known, Conn: testConn(t, srv.ClientURL())})
	go Forward(ctx, ForwardSettings{Root: seatRoot, Agent: "Agent-5", Senders: known, Consumer: mailbox.Options{Known: known},
		Conn: testConn(t, srv.ClientURL())})
	var mb *mailbox.Mailbox
	poll.Until(t, "Forward to create the mailbox on the seat's machine", func() bool {
		var err error
		mb, err = mailbox.Open(seatRoot, "Agent-5")
		return err == nil
	})
	big := mailbox.Message{ID: "msg_big", From: "Agent-6", To: "Agent-5", Body: strings.Repeat("log line\n", 200_000), CreatedAt: time.Now().UTC()}
	small := mailbox.Message{ID: "msg_small", From: "Agent-6", To: "Agent-5", Body: "b", CreatedAt: time.Now().UTC()}
	for _, m := range []mailbox.Message{big, small} {
		if err := mb.Deliver(m); err != nil {
			t.Fatal(err)
		}
	}
	hubInbox := filepath.Join(mailbox.Dir(hubRoot, "Agent-5"), mailbox.InboxDir)
	poll.Until(t, "the small message in the hub's inbox", func() bool { return len(files(hubInbox)) == 1 })
	poll.Until(t, "the big message dead-lettered on desk-2", func() bool {
		dead, err := mb.List(mailbox.StateDead)
		return err == nil && len(dead) == 1
	})
	dead, _ := mb.List(mailbox.StateDead)
	if dead[0].Message.ID != "msg_big" || !strings.Contains(dead[0].Reason, "more than the hub's server takes") {
		t.Errorf("dead letter %s, %q; want msg_big, too big for the hub", dead[0].Message.ID, dead[0].Reason)
	}
}
