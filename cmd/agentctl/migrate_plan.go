package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/agentctl/agentctl/config"
	"github.com/agentctl/agentctl/config/driverconf"
	"github.com/agentctl/agentctl/internal/agentname"
	"github.com/agentctl/agentctl/internal/atomicfile"
	"github.com/agentctl/agentctl/internal/layout"
	"github.com/agentctl/agentctl/mailbox"
	"github.com/agentctl/agentctl/mailbox/dreamos"
	"github.com/agentctl/agentctl/mailbox/intake"
	"github.com/agentctl/agentctl/projectboard"
)

// migrationPlan is what migrate does, computed once from the folder and
// the runtime without changing either: printed as it is by --dry-run,
// carried out otherwise, so the two never differ.
type migrationPlan struct {
	Dir         string           `json:"dir"`
	GitCheckout bool             `json:"git_checkout"`
	DryRun      bool             `json:"dry_run"`
	Take        bool             `json:"take"`
	Counts      map[fileKind]int `json:"counts"`
	Messages    messageCounts    `json:"messages"`
	Files       []planFile       `json:"files"`
	// Watch and Shared are the places added to agentctl.yaml.
	Watch  map[string][]string `json:"watch,omitempty"`
	Shared []string            `json:"shared,omitempty"`
	// Unreadable is every folder and file that could not be read (or was
	// too large to read whole), with why; Failed is what the run could not
	// do as planned. Either makes migrate fail once it has done the rest.
	Unreadable []string `json:"unreadable,omitempty"`
	Failed     []string `json:"failed,omitempty"`
}

// defaultMigrateMaxMB caps a file migrate reads whole: every file it reads
// is a message list, a board or a note, and a 200 MB one once took 1.7 GB
// of memory to parse.
const defaultMigrateMaxMB = 64

// unread adds to the plan what the walk could not read, and lists it with
// the files planning could not read.
func (p *migrationPlan) unread(walk map[string]error) {
	for _, rel := range slices.Sorted(maps.Keys(walk)) {
		p.add(planFile{Path: rel, Kind: kindSkipped, Reason: "cannot read it: " + walk[rel].Error()})
		p.Unreadable = append(p.Unreadable, rel+": "+walk[rel].Error())
	}
	for i := range p.Files {
		f := &p.Files[i]
		if strings.HasPrefix(f.Reason, "cannot read it: ") && !slices.ContainsFunc(p.Unreadable, func(u string) bool { return strings.HasPrefix(u, f.Path+": ") }) {
			p.Unreadable = append(p.Unreadable, f.Path+": "+strings.TrimPrefix(f.Reason, "cannot read it: "))
		}
	}
}

// incomplete is the error migrate ends with when it could not read or do
// everything; the report above it lists each.
func (p *migrationPlan) incomplete() error {
	if len(p.Unreadable) == 0 && len(p.Failed) == 0 {
		return nil
	}
	var what []string
	if n := len(p.Unreadable); n > 0 {
		what = append(what, fmt.Sprintf("%d files or folders could not be read: %s", n, strings.Join(p.Unreadable, "; ")))
	}
	if n := len(p.Failed); n > 0 {
		what = append(what, fmt.Sprintf("%d could not be migrated", n))
	}
	return withHint(fmt.Errorf("migrate is incomplete: %s", strings.Join(what, "; ")),
		"make them readable (or move them out of the folder) and run migrate again; what was migrated is not done twice")
}

type messageCounts struct {
	Pending int `json:"pending"`
	History int `json:"history"`
	Before  int `json:"imported_before"`
	Skipped int `json:"skipped"`
}

// planFile is one file of the folder and what becomes of it.
type planFile struct {
	Path     string        `json:"path"`
	Kind     fileKind      `json:"kind"`
	Reason   string        `json:"reason,omitempty"`
	To       string        `json:"to,omitempty"` // where it goes: a board, a folder, a place in agentctl.yaml
	Format   fileFormat    `json:"format,omitempty"`
	Watch    string        `json:"watch,omitempty"`
	Messages []planMessage `json:"messages,omitempty"`

	abs   string
	agent string
	data  []byte // a converted board
	coord map[string]config.Window
	fi    fs.FileInfo
}

