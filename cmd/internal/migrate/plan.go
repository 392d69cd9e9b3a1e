package migrate

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/agentctl/agentctl/config"
	"github.com/agentctl/agentctl/internal/agentname"
	"github.com/agentctl/agentctl/internal/layout"
	"github.com/agentctl/agentctl/lore"
	"github.com/agentctl/agentctl/mailbox"
	"github.com/agentctl/agentctl/mailbox/dreamos"
	"github.com/agentctl/agentctl/mailbox/intake"
	"github.com/agentctl/agentctl/projectboard"
)

// Plan is what migrate does, computed once from the folder and
// the runtime without changing either: printed as it is by --dry-run,
// carried out otherwise, so the two never differ.
type Plan struct {
	Dir         string        `json:"dir"`
	GitCheckout bool          `json:"git_checkout"`
	DryRun      bool          `json:"dry_run"`
	Take        bool          `json:"take"`
	Counts      map[Kind]int  `json:"counts"`
	Messages    MessageCounts `json:"messages"`
	Files       []File        `json:"files"`
	// Watch and Shared are the places added to agentctl.yaml.
	Watch  map[string][]string `json:"watch,omitempty"`
	Shared []string            `json:"shared,omitempty"`
	// Unreadable is every folder and file that could not be read (or was
	// too large to read whole), with why; Failed is what the run could not
	// do as planned. Either makes migrate fail once it has done the rest.
	Unreadable []string `json:"unreadable,omitempty"`
	Failed     []string `json:"failed,omitempty"`
}

// DefaultMaxMB caps a file migrate reads whole: every file it reads
// is a message list, a board or a note, and a 200 MB one once took 1.7 GB
// of memory to parse.
const DefaultMaxMB = 64

// unread adds to the plan what the walk could not read, and lists it with
// the files planning could not read.
func (p *Plan) Unread(walk map[string]error) {
	for _, rel := range slices.Sorted(maps.Keys(walk)) {
		p.add(File{Path: rel, Kind: KindSkipped, Reason: "cannot read it: " + walk[rel].Error()})
		p.Unreadable = append(p.Unreadable, rel+": "+walk[rel].Error())
	}
	for i := range p.Files {
		f := &p.Files[i]
		if strings.HasPrefix(f.Reason, "cannot read it: ") && !slices.ContainsFunc(p.Unreadable, func(u string) bool { return strings.HasPrefix(u, f.Path+": ") }) {
			p.Unreadable = append(p.Unreadable, f.Path+": "+strings.TrimPrefix(f.Reason, "cannot read it: "))
		}
	}
}

type MessageCounts struct {
	Pending int `json:"pending"`
	Review  int `json:"review"` // to the human, the recipient unclear
	History int `json:"history"`
	Before  int `json:"imported_before"`
	Skipped int `json:"skipped"`
}

// File is one file of the folder and what becomes of it.
type File struct {
	Path     string    `json:"path"`
	Kind     Kind      `json:"kind"`
	Reason   string    `json:"reason,omitempty"`
	To       string    `json:"to,omitempty"` // where it goes: a board, a folder, a place in agentctl.yaml
	Format   Format    `json:"format,omitempty"`
	Watch    string    `json:"watch,omitempty"`
	Messages []Message `json:"messages,omitempty"`
	// Tasks is a board's number of tasks, and Notes what its import
	// changed or dropped (a duplicate id renamed, a placeholder dropped).
	Tasks int      `json:"tasks,omitempty"`
	Notes []string `json:"notes,omitempty"`

	abs   string
	agent string
	// readTo is how far an appended file was imported: the runners
	// watching it go on from there.
	readTo int64
	data   []byte // a converted board
	// read is what a file of messages held when it was planned: what
	// was imported, and so what its watching runners must take as known,
	// whatever an old writer added since.
	read  []byte
	coord map[string]config.Window
	fi    fs.FileInfo
}

// Message is one message of a file.
type Message struct {
	At     string `json:"at,omitempty"` // "@offset" in an appended file, "[i]" in a list
	ID     string `json:"id,omitempty"`
	To     string `json:"to,omitempty"`
	As     string `json:"as"` // pending, history, before (imported before), review (for the human to route) or skipped
	Reason string `json:"reason,omitempty"`
	// Note is what the message lost in reading, such as a priority that
	// could not be read.
	Note string `json:"note,omitempty"`

	msg mailbox.Message
}

