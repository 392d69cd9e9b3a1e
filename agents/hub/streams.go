package hub

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/agentctl/agentctl/internal/clock"
)

// streamConfigs are the swarm's streams. Each is a work queue: a message
// stays until its one consumer acknowledges it, on disk, on Replicas
// servers. Nothing ages out: a seat switched off for a week finds its
// turns waiting.
func streamConfigs(replicas int) []jetstream.StreamConfig {
	if replicas < 1 {
		replicas = 1
	}
	mk := func(name, subjects, what string) jetstream.StreamConfig {
		return jetstream.StreamConfig{
			Name: name, Description: what, Subjects: []string{subjects},
			Retention: jetstream.WorkQueuePolicy, Storage: jetstream.FileStorage,
			Replicas: replicas, Duplicates: 10 * time.Minute,
		}
	}
	turns := mk(TurnsStream, "agentctl.turn.*", "agentctl: turns the hub asks seats on other machines to take")
	// An agent's runner asks one turn at a time, so an agent's newest ask
	// is the only one worth taking: an older one is of a turn the runner
	// has settled since (asked again after a restart, dead-lettered,
	// skipped), and a seat that comes back must not take it.
	turns.MaxMsgsPerSubject = 1
	return []jetstream.StreamConfig{
		turns,
		mk(RepliesStream, "agentctl.reply.*", "agentctl: seats' answers to the hub's asks"),
		mk(DeliverStream, "agentctl.deliver.*.*", "agentctl: messages dropped on other machines, on their way to the hub"),
	}
}

// EnsureStreams creates the swarm's streams, or updates them to replicas.
// The hub calls it; seats only wait for the streams (WaitStreams), so that
// a seat with different settings never reshapes them. While the servers
// cannot place a stream yet (a cluster electing its leader, or a node it
// needs not back yet), it waits, calling waiting once for each reason. A
// cluster whose leader knows fewer servers than replicas for
// placementAttempts tries in a row is taken for one that has fewer: that
// is an error, with a hint.
//
// A stream that already has its shape is left alone: the server takes a
// create of the same configuration as a no-op, and only a stream of
// another shape is updated. Updating it at every start would rewrite its
// store while seats make their consumers on it, which the NATS server
// (2.15) does without holding the lock those read.
func EnsureStreams(ctx context.Context, js jetstream.JetStream, replicas int, waiting func(error)) error {
	told := map[string]bool{}
	for _, cfg := range streamConfigs(replicas) {
		tooFew := 0
		if err := retry(ctx, func() error {
			_, err := js.CreateStream(ctx, cfg)
			if errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) {
				_, err = js.UpdateStream(ctx, cfg)
			}
			tooFew++
			if !knowsTooFewServers(err) {
				tooFew = 0
			} else if tooFew >= placementAttempts {
				return tooFewServers{err, cfg.Replicas}
			}
			if err != nil && waiting != nil && transient(err) {
				if why := fmt.Errorf("cannot create stream %s on %d servers yet: %w", cfg.Name, cfg.Replicas, err); !told[why.Error()] {
					waiting(why)
					told[why.Error()] = true
				}
			}
			return err
		}); err != nil {
			return fmt.Errorf("cannot create stream %s: %w", cfg.Name, err)
		}
	}
	return nil
}

// WaitStreams returns once the hub has created the swarm's streams, calling
// waiting once if it has to wait. It looks again every second of real
// time: the wait is for another machine's hub, not for a decision of ours.
func WaitStreams(ctx context.Context, js jetstream.JetStream, waiting func(error)) error {
	told := false
	for _, cfg := range streamConfigs(1) {
		for {
			_, err := js.Stream(ctx, cfg.Name)
			if err == nil {
				break
			}
			if !told && waiting != nil {
				waiting(err)
				told = true
			}
			if err := pause(ctx, clock.System, time.Second); err != nil {
				return err
			}
		}
	}
	return nil
}