// planMessage is one message of a file.
type planMessage struct {
	At     string `json:"at,omitempty"` // "@offset" in an appended file, "[i]" in a list
	ID     string `json:"id,omitempty"`
	To     string `json:"to,omitempty"`
	As     string `json:"as"` // pending, history, before (imported before) or skipped
	Reason string `json:"reason,omitempty"`

	msg mailbox.Message
}

// planMigration decides what becomes of every file of the folder. It
// reads, never writes.
// A file larger than maxBytes is not read (0: no cap).
func planMigration(dir string, files []string, cfg config.Config, root string, now time.Time, maxBytes int64) *migrationPlan {
	p := &migrationPlan{Dir: dir, Counts: map[fileKind]int{}, Watch: map[string][]string{}}
	coordsFrom := ""
	for _, rel := range files {
		f := planFile{Path: rel, abs: filepath.Join(dir, filepath.FromSlash(rel))}
		if strings.HasSuffix(rel, "/") {
			f.Kind, f.Reason = kindNotOurs, "a folder of version control, caches or this runtime, not gone into"
			p.add(f)
			continue
		}
		d := decideFile(rel)
		f.Kind, f.Reason, f.Format, f.agent = d.Kind, d.Reason, d.Format, d.Agent
		if f.Kind == kindNotOurs {
			p.add(f)
			continue
		}
		fi, err := os.Lstat(f.abs)
		var data []byte
		if err == nil && fi.Mode().IsRegular() && maxBytes > 0 && fi.Size() > maxBytes {
			err = fmt.Errorf("%s is %d MiB, more than the %d MiB migrate reads whole (--max-file-mb)", rel, fi.Size()>>20, maxBytes>>20)
		} else if err == nil && fi.Mode().IsRegular() {
			data, err = os.ReadFile(f.abs)
		} else if err == nil {
			err = errors.New("not a regular file (a link?)")
		}
		if err != nil {
			f.Kind, f.Reason = kindSkipped, "cannot read it: "+err.Error()
			p.add(f)
			continue
		}
		f.fi = fi
		switch f.Kind {
		case kindMessages, kindHistory:
			planMessages(&f, data, cfg, root, now)
			if f.Kind == kindMessages && d.Watch != "" {
				p.watch(&f, d, cfg)
			}
		case kindDocument:
			f.To = filepath.Join(layout.MigratedDocuments(root), filepath.FromSlash(rel))
		case kindDevlog:
			f.To = filepath.Join(layout.MigratedDevlogs(root), strings.ReplaceAll(rel, "/", "__"))
			if _, err := os.Stat(f.To); err == nil {
				f.Kind, f.Reason = kindSkipped, "copied before into "+f.To
			}
		case kindBoard:
			planBoard(&f, data, root)
		case kindCoords:
			if coordsFrom != "" {
				f.Kind, f.Reason = kindSkipped, "the coordinates were taken from "+coordsFrom
				break
			}
			planCoords(&f, data, cfg)
			if f.Kind == kindCoords {
				coordsFrom = rel
			}
		}
		p.add(f)
	}
	return p
}

func (p *migrationPlan) add(f planFile) {
	p.Counts[f.Kind]++
	for _, m := range f.Messages {
		switch m.As {
		case "pending":
			p.Messages.Pending++
		case "history":
			p.Messages.History++
		case "before":
			p.Messages.Before++
		default:
			p.Messages.Skipped++
		}
	}
	p.Files = append(p.Files, f)
}

// watch notes the place of a mailbox file for the runner to watch.
func (p *migrationPlan) watch(f *planFile, d decision, cfg config.Config) {
	place := filepath.Join(p.Dir, filepath.FromSlash(d.Watch))
	if d.Shared {
		f.Watch = place
		if !slices.Contains(p.Shared, place) {
			p.Shared = append(p.Shared, place)
		}
		return
	}
	agent, err := agentname.Resolve(cfg.AgentNames(), d.Agent)
	if err != nil {
		return // its messages are skipped with the reason
	}
	f.Watch = place
	if !slices.Contains(p.Watch[agent], place) {
		p.Watch[agent] = append(p.Watch[agent], place)
	}
}

