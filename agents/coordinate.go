package agents

import (
	"context"
	"fmt"
	"time"

	"github.com/agentctl/agentctl/projectboard"
)

// coordination is what an idle runner keeps between its looks at the
// boards.
type coordination struct {
	next      time.Time       // the next look; zero: at the next idle moment
	done      map[string]bool // tasks seen done at the last look; nil before the first
	settled   int             // messages settled, for lore every N messages
	postponed bool            // the last claim was a digest note put back to wait
}

// handled runs after each claim: the boards are looked at as soon as the
// runner is idle again (the message may have finished a task), and the
// lore is refreshed every Lore.EveryMessages messages.
func (r *Runner) handled(ctx context.Context) {
	r.look.next = time.Time{}
	if r.look.postponed {
		r.look.postponed = false
		return
	}
	r.look.settled++
	if n := r.s.Lore.EveryMessages; n > 0 && r.look.settled%n == 0 {
		r.refreshLore(ctx, fmt.Sprintf("every %d messages", n))
	}
}

// wakeSlackDivisor sets how early, as a part of its period, a periodic
// job (a heartbeat, a board look) is done when the runner is awake for
// something else: an idle runner then wakes once for jobs that fall close
// together instead of once for each.
const wakeSlackDivisor = 4

// coordinate is the idle runner's look at the boards, every BoardLook:
// dependency notices, the lore when a task became done, and a task to take
// when the agent takes work from the boards and nothing else is claimable.
func (r *Runner) coordinate(ctx context.Context, now time.Time) error {
	// A look due soon is taken now, while the runner is awake anyway.
	if now.Add(r.s.BoardLook / wakeSlackDivisor).Before(r.look.next) {
		return nil
	}
	r.look.next = now.Add(r.s.BoardLook)
	if _, err := r.recovery.Dependencies(now); err != nil {
		r.log.Warn().Err(err).Msg("dependency notices not sent yet")
	}
	if r.s.Lore.OnTaskDone {
		tasks, _ := (&projectboard.Store{Root: r.s.Root}).Tasks()
		done, fresh := map[string]bool{}, false
		for _, t := range tasks {
			if t.Status == projectboard.Done {
				done[t.ID] = true
				fresh = fresh || (r.look.done != nil && !r.look.done[t.ID])
			}
		}
		r.look.done = done
		if fresh {
			r.refreshLore(ctx, "a task is done")
		}
	}
	if r.s.TakeWork && !r.c.Claimable(now) {
		return r.offerBoardTask(now)
	}
	return nil
}

// refreshLore writes the day's lore; a failure is logged, never fatal.
func (r *Runner) refreshLore(ctx context.Context, why string) {
	narrated, err := RefreshLore(ctx, r.s.Root, r.s.Agents, r.now(), r.s.Lore)
	if err != nil {
		r.log.Warn().Err(err).Str("event", "lore").Msg("lore refresh: " + why)
		return
	}
	r.log.Info().Str("event", "lore").Bool("narrated", narrated).Msg("lore refreshed: " + why)
}
