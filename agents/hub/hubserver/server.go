package hubserver

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net/url"
	"os"
	"runtime"
	"strconv"
	"sync"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/rs/zerolog"

	"github.com/agentctl/agentctl/agents/hub/hubconf"
	"github.com/agentctl/agentctl/internal/loopback"
)

const (
	defaultClientPort = 4222
	defaultRoutePort  = 6222
	// readyTimeout bounds how long StartServer waits for the listeners.
	readyTimeout = 15 * time.Second
	// authTimeout is how long a client has to log in, in seconds: a
	// loaded machine running a race-built client is far slower than the
	// server's 2 s default.
	authTimeout = 20
)

// Server is a running embedded NATS server with JetStream.
type Server struct {
	ns  *server.Server
	tls bool
}

// StartServer starts a NATS server with JetStream and returns once it
// accepts connections; its notices, warnings and errors go to log.
func StartServer(s hubconf.Settings, log zerolog.Logger) (*Server, error) {
	opts, err := serverOptions(s)
	if err != nil {
		return nil, err
	}
	if err := prepareStoreDir(s.StoreDir); err != nil {
		return nil, err
	}
	ns, err := server.NewServer(opts)
	if err != nil {
		return nil, fmt.Errorf("cannot configure the hub's NATS server: %w", err)
	}
	nlog := &natsLogger{log: log}
	ns.SetLogger(nlog, false, false)
	ns.Start()
	if err := startFailure(ns, nlog); err != nil {
		ns.Shutdown()
		ns.WaitForShutdown()
		return nil, fmt.Errorf("cannot start the hub's NATS server: %w", err)
	}
	return &Server{ns: ns, tls: s.TLS.Enabled()}, nil
}

// startFailure waits until ns listens and says why it does not. The wait
// is in real time, not on a clock of the caller's: it is for the server's
// listeners, which take the time they take.
func startFailure(ns *server.Server, log *natsLogger) error {
	deadline := time.Now().Add(readyTimeout)
	for {
		if msg := log.fatal(); msg != "" {
			return errors.New(msg)
		}
		if ns.ReadyForConnections(100 * time.Millisecond) {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not listening after %v", readyTimeout)
		}
	}
	if !ns.JetStreamEnabled() {
		return errors.New("JetStream is not enabled")
	}
	return nil
}

// ClientURL is the URL clients connect to, with the real port when port 0
// was asked.
func (s *Server) ClientURL() string {
	scheme := "nats"
	if s.tls {
		scheme = "tls"
	}
	return scheme + "://" + s.ns.Addr().String()
}

// ClusterURL is the URL other nodes route to, "" without a cluster.
func (s *Server) ClusterURL() string {
	addr := s.ns.ClusterAddr()
	if addr == nil {
		return ""
	}
	return "nats-route://" + addr.String()
}

// Shutdown stops the server and waits until it is down.
func (s *Server) Shutdown() {
	s.ns.Shutdown()
	s.ns.WaitForShutdown()
}

// serverOptions turns settings into NATS options, refusing unsafe ones.
func serverOptions(s hubconf.Settings) (*server.Options, error) {
	if err := checkExposure(s); err != nil {
		return nil, err
	}
	if s.StoreDir == "" {
		return nil, errors.New("the hub needs a folder to store JetStream data in")
	}
	host, port, err := splitListen(s.Listen, "127.0.0.1", defaultClientPort)
	if err != nil {
		return nil, fmt.Errorf("cannot use %q as the hub's address: %w", s.Listen, err)
	}
	name := s.Name
	if name == "" {
		if name, err = os.Hostname(); err != nil {
			return nil, fmt.Errorf("cannot name the hub's NATS server after the host: %w", err)
		}
	}
	opts := &server.Options{
		ServerName: name,
		Host:       host,
		Port:       port,
		NoLog:      true,
		NoSigs:     true,
		JetStream:  true,
		StoreDir:   s.StoreDir,
		// Every message on disk before the server confirms it, as every
		// file agentctl writes: a power cut must not take back a message
		// a sender was told is stored. The swarm's traffic is small.
		SyncAlways: true,
		// The server's first ping to a client comes 2 s after it connects
		// unless told otherwise: on a loaded machine a password's bcrypt
		// check can take longer, and a client still logging in reads that
		// ping where it waits for its answer, and gives up. Clients ping
		// the server themselves (pingInterval).
		DisableShortFirstPing: true,
	}
	if err := setAuth(opts, s.Users, s.Keys); err != nil {
		return nil, err
	}
	opts.AuthTimeout = authTimeout
	if s.TLS.Enabled() {
		if opts.TLSConfig, err = serverTLS(s.TLS); err != nil {
			return nil, err
		}
		opts.TLSVerify = s.TLS.CA != ""
		opts.TLSTimeout = 5 // seconds; a loaded machine is slower than the 0.5 s default
		opts.AuthTimeout = authTimeout
	}
	if s.Cluster.Listen != "" {
		if err := setCluster(opts, s.Cluster, s.TLS); err != nil {
			return nil, err
		}
	}
	return opts, nil
}