// planMessages reads the messages of one file and decides each: pending
// work, history, or skipped with its reason. Text that holds no message
// at all is a document. Messages are named as the runner names what it
// reads from a watched place (its absolute path), so one both imported and
// read later by the runner is stored once.
func planMessages(f *planFile, data []byte, cfg config.Config, root string, now time.Time) {
	owner := ""
	if a, err := agentname.Resolve(cfg.AgentNames(), f.agent); err == nil {
		owner = a
	}
	src := func(name string) mailbox.Source {
		return mailbox.Source{Name: name, ModTime: f.fi.ModTime(), Owner: owner}
	}
	one := func(at string, raw []byte, name string) {
		msg, err := mailbox.Decode(raw, src(name))
		if err != nil {
			f.Messages = append(f.Messages, planMessage{At: at, As: "skipped", Reason: err.Error()})
			return
		}
		for _, m := range decideMessages(at, msg, f.Path, f.Kind, cfg) {
			if mb, err := mailbox.Open(root, m.To); m.As != "skipped" && err == nil && mb.Seen(m.ID) {
				m.As, m.Reason = "before", "imported before"
			}
			f.Messages = append(f.Messages, m)
		}
	}
	// Text in which no message names its sender is no message: notes.
	shaped := func(raw []byte) bool {
		msg, err := mailbox.Decode(raw, src(f.abs))
		return err == nil && (msg.Meta["format"] != "dreamos-markdown" || msg.From != "unknown")
	}
	switch f.Format {
	case formatOne:
		if ext := strings.ToLower(filepath.Ext(f.Path)); (ext == ".md" || ext == ".txt") && !shaped(data) {
			f.Kind, f.Reason, f.Format = kindDocument, "text without the shape of a message (no sender): a document", ""
			return
		}
		one("", data, f.abs)
	case formatAppended:
		parts := dreamos.Split(data)
		if !slices.ContainsFunc(parts, func(p dreamos.Part) bool { return shaped(data[p.Start:p.End]) }) {
			f.Kind, f.Reason, f.Format = kindDocument, "text without the shape of appended messages (no sender): a document", ""
			return
		}
		for i, part := range parts {
			at := fmt.Sprintf("@%d", part.Start)
			if i == len(parts)-1 && now.Sub(f.fi.ModTime()) < 10*time.Second {
				f.Messages = append(f.Messages, planMessage{At: at, As: "skipped", Reason: "perhaps still being written; the runner takes it once the file settles"})
				continue
			}
			one(at, data[part.Start:part.End], f.abs+at)
		}
	case formatList:
		entries, tail, err := dreamos.InboxJSONEntries(data)
		if err != nil {
			f.Kind, f.Reason = kindSkipped, err.Error()
			return
		}
		if tail > 0 {
			f.Reason = strings.TrimPrefix(f.Reason+"; ", "; ") + fmt.Sprintf("data after byte %d is the stale end of an older write, not messages", tail)
		}
		for i, raw := range entries {
			one(fmt.Sprintf("[%d]", i), intake.CanonicalEntry(raw), f.abs) // as the runner reads it
		}
	}
}

// decideMessages says what becomes of one decoded message of the file at
// rel: a copy for each agent of a broadcast, history when the file is
// history or the old system had handled it, skipped when no configured
// agent can take it.
func decideMessages(at string, msg mailbox.Message, rel string, kind fileKind, cfg config.Config) []planMessage {
	if msg.To == "" {
		msg.To = intake.RecipientInName(rel)
	}
	as, reason := "pending", ""
	if kind == kindHistory {
		as = "history" // for the file's reason
	} else if s := intake.HandledStatus(msg); s != "" {
		as, reason = "history", fmt.Sprintf("the old system had handled it (status %s)", s)
	}
	if msg.To == "all" {
		var out []planMessage
		for _, a := range cfg.AgentNames() {
			if !strings.EqualFold(a, msg.From) {
				c := msg
				c.To, c.Meta = a, maps.Clone(msg.Meta)
				out = append(out, decideMessages(at, c, rel, kind, cfg)...)
			}
		}
		return out
	}
	if msg.To == "" {
		return []planMessage{{At: at, ID: msg.ID, As: "skipped", Reason: "neither the message nor where it sat says whom it is for"}}
	}
	to, err := agentname.Resolve(cfg.AgentNames(), msg.To)
	if err != nil {
		return []planMessage{{At: at, ID: msg.ID, As: "skipped", Reason: fmt.Sprintf("addressed to %q, not an agent in agentctl.yaml", msg.To)}}
	}
	msg.To = to
	msg.Meta["migrated_from"] = rel + at
	return []planMessage{{At: at, ID: msg.ID, To: to, As: as, Reason: reason, msg: msg}}
}

