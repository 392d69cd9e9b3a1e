package hubserver

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/rs/zerolog"

	"github.com/agentctl/agentctl/agents/hub/hubconf"
)

func TestAnonymousOffLoopbackRefused(t *testing.T) {
	for _, listen := range []string{"0.0.0.0:4222", ":4222", "0.0.0.0", "[::]:0", "192.0.2.7:4222", "hub.example:4222"} {
		_, err := StartServer(hubconf.Settings{Listen: listen, StoreDir: t.TempDir()}, zerolog.Nop())
		if err == nil || !strings.Contains(err.Error(), "open to anyone") {
			t.Errorf("Listen %q without users: err = %v, want a refusal", listen, err)
		}
	}
	for _, listen := range []string{"", "127.0.0.1:0", "127.3.2.1:4222", "localhost:0", "[::1]:0", "::1"} {
		if err := checkExposure(hubconf.Settings{Listen: listen}); err != nil {
			t.Errorf("Listen %q: %v, want it allowed on loopback", listen, err)
		}
	}
	if err := checkExposure(hubconf.Settings{Listen: "0.0.0.0:4222", Users: []hubconf.User{{Name: "a", Password: "b"}}}); err != nil {
		t.Errorf("users off loopback: %v, want it allowed", err)
	}
	if err := checkExposure(hubconf.Settings{Listen: "0.0.0.0:4222", Keys: []hubconf.Key{{PublicKey: "U..."}}}); err != nil {
		t.Errorf("nkeys off loopback: %v, want it allowed", err)
	}
}

// A route is let past every identity's permissions, so routes need
// credentials or mutual TLS wherever they listen: on loopback too, where
// another account of the machine could join as a node.
func TestAnonymousRoutesRefused(t *testing.T) {
	users := []hubconf.User{{Name: "agent", Password: "secret"}}
	_, err := StartServer(hubconf.Settings{
		Listen: "127.0.0.1:0", StoreDir: t.TempDir(), Users: users,
		Cluster: hubconf.Cluster{Name: "c", Listen: "0.0.0.0:0"},
	}, zerolog.Nop())
	if err == nil || !strings.Contains(err.Error(), "open to anyone") {
		t.Errorf("cluster on 0.0.0.0 without route credentials: err = %v, want a refusal", err)
	}
	if err := checkExposure(hubconf.Settings{Users: users, Cluster: hubconf.Cluster{Name: "c", Listen: "127.0.0.1:0"}}); err == nil || !strings.Contains(err.Error(), "open to anyone") {
		t.Errorf("cluster on loopback without route credentials: err = %v, want a refusal", err)
	}
	for _, c := range []hubconf.Cluster{
		{Name: "c", Listen: "127.0.0.1:0", User: "route", Password: "pw"},
		{Name: "c", Listen: "0.0.0.0:0", User: "route", Password: "pw"},
	} {
		if err := checkExposure(hubconf.Settings{Users: users, Cluster: c}); err != nil {
			t.Errorf("cluster %+v: %v, want it allowed", c, err)
		}
	}
	if err := checkExposure(hubconf.Settings{Users: users, Cluster: hubconf.Cluster{Listen: "0.0.0.0:0"}, TLS: hubconf.TLS{Cert: "c", Key: "k", CA: "ca"}}); err != nil {
		t.Errorf("cluster with mutual TLS: %v, want it allowed", err)
	}
}

// Routes present the cluster's credentials, which the other nodes demand.
func TestRoutesCarryTheClusterCredentials(t *testing.T) {
	opts, err := serverOptions(hubconf.Settings{
		Listen: "127.0.0.1:0", StoreDir: t.TempDir(),
		Cluster: hubconf.Cluster{Name: "hubs", Listen: "0.0.0.0:6222", User: "route", Password: "pw",
			Routes: []string{"nats-route://desk-2:6222"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if opts.Cluster.Username != "route" || opts.Cluster.Password != "pw" {
		t.Errorf("cluster accepts %q/%q, want route/pw", opts.Cluster.Username, opts.Cluster.Password)
	}
	if len(opts.Routes) != 1 || opts.Routes[0].User.String() != "route:pw" {
		t.Errorf("routes = %v, want one presenting route:pw", opts.Routes)
	}
	for _, c := range []hubconf.Cluster{
		{Listen: "127.0.0.1:0"},
		{Name: "hubs", Listen: "127.0.0.1:0", User: "route"},
		{Name: "hubs", Listen: "127.0.0.1:0", Routes: []string{"::bad"}},
	} {
		if _, err := serverOptions(hubconf.Settings{Listen: "127.0.0.1:0", StoreDir: t.TempDir(), Cluster: c}); err == nil {
			t.Errorf("cluster %+v accepted, want an error", c)
		}
	}
}

func ExampleStartServer() {
	dir, err := os.MkdirTemp("", "hub")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	srv, err := StartServer(hubconf.Settings{Name: "hub", Listen: "127.0.0.1:0", StoreDir: filepath.Join(dir, "jetstream")}, zerolog.Nop())
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Shutdown()

	nc, err := nats.Connect(srv.ClientURL(), nats.Name("agentctl example"))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer nc.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	js, _ := jetstream.New(nc)
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "INBOX", Subjects: []string{"inbox.>"}}); err != nil {
		fmt.Println(err)
		return
	}
	ack, err := js.Publish(ctx, "inbox.Agent-5", []byte("hello"))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(ack.Stream, ack.Sequence)
	// Output: INBOX 1
}
