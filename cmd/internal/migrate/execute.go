package migrate

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/agentctl/agentctl/config"
	"github.com/agentctl/agentctl/internal/atomicfile"
	"github.com/agentctl/agentctl/mailbox"
	"github.com/agentctl/agentctl/mailbox/intake"
	"github.com/agentctl/agentctl/projectboard"
)

// Execute carries out the plan. What it cannot do is noted in Failed,
// never silently left. When ctx ends it stops between two files and
// returns ctx's error: what it did stands, and a run again does the rest
// (nothing is imported twice).
func Execute(ctx context.Context, root string, cfg config.Config, p *Plan, now time.Time) error {
	fail := func(rel string, err error) { p.Failed = append(p.Failed, rel+": "+err.Error()) }
	for i := range p.Files {
		if err := ctx.Err(); err != nil {
			return err
		}
		f := &p.Files[i]
		switch f.Kind {
		case KindMessages, KindHistory:
			for _, m := range f.Messages {
				if m.As == "skipped" || m.As == "before" {
					continue
				}
				mb, err := mailbox.Open(root, m.To)
				if err == nil && (m.As == "pending" || m.As == "review") {
					err = mb.Deliver(m.msg)
				} else if err == nil {
					err = mb.Record(m.msg, historyReceipt(cmp.Or(m.Reason, f.Reason)), now)
				}
				if err != nil && !errors.Is(err, mailbox.ErrDuplicate) {
					fail(f.Path+m.At, err)
				}
			}
		case KindDocument, KindDevlog, KindLore:
			data, err := os.ReadFile(f.abs)
			if err == nil {
				err = atomicfile.MkdirAll(filepath.Dir(f.To))
			}
			if err == nil {
				if err = atomicfile.Create(f.To, data); errors.Is(err, fs.ErrExist) {
					err = nil // copied before
				}
			}
			if err != nil {
				fail(f.Path, err)
			}
		case KindBoard:
			store := &projectboard.Store{Root: root}
			if err := store.CreateBoard(ctx, filepath.Base(f.To), f.data); err != nil {
				fail(f.Path, err)
			}
		case KindCoords:
			if err := config.SetWindows(root, f.coord); err != nil {
				fail(f.Path, err)
			}
		}
	}
	if !p.Take {
		for i := range p.Files {
			rememberWatched(root, cfg, p, &p.Files[i], fail)
		}
	}
	if len(p.Watch) > 0 || len(p.Shared) > 0 {
		if _, err := config.AddWatch(root, p.Watch, p.Shared, p.Take); err != nil {
			return fmt.Errorf("cannot add the old writers' places to agentctl.yaml: %w", err)
		}
	}
	return nil
}

func historyReceipt(reason string) mailbox.Receipt {
	data, _ := json.Marshal(map[string]string{"reason": reason})
	return mailbox.Receipt{Outcome: "imported history", Data: data}
}

// rememberWatched tells the runners that will watch the file's place what
// it held, so that they deliver none of it again: not its messages, nor
// the history or the notes that sit among them.
func rememberWatched(root string, cfg config.Config, p *Plan, f *File, fail func(string, error)) {
	if f.fi == nil || f.Kind == KindNotOurs {
		return
	}
	watched := func(places []string) bool {
		return slices.ContainsFunc(places, func(pl string) bool {
			ok, _ := filepath.Match(pl, f.abs)
			inFolder, _ := filepath.Match(pl, filepath.Dir(f.abs)) // a folder, or a glob of folders
			return ok || inFolder
		})
	}
	// For a file of messages, what was planned is what the runners must
	// know, not what the file holds now: a message an old writer added
	// since was not imported, and is theirs to deliver. Any other file
	// (notes, history a glob also matches) holds no work, and is known as
	// it is now.
	data := f.read
	for _, a := range cfg.AgentNames() {
		if !watched(p.Watch[a]) && !watched(p.Shared) {
			continue
		}
		var err error
		if data == nil {
			if data, err = os.ReadFile(f.abs); err != nil {
				fail(f.Path, err)
				return
			}
		}
		mb, err := mailbox.Open(root, a)
		switch {
		case err == nil && f.Kind == KindMessages && f.Format == FormatAppended:
			// Read on from where the import stopped: a last message
			// still being written is the runner's to take.
			err = intake.RememberAppended(mb.Dir, f.abs, data[:min(f.readTo, int64(len(data)))], f.fi.ModTime())
		case err == nil && strings.EqualFold(filepath.Ext(f.abs), ".txt"):
			// Notes or history a glob of appended inboxes matches
			// ("inboxes/Agent*.txt"): the runner reads a .txt as
			// appended messages, so from its end, never as work.
			err = intake.RememberNotes(mb.Dir, f.abs, data, f.fi.ModTime())
		case err == nil:
			err = intake.RememberWatched(mb.Dir, f.abs, f.fi, data)
		}
		if err != nil {
			fail(f.Path, err)
		}
	}
}
