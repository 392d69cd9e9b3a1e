package missioncontrol

import (
	"context"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// DefaultMaxConns is how many connections mission control serves at once
// unless told otherwise: far more than the pages and event streams of one
// person, few enough that the machine keeps its file descriptors.
const DefaultMaxConns = 64

// busyGrace is how long a connection past the cap may take to send its
// request before it is answered 503: the answer is read after the request,
// so that closing the socket does not reset it before the client reads it.
const busyGrace = time.Second

// LimitListener serves at most max connections of ln at once. Past that,
// a new connection takes the place of the oldest one that has not shown
// the token: another account on the machine, which can reach a loopback
// port but has no token, must not hold every slot and lock the person
// out. (A flood fast enough to take a new connection's slot before its
// request is read can still make the person's page try again; nothing
// keeps it out.) Only when every slot is the person's is a new connection
// answered 503 Service Unavailable at once, rather than queued. A
// connection shows the token through the server's handler (ConnContext,
// proven).
func LimitListener(ln net.Listener, max int) net.Listener {
	if max < 1 {
		max = DefaultMaxConns
	}
	return &limitListener{Listener: ln, max: max, conns: map[*limitConn]struct{}{}, refusing: make(chan struct{}, maxRefusing)}
}

// maxRefusing bounds the 503 answers under way, each a connection and a
// buffer held for up to busyGrace.
const maxRefusing = 16

type limitListener struct {
	net.Listener
	refusing chan struct{}
	max      int
	mu       sync.Mutex
	seq      uint64
	conns    map[*limitConn]struct{}
}

func (l *limitListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		l.mu.Lock()
		var victim *limitConn
		if len(l.conns) >= l.max {
			victim = l.oldestUnproven()
			if victim == nil {
				l.mu.Unlock()
				select {
				case l.refusing <- struct{}{}:
					go func() { l.refuse(c); <-l.refusing }()
				default:
					c.Close() // refusals enough under way: no answer
				}
				continue
			}
			delete(l.conns, victim)
		}
		l.seq++
		lc := &limitConn{Conn: c, seq: l.seq}
		lc.release = func() {
			l.mu.Lock()
			delete(l.conns, lc)
			l.mu.Unlock()
		}
		l.conns[lc] = struct{}{}
		l.mu.Unlock()
		if victim != nil {
			victim.Close()
		}
		return lc, nil
	}
}

// oldestUnproven is the connection held longest without the token; nil
// when every one has shown it. l.mu is held.
func (l *limitListener) oldestUnproven() *limitConn {
	var oldest *limitConn
	for c := range l.conns {
		if !c.proven.Load() && (oldest == nil || c.seq < oldest.seq) {
			oldest = c
		}
	}
	return oldest
}

// refuse answers a connection past the cap and closes it.
func (l *limitListener) refuse(c net.Conn) {
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(busyGrace))
	buf := make([]byte, 4096)
	_, _ = c.Read(buf)
	body := fmt.Sprintf("agentctl: mission control is serving its maximum of %d connections; try again shortly\n", l.max)
	fmt.Fprintf(c, "HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain; charset=utf-8\r\nRetry-After: 5\r\nConnection: close\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
}

// limitConn gives its slot back once, when closed.
type limitConn struct {
	net.Conn
	seq     uint64
	proven  atomic.Bool // a request on it has shown the token
	once    sync.Once
	release func()
}

func (c *limitConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}

type connKey struct{}

// ConnContext is the http.Server's ConnContext for connections of a
// LimitListener: it lets the handler mark the connection as the person's
// once a request on it shows the token.
func ConnContext(ctx context.Context, c net.Conn) context.Context {
	if lc, ok := c.(*limitConn); ok {
		return context.WithValue(ctx, connKey{}, lc)
	}
	return ctx
}

// proven marks the connection of ctx as having shown the token.
func proven(ctx context.Context) {
	if lc, ok := ctx.Value(connKey{}).(*limitConn); ok {
		lc.proven.Store(true)
	}
}
