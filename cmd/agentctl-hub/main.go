// Command agentctl-hub runs the hub's NATS server for 'agentctl hub',
// which starts it and is the way to use it: the server's code lives in
// this program alone (package hubserver), so that no other agentctl
// process carries it.
//
// It reads its settings, as package hubconf writes them, from the first line
// of its standard input, prints the server's client URL on stdout once the
// server accepts connections, and runs until its standard input ends (the
// 'agentctl hub' that started it is gone) or it is asked to stop (Ctrl+C,
// SIGTERM). Secrets come on standard input, never on the command line,
// where every user of the machine could read them.
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/rs/zerolog"

	"github.com/agentctl/agentctl/agents/hub/hubconf"
	"github.com/agentctl/agentctl/agents/hub/hubserver"
	"github.com/agentctl/agentctl/internal/clilog"
)

const usage = `Usage: agentctl-hub [--log-format console|json] < SETTINGS

Runs the hub's NATS server for 'agentctl hub', which starts it: run
'agentctl hub' rather than this program. It reads the server's settings
from the first line of its standard input, prints the server's URL once
it is ready, and stops when its standard input ends or on Ctrl+C.

Examples:
  agentctl hub
  agentctl hub --server-only --listen 0.0.0.0:4222
`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run serves until ctx ends or stdin does, and returns the exit code:
// 0 after a clean stop, 1 when the server could not start, 2 for a
// usage error.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("agentctl-hub", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(fs.Output(), usage) }
	logFormat := fs.String("log-format", "console", "log `format` on stderr: console or json")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "agentctl-hub: unexpected argument %q\nusage: agentctl-hub [--log-format console|json] < SETTINGS\n", fs.Arg(0))
		return 2
	}
	log, err := newLogger(stderr, *logFormat)
	if err != nil {
		fmt.Fprintf(stderr, "agentctl-hub: %v\n", err)
		return 2
	}
	in := bufio.NewReader(stdin)
	s, err := hubconf.Read(in)
	if err != nil {
		fmt.Fprintf(stderr, "agentctl: %v\nhint: agentctl-hub is started by 'agentctl hub'; run that instead\n", err)
		return 1
	}
	srv, err := hubserver.StartServer(s, log.With().Str("component", "nats").Logger())
	if err != nil {
		fmt.Fprintf(stderr, "agentctl: cannot start the hub's server: %v\n", err)
		fmt.Fprintln(stderr, "hint: check that nothing else listens on hub.listen; a hub.cluster off loopback needs hub.user and hub.password_file, or hub.tls with a CA")
		return 1
	}
	defer srv.Shutdown()
	log.Info().Str("event", "listening").Str("url", srv.ClientURL()).Str("store", s.StoreDir).Msg("hub's NATS server ready")
	fmt.Fprintln(stdout, srv.ClientURL())
	// The end of stdin is the end of the 'agentctl hub' that holds it,
	// however it ended: a server outliving it would hold the port and the
	// store from the next one.
	eof := make(chan struct{})
	go func() {
		_, _ = io.Copy(io.Discard, in)
		close(eof)
	}()
	select {
	case <-ctx.Done():
	case <-eof:
	}
	return 0
}

// newLogger is agentctl's logger on stderr, so that the server's lines
// read as those of the hub that started it.
func newLogger(w io.Writer, format string) (zerolog.Logger, error) { return clilog.New(w, format) }
