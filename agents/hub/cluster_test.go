package hub

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/agentctl/agentctl/agents/hub/hubconf"
	"github.com/agentctl/agentctl/agents/hub/hubserver"
	"github.com/agentctl/agentctl/internal/testenv/freeport"
	"github.com/agentctl/agentctl/internal/testenv/poll"
)

// freeAddr returns a loopback address nothing listens on now: a node
// restarted on its store must come back on the same route address the
// others know.
func freeAddr(t *testing.T) string {
	t.Helper()
	return freeport.Addr(t)
}

// waitForJetStream waits until the JetStream cluster has a meta leader
// and answers js. Each ask gives up after 2 s and is asked again: a
// cluster electing its leader answers nobody for a moment.
func waitForJetStream(t *testing.T, ctx context.Context, js jetstream.JetStream) {
	t.Helper()
	poll.Until(t, "JetStream to be available", func() bool {
		attempt, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		_, err := js.AccountInfo(attempt)
		return err == nil
	})
}

func TestThreeNodeCluster(t *testing.T) {
	const nodes = 3
	ctx, cancel := poll.Context(t)
	defer cancel()

	var routes []string
	var clientAddrs []string
	for range nodes {
		routes = append(routes, "nats-route://"+freeAddr(t))
		clientAddrs = append(clientAddrs, freeAddr(t))
	}
	settings := make([]hubconf.Settings, nodes)
	servers := make([]*hubserver.Server, nodes)
	var urls []string
	for i := range nodes {
		route, _ := url.Parse(routes[i])
		settings[i] = hubconf.Settings{
			Name:     fmt.Sprintf("node-%d", i),
			Listen:   clientAddrs[i],
			StoreDir: filepath.Join(t.TempDir(), "store"),
			Cluster:  hubconf.Cluster{Name: "hubs", Listen: route.Host, Routes: routes, User: "route", Password: "route-secret"},
		}
		srv, err := startServer(settings[i])
		if err != nil {
			t.Fatalf("node %d: %v", i, err)
		}
		servers[i] = srv
		urls = append(urls, srv.ClientURL())
		if srv.ClusterURL() != routes[i] {
			t.Errorf("node %d: ClusterURL() = %q, want %q", i, srv.ClusterURL(), routes[i])
		}
	}
	t.Cleanup(func() {
		for _, s := range servers {
			if s != nil {
				s.Shutdown()
			}
		}
	})

	nc := connectTest(t, ClientSettings{URLs: urls, Name: "cluster test"})
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	waitForJetStream(t, ctx, js)
	stream, err := js.CreateStream(ctx, jetstream.StreamConfig{
		Name: "WORK", Subjects: []string{"work.>"}, Storage: jetstream.FileStorage, Replicas: nodes,
	})
	if err != nil {
		t.Fatal(err)
	}
	// A publish retries until acknowledged, as while the stream elects a
	// new leader; the message ID keeps a retried message from counting
	// twice.
	publish := func(from, to int) {
		t.Helper()
		for i := from; i < to; i++ {
			id := fmt.Sprintf("msg-%d", i)
			poll.Until(t, "the publish of "+id+" acknowledged", func() bool {
				attempt, cancel := context.WithTimeout(ctx, 2*time.Second)
				defer cancel()
				_, err := js.Publish(attempt, "work.item", []byte(id), jetstream.WithMsgID(id))
				return err == nil
			})
		}
	}
	publish(0, 50)

	// Take down the node the client is on, so that it has to reconnect.
	down := connectedNode(t, nc, urls)
	servers[down].Shutdown()
	servers[down] = nil
	publish(50, 100)
	if connectedNode(t, nc, urls) == down || nc.Stats().Reconnects == 0 {
		t.Fatal("the client did not reconnect to another node")
	}

	cons, err := stream.CreateOrUpdateConsumer(ctx, jetstream.ConsumerConfig{Durable: "reader", AckPolicy: jetstream.AckExplicitPolicy})
	if err != nil {
		t.Fatal(err)
	}
	// A cluster electing the consumer's leader anew answers nobody for a
	// moment, and a fetch on a busy machine may end before its messages
	// come: either is asked again. A consumer that stops short of 100
	// fails the wait.
	seen := map[string]int{}
	poll.Until(t, "the consumer to read the 100 messages", func() bool {
		batch, err := cons.Fetch(100, jetstream.FetchMaxWait(5*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		for m := range batch.Messages() {
			seen[m.Headers().Get(jetstream.MsgIDHeader)]++
			if err := m.Ack(); err != nil {
				t.Fatal(err)
			}
		}
		if err := batch.Error(); err != nil && !errors.Is(err, nats.ErrNoResponders) && !errors.Is(err, nats.ErrTimeout) {
			t.Fatal(err)
		}
		return len(seen) >= 100
	})
	for i := range 100 {
		if n := seen[fmt.Sprintf("msg-%d", i)]; n != 1 {
			t.Errorf("msg-%d read %d times, want once", i, n)
		}
	}

	// The node comes back on its store and catches up with the others.
	srv, err := startServer(settings[down])
	if err != nil {
		t.Fatalf("restart node %d: %v", down, err)
	}
	servers[down] = srv
	direct := connectTest(t, ClientSettings{URLs: []string{srv.ClientURL()}})
	djs, _ := jetstream.New(direct)
	waitForJetStream(t, ctx, djs)
	poll.Until(t, fmt.Sprintf("node %d to catch up with the stream", down), func() bool {
		info, err := djs.Stream(ctx, "WORK")
		if err != nil {
			return false
		}
		st, err := info.Info(ctx)
		return err == nil && st.State.Msgs == 100 && caughtUp(st, settings[down].Name)
	})
}

// caughtUp reports whether the restarted node is a current replica.
func caughtUp(info *jetstream.StreamInfo, node string) bool {
	if info.Cluster == nil {
		return false
	}
	if info.Cluster.Leader == node {
		return true
	}
	for _, r := range info.Cluster.Replicas {
		if r.Name == node {
			return r.Current && r.Lag == 0
		}
	}
	return false
}

// connectedNode is the index in urls of the node nc is connected to.
func connectedNode(t *testing.T, nc *nats.Conn, urls []string) int {
	t.Helper()
	addr := nc.ConnectedAddr()
	for i, u := range urls {
		if pu, err := url.Parse(u); err == nil && pu.Host == addr {
			return i
		}
	}
	t.Fatalf("connected to %q, none of %v", addr, urls)
	return -1
}
