package cursor

import (
	"context"
	"fmt"
	"time"

	"github.com/atotto/clipboard"
)

// clipboardPoll is how often the clipboard is read while waiting for it to
// take a value: the X11 clipboard tool returns before the server knows the
// new owner, so a paste right after writing can paste the old contents.
const clipboardPoll = 5 * time.Millisecond

// clipboardWait bounds waiting for the clipboard to take or give a value.
const clipboardWait = 3 * time.Second

// savedClipboard is the user's clipboard, put back after a turn.
type savedClipboard struct {
	text string
	ok   bool
}

func saveClipboard() savedClipboard {
	text, err := clipboard.ReadAll()
	return savedClipboard{text: text, ok: err == nil}
}

// restore puts the user's text back. An empty or unreadable clipboard comes
// back empty: the prompt or reply must not linger there.
func (s savedClipboard) restore(ctx context.Context) error {
	if err := setClipboard(ctx, s.text); err != nil {
		return fmt.Errorf("cannot restore the clipboard: %w", err)
	}
	return nil
}

// clipboardRewrite is how long a written text may take to show before it
// is written again: an application whose copy was slow can take the
// clipboard back after the write.
const clipboardRewrite = 500 * time.Millisecond

// setClipboard writes text and waits until reading it back gives text.
func setClipboard(ctx context.Context, text string) error {
	ctx, cancel := context.WithTimeout(ctx, clipboardWait)
	defer cancel()
	for {
		if err := clipboard.WriteAll(text); err != nil {
			return fmt.Errorf("cannot write the clipboard: %w", err)
		}
		for written := time.Now(); time.Since(written) < clipboardRewrite; {
			got, err := clipboard.ReadAll()
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

// awaitClipboardChange waits up to wait until the clipboard holds something
// other than old and returns it.
func awaitClipboardChange(ctx context.Context, old string, wait time.Duration) (string, bool) {
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	for {
		got, err := clipboard.ReadAll()
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
