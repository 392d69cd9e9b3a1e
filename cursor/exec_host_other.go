//go:build !linux

package cursor

import (
	"context"

	"github.com/agentctl/agentctl/internal/clock"
)

// directStarter starts each turn's command by os/exec: only Linux has the
// seat's host.
type directStarter struct{}

func newStarter(clock.Clock) commandStarter { return directStarter{} }

func (directStarter) setUp(ctx context.Context, args []string, dir string, env []string, cio commandIO) (turnCommand, error) {
	return newExecCommand(ctx, args, dir, env, cio)
}