// New decides what becomes of every file of the folder. It
// reads, never writes.
// A file larger than maxBytes is not read (0: no cap). It stops when ctx
// ends, returning ctx's error.
func New(ctx context.Context, dir string, files []string, cfg config.Config, root string, now time.Time, maxBytes int64) (*Plan, error) {
	p := &Plan{Dir: dir, Counts: map[Kind]int{}, Watch: map[string][]string{}}
	coordsFrom := ""
	for _, rel := range files {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		f := File{Path: rel, abs: filepath.Join(dir, filepath.FromSlash(rel))}
		if strings.HasSuffix(rel, "/") {
			f.Kind, f.Reason = KindNotOurs, "a folder of version control, caches or this runtime, not gone into"
			p.add(f)
			continue
		}
		d := decideFile(rel)
		f.Kind, f.Reason, f.Format, f.agent = d.Kind, d.Reason, d.Format, d.Agent
		if f.Kind == KindNotOurs {
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
			f.Kind, f.Reason = KindSkipped, "cannot read it: "+err.Error()
			p.add(f)
			continue
		}
		f.fi = fi
		switch f.Kind {
		case KindMessages, KindHistory:
			f.read = data
			planMessages(&f, data, cfg, root, now)
			if f.Kind == KindMessages && d.Watch != "" {
				p.watch(&f, d, cfg)
			}
		case KindDocument:
			f.To = filepath.Join(layout.MigratedDocuments(root), filepath.FromSlash(rel))
		case KindDevlog:
			f.To = filepath.Join(layout.MigratedDevlogs(root), strings.ReplaceAll(rel, "/", "__"))
			if _, err := os.Stat(f.To); err == nil {
				f.Kind, f.Reason = KindSkipped, "copied before into "+f.To
			}
		case KindLore:
			planLore(&f, data, root)
		case KindBoard:
			planBoard(&f, data, root)
		case KindCoords:
			if coordsFrom != "" {
				f.Kind, f.Reason = KindSkipped, "the coordinates were taken from "+coordsFrom
				break
			}
			planCoords(&f, data, cfg)
			if f.Kind == KindCoords {
				coordsFrom = rel
			}
		}
		p.add(f)
	}
	return p, nil
}

func (p *Plan) add(f File) {
	p.Counts[f.Kind]++
	for _, m := range f.Messages {
		switch m.As {
		case "pending":
			p.Messages.Pending++
		case "history":
			p.Messages.History++
		case "before":
			p.Messages.Before++
		case "review":
			p.Messages.Review++
		default:
			p.Messages.Skipped++
		}
	}
	p.Files = append(p.Files, f)
}

// watch notes the place of a mailbox file for the runner to watch.
func (p *Plan) watch(f *File, d decision, cfg config.Config) {
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
func planMessages(f *File, data []byte, cfg config.Config, root string, now time.Time) {
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
			f.Messages = append(f.Messages, Message{At: at, As: "skipped", Reason: err.Error()})
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
	case FormatOne:
		if ext := strings.ToLower(filepath.Ext(f.Path)); (ext == ".md" || ext == ".txt") && !shaped(data) {
			f.Kind, f.Reason, f.Format = KindDocument, "text without the shape of a message (no sender): a document", ""
			return
		}
		one("", data, f.abs)
	case FormatAppended:
		parts := dreamos.Split(data)
		if !slices.ContainsFunc(parts, func(p dreamos.Part) bool { return shaped(data[p.Start:p.End]) }) {
			f.Kind, f.Reason, f.Format = KindDocument, "text without the shape of appended messages (no sender): a document", ""
			return
		}
		for i, part := range parts {
			at := fmt.Sprintf("@%d", part.Start)
			if i == len(parts)-1 && now.Sub(f.fi.ModTime()) < 10*time.Second {
				f.Messages = append(f.Messages, Message{At: at, As: "skipped", Reason: "perhaps still being written; the runner takes it once the file settles"})
				continue
			}
			one(at, data[part.Start:part.End], f.abs+at)
			f.readTo = int64(part.End)
		}
	case FormatList:
		entries, tail, err := dreamos.InboxJSONEntries(data)
		if err != nil {
			f.Kind, f.Reason = KindSkipped, err.Error()
			return
		}
		for i, raw := range entries {
			one(fmt.Sprintf("[%d]", i), intake.CanonicalEntry(raw), f.abs) // as the runner reads it
		}
		if tail > 0 {
			// The stale end of an interrupted rewrite: whole messages its
			// writer meant to keep may be in it, but nothing says which
			// bytes are whole, so a person reads it where it is.
			f.Messages = append(f.Messages, Message{At: fmt.Sprintf("@%d", tail), As: "skipped",
				Reason: fmt.Sprintf("%d bytes after the end of the array, the stale end of an interrupted rewrite, which may hold messages its writer meant to keep; not imported: read them in the file from byte %d", len(data)-tail, tail)})
		}
	}
}

