package notify

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/rs/zerolog"

	"github.com/agentctl/agentctl/internal/atomicfile"
	"github.com/agentctl/agentctl/internal/clock"
	"github.com/agentctl/agentctl/internal/layout"
	"github.com/agentctl/agentctl/mailbox"
)

// Watcher tells people of the messages that land in their mailboxes.
type Watcher struct {
	Root   string
	People []string
	Ways   Settings
	// Poll is how often the inboxes are looked at (default 2s); Tries is
	// how many times a way is tried for one message (default 3), Backoff
	// the first wait between tries, doubling (default 5s).
	Poll    time.Duration
	Tries   int
	Backoff time.Duration
	Clock   clock.Clock // clock.System when nil
	Log     zerolog.Logger
}

// record is what the record of a told message holds: when, and how each
// way went ("ok", or its last error).
type record struct {
	ID   string            `json:"id"`
	At   time.Time         `json:"at"`
	Ways map[string]string `json:"ways,omitempty"`
	// Before: the message was there at the first look, and not told.
	Before bool `json:"before,omitempty"`
}

// Run looks at the people's inboxes every Poll until ctx ends, telling of
// every message not told yet. Nothing it meets ends it but ctx: a look
// that fails is logged and made again.
func (w *Watcher) Run(ctx context.Context) {
	if w.Clock == nil {
		w.Clock = clock.System
	}
	if w.Poll <= 0 {
		w.Poll = 2 * time.Second
	}
	if w.Tries <= 0 {
		w.Tries = 3
	}
	if w.Backoff <= 0 {
		w.Backoff = 5 * time.Second
	}
	for {
		for _, p := range w.People {
			if err := w.look(ctx, p); err != nil && ctx.Err() == nil {
				w.Log.Warn().Err(err).Str("person", p).Msg("cannot look for messages to tell of")
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-w.Clock.At(w.Clock.Now().Add(w.Poll)):
		}
	}
}

// look tells person of what is new in their inbox.
func (w *Watcher) look(ctx context.Context, person string) error {
	dir, err := layout.Notified(w.Root, person)
	if err != nil {
		return err
	}
	mb, err := mailbox.Open(w.Root, person)
	if err != nil {
		return err
	}
	pending, err := mb.List(mailbox.StatePending)
	if err != nil {
		return err
	}
	_, serr := os.Stat(dir)
	first := errors.Is(serr, fs.ErrNotExist)
	if err := atomicfile.MkdirAll(dir); err != nil {
		return err
	}
	for _, e := range pending {
		if ctx.Err() != nil {
			return nil
		}
		m := e.Message
		if m.ID == "" {
			continue
		}
		path := filepath.Join(dir, mailbox.Stem(m.ID)+layout.RecordSuffix)
		if _, err := os.Stat(path); err == nil {
			continue
		}
		rec := record{ID: m.ID, At: w.Clock.Now().UTC(), Before: first}
		if !first {
			var whole bool
			if rec.Ways, whole = w.tell(ctx, m); !whole {
				return nil // cut short by ctx: told again by the next run
			}
		}
		data, err := json.Marshal(rec)
		if err != nil {
			return err
		}
		if err := atomicfile.WriteFile(path, data); err != nil {
			return err
		}
	}
	return nil
}

// tell tells of m every way, each tried up to Tries times, and says how
// each went; whole is false when ctx ended before a way that had not
// worked had all its tries. A try under way when ctx ends is finished, so
// what it told gets its record and a restart does not tell it again.
func (w *Watcher) tell(ctx context.Context, m mailbox.Message) (how map[string]string, whole bool) {
	how = map[string]string{}
	for _, way := range w.Ways.ways() {
		if ctx.Err() != nil {
			return how, false
		}
		delay := w.Backoff
		for try := 1; ; try++ {
			err := w.Ways.tell(ctx, way, m)
			if err == nil {
				how[way] = "ok"
				w.Log.Info().Str("event", "notified").Str("way", way).Str("id", m.ID).Str("to", m.To).Msg("told the person of a message")
				break
			}
			how[way] = err.Error()
			if try >= w.Tries {
				w.Log.Warn().Str("event", "notify-failed").Str("way", way).Str("id", m.ID).Int("tries", try).Err(err).
					Msg("cannot tell the person of a message this way; given up for it (the message is in their mailbox all the same)")
				break
			}
			w.Log.Warn().Str("event", "notify-retry").Str("way", way).Str("id", m.ID).Err(err).Msg("cannot tell the person of a message; trying again")
			select {
			case <-ctx.Done():
				return how, false
			case <-w.Clock.At(w.Clock.Now().Add(delay)):
			}
			delay *= 2
		}
	}
	return how, true
}