// checkExposure is the verdict on who could reach the server: clients
// never anonymous off loopback, and routes never anonymous at all. A
// route is let past every identity's permissions, so one from another
// account on this machine, at a loopback address, could read every
// stream; the commands that start a server always give its clients
// credentials of their own.
func checkExposure(s hubconf.Settings) error {
	listen := s.Listen
	if listen == "" {
		listen = "127.0.0.1"
	}
	if !loopback.IsAddress(listen) && len(s.Users) == 0 && len(s.Keys) == 0 {
		return fmt.Errorf("the hub would listen on %s with no users or nkeys, open to anyone who can reach it", listen)
	}
	c := s.Cluster
	if c.Listen != "" && c.User == "" && !s.TLS.Mutual() {
		return fmt.Errorf("the hub's cluster would listen on %s with no route credentials or TLS with a CA, open to anyone who can reach it (other accounts of this machine included)", c.Listen)
	}
	return nil
}

// splitListen parses a listen address, filling in defaults. Port 0 asks
// for a free port, which NATS spells -1.
func splitListen(listen, defHost string, defPort int) (string, int, error) {
	if listen == "" {
		return defHost, defPort, nil
	}
	host, p, err := loopback.SplitHostPort(listen)
	if err != nil {
		return "", 0, err
	}
	if host == "" {
		host = "0.0.0.0"
	}
	if p == "" {
		return host, defPort, nil
	}
	port, err := strconv.Atoi(p)
	if err != nil || port < 0 || port > 65535 {
		return "", 0, fmt.Errorf("port %q is not a number from 0 to 65535", p)
	}
	if port == 0 {
		port = server.RANDOM_PORT
	}
	return host, port, nil
}

// setCluster configures routes to the other nodes.
func setCluster(opts *server.Options, c hubconf.Cluster, t hubconf.TLS) error {
	if c.Name == "" {
		return errors.New("the hub's cluster needs a name, the same on every node")
	}
	if (c.User == "") != (c.Password == "") {
		return errors.New("the hub's cluster routes need both a user and a password, or neither")
	}
	host, port, err := splitListen(c.Listen, "127.0.0.1", defaultRoutePort)
	if err != nil {
		return fmt.Errorf("cannot use %q as the cluster's address: %w", c.Listen, err)
	}
	opts.Cluster = server.ClusterOpts{
		Name:     c.Name,
		Host:     host,
		Port:     port,
		Username: c.User,
		Password: c.Password,
	}
	if t.Mutual() {
		if opts.Cluster.TLSConfig, err = routeTLS(t); err != nil {
			return err
		}
		opts.Cluster.TLSTimeout = 5
	}
	for _, r := range c.Routes {
		u, err := url.Parse(r)
		if err != nil || u.Host == "" {
			return fmt.Errorf("cannot use %q as a route: want nats-route://host:port", r)
		}
		if u.User == nil && c.User != "" {
			u.User = url.UserPassword(c.User, c.Password)
		}
		opts.Routes = append(opts.Routes, u)
	}
	return nil
}

// prepareStoreDir creates the JetStream folder private to this user and
// refuses one others may write to: they could plant or alter messages.
func prepareStoreDir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("cannot create the JetStream folder: %w", err)
	}
	fi, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("cannot check the JetStream folder: %w", err)
	}
	if runtime.GOOS != "windows" && fi.Mode().Perm()&0o022 != 0 {
		return fmt.Errorf("the JetStream folder %s is writable by others (%v); chmod 0700 it", dir, fi.Mode().Perm())
	}
	return nil
}

// natsLogger hands the server's messages to zerolog and keeps the first
// fatal one, which is how the server reports that it could not start.
type natsLogger struct {
	log       zerolog.Logger
	mu        sync.Mutex
	firstFail string
}

// The server's notices (its banner, every stream restored) are for
// debugging; the hub says itself when the server is ready.
func (l *natsLogger) Noticef(format string, v ...any) { l.log.Debug().Msgf(format, v...) }
func (l *natsLogger) Warnf(format string, v ...any)   { l.log.Warn().Msgf(format, v...) }
func (l *natsLogger) Errorf(format string, v ...any)  { l.log.Error().Msgf(format, v...) }
func (l *natsLogger) Debugf(format string, v ...any)  { l.log.Debug().Msgf(format, v...) }
func (l *natsLogger) Tracef(format string, v ...any)  { l.log.Trace().Msgf(format, v...) }

// Fatalf records instead of exiting: only the embedding process may end
// itself.
func (l *natsLogger) Fatalf(format string, v ...any) {
	msg := fmt.Sprintf(format, v...)
	l.log.Error().Msg(msg)
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.firstFail == "" {
		l.firstFail = msg
	}
}

func (l *natsLogger) fatal() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.firstFail
}

// serverTLS builds the tls.Config of a server's client port.
func serverTLS(t hubconf.TLS) (*tls.Config, error) {
	if t.Cert == "" || t.Key == "" {
		return nil, errors.New("a hub serving TLS needs both a certificate and a key file")
	}
	cfg, err := server.GenTLSConfig(&server.TLSConfigOpts{
		CertFile: t.Cert,
		KeyFile:  t.Key,
		CaFile:   t.CA,
		Verify:   t.CA != "",
	})
	if err != nil {
		return nil, fmt.Errorf("cannot load the hub's TLS files: %w", err)
	}
	return cfg, nil
}

// routeTLS builds the tls.Config of a cluster's routes: the same
// certificate, and the CA verifying the other nodes in both directions.
func routeTLS(t hubconf.TLS) (*tls.Config, error) {
	cfg, err := server.GenTLSConfig(&server.TLSConfigOpts{
		CertFile: t.Cert,
		KeyFile:  t.Key,
		CaFile:   t.CA,
		Verify:   true,
	})
	if err != nil {
		return nil, fmt.Errorf("cannot load the hub's TLS files for the cluster routes: %w", err)
	}
	return cfg, nil
}
