//go:build !linux

package xvfb

import "context"

func start(ctx context.Context, d *Display, opts Options) error { return ErrUnsupported }
