package cursor

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// A copy action that gave nothing within copyWait may still be on its way:
// an app starved of CPU runs the click or the keys late, and its copy then
// lands on the text the turn put back for the person. Where the clipboard
// can tell who takes it over (X11), the person's text is held after such a
// copy until the next turn of the driver begins or lateCopyGuard has
// passed, and put back over a copy only when all of these say it is the
// late one (isLateCopy): the agent's app made it, it is the chat's
// (it holds a recent prompt, as a transcript does, or equals what one of
// the chat's copies gave, as a reply's does; see chatSaid), and no turn of
// any agent holds the desktop input lock, so none asked for it. Anything else ends the guard and stays: the person's own copy, in
// this app or another, or another agent's turn, whose windows may be the
// same app's. A copy of the agent's app that is not known as the chat's
// when it lands (the late copy of a reply no copy had given yet) ends the
// guard too, but is remembered: once a copy of the chat's gives the same
// text, it was the late one, and the person's text goes back at the end
// of that copy's session. Elsewhere, after copy keys (whose menu item can run late),
// the text is put back whenever it changes within copyWait, while the turn
// still holds the lock (restoreGuarded).

// lateCopyGuard is how long the person's text is held after a copy that
// gave nothing: a late copy measured under heavy load came after seconds.
const lateCopyGuard = 30 * time.Second

// clipHolder is who holds the clipboard after the text this process put
// there was taken over, or the wait for that ended.
type clipHolder int

const (
	heldByUs    clipHolder = iota // still the text this process wrote
	heldByApp                     // the app that made the agent's window
	heldByOther                   // any other app, or a later write of this process
)

// holdingClipboard is a clipboard that can tell which app took over the
// text this process wrote.
type holdingClipboard interface {
	clipboardBackend
	// canOwn reports whether this process can serve text itself: a
	// text it cannot goes through the clipboard tool, and no lease tells
	// when it is taken over.
	canOwn(text string) bool
	// own is write, returning the lease of that write.
	own(ctx context.Context, text string) (clipLease, error)
	// holder waits until the text of lease is taken over, or ctx ends,
	// and says who holds the clipboard then, app being the agent's
	// window.
	holder(ctx context.Context, lease clipLease, app windowID) (clipHolder, error)
}

// clipLease is one write's hold on the clipboard: closed when the text is
// taken over.
type clipLease <-chan struct{}

// chatSaid keeps what the chat said in the driver's last few turns, by
// which a late copy is known: the prompts, which a transcript holds, and
// what its copies gave, a reply among them, which a late copy of it
// equals. Only a prompt is looked for inside a copy: a reply can be as
// short as a word the person copies from elsewhere in the app.
type chatSaid struct {
	mu      sync.Mutex
	prompts []string // oldest first
	copies  []string
}

// chatSaidTurns is how many prompts and copies chatSaid keeps.
const chatSaidTurns = 8

func (c *chatSaid) addPrompt(text string) { c.add(&c.prompts, text) }
func (c *chatSaid) addCopy(text string)   { c.add(&c.copies, text) }

