package missioncontrol

import (
	"fmt"
	"net"
	"sync"
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

// LimitListener serves at most max connections of ln at once and answers
// every one past that at once with 503 Service Unavailable, so that idle
// connections (which the server's timeouts end) cannot queue a person's
// page behind them unanswered.
func LimitListener(ln net.Listener, max int) net.Listener {
	if max < 1 {
		max = DefaultMaxConns
	}
	return &limitListener{Listener: ln, slots: make(chan struct{}, max), max: max}
}

type limitListener struct {
	net.Listener
	slots chan struct{}
	max   int
}

func (l *limitListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		select {
		case l.slots <- struct{}{}:
			return &limitConn{Conn: c, release: func() { <-l.slots }}, nil
		default:
			go l.refuse(c)
		}
	}
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
	once    sync.Once
	release func()
}

func (c *limitConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}
