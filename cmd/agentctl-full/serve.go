package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/agentctl/agentctl/agents/missioncontrol"
	"github.com/agentctl/agentctl/cmd/internal/cli"
	"github.com/agentctl/agentctl/internal/atomicfile"
	"github.com/agentctl/agentctl/internal/layout"
)

const serveUsage = `
Usage: agentctl serve [--addr 127.0.0.1:7878] [--max-conns 64]

Serves mission control, a live page of the whole swarm, and prints its
URL: a tile per agent (its state, the message it works on and for how
long, its queue by priority, its last devlog entry, the desktop lock),
the board as columns, threads with their timings, dead letters with a
retry button, what waits for people with a reply box, and a form to send
a message. The page updates from the runtime's own file events, reading
only the files that changed.

Each list holds the first 50 of a mailbox's folder (the next in its
queue, the newest of the others) while counts stay exact; the page's
"more" link, and GET /api/messages?mailbox=NAME&state=dead&offset=50
(pending, processing, done or dead; limit up to 500), page through the
rest.

Changes made on the page go through the same code as 'agentctl send',
'retry', 'reply', 'board set' and 'skip'. The page, its API and its
event stream all need the token made at start: open the login link
printed, which keeps it in a cookie of this browser, or send it as
'Authorization: Bearer TOKEN' (it is in <root>/mission-control.token,
readable by you only). Requests from other origins are refused. The
server listens on loopback only, and serves at most --max-conns
connections at once, answering the ones past that with 503.

Examples:
  agentctl serve
  agentctl serve --addr 127.0.0.1:9000
`

// TokenFile is where serve keeps its write token, under the runtime root.
const TokenFile = layout.TokenFile

func runServe(ctx context.Context, env *cli.Env, args []string) error {
	fs := cli.NewFlagSet(env, "serve", serveUsage)
	addr := fs.String("addr", "127.0.0.1:7878", "`host:port` to listen on")
	maxConns := fs.Int("max-conns", missioncontrol.DefaultMaxConns, "most `connections` served at once (pages, API calls, event streams)")
	rest, err := cli.ParseArgs(fs, args)
	if err != nil {
		return err
	}
	if err := cli.WantArgs(fs, rest, 0, 0, "no arguments"); err != nil {
		return err
	}
	if *maxConns < 1 {
		return cli.UsageError{Msg: "serve: --max-conns must be at least 1"}
	}
	cfg, err := cli.LoadConfig(env)
	if err != nil {
		return err
	}
	if host, _, err := net.SplitHostPort(*addr); err == nil {
		if ip := net.ParseIP(host); (ip == nil && host != "localhost") || (ip != nil && !ip.IsLoopback()) {
			return cli.WithHint(fmt.Errorf("serve: %s is not a loopback address; mission control serves this machine only", host),
				"use 127.0.0.1 (the default) and reach it from elsewhere through an SSH tunnel: ssh -L 7878:127.0.0.1:7878 HOST")
		}
	}
	feed, err := missioncontrol.NewFeed(env.Root, mcSettings(cfg), missioncontrol.FeedOptions{})
	if err != nil {
		return fmt.Errorf("cannot watch the runtime: %w", err)
	}
	token, err := newToken(env.Root)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return cli.WithHint(fmt.Errorf("cannot listen on %s: %w", *addr, err), "another 'agentctl serve' may be running; pick another port with --addr 127.0.0.1:PORT")
	}
	ln = missioncontrol.LimitListener(ln, *maxConns)
	srv := newServeServer((&missioncontrol.Server{Feed: feed, Actions: mcActions(env, cfg), Token: token}).Handler())
	fmt.Fprintf(env.Stdout, "mission control: http://%s/login?token=%s\n", ln.Addr(), token)
	fmt.Fprintf(env.Stdout, "the token is also in %s; Ctrl+C stops the server\n", layout.Token(env.Root))
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	feedDone := make(chan error, 1)
	go func() { feedDone <- feed.Run(ctx) }()
	go func() {
		<-ctx.Done()
		shut, done := context.WithTimeout(context.Background(), 2*time.Second)
		defer done()
		srv.Shutdown(shut)
	}()
	err = srv.Serve(ln)
	cancel()
	if ferr := <-feedDone; ferr != nil {
		return fmt.Errorf("mission control stopped: %w", ferr)
	}
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

// newServeServer bounds how long a connection may hold one of the
// listener's slots without asking anything: the headers of a request
// within 10 seconds, the next request on a kept-alive connection within a
// minute. Event streams stay as long as their page.
func newServeServer(h http.Handler) *http.Server {
	return &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: time.Minute, ConnContext: missioncontrol.ConnContext}
}

// newToken makes a fresh write token and keeps it where only the user can
// read it.
func newToken(root string) (string, error) {
	var b [24]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	token := hex.EncodeToString(b[:])
	if err := atomicfile.WriteSecret(layout.Token(root), []byte(token+"\n")); err != nil {
		return "", fmt.Errorf("cannot keep the token: %w", err)
	}
	return token, nil
}