// retry runs f until it succeeds or ctx ends, while JetStream is not ready
// yet: a cluster electing its leader, a server coming back. Its backoff is
// in real time, whatever clock the caller keeps: it waits on the server,
// which does not move with a test's clock.
func retry(ctx context.Context, f func() error) error {
	wait := 100 * time.Millisecond
	for {
		err := f()
		if err == nil || !transient(err) {
			return err
		}
		if perr := pause(ctx, clock.System, wait); perr != nil {
			return errors.Join(err, perr)
		}
		wait = min(2*wait, 2*time.Second)
	}
}

// placementAttempts is how many tries in a row a cluster's leader may
// know fewer servers than a stream's replicas: about two minutes of
// retry's backoff. A forming cluster knows them all within seconds, even on
// a busy machine; one with fewer servers than replicas never will.
var placementAttempts = 64

// knowsTooFewServers reports whether err is the NATS server's refusal to
// place a stream on more servers than its cluster's leader knows of.
func knowsTooFewServers(err error) bool {
	var apiErr *jetstream.APIError
	return errors.As(err, &apiErr) && apiErr.ErrorCode == 10005 && apiErr.Description == noPeersYet
}

// tooFewServers is a cluster that kept knowing fewer servers than the
// streams' replicas.
type tooFewServers struct {
	error
	replicas int
}

func (e tooFewServers) Unwrap() error { return e.error }
func (e tooFewServers) Hint() string {
	return fmt.Sprintf("hub.replicas is %d: the hub's cluster needs that many servers, each up and routed to the others; start the missing ones, or lower hub.replicas", e.replicas)
}

// transient tells the errors that go away by themselves.
func transient(err error) bool {
	var refused refusal
	var few tooFewServers
	if errors.As(err, &refused) || errors.As(err, &few) {
		return false
	}
	var apiErr *jetstream.APIError
	if errors.As(err, &apiErr) {
		// 503s, "cluster not available" (10008) and "insufficient
		// resources" (10023) while a cluster forms or loses a node, and
		// "no suitable peers for placement" (10005) while a node the
		// stream needs is offline (the leader may know every node before
		// each has said it runs JetStream) or, with no reason given, not
		// known to the leader yet: it knows fewer servers than the
		// stream's replicas, most of all on a busy machine. Its other
		// reasons (tags, storage) are the settings'.
		return apiErr.Code == 503 || apiErr.ErrorCode == 10008 || apiErr.ErrorCode == 10023 || knowsTooFewServers(err) ||
			apiErr.ErrorCode == 10005 && strings.Contains(apiErr.Description, "peer offline")
	}
	// A message over the server's maximum, a bad subject, or a connection
	// this process closed (or that gave up) fail the same way each time.
	if errors.Is(err, nats.ErrMaxPayload) || errors.Is(err, nats.ErrBadSubject) || errors.Is(err, nats.ErrConnectionClosed) {
		return false
	}
	return true // timeouts, no responders, a connection being restored
}

// noPeersYet is the NATS server's refusal to place a stream on more
// servers than its cluster's leader knows of.
const noPeersYet = "no suitable peers for placement"

// headerRoom is what the headers of a published message (its id, for the
// stream's duplicate window) may take of the server's maximum payload.
const headerRoom = 512

// overPayload says why data cannot go to the hub as one message, or nil:
// the server refuses a message over its maximum payload (1 MiB unless its
// settings say more), and sending it again would only be refused again.
// what names data in the reason.
func overPayload(nc *nats.Conn, data []byte, what string) error {
	if max := nc.MaxPayload(); max > 0 && int64(len(data))+headerRoom > max {
		return fmt.Errorf("%s is %d bytes, more than the hub's server takes in one message (%d bytes)", what, len(data), max-headerRoom)
	}
	return nil
}

// pause waits d on c, or less if ctx ends first.
func pause(ctx context.Context, c clock.Clock, d time.Duration) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-clock.After(c, d):
		return nil
	}
}
