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
