//go:build !linux

package cursor

import "context"

// setUp is the turn's command, started by os/exec: only Linux has the
// host.
func (e *Exec) setUp(ctx context.Context, args []string, dir string, env []string, cio commandIO) (turnCommand, error) {
	return newExecCommand(ctx, args, dir, env, cio)
}

// execHosts has nothing to keep where there is no host.
type execHosts struct{}
