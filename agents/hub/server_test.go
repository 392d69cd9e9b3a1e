package hub

import (
	"bytes"
	"context"
	"errors"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nkeys"
	"github.com/rs/zerolog"

	"github.com/agentctl/agentctl/agents/hub/hubconf"
	"github.com/agentctl/agentctl/agents/hub/hubserver"
	"github.com/agentctl/agentctl/internal/testenv/poll"
)

// startServer starts the hub's server with s, as agentctl-hub does; its
// log is discarded.
func startServer(s hubconf.Settings) (*hubserver.Server, error) {
	return hubserver.StartServer(s, zerolog.Nop())
}

// startTestServer starts a server on a free loopback port with its own
// store, unless s says otherwise, and shuts it down after the test.
func startTestServer(t *testing.T, s hubconf.Settings) *hubserver.Server {
	t.Helper()
	if s.Listen == "" {
		s.Listen = "127.0.0.1:0"
	}
	if s.StoreDir == "" {
		s.StoreDir = filepath.Join(t.TempDir(), "jetstream")
	}
	if s.Name == "" {
		s.Name = "test-hub"
	}
	srv, err := startServer(s)
	if err != nil {
		t.Fatalf("StartServer: %v", err)
	}
	t.Cleanup(srv.Shutdown)
	return srv
}

// connectTest connects or fails the test, and closes after the test.
func connectTest(t *testing.T, c ClientSettings) *nats.Conn {
	t.Helper()
	ctx, cancel := poll.Context(t)
	defer cancel()
	nc, err := Connect(ctx, c)
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	t.Cleanup(nc.Close)
	return nc
}

// refused connects expecting a refusal that comes at once rather than
// when the context ends, shortly before the test binary's -timeout.
func refused(t *testing.T, c ClientSettings) error {
	t.Helper()
	ctx, cancel := poll.Context(t)
	defer cancel()
	nc, err := Connect(ctx, c)
	if err == nil {
		nc.Close()
		t.Fatal("Connect succeeded, want a refusal")
	}
	if errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Connect retried until the deadline, want a refusal at once: %v", err)
	}
	return err
}

