package hub

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/rs/zerolog"

	"github.com/agentctl/agentctl/internal/clock"
)

const (
	// reconnectWait plus up to reconnectJitter (TLS: the larger one) pass
	// between rounds over the URLs: short, since a runner is idle until
	// the hub is back, and jittered, so that runners do not come back all
	// at once.
	reconnectWait      = 500 * time.Millisecond
	reconnectJitter    = 500 * time.Millisecond
	reconnectJitterTLS = time.Second
	// reconnectBuffer holds what is published while the hub is away.
	reconnectBuffer = 8 << 20
	// dialTimeout is per attempt; a TLS handshake on a loaded hub is slow.
	dialTimeout = 5 * time.Second
	// pingInterval and maxPingsOut notice a hub that vanished without
	// closing the connection (powered off, cable pulled) within a minute.
	pingInterval = 20 * time.Second
	maxPingsOut  = 3
)

// Credentials are how a client proves who it is: none, a user and
// password, an nkey seed file (a file holding an "SU..." seed), or a
// .creds file (JWT and seed, for external clusters). At most one way.
type Credentials struct{ User, Password, NKeySeedFile, CredsFile string }

// ClientSettings configure a connection to the hub.
type ClientSettings struct {
	URLs        []string // one or more nats:// or tls:// URLs (a cluster's nodes)
	TLS         TLS
	Credentials Credentials
	Name        string         // connection name the server shows, e.g. "agentctl run Agent-5 on desk-2"
	Log         zerolog.Logger // disconnects, reconnects and asynchronous errors
	// Clock times when Connect says it is still waiting for the hub;
	// clock.System when nil. The reconnects themselves keep nats.go's
	// real-time schedule: they wait on the network, not on a decision.
	Clock clock.Clock
}

// Connect connects to the hub and keeps reconnecting forever afterwards:
// a hub restarting must not stop a remote runner. It returns once
// connected, or with an error when ctx ends first or at once when the hub
// refuses the credentials or a certificate, which no retry would change.
func Connect(ctx context.Context, c ClientSettings) (*nats.Conn, error) {
	if len(c.URLs) == 0 {
		return nil, errors.New("cannot connect to the hub: no URL given")
	}
	where := strings.Join(c.URLs, ", ")
	opts, err := clientOptions(c)
	if err != nil {
		return nil, fmt.Errorf("cannot connect to the hub at %s: %w", where, err)
	}
	w := newConnectWatch(c.Log)
	opts = append(opts, w.options()...)
	nc, err := nats.Connect(strings.Join(c.URLs, ","), opts...)
	if err != nil {
		return nil, fmt.Errorf("cannot connect to the hub at %s: %w", where, err)
	}
	if nc.IsConnected() {
		return nc, nil
	}
	// Waiting for a hub that is not up yet is normal (machines start in
	// any order), but not silent.
	told := clock.After(clock.Or(c.Clock), 2*time.Second)
	for {
		select {
		case <-w.connected:
			return nc, nil
		case err := <-w.failed:
			nc.Close()
			return nil, fmt.Errorf("cannot connect to the hub at %s: %w", where, describeRefusal(err, c))
		case <-told:
			c.Log.Warn().Str("url", where).AnErr("last_attempt", w.lastError()).Msg("cannot reach the hub yet; trying until it answers")
		case <-ctx.Done():
			nc.Close()
			if last := w.lastError(); last != nil {
				return nil, fmt.Errorf("cannot connect to the hub at %s: %w (last attempt: %v)", where, ctx.Err(), last)
			}
			return nil, fmt.Errorf("cannot connect to the hub at %s: %w", where, ctx.Err())
		}
	}
}

// clientOptions turns settings into NATS options, with the reconnect
// policy every agentctl connection shares.
func clientOptions(c ClientSettings) ([]nats.Option, error) {
	opts := []nats.Option{
		nats.Name(c.Name),
		nats.RetryOnFailedConnect(true),
		nats.MaxReconnects(-1),
		nats.ReconnectWait(reconnectWait),
		nats.ReconnectJitter(reconnectJitter, reconnectJitterTLS),
		nats.ReconnectBufSize(reconnectBuffer),
		nats.Timeout(dialTimeout),
		nats.PingInterval(pingInterval),
		nats.MaxPingsOutstanding(maxPingsOut),
	}
	if c.TLS.CA != "" {
		opts = append(opts, nats.RootCAs(c.TLS.CA))
	}
	if c.TLS.Cert != "" || c.TLS.Key != "" {
		if c.TLS.Cert == "" || c.TLS.Key == "" {
			return nil, errors.New("a client certificate needs both a certificate and a key file")
		}
		opts = append(opts, nats.ClientCert(c.TLS.Cert, c.TLS.Key))
	}
	auth, err := c.Credentials.option()
	if err != nil {
		return nil, err
	}
	if auth != nil {
		opts = append(opts, auth)
	}
	if c.Credentials.NKeySeedFile != "" {
		// Replies come under the key's own prefix, the one a machine's
		// identity may subscribe to.
		pub, err := PublicKey(c.Credentials.NKeySeedFile)
		if err != nil {
			return nil, err
		}
		opts = append(opts, nats.CustomInboxPrefix(InboxPrefix(pub)))
	}
	return opts, nil
}

