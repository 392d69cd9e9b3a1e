package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/agentctl/agentctl/cmd/internal/cli"
	"github.com/agentctl/agentctl/internal/atomicfile"
	"github.com/agentctl/agentctl/internal/layout"
	"github.com/agentctl/agentctl/internal/lockfile"
)

// roleHub is what a hub records in its lock file.
const roleHub = "hub"

// lockHub makes this process the runtime's one hub until release is
// called: a second hub on the same store would start a second server over
// the same JetStream files. A hub that died let go of the lock with its
// last breath (the kernel releases it), so its successor starts at once.
func lockHub(root string) (release func(), err error) {
	if err := atomicfile.MkdirAll(layout.Locks(root)); err != nil {
		return nil, err
	}
	path := layout.HubLock(root)
	// Never waited for: a hub holds it for as long as it runs.
	l, _, err := lockfile.Acquire(context.Background(), path, lockfile.Wait{})
	if busy := (*lockfile.BusyError)(nil); errors.As(err, &busy) {
		who := busy.Holder.String()
		if h := busy.Holder; h.Believed {
			who = fmt.Sprintf("pid %d", h.Record.PID)
		}
		if who == "" {
			who = "another process"
		}
		return nil, cli.WithHint(fmt.Errorf("another agentctl hub is running on this runtime (%s); two would share one JetStream store", who),
			"stop it first, or give this hub a runtime of its own (--root)")
	}
	if err != nil {
		return nil, fmt.Errorf("cannot take the hub's lock: %w", err)
	}
	if err := lockfile.Write(path, lockfile.Self(roleHub)); err != nil {
		l.Unlock()
		return nil, err
	}
	return func() { l.Unlock() }, nil
}