// decideMessages says what becomes of one decoded message of the file at
// rel: a copy for each agent of a broadcast, history when the file is
// history or the old system had handled it, skipped when the one agent it
// names is not configured, and a review item for the human when it names
// several agents or none: not guessed, not lost.
func decideMessages(at string, msg mailbox.Message, rel string, kind Kind, cfg config.Config) []Message {
	if msg.To == "" {
		msg.To = intake.RecipientInName(rel)
	}
	// "AGENT-5", "agent_5": the sender as agentctl.yaml spells it.
	if from, err := agentname.Resolve(cfg.MailboxNames(), msg.From); err == nil {
		msg.From = from
	}
	as, reason := "pending", ""
	if kind == KindHistory {
		as = "history" // for the file's reason
	} else if s := intake.HandledStatus(msg); s != "" {
		as, reason = "history", fmt.Sprintf("the old system had handled it (status %s)", s)
	}
	if msg.To == "all" {
		var out []Message
		for _, a := range cfg.AgentNames() {
			if !strings.EqualFold(a, msg.From) {
				c := msg
				c.To, c.Meta = a, maps.Clone(msg.Meta)
				out = append(out, decideMessages(at, c, rel, kind, cfg)...)
			}
		}
		return out
	}
	// The runners' intake judges the messages it finds later the same way.
	if why := intake.UnclearRecipient(msg.To, cfg.AgentNames(), cfg.PeopleNames()); why != "" {
		return []Message{forReview(at, msg, rel, as, why, cfg)}
	}
	to, err := agentname.Resolve(cfg.AgentNames(), msg.To)
	if err != nil {
		return []Message{{At: at, ID: msg.ID, As: "skipped", Reason: fmt.Sprintf("addressed to %q, not an agent in agentctl.yaml", msg.To)}}
	}
	msg.To = to
	msg.Meta["migrated_from"] = rel + at
	return []Message{{At: at, ID: msg.ID, To: to, As: as, Reason: reason, Note: priorityNote(msg), msg: msg}}
}

// forReview makes a message whose recipient is unclear a review item in
// the human's mailbox: a message from agentctl that says why and quotes
// the original whole. One the old system had handled is kept as history
// in the human's archive instead, for reference, not as work.
func forReview(at string, msg mailbox.Message, rel, as, why string, cfg config.Config) Message {
	human := cfg.Human()
	if human == "" {
		return Message{At: at, ID: msg.ID, As: "skipped", Reason: why + "; and agentctl.yaml has no person to review it (people)"}
	}
	r := intake.Review(msg, rel+at, why, human, "migrate")
	r.Meta["migrated_from"] = rel + at
	if as == "history" {
		return Message{At: at, ID: r.ID, To: human, As: "history", Reason: "recipient unclear, kept for reference: " + why, Note: priorityNote(msg), msg: r}
	}
	return Message{At: at, ID: r.ID, To: human, As: "review", Reason: why, Note: priorityNote(msg), msg: r}
}

// priorityNote says, for the report, that the message's priority could
// not be read and which one it was given instead.
func priorityNote(msg mailbox.Message) string {
	list, _ := msg.Meta[dreamos.FallbacksKey].([]any)
	for _, f := range list {
		if fb, ok := f.(map[string]any); ok && fb["field"] == "priority" {
			return fmt.Sprintf("priority %v not read, taken as %v", fb["original"], fb["used"])
		}
	}
	return ""
}

