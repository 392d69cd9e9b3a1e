package agents

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/agentctl/agentctl/internal/layout"
	"github.com/agentctl/agentctl/internal/sizecap"
	"github.com/agentctl/agentctl/lore"
	"github.com/agentctl/agentctl/projectboard"
)

// LoreSettings say when a runner or reconcile writes the day's lore again,
// and who narrates it.
type LoreSettings struct {
	OnTaskDone    bool // when a task becomes done
	EveryMessages int  // after every N messages a runner settles; 0: never
	// Narrate is a command that reads the deterministic lore on stdin and
	// prints a narrated one; nil: the deterministic lore is written.
	Narrate        []string
	NarrateTimeout time.Duration
}

// RefreshLore writes the lore of the UTC day of now, from the lore folder's
// dictionary.yaml and template.md.tmpl when present (as agentctl lore
// does), narrated by s.Narrate when it is set and succeeds. It reports
// whether the narrated text was used.
func RefreshLore(ctx context.Context, root string, agents []string, now time.Time, s LoreSettings) (narrated bool, err error) {
	date := now.UTC().Format(time.DateOnly)
	dict := lore.DefaultDictionary()
	if p := layout.LoreDictionary(root); exists(p) {
		if dict, err = lore.LoadDictionary(p); err != nil {
			return false, err
		}
	}
	text := lore.DefaultTemplate()
	if p := layout.LoreTemplate(root); exists(p) {
		data, err := sizecap.ReadFile(p)
		if err != nil {
			return false, fmt.Errorf("cannot read the lore template: %w", err)
		}
		text = string(data)
	}
	tmpl, err := lore.ParseTemplate("lore", text, dict)
	if err != nil {
		return false, err
	}
	in, err := lore.Gather(root, agents, date)
	var pe *projectboard.ParseError
	if err != nil && !errors.As(err, &pe) {
		return false, err
	}
	out, err := lore.Render(in, dict, tmpl)
	if err != nil {
		return false, err
	}
	if len(s.Narrate) > 0 {
		if told, nerr := narrate(ctx, s, out); nerr == nil {
			out, narrated = told, true
		} else {
			err = nerr // the deterministic lore is written all the same
		}
	}
	if werr := lore.Write(root, date, out); werr != nil {
		return false, werr
	}
	return narrated, err
}

// narrate runs the narrating command on the deterministic lore.
func narrate(ctx context.Context, s LoreSettings, text []byte) ([]byte, error) {
	timeout := s.NarrateTimeout
	if timeout <= 0 {
		timeout = 2 * time.Minute
	}
	// Real time, not the clock: it bounds a real command.
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, s.Narrate[0], s.Narrate[1:]...)
	cmd.Stdin = bytes.NewReader(text)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("the lore narrator %s failed, so the lore is told plainly: %w: %s", s.Narrate[0], err, strings.TrimSpace(stderr.String()))
	}
	if len(bytes.TrimSpace(out)) == 0 {
		return nil, fmt.Errorf("the lore narrator %s printed nothing, so the lore is told plainly", s.Narrate[0])
	}
	return out, nil
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return !errors.Is(err, fs.ErrNotExist)
}

// LoreStale reports whether the devlogs or boards changed after the day's
// lore was last written, for reconcile, which sees no events.
func LoreStale(root string, now time.Time) bool {
	fi, err := os.Stat(lore.Path(root, now.UTC().Format(time.DateOnly)))
	if err != nil {
		return true
	}
	for _, dir := range []string{layout.Devlogs(root), layout.Boards(root)} {
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			if info, err := e.Info(); err == nil && info.ModTime().After(fi.ModTime()) {
				return true
			}
		}
	}
	return false
}