func (c *chatSaid) add(to *[]string, text string) {
	if text == "" {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(*to) == chatSaidTurns {
		*to = (*to)[1:]
	}
	*to = append(*to, text)
}

// holds reports whether copied is one of the chat's copies, or holds one
// of its prompts.
func (c *chatSaid) holds(copied string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, p := range c.prompts {
		if strings.Contains(copied, p) {
			return true
		}
	}
	return slices.Contains(c.copies, copied)
}

// lateGuard holds the person's text in the background.
type lateGuard struct {
	text   string // the person's
	cancel context.CancelFunc
	done   chan struct{}
	// handOver gives the text, when the guard ends holding it, to the
	// clipboard tool, so that it outlives this process; a turn that
	// begins reads it from this process instead.
	handOver atomic.Bool
	// over says the guard ran its course (a copy that was not the late
	// one, or its time ran out); set before done closes.
	over bool
	// unsure is the copy of the agent's app that ended it, not known
	// then as the chat's: the late copy of a reply no copy of the turn
	// had given yet looks so. Set before done closes.
	unsure string
}

// unsureCopy is the person's text and the copy of the agent's app that
// took its place, while it is not known whether that copy was the chat's
// late one: it is, once a copy of the chat's gives the same text, and the
// person's text then goes back (see session.end).
type unsureCopy struct{ person, copy string }

// guardLateCopy puts text back on the clipboard and holds it against a late
// copy by app's window. guarded is false where the clipboard cannot tell
// who takes it over (or not for so big a text); nothing was done then.
func (g *GUI) guardLateCopy(text string, app windowID) (guarded bool, err error) {
	clip, ok := systemClipboard().(holdingClipboard)
	if !ok || !clip.canOwn(text) {
		return false, nil
	}
	lease, err := clip.own(context.Background(), text)
	if err != nil {
		return true, fmt.Errorf("cannot restore the clipboard: %w", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), lateCopyGuard)
	lg := &lateGuard{text: text, cancel: cancel, done: make(chan struct{})}
	// A handle of its own: the guard must find the lock taken while a turn
	// of this driver holds it too.
	lock := g.lock.another()
	lg.handOver.Store(true)
	g.late = lg
	g.logf("holding the user's clipboard for %s against a late copy", lateCopyGuard)
	go func() {
		defer close(lg.done)
		defer cancel()
		for {
			h, err := clip.holder(ctx, lease, app)
			if err != nil {
				g.logf("cannot tell who took the clipboard; the guard ends: %v", err)
				lg.over = true
				return
			}
			switch {
			case h == heldByUs && ctx.Err() == nil:
				// Woken by a late word of an earlier hold: hold anew.
				lease, err = clip.own(context.Background(), text)
			case h == heldByUs:
				lg.over = errors.Is(ctx.Err(), context.DeadlineExceeded)
				if lg.handOver.Load() {
					if err := clip.keep(context.Background(), text); err != nil {
						g.logf("cannot leave the user's text on the clipboard: %v", err)
					}
				}
				return
			default:
				late, copied, release, lerr := g.isLateCopy(clip, lock, h)
				if !late {
					if lerr != nil {
						g.logf("cannot tell whether the copy is the chat's late one: %v", lerr)
					}
					g.logf("a copy that is not the chat's late one took the clipboard; the guard ends")
					lg.over = true
					if h == heldByApp && lerr == nil {
						lg.unsure = copied
					}
					return
				}
				g.logf("the chat's late copy took the clipboard; the user's text is put back")
				lease, err = clip.own(context.Background(), text)
				release()
			}
			if err != nil {
				g.logf("cannot hold the user's text: %v", err)
				lg.over = true
				return
			}
		}
	}()
	return true, nil
}

// isLateCopy says whether the copy h took the clipboard with is the
// chat's late one, and gives the agent's app's copy. If so, the desktop
// input lock is held until release is called, so that no turn begins
// while the text is put back.
func (g *GUI) isLateCopy(clip holdingClipboard, lock *InputLock, h clipHolder) (late bool, copied string, release func(), err error) {
	if h != heldByApp {
		return false, "", nil, nil
	}
	copied, err = clip.read(context.Background())
	if err != nil || !g.said.holds(copied) {
		return false, copied, nil, err
	}
	free, err := lock.TryAcquire()
	if !free || err != nil {
		return false, copied, nil, err
	}
	return true, copied, func() { _ = lock.Release() }, nil
}

// stopLateGuard ends the guard, if one runs, and reports whether it was
// still holding the person's text: a late copy may then still come.
// handOver says whether the text must outlive this process. A guard ended
// by a copy of the agent's app not known as the chat's leaves it unsure.
func (g *GUI) stopLateGuard(handOver bool) (text string, holding bool) {
	lg := g.late
	if lg == nil {
		return "", false
	}
	g.late = nil
	lg.handOver.Store(handOver)
	lg.cancel()
	<-lg.done
	if lg.unsure != "" {
		g.unsure = &unsureCopy{person: lg.text, copy: lg.unsure}
	}
	return lg.text, !lg.over
}
