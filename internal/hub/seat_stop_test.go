package hub

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/rs/zerolog"

	"github.com/agentctl/agentctl/config"
	"github.com/agentctl/agentctl/cursor"
)

// A seat told to stop while it waits for an ask stops then, not when the
// server's wait runs out: 'agentctl run --hub' answers Ctrl-C at once.
func TestSeatStopsWhileWaitingForAnAsk(t *testing.T) {
	defer func(w time.Duration) { fetchWait = w }(fetchWait)
	fetchWait = time.Hour

	root := t.TempDir()
	srv, err := StartServer(ServerSettings{Name: "stop", Listen: "127.0.0.1:0", StoreDir: filepath.Join(root, "jetstream"), Log: zerolog.Nop()})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	nc, err := Connect(ctx, ClientSettings{URLs: []string{srv.ClientURL()}, Name: "seat", Log: zerolog.Nop()})
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	if err := EnsureStreams(ctx, js, 1); err != nil {
		t.Fatal(err)
	}
	journal, err := OpenJournal(filepath.Join(root, "seats", "Agent-1"))
	if err != nil {
		t.Fatal(err)
	}
	d, err := cursor.NewExec(config.Exec{Command: []string{"sh", "-c", "cat >/dev/null; echo ok"}})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		done <- RunSeat(ctx, SeatSettings{Agent: "Agent-1", Machine: "m2", Driver: d, Journal: journal, Conn: nc, Log: zerolog.Nop()})
	}()

	// The seat waits once the server holds its pull request.
	deadline := time.Now().Add(time.Minute)
	for waiting := 0; waiting == 0; {
		if time.Now().After(deadline) {
			t.Fatal("the seat never waited for an ask")
		}
		select {
		case err := <-done:
			t.Fatalf("the seat stopped before it was told to: %v", err)
		case <-time.After(10 * time.Millisecond):
		}
		if c, err := js.Consumer(ctx, TurnsStream, "seat-Agent-1"); err == nil {
			if info, err := c.Info(ctx); err == nil {
				waiting = info.NumWaiting
			}
		}
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("the seat stopped with an error: %v", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("the seat still waits for an ask a minute after it was told to stop")
	}
}
