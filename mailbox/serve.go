package mailbox

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Handler works on one claimed message and settles it with Complete, Retry
// or Deadletter before returning. An error stops Serve; the claim then stays
// in processing/ for the next consumer to recover.
type Handler func(ctx context.Context, c *Consumer, cl *Claim) error

// Serve is the consumer loop: claim and handle whatever is claimable, then
// sleep until a file event, a rescan, or the consumer's next wake-up (a
// retry coming due, a dropped file settling). It never polls while idle.
// It returns nil when ctx is done.
func Serve(ctx context.Context, c *Consumer, w *Watcher, handle Handler) error {
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		for ctx.Err() == nil {
			cl, err := c.Claim(time.Now())
			if errors.Is(err, ErrEmpty) {
				break
			}
			if err != nil {
				return err
			}
			if err := handle(ctx, c, cl); err != nil {
				return err
			}
			if c.inflight != nil {
				return fmt.Errorf("handler left %s unsettled", cl.Message.ID)
			}
		}
		var wake <-chan time.Time
		if t, ok := c.NextWake(); ok {
			timer.Reset(max(time.Until(t), 0))
			wake = timer.C
		}
		var err error
		select {
		case <-ctx.Done():
			return nil
		case ch := <-w.C:
			if ch.Rescan {
				err = c.Scan(time.Now())
			}
			if err == nil {
				err = c.Notice(time.Now(), ch.Names...)
			}
		case <-wake:
			err = c.Tick(time.Now())
		}
		if err != nil {
			return err
		}
	}
}
