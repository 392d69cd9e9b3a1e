package hub

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/agentctl/agentctl/agents/hub/hubconf"
	"github.com/agentctl/agentctl/internal/testenv/poll"
)

// TestEnsureStreamsUpdatesOnlyAStreamOfAnotherShape starts the hub twice
// on one server. The second start must not update the streams it finds in
// shape: an update rewrites a stream's store while seats make their
// consumers on it, which the NATS server does without the lock those
// read. A stream of another shape is still updated.
func TestEnsureStreamsUpdatesOnlyAStreamOfAnotherShape(t *testing.T) {
	srv := startTestServer(t, hubconf.Settings{})
	nc := connectTest(t, ClientSettings{URLs: []string{srv.ClientURL()}})
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := poll.Context(t)
	defer cancel()
	// The deliver stream as an older hub left it: another duplicate window.
	old := streamConfigs(1)[2]
	old.Duplicates = time.Minute
	if _, err := js.CreateStream(ctx, old); err != nil {
		t.Fatal(err)
	}
	if err := EnsureStreams(ctx, js, 1, nil); err != nil {
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

	if err := EnsureStreams(ctx, js, 1, nil); err != nil {
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

// A hub started on the store of an older one, whose forwarded messages
// named no sender (agentctl.deliver.TO), takes the new subjects, and what
// waited there under the old one is kept as undeliverable, with why.
func TestDeliverStreamOfAnOlderHubTakesTheSenderSubjects(t *testing.T) {
	srv := startTestServer(t, hubconf.Settings{})
	nc := connectTest(t, ClientSettings{URLs: []string{srv.ClientURL()}})
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := poll.Context(t)
	defer cancel()
	old := streamConfigs(1)[2]
	old.Subjects = []string{"agentctl.deliver.*"}
	if _, err := js.CreateStream(ctx, old); err != nil {
		t.Fatal(err)
	}
	if _, err := js.Publish(ctx, "agentctl.deliver.Agent-1", []byte(`{"id":"m_old","from":"Agent-5","to":"Agent-1","body":"b"}`)); err != nil {
		t.Fatal(err)
	}
	if err := EnsureStreams(ctx, js, 1, nil); err != nil {
		t.Fatal(err)
	}
	s, err := js.Stream(ctx, DeliverStream)
	if err != nil {
		t.Fatal(err)
	}
	if got := s.CachedInfo().Config.Subjects; len(got) != 1 || got[0] != "agentctl.deliver.*.*" {
		t.Fatalf("%s takes %v", DeliverStream, got)
	}
	root := t.TempDir()
	done := make(chan error, 1)
	go func() {
		done <- Intake(ctx, IntakeSettings{Root: root, Known: []string{"Agent-1", "Agent-5"}, Senders: []string{"Agent-5"}, Conn: nc})
	}()
	poll.Until(t, "the old message kept as undeliverable", func() bool { return len(files(UndeliverableDir(root))) == 2 })
	cancel()
	if err := <-done; err != nil {
		t.Error(err)
	}
}

// TestTransientErrors: what the servers say while a cluster forms or
// loses a node is waited out; what only the settings can change is not.
// The texts are the NATS server's own (2.15).
func TestTransientErrors(t *testing.T) {
	apiErr := func(code, errCode int, desc string) error {
		return fmt.Errorf("cannot create stream: %w", &jetstream.APIError{Code: code, ErrorCode: jetstream.ErrorCode(errCode), Description: desc})
	}
	for _, c := range []struct {
		err  error
		want bool
	}{
		// A leader that knows every node before each has said it runs
		// JetStream: seen starting a hub on three nodes on a busy machine.
		{apiErr(400, 10005, "no suitable peers for placement, peer offline"), true},
		// A leader that knows fewer servers than the replicas: seen
		// starting a hub on three nodes still finding each other.
		{apiErr(400, 10005, "no suitable peers for placement"), true},
		{tooFewServers{apiErr(400, 10005, "no suitable peers for placement"), 3}, false},
		{apiErr(400, 10005, "no suitable peers for placement, peer offline, insufficient storage"), true},
		{apiErr(400, 10005, "no suitable peers for placement, tags not matched ['ssd']"), false},
		{apiErr(400, 10005, "no suitable peers for placement, insufficient storage"), false},
		{apiErr(503, 10008, "JetStream cluster not available"), true},
		{apiErr(500, 10023, "insufficient resources"), true},
		{apiErr(400, 10058, "stream name already in use with a different configuration"), false},
		{context.DeadlineExceeded, true},
		{fmt.Errorf("publish: %w", nats.ErrMaxPayload), false},
		{nats.ErrConnectionClosed, false},
		{errors.New("nats: no responders available for request"), true},
	} {
		if got := transient(c.err); got != c.want {
			t.Errorf("transient(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}

// A cluster of two servers never holds streams of three replicas: the hub
// waits, saying why, for a while, as it would for a cluster still forming,
// and then says what to change, rather than wait for ever.
func TestEnsureStreamsGivesUpOnAClusterSmallerThanItsReplicas(t *testing.T) {
	defer func(n int) { placementAttempts = n }(placementAttempts)
	placementAttempts = 3
	ctx, cancel := poll.Context(t)
	defer cancel()
	routes := []string{"nats-route://" + freeAddr(t), "nats-route://" + freeAddr(t)}
	var urls []string
	for i, r := range routes {
		srv := startTestServer(t, hubconf.Settings{Name: fmt.Sprintf("node-%d", i), Listen: freeAddr(t),
			Cluster: hubconf.Cluster{Name: "hubs", Listen: strings.TrimPrefix(r, "nats-route://"), Routes: routes, User: "route", Password: "route-secret"}})
		urls = append(urls, srv.ClientURL())
	}
	js, err := jetstream.New(connectTest(t, ClientSettings{URLs: urls, Name: "too few"}))
	if err != nil {
		t.Fatal(err)
	}
	waitForJetStream(t, ctx, js)
	var said []string
	err = EnsureStreams(ctx, js, 3, func(err error) { said = append(said, err.Error()) })
	var few tooFewServers
	if !errors.As(err, &few) || !strings.Contains(few.Hint(), "hub.replicas is 3") {
		t.Fatalf("EnsureStreams = %v, want a cluster too small for 3 replicas, with a hint", err)
	}
	if want := "cannot create stream " + TurnsStream + " on 3 servers yet: nats: API error: code=400 err_code=10005 description=" + noPeersYet; !slices.Contains(said, want) {
		t.Errorf("waiting said %q, want %q among it", said, want)
	}
}