func TestLoopbackWithoutUsers(t *testing.T) {
	srv := startTestServer(t, hubconf.Settings{})
	u, err := url.Parse(srv.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	if u.Scheme != "nats" || u.Port() == "0" || u.Port() == "" {
		t.Fatalf("ClientURL() = %q, want nats:// with the real port", srv.ClientURL())
	}
	if srv.ClusterURL() != "" {
		t.Errorf("ClusterURL() = %q without a cluster, want empty", srv.ClusterURL())
	}
	nc := connectTest(t, ClientSettings{URLs: []string{srv.ClientURL()}, Name: "test client"})
	_, port, _ := net.SplitHostPort(nc.ConnectedAddr())
	if port != u.Port() {
		t.Errorf("connected to port %s, ClientURL says %s", port, u.Port())
	}
	if err := nc.Publish("hello", []byte("x")); err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
}

func TestUsersRefuseAnonymousAndWrongPassword(t *testing.T) {
	srv := startTestServer(t, hubconf.Settings{Users: []hubconf.User{{Name: "agent", Password: "s3cret"}, {Name: "other", Password: "pw"}}})
	urls := []string{srv.ClientURL()}

	connectTest(t, ClientSettings{URLs: urls, Credentials: Credentials{User: "agent", Password: "s3cret"}})
	connectTest(t, ClientSettings{URLs: urls, Credentials: Credentials{User: "other", Password: "pw"}})

	err := refused(t, ClientSettings{URLs: urls})
	if !strings.Contains(err.Error(), "refused no credentials") {
		t.Errorf("anonymous: %v, want it to say the hub refused no credentials", err)
	}
	err = refused(t, ClientSettings{URLs: urls, Credentials: Credentials{User: "agent", Password: "wrong"}})
	if !errors.Is(err, nats.ErrAuthorization) || !strings.Contains(err.Error(), `user "agent"`) {
		t.Errorf("wrong password: %v, want an authorization error naming the user", err)
	}
	if strings.Contains(err.Error(), "wrong") {
		t.Errorf("the error shows the password: %v", err)
	}
}

func TestNKeyAuth(t *testing.T) {
	user, err := nkeys.CreateUser()
	if err != nil {
		t.Fatal(err)
	}
	pub, _ := user.PublicKey()
	seed, _ := user.Seed()
	seedFile := filepath.Join(t.TempDir(), "agent.nk")
	if err := os.WriteFile(seedFile, seed, 0o600); err != nil {
		t.Fatal(err)
	}
	stranger, _ := nkeys.CreateUser()
	strangerSeed, _ := stranger.Seed()
	strangerFile := filepath.Join(t.TempDir(), "stranger.nk")
	if err := os.WriteFile(strangerFile, strangerSeed, 0o600); err != nil {
		t.Fatal(err)
	}

	srv := startTestServer(t, hubconf.Settings{Keys: []hubconf.Key{{PublicKey: pub}}, Users: []hubconf.User{{Name: "agent", Password: "pw"}}})
	urls := []string{srv.ClientURL()}
	connectTest(t, ClientSettings{URLs: urls, Credentials: Credentials{NKeySeedFile: seedFile}})
	connectTest(t, ClientSettings{URLs: urls, Credentials: Credentials{User: "agent", Password: "pw"}})
	refused(t, ClientSettings{URLs: urls})
	err = refused(t, ClientSettings{URLs: urls, Credentials: Credentials{NKeySeedFile: strangerFile}})
	if !strings.Contains(err.Error(), strangerFile) {
		t.Errorf("unknown nkey: %v, want it to name the seed file", err)
	}

	_, err = startServer(hubconf.Settings{Listen: "127.0.0.1:0", StoreDir: t.TempDir(), Keys: []hubconf.Key{{PublicKey: string(seed)}}})
	if err == nil || !strings.Contains(err.Error(), "public nkey") {
		t.Errorf("a seed given as a public key: err = %v, want a refusal", err)
	}
}

func TestCredentialsAreOneWay(t *testing.T) {
	for _, cr := range []Credentials{
		{User: "a", Password: "b", NKeySeedFile: "x.nk"},
		{User: "a"},
		{Password: "b"},
		{CredsFile: filepath.Join(t.TempDir(), "missing.creds")},
		{NKeySeedFile: filepath.Join(t.TempDir(), "missing.nk")},
	} {
		if _, err := Connect(context.Background(), ClientSettings{URLs: []string{"nats://127.0.0.1:1"}, Credentials: cr}); err == nil {
			t.Errorf("Connect with %+v succeeded, want an error", cr)
		}
	}
}

// A runner started before its hub connects once the hub is up.
func TestConnectWaitsForTheHub(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()

	var logs syncBuffer
	type result struct {
		nc  *nats.Conn
		err error
	}
	done := make(chan result, 1)
	ctx, cancel := poll.Context(t)
	defer cancel()
	go func() {
		nc, err := Connect(ctx, ClientSettings{URLs: []string{"nats://" + addr}, Log: zerolog.New(&logs)})
		done <- result{nc, err}
	}()
	poll.Until(t, "Connect to say it cannot reach the hub yet", func() bool { return strings.Contains(logs.String(), "cannot reach the hub yet") })
	startTestServer(t, hubconf.Settings{Listen: addr})
	r := <-done
	if r.err != nil {
		t.Fatalf("Connect: %v", r.err)
	}
	r.nc.Close()
}

func TestConnectEndsWithTheContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := Connect(ctx, ClientSettings{URLs: []string{"nats://127.0.0.1:1"}})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
}

func TestRestartKeepsStream(t *testing.T) {
	var logs syncBuffer
	settings := hubconf.Settings{
		Name:     "hub",
		Listen:   "127.0.0.1:0",
		StoreDir: filepath.Join(t.TempDir(), "store"),
	}
	srv, err := hubserver.StartServer(settings, zerolog.New(&logs))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(logs.String(), "Starting nats-server") {
		t.Errorf("the server's notices did not reach the log: %q", logs.String())
	}
	ctx, cancel := poll.Context(t)
	defer cancel()
	nc, err := Connect(ctx, ClientSettings{URLs: []string{srv.ClientURL()}})
	if err != nil {
		t.Fatal(err)
	}
	js, _ := jetstream.New(nc)
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "KEEP", Subjects: []string{"keep.>"}, Storage: jetstream.FileStorage}); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if _, err := js.Publish(ctx, "keep.x", []byte(strconv.Itoa(i))); err != nil {
			t.Fatal(err)
		}
	}
	nc.Close()
	srv.Shutdown()

	srv = startTestServer(t, settings)
	nc = connectTest(t, ClientSettings{URLs: []string{srv.ClientURL()}})
	js, _ = jetstream.New(nc)
	stream, err := js.Stream(ctx, "KEEP")
	if err != nil {
		t.Fatal(err)
	}
	info, err := stream.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.State.Msgs != 3 {
		t.Errorf("after a restart the stream has %d messages, want 3", info.State.Msgs)
	}
}

func TestStartFailsWhenThePortIsTaken(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	_, err = startServer(hubconf.Settings{Listen: l.Addr().String(), StoreDir: t.TempDir()})
	if err == nil || !strings.Contains(err.Error(), "Error listening on port") {
		t.Errorf("err = %v, want the listen error", err)
	}
}

// syncBuffer is a log destination safe for the client's callbacks.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