func planBoard(f *File, data []byte, root string) {
	name := layout.MigratedDir + "-" + strings.Trim(unsafeChars().ReplaceAllString(strings.TrimSuffix(f.Path, filepath.Ext(f.Path)), "_"), "_") + projectboard.Suffix
	f.To = filepath.Join(projectboard.Dir(root), name)
	var imp *projectboard.Import
	var err error
	if filepath.Ext(f.Path) == ".json" {
		imp, err = projectboard.ImportDreamOS(filepath.Base(f.Path), data)
		if err != nil {
			f.Kind, f.Reason = KindSkipped, err.Error()
			return
		}
	} else if b, perr := projectboard.Parse(f.Path, data); perr == nil {
		imp = &projectboard.Import{Data: data} // an agentctl board already
		for _, t := range b.Tasks {
			imp.IDs = append(imp.IDs, t.ID)
		}
	} else {
		// A Dream.OS board written as YAML: read it as the JSON it mirrors.
		imp, err = projectboard.ImportDreamOSYAML(filepath.Base(f.Path), data)
		if err != nil {
			f.Kind, f.Reason = KindSkipped, fmt.Sprintf("neither an agentctl board (%v) nor a Dream.OS one (%v)", perr, err)
			return
		}
	}
	f.Tasks, f.Notes = len(imp.IDs), imp.Warnings
	if _, err := os.Stat(f.To); err == nil {
		f.Kind, f.Reason = KindSkipped, "imported before as "+f.To
		return
	}
	f.data = imp.Data
}

// planLore copies a lore file into lore/dreamos/, and makes Dream.OS's
// translation dictionary the runtime's, which loads it as it is, unless
// the runtime has a dictionary of its own.
func planLore(f *File, data []byte, root string) {
	f.To = filepath.Join(layout.MigratedLore(root), strings.ReplaceAll(f.Path, "/", "__"))
	if path.Base(f.Path) == "dream_translation.yaml" {
		dict := layout.LoreDictionary(root)
		old, err := os.ReadFile(dict)
		_, perr := lore.ParseDictionary(f.Path, data)
		switch {
		case perr != nil:
			f.Reason = fmt.Sprintf("kept as a file, not used: %v", perr)
		case errors.Is(err, fs.ErrNotExist):
			f.To, f.Reason = dict, "the lore's translation dictionary"
		case err == nil && bytes.Equal(old, data):
			f.Kind, f.To, f.Reason = KindSkipped, dict, "copied before into "+dict
			return
		default:
			f.Reason = "the runtime has a dictionary of its own (" + dict + "); this one is kept beside the lore"
		}
	}
	if _, err := os.Stat(f.To); err == nil && f.To != layout.LoreDictionary(root) {
		f.Kind, f.Reason = KindSkipped, "copied before into "+f.To
	}
}

func planCoords(f *File, data []byte, cfg config.Config) {
	positions, err := config.DreamOSCoords(data, fmt.Sprintf("%d-agent", len(cfg.Agents)))
	if err != nil {
		f.Kind, f.Reason = KindSkipped, fmt.Sprintf("%v (by hand: agentctl calibrate --from-coords %s --layout NAME)", err, f.abs)
		return
	}
	windows, others := cfg.DreamOSWindows(positions)
	if len(windows) == 0 {
		f.Kind, f.Reason = KindSkipped, fmt.Sprintf("none of its agents (%s) is in agentctl.yaml", strings.Join(others, ", "))
		return
	}
	// A window set already (calibrated, written by hand, imported by an
	// earlier run) is the person's: a run again never undoes it.
	var kept []string
	for name := range windows {
		if a, err := cfg.Agent(name); err == nil && a.Window.Input != nil {
			kept = append(kept, name)
			delete(windows, name)
		}
	}
	slices.Sort(kept)
	if len(kept) > 0 {
		f.Reason = fmt.Sprintf("the windows of %s are set already and kept (to take the file's positions: agentctl calibrate --from-coords %s)", strings.Join(kept, ", "), f.abs)
	}
	if len(windows) == 0 {
		f.Kind = KindSkipped
		return
	}
	f.coord = windows
	f.To = "agentctl.yaml: windows of " + strings.Join(slices.Sorted(maps.Keys(windows)), ", ")
}

var unsafeChars = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[^A-Za-z0-9_-]+`) })
