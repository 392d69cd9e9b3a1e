package hub

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/agentctl/agentctl/internal/clock/clocktest"
	"github.com/agentctl/agentctl/internal/testenv/poll"
	"github.com/agentctl/agentctl/mailbox"
)

// A seat beats at once and then every Beat of its clock, each beat stamped
// with the clock's time: the hub judges a seat gone by those stamps.
func TestSeatBeatsOnItsClock(t *testing.T) {
	dir := t.TempDir()
	srv := testServer(t, "127.0.0.1:0", filepath.Join(dir, "store"))
	nc := testConn(t, srv.ClientURL())
	beats, err := nc.SubscribeSync(beatSubject("Agent-5"))
	if err != nil {
		t.Fatal(err)
	}
	j, err := OpenJournal(filepath.Join(dir, "seat"))
	if err != nil {
		t.Fatal(err)
	}
	start := time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC)
	clk := clocktest.New(start)
	seatConn := testConn(t, srv.ClientURL()) // closed after the seat stops
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- RunSeat(ctx, SeatSettings{Agent: "Agent-5", Machine: "desk-2", Driver: newChat(), Journal: j, Conn: seatConn, Beat: time.Minute, Log: zerolog.Nop(), Clock: clk})
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
			t.Errorf("seat: %v", err)
		}
	})
	next := func() Beat {
		t.Helper()
		m, err := beats.NextMsgWithContext(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		var b Beat
		if err := json.Unmarshal(m.Data, &b); err != nil {
			t.Fatal(err)
		}
		return b
	}
	if b := next(); !b.At.Equal(start) || b.State != "idle" {
		t.Fatalf("first beat %+v, want idle at %v", b, start)
	}
	clk.BlockUntil(1)
	clk.Advance(time.Minute)
	if b := next(); !b.At.Equal(start.Add(time.Minute)) {
		t.Fatalf("second beat at %v, want a minute on", b.At)
	}
}

// A seat whose hub is gone says so in status.json on its own machine, the
// only place it can, and says it is idle again once the hub is back.
func TestSeatShowsTheHubUnreachableLocally(t *testing.T) {
	dir := t.TempDir()
	root := filepath.Join(dir, "runtime")
	if err := mailbox.Create(root, "Agent-5"); err != nil {
		t.Fatal(err)
	}
	store := filepath.Join(dir, "store")
	srv := testServer(t, "127.0.0.1:0", store)
	url := srv.ClientURL()
	j, err := OpenJournal(filepath.Join(dir, "seat"))
	if err != nil {
		t.Fatal(err)
	}
	clk := clocktest.New(time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC))
	seatConn := testConn(t, url)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- RunSeat(ctx, SeatSettings{Root: root, Agent: "Agent-5", Machine: "desk-2", Driver: newChat(), Journal: j, Conn: seatConn, Beat: time.Minute, Log: zerolog.Nop(), Clock: clk})
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
			t.Errorf("seat: %v", err)
		}
	})
	state := func() string {
		mb, err := mailbox.Open(root, "Agent-5")
		if err != nil {
			t.Fatal(err)
		}
		st, _ := mb.ReadStatus()
		return st.State
	}
	beatUntil := func(want string) {
		t.Helper()
		poll.Until(t, "the seat's state "+want+" in status.json", func() bool {
			if state() == want {
				return true
			}
			clk.BlockUntil(1)
			clk.Advance(time.Minute)
			return false
		})
	}
	beatUntil("idle")
	srv.Shutdown()
	beatUntil(hubUnreachable)
	testServer(t, hostPort(t, url), store)
	beatUntil("idle")
}