func planBoard(f *planFile, data []byte, root string) {
	name := "dreamos-" + strings.Trim(unsafeName().ReplaceAllString(strings.TrimSuffix(f.Path, filepath.Ext(f.Path)), "_"), "_") + ".yaml"
	f.To = filepath.Join(projectboard.Dir(root), name)
	if filepath.Ext(f.Path) == ".json" {
		imp, err := projectboard.ImportDreamOS(filepath.Base(f.Path), data)
		if err != nil {
			f.Kind, f.Reason = kindSkipped, err.Error()
			return
		}
		data = imp.Data
	} else if _, err := projectboard.Parse(f.Path, data); err != nil {
		// A Dream.OS board written as YAML: read it as the JSON it mirrors.
		imp, jerr := importYAMLBoard(filepath.Base(f.Path), data)
		if jerr != nil {
			f.Kind, f.Reason = kindSkipped, fmt.Sprintf("neither an agentctl board (%v) nor a Dream.OS one (%v)", err, jerr)
			return
		}
		data = imp.Data
	}
	if _, err := os.Stat(f.To); err == nil {
		f.Kind, f.Reason = kindSkipped, "imported before as "+f.To
		return
	}
	f.data = data
}

func planCoords(f *planFile, data []byte, cfg config.Config) {
	positions, err := config.DreamOSCoords(data, fmt.Sprintf("%d-agent", len(cfg.Agents)))
	if err != nil {
		f.Kind, f.Reason = kindSkipped, fmt.Sprintf("%v (by hand: agentctl calibrate --from-coords %s --layout NAME)", err, f.abs)
		return
	}
	windows, others := coordsWindows(cfg, positions)
	if len(windows) == 0 {
		f.Kind, f.Reason = kindSkipped, fmt.Sprintf("none of its agents (%s) is in agentctl.yaml", strings.Join(others, ", "))
		return
	}
	f.coord = windows
	f.To = "agentctl.yaml: windows of " + strings.Join(slices.Sorted(maps.Keys(windows)), ", ")
}