// option is the NATS option presenting the credentials, nil for none.
func (cr Credentials) option() (nats.Option, error) {
	ways := 0
	for _, set := range []bool{cr.User != "" || cr.Password != "", cr.NKeySeedFile != "", cr.CredsFile != ""} {
		if set {
			ways++
		}
	}
	if ways > 1 {
		return nil, errors.New("credentials name more than one of a user, an nkey seed file and a .creds file; give one")
	}
	switch {
	case cr.User != "" || cr.Password != "":
		if cr.User == "" || cr.Password == "" {
			return nil, errors.New("credentials need both a user and a password")
		}
		return nats.UserInfo(cr.User, cr.Password), nil
	case cr.NKeySeedFile != "":
		opt, err := nats.NkeyOptionFromSeed(cr.NKeySeedFile)
		if err != nil {
			return nil, fmt.Errorf("cannot read the nkey seed file: %w", err)
		}
		return opt, nil
	case cr.CredsFile != "":
		// nats reads the file on every attempt; a missing one is a
		// mistake to report now, not a reason to retry forever.
		if _, err := os.Stat(cr.CredsFile); err != nil {
			return nil, fmt.Errorf("cannot read the credentials file: %w", err)
		}
		return nats.UserCredentials(cr.CredsFile), nil
	}
	return nil, nil
}

// describe names the credentials for an error message, never the secret.
func (cr Credentials) describe() string {
	switch {
	case cr.User != "":
		return fmt.Sprintf("user %q and its password", cr.User)
	case cr.NKeySeedFile != "":
		return "the nkey seed in " + cr.NKeySeedFile
	case cr.CredsFile != "":
		return "the credentials in " + cr.CredsFile
	}
	return "no credentials"
}

// isAuthError reports whether the server refused who the client is.
func isAuthError(err error) bool {
	return errors.Is(err, nats.ErrAuthorization) || errors.Is(err, nats.ErrAuthExpired) ||
		errors.Is(err, nats.ErrAuthRevoked) || errors.Is(err, nats.ErrAccountAuthExpired) ||
		strings.Contains(strings.ToLower(err.Error()), "authorization violation")
}

// describeRefusal words a permanent failure for the person who can fix it.
func describeRefusal(err error, c ClientSettings) error {
	switch {
	case err == nil:
		return errors.New("the connection closed before it was established")
	case isAuthError(err):
		return refusal{fmt.Errorf("the hub refused %s: %w", c.Credentials.describe(), err)}
	case isCertificateError(err):
		return refusal{fmt.Errorf("the TLS certificates do not match (client CA %q, client certificate %q): %w",
			c.TLS.CA, c.TLS.Cert, err)}
	}
	return err
}

// permissionRefused is the server's refusal of a subject (or a request)
// whose name holds name, as the connection last heard of it, or nil. The
// server says so in the background: the request itself only times out.
func permissionRefused(nc *nats.Conn, name string) error {
	if e := nc.LastError(); errors.Is(e, nats.ErrPermissionViolation) && strings.Contains(e.Error(), name) {
		return e
	}
	return nil
}

// refusal is the hub refusing who the client is: trying again would be
// refused the same way until a person mends the credentials or
// certificates, which the process's exit status says (NeedsPerson).
type refusal struct{ error }

func (r refusal) Unwrap() error     { return r.error }
func (r refusal) NeedsPerson() bool { return true }

// connectWatch turns the connection's callbacks into log lines and into
// the outcome Connect waits for.
type connectWatch struct {
	log       zerolog.Logger
	connected chan struct{}
	failed    chan error
	mu        sync.Mutex
	last      error
}

func newConnectWatch(log zerolog.Logger) *connectWatch {
	return &connectWatch{log: log, connected: make(chan struct{}, 1), failed: make(chan error, 1)}
}

func (w *connectWatch) options() []nats.Option {
	return []nats.Option{
		nats.ConnectHandler(func(nc *nats.Conn) {
			w.log.Info().Str("url", nc.ConnectedUrlRedacted()).Msg("connected to the hub")
			signal(w.connected, struct{}{})
		}),
		nats.DisconnectErrHandler(func(nc *nats.Conn, err error) {
			if nc.IsClosed() {
				return // closed on purpose: ClosedHandler says so
			}
			w.log.Warn().Err(err).Msg("disconnected from the hub; reconnecting")
		}),
		nats.ReconnectHandler(func(nc *nats.Conn) {
			w.log.Info().Str("url", nc.ConnectedUrlRedacted()).Msg("reconnected to the hub")
			signal(w.connected, struct{}{})
		}),
		nats.ReconnectErrHandler(func(nc *nats.Conn, err error) {
			w.setLast(err)
			w.log.Debug().Err(err).Msg("cannot reach the hub yet")
			// nats.go retries certificate failures forever; refused
			// credentials it gives up on by itself (see ClosedHandler).
			if isCertificateError(err) {
				signal(w.failed, err)
			}
		}),
		// nats.go closes the connection once a server refuses the same
		// credentials twice; before Connect returns, that is its answer.
		nats.ClosedHandler(func(nc *nats.Conn) {
			err := nc.LastError()
			w.log.Debug().Err(err).Msg("connection to the hub closed")
			signal(w.failed, err)
		}),
		nats.ErrorHandler(func(nc *nats.Conn, sub *nats.Subscription, err error) {
			ev := w.log.Error().Err(err)
			if sub != nil {
				ev = ev.Str("subject", sub.Subject)
			}
			ev.Msg("hub connection error")
		}),
	}
}

func (w *connectWatch) setLast(err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.last = err
}

func (w *connectWatch) lastError() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.last
}

// signal sends without blocking: only the first outcome matters.
func signal[T any](ch chan T, v T) {
	select {
	case ch <- v:
	default:
	}
}
