package cursor

import (
	"context"
	"fmt"
	"time"

	"github.com/atotto/clipboard"
)

// clipboardBackend is the desktop's clipboard. Where the platform allows
// (X11), agentctl owns the clipboard itself while a turn uses it, so that
// it knows when an app read what it put there (a paste) and when an app
// replaced it (a copy) as the server tells, without polling; elsewhere,
// and to leave the person's text behind, it goes through the clipboard
// tool (atotto/clipboard).
type clipboardBackend interface {
	read(ctx context.Context) (string, error)
	// write puts text on the clipboard; every app reads text once it
	// returns. It lasts while this process runs.
	write(ctx context.Context, text string) error
	// changed waits up to wait until the clipboard holds something other
	// than old and returns it.
	changed(ctx context.Context, old string, wait time.Duration) (string, bool)
	// pasted waits up to wait until an app read as text what the last
	// write put there, then until no app asked for the clipboard for
	// settle (an app may read it more than once for one paste); known is
	// false where the clipboard cannot tell.
	pasted(ctx context.Context, wait, settle time.Duration) (read, known bool)
	// taken waits up to wait until an app replaced what the last write
	// put there, however alike, and returns what the clipboard holds then;
	// known is false where the clipboard cannot tell.
	taken(ctx context.Context, wait time.Duration) (text string, ok, known bool)
	// replaced says whether an app has replaced what the last write put there,
	// however alike, by now; known is false where the clipboard cannot
	// tell.
	replaced() (replaced, known bool)
	// keep puts text on the clipboard for good: it stays when this
	// process ends.
	keep(ctx context.Context, text string) error
}

// systemClipboard returns the desktop's clipboard.
var systemClipboard = func() clipboardBackend { return toolClipboard{} }

// clipboardPoll is how often the clipboard tool is asked while waiting for
// the clipboard to take a value: the X11 clipboard tool returns before the
// server knows the new owner, so a paste right after writing can paste the
// old contents.
const clipboardPoll = 5 * time.Millisecond

// clipboardWait bounds waiting for the clipboard to take or give a value.
const clipboardWait = 3 * time.Second

// savedClipboard is the user's clipboard, put back after a turn.
type savedClipboard struct {
	text string
	ok   bool
}

func saveClipboard() savedClipboard {
	text, err := systemClipboard().read(context.Background())
	return savedClipboard{text: text, ok: err == nil}
}

// restore puts the user's text back. An empty or unreadable clipboard comes
// back empty: the prompt or reply must not linger there.
func (s savedClipboard) restore(ctx context.Context) error {
	if err := systemClipboard().keep(ctx, s.text); err != nil {
		return fmt.Errorf("cannot restore the clipboard: %w", err)
	}
	return nil
}

// restoreGuarded is restore after a copy action that gave nothing in
// time: the app may still write its copy late, over the user's text, so
// for up to guard the text is put back again whenever it is gone.
func (s savedClipboard) restoreGuarded(ctx context.Context, guard time.Duration) error {
	if err := s.restore(ctx); err != nil {
		return err
	}
	for end := time.Now().Add(guard); time.Now().Before(end); {
		if got, err := systemClipboard().read(ctx); err == nil && got != s.text {
			if err := s.restore(ctx); err != nil {
				return err
			}
		}
		if err := realSleep(ctx, 20*time.Millisecond); err != nil {
			return nil
		}
	}
	return nil
}

// setClipboard puts text on the clipboard and returns once apps read it.
func setClipboard(ctx context.Context, text string) error {
	return systemClipboard().write(ctx, text)
}

// awaitClipboardChange waits up to wait until the clipboard holds something
// other than old and returns it.
func awaitClipboardChange(ctx context.Context, old string, wait time.Duration) (string, bool) {
	return systemClipboard().changed(ctx, old, wait)
}

// toolClipboard goes through the platform's clipboard tool.
type toolClipboard struct{}

func (toolClipboard) read(context.Context) (string, error) { return clipboard.ReadAll() }

func (toolClipboard) write(ctx context.Context, text string) error { return toolWrite(ctx, text) }

func (toolClipboard) keep(ctx context.Context, text string) error { return toolWrite(ctx, text) }

func (toolClipboard) changed(ctx context.Context, old string, wait time.Duration) (string, bool) {
	return pollChange(ctx, old, wait, func() (string, error) { return clipboard.ReadAll() })
}

func (toolClipboard) pasted(context.Context, time.Duration, time.Duration) (bool, bool) {
	return false, false
}

func (toolClipboard) taken(context.Context, time.Duration) (string, bool, bool) {
	return "", false, false
}

func (toolClipboard) replaced() (bool, bool) { return false, false }

// clipboardRewrite is how long a written text may take to show before it
// is written again: an application whose copy was slow can take the
// clipboard back after the write.
const clipboardRewrite = 500 * time.Millisecond

// toolWrite writes text with the clipboard tool and waits until reading
// it back gives text.
func toolWrite(ctx context.Context, text string) error {
	ctx, cancel := context.WithTimeout(ctx, clipboardWait)
	defer cancel()
	for {
		if err := clipboard.WriteAll(text); err != nil {
			return fmt.Errorf("cannot write the clipboard: %w", err)
		}
		for written := time.Now(); time.Since(written) < clipboardRewrite; {
			got, err := systemClipboard().read(ctx)
			if err == nil && got == text {
				return nil
			}
			select {
			case <-ctx.Done():
				return fmt.Errorf("the clipboard did not take the text within %s", clipboardWait)
			case <-time.After(clipboardPoll):
			}
		}
	}
}

// pollChange reads the clipboard until it holds something other than old,
// for up to wait.
func pollChange(ctx context.Context, old string, wait time.Duration, read func() (string, error)) (string, bool) {
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	for {
		got, err := read()
		if err == nil && got != old {
			return got, true
		}
		select {
		case <-ctx.Done():
			return "", false
		case <-time.After(clipboardPoll):
		}
	}
}