// executePlan carries out the plan. What it cannot do is noted in Failed,
// never silently left.
func executePlan(ctx context.Context, env *Env, cfg config.Config, p *migrationPlan) error {
	now := time.Now()
	fail := func(rel string, err error) { p.Failed = append(p.Failed, rel+": "+err.Error()) }
	for i := range p.Files {
		f := &p.Files[i]
		switch f.Kind {
		case kindMessages, kindHistory:
			for _, m := range f.Messages {
				if m.As == "skipped" || m.As == "before" {
					continue
				}
				mb, err := mailbox.Open(env.Root, m.To)
				if err == nil && m.As == "pending" {
					err = mb.Deliver(m.msg)
				} else if err == nil {
					err = mb.Record(m.msg, historyReceipt(cmp.Or(m.Reason, f.Reason)), now)
				}
				if err != nil && !errors.Is(err, mailbox.ErrDuplicate) {
					fail(f.Path+m.At, err)
				}
			}
		case kindDocument, kindDevlog:
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
		case kindBoard:
			store := &projectboard.Store{Root: env.Root}
			if err := store.CreateBoard(ctx, filepath.Base(f.To), f.data); err != nil {
				fail(f.Path, err)
			}
		case kindCoords:
			if err := config.SetWindows(env.Root, f.coord); err != nil {
				fail(f.Path, err)
			}
		}
	}
	if !p.Take {
		for i := range p.Files {
			rememberWatched(env.Root, cfg, p, &p.Files[i], fail)
		}
	}
	if len(p.Watch) > 0 || len(p.Shared) > 0 {
		if _, err := config.AddWatch(env.Root, p.Watch, p.Shared, p.Take); err != nil {
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
func rememberWatched(root string, cfg config.Config, p *migrationPlan, f *planFile, fail func(string, error)) {
	if f.fi == nil || f.Kind == kindNotOurs {
		return
	}
	watched := func(places []string) bool {
		return slices.ContainsFunc(places, func(pl string) bool {
			ok, _ := filepath.Match(pl, f.abs)
			return ok || pl == filepath.Dir(f.abs)
		})
	}
	var data []byte
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
		if err == nil {
			err = intake.RememberWatched(mb.Dir, f.abs, f.fi, data)
		}
		if err != nil {
			fail(f.Path, err)
		}
	}
}

// printPlan prints the plan for people: whether the folder is a git
// checkout, the counts, then every file under its kind.
func printPlan(env *Env, cfg config.Config, p *migrationPlan) {
	w := env.Stdout
	if p.GitCheckout {
		fmt.Fprintf(w, "%s is a git checkout: nothing in it is changed", p.Dir)
	} else {
		fmt.Fprintf(w, "%s is not a git checkout; nothing in it is changed all the same", p.Dir)
	}
	if p.Take {
		fmt.Fprintf(w, ", but the runners will empty the places they watch (--take)\n")
	} else {
		fmt.Fprintf(w, ", and the runners only read the places they watch\n")
	}
	would := ""
	if p.DryRun {
		would = "would be "
		fmt.Fprintf(w, "dry run: nothing was changed\n")
	}
	var counts []string
	for _, k := range []fileKind{kindMessages, kindHistory, kindDocument, kindBoard, kindCoords, kindDevlog, kindSkipped, kindNotOurs} {
		counts = append(counts, fmt.Sprintf("%s %d", k, p.Counts[k]))
	}
	fmt.Fprintf(w, "files: %d (%s)\n", len(p.Files), strings.Join(counts, ", "))
	perAgent := map[string]int{}
	for _, f := range p.Files {
		for _, m := range f.Messages {
			if m.As == "pending" {
				perAgent[m.To]++
			}
		}
	}
	var per []string
	for _, a := range cfg.AgentNames() {
		if n := perAgent[a]; n > 0 {
			per = append(per, fmt.Sprintf("%s %d", a, n))
		}
	}
	fmt.Fprintf(w, "messages: %s%d imported as work", would, p.Messages.Pending)
	if len(per) > 0 {
		fmt.Fprintf(w, " (%s)", strings.Join(per, ", "))
	}
	fmt.Fprintf(w, ", %d as history, %d imported before, %d skipped\n", p.Messages.History, p.Messages.Before, p.Messages.Skipped)
	for _, k := range []fileKind{kindMessages, kindHistory, kindDocument, kindBoard, kindCoords, kindDevlog, kindSkipped, kindNotOurs} {
		if p.Counts[k] == 0 {
			continue
		}
		fmt.Fprintf(w, "%s (%d):\n", k, p.Counts[k])
		for _, f := range p.Files {
			if f.Kind != k {
				continue
			}
			line := "  " + f.Path
			if f.To != "" {
				line += " → " + f.To
			}
			if f.Reason != "" {
				line += ": " + f.Reason
			}
			fmt.Fprintln(w, line)
			for _, m := range f.Messages {
				if m.As == "pending" && m.Reason == "" {
					fmt.Fprintf(w, "    %s → %s %s\n", strings.TrimSpace(m.At+" "+m.ID), m.To, "inbox")
				} else {
					fmt.Fprintf(w, "    %s: %s %s\n", strings.TrimSpace(m.At+" "+m.ID), m.As, strings.TrimSpace(m.To+" "+m.Reason))
				}
			}
		}
	}
	if len(p.Watch) > 0 || len(p.Shared) > 0 {
		fmt.Fprintf(w, "old writers left running keep working: the runners %swatch (agentctl.yaml)\n", would)
		for _, a := range cfg.AgentNames() {
			for _, pl := range p.Watch[a] {
				fmt.Fprintf(w, "  %s: %s\n", a, pl)
			}
		}
		for _, pl := range p.Shared {
			fmt.Fprintf(w, "  shared: %s\n", pl)
		}
	}
	for _, f := range p.Failed {
		fmt.Fprintf(w, "agentctl: failed: %s\n", f)
	}
	var needed []string
	for _, a := range cfg.Agents {
		if a.Driver == "exec" {
			continue
		}
		if err := driverconf.Calibrated(a.Window); err != nil {
			needed = append(needed, fmt.Sprintf("  agentctl calibrate %s --title '%s.*Cursor'  # %v", a.Name, a.Name, err))
		}
	}
	if len(needed) > 0 {
		fmt.Fprintf(w, "still needed (Dream.OS kept no window titles or reply regions):\n%s\n", strings.Join(needed, "\n"))
	}
}
