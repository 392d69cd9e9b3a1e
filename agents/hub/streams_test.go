package hub

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// TestEnsureStreamsUpdatesOnlyAStreamOfAnotherShape starts the hub twice
// on one server. The second start must not update the streams it finds in
// shape: an update rewrites a stream's store while seats make their
// consumers on it, which the NATS server does without the lock those
// read. A stream of another shape is still updated.
func TestEnsureStreamsUpdatesOnlyAStreamOfAnotherShape(t *testing.T) {
	srv := startTestServer(t, ServerSettings{})
	nc := connectTest(t, ClientSettings{URLs: []string{srv.ClientURL()}})
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// The deliver stream as an older hub left it: another duplicate window.
	old := streamConfigs(1)[2]
	old.Duplicates = time.Minute
	if _, err := js.CreateStream(ctx, old); err != nil {
		t.Fatal(err)
	}
	if err := EnsureStreams(ctx, js, 1); err != nil {
		t.Fatal(err)
	}
	s, err := js.Stream(ctx, DeliverStream)
	if err != nil {
		t.Fatal(err)
	}
	if got := s.CachedInfo().Config.Duplicates; got != 10*time.Minute {
		t.Errorf("%s keeps a duplicate window of %s, want it updated to 10m", DeliverStream, got)
	}

	// The server tells every update on an advisory subject, in order: a
	// marker update of a stream outside the swarm's, once seen, means any
	// update of the second start would have been seen before it.
	updates := make(chan string, 16)
	sub, err := nc.Subscribe("$JS.EVENT.ADVISORY.STREAM.UPDATED.>", func(m *nats.Msg) {
		updates <- strings.TrimPrefix(m.Subject, "$JS.EVENT.ADVISORY.STREAM.UPDATED.")
	})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	marker := jetstream.StreamConfig{Name: "MARKER", Subjects: []string{"marker.>"}, Storage: jetstream.MemoryStorage}
	if _, err := js.CreateStream(ctx, marker); err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}

	if err := EnsureStreams(ctx, js, 1); err != nil {
		t.Fatal(err)
	}
	marker.Description = "changed"
	if _, err := js.UpdateStream(ctx, marker); err != nil {
		t.Fatal(err)
	}
	for {
		select {
		case name := <-updates:
			if name == "MARKER" {
				return
			}
			t.Errorf("starting the hub again updated %s, whose shape was already right", name)
		case <-ctx.Done():
			t.Fatal("the marker's update advisory never came")
		}
	}
}
