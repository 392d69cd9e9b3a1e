package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

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

const migrateUsage = `
Usage: agentctl migrate DREAMOS_DIR [--dry-run]

Moves a Dream.OS setup over: finds in DREAMOS_DIR (a checkout or its
runtime folder) the mailboxes in every layout the old writers used, the
coordinate files, the task boards (JSON and YAML) and the devlogs, and
imports them into this runtime:

  - each message goes to the inbox of the agent it is addressed to,
    wherever it sat; messages the old system marked handled, archives and
    what no configured agent can take are skipped, each with its reason;
  - boards become project_board/dreamos-*.yaml, devlogs are copied into
    devlogs/dreamos/, coordinates go into agentctl.yaml;
  - the places old writers write to are added to agentctl.yaml (watch and
    mailbox.shared), so a Dream.OS tool left running keeps working.

It prints what it did, what it skipped and why, and the 'calibrate'
commands still needed. Nothing in DREAMOS_DIR is changed. Running it again
imports nothing twice. --dry-run prints the same without changing anything.

Examples:
  agentctl init --agents 4
  agentctl migrate ~/Dream.os --dry-run
  agentctl migrate ~/Dream.os
`

func runMigrate(ctx context.Context, env *Env, args []string) error {
	fs := newFlagSet(env, "migrate", migrateUsage)
	dry := fs.Bool("dry-run", false, "print what would be done, change nothing")
	rest, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if err := wantArgs(fs, rest, 1, 1, "one DREAMOS_DIR"); err != nil {
		return err
	}
	dir, err := filepath.Abs(rest[0])
	if err != nil {
		return fmt.Errorf("cannot migrate: %w", err)
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return withHint(fmt.Errorf("cannot migrate: %s is not a folder", rest[0]), "give the Dream.OS checkout or its runtime folder")
	}
	files, err := listFiles(dir, env.Root)
	if err != nil {
		return fmt.Errorf("cannot migrate: %w", err)
	}
	items, skips := findDreamOS(files)
	cfg, err := loadConfig(env)
	if errors.Is(err, config.ErrNotFound) {
		return withHint(fmt.Errorf("cannot migrate: %w", err), fmt.Sprintf("run 'agentctl init --agents %d' first (the agents found in %s), then migrate again", max(agentsIn(items), 1), rest[0]))
	}
	if err != nil {
		return err
	}
	m := &migration{ctx: ctx, env: env, cfg: cfg, dir: dir, dry: *dry, skipped: skips,
		imported: map[string]int{}, watch: map[string][]string{}, now: time.Now()}
	for _, it := range items {
		m.do(it)
	}
	return m.finish()
}

// listFiles lists the regular files under dir, relative and slash-separated,
// leaving out version control, caches and the runtime itself.
func listFiles(dir, runtimeRoot string) ([]string, error) {
	rootAbs, _ := filepath.Abs(runtimeRoot)
	var files []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil // unreadable: nothing there to import
		}
		if d.IsDir() {
			if p != dir && (slices.Contains(skipDirs, d.Name()) || p == rootAbs) {
				return filepath.SkipDir
			}
			return nil
		}
		if d.Type().IsRegular() {
			rel, _ := filepath.Rel(dir, p)
			files = append(files, filepath.ToSlash(rel))
		}
		return nil
	})
	sort.Strings(files)
	return files, err
}

func agentsIn(items []found) int {
	seen := map[string]bool{}
	for _, it := range items {
		if it.Agent != "" {
			seen[strings.ToLower(it.Agent)] = true
		}
	}
	return len(seen)
}

// migration is one run of migrate: what it did and what it skipped.
type migration struct {
	ctx context.Context
	env *Env
	cfg config.Config
	dir string
	dry bool
	now time.Time

	imported              map[string]int // messages per agent
	already, devlogs      int
	boards, notes, coords []string
	coordsFrom            string
	skipped               []skipped
	watch                 map[string][]string
	shared                []string
	unknown               []string // recipients that could be agents but are not configured
}

func (m *migration) abs(rel string) string { return filepath.Join(m.dir, filepath.FromSlash(rel)) }

func (m *migration) skip(rel, format string, args ...any) {
	m.skipped = append(m.skipped, skipped{rel, fmt.Sprintf(format, args...)})
}

func (m *migration) do(it found) {
	data, err := os.ReadFile(m.abs(it.Rel))
	if err != nil {
		m.skip(it.Rel, "cannot read it: %v", err)
		return
	}
	switch it.Kind {
	case foundMessage, foundAppended, foundInboxJSON:
		m.messages(it, data)
		m.addWatch(it)
	case foundCoords:
		m.coordinates(it, data)
	case foundBoardJSON, foundBoardYAML:
		m.board(it, data)
	case foundDevlog:
		m.devlog(it, data)
	}
}

// messages imports the messages of one file. Their sources are named by
// absolute path, as the runner names what it reads from a watched place,
// so a message both imported and read later by the runner is stored once.
func (m *migration) messages(it found, data []byte) {
	path := m.abs(it.Rel)
	fi, _ := os.Stat(path)
	owner := ""
	if it.Agent != "" {
		if a, err := agentname.Resolve(m.cfg.AgentNames(), it.Agent); err == nil {
			owner = a
		}
	}
	src := func(name string) mailbox.Source {
		return mailbox.Source{Name: name, ModTime: fi.ModTime(), Owner: owner}
	}
	switch it.Kind {
	case foundMessage:
		msg, err := mailbox.Decode(data, src(path))
		if err != nil {
			m.skip(it.Rel, "%v", err)
			return
		}
		m.deliver(it.Rel, msg)
	case foundAppended:
		parts := dreamos.Split(data)
		for i, p := range parts {
			rel := fmt.Sprintf("%s@%d", it.Rel, p.Start)
			if i == len(parts)-1 && m.now.Sub(fi.ModTime()) < 10*time.Second {
				m.skip(rel, "perhaps still being written; the runner takes it once the file settles")
				continue
			}
			msg, err := mailbox.Decode(data[p.Start:p.End], src(fmt.Sprintf("%s@%d", path, p.Start)))
			if err != nil {
				m.skip(rel, "%v", err)
				continue
			}
			m.deliver(rel, msg)
		}
	case foundInboxJSON:
		entries, tail, err := dreamos.InboxJSONEntries(data)
		if err != nil {
			m.skip(it.Rel, "%v", err)
			return
		}
		if tail > 0 {
			m.skip(it.Rel, "data after byte %d is the stale end of an older write, not messages", tail)
		}
		for i, raw := range entries {
			rel := fmt.Sprintf("%s[%d]", it.Rel, i)
			msg, err := mailbox.Decode(raw, src(fmt.Sprintf("%s[%d]", path, i)))
			if err != nil {
				m.skip(rel, "%v", err)
				continue
			}
			m.deliver(rel, msg)
		}
	}
}

func (m *migration) deliver(rel string, msg mailbox.Message) {
	if msg.To == "" {
		msg.To = intake.RecipientInName(rel)
	}
	if s := intake.HandledStatus(msg); s != "" {
		m.skip(rel, "the old system had handled it already (status %s)", s)
		return
	}
	if msg.To == "all" { // a broadcast in a shared place: a copy for each agent but its sender
		for _, a := range m.cfg.AgentNames() {
			if !strings.EqualFold(a, msg.From) {
				one := msg
				one.To, one.Meta = a, maps.Clone(msg.Meta)
				m.deliver(rel, one)
			}
		}
		return
	}
	to, err := agentname.Resolve(m.cfg.AgentNames(), msg.To)
	switch {
	case msg.To == "":
		m.skip(rel, "neither the message nor where it sat says whom it is for")
		return
	case err != nil:
		m.skip(rel, "addressed to %q, not an agent in agentctl.yaml", msg.To)
		if agentname.Valid(msg.To) == nil && !slices.Contains(m.unknown, msg.To) {
			m.unknown = append(m.unknown, msg.To)
		}
		return
	}
	msg.To = to
	msg.Meta["migrated_from"] = rel
	if m.dry {
		m.imported[to]++
		return
	}
	mb, err := mailbox.Open(m.env.Root, to)
	if err == nil {
		err = mb.Deliver(msg)
	}
	switch {
	case errors.Is(err, mailbox.ErrDuplicate):
		m.already++
	case err != nil:
		m.skip(rel, "%v", err)
	default:
		m.imported[to]++
	}
}

// addWatch notes the place of a mailbox file for the runner to watch.
func (m *migration) addWatch(it found) {
	if it.Watch == "" {
		return
	}
	place := m.abs(it.Watch)
	if it.Shared {
		if !slices.Contains(m.shared, place) {
			m.shared = append(m.shared, place)
		}
		return
	}
	agent, err := agentname.Resolve(m.cfg.AgentNames(), it.Agent)
	if err != nil {
		return // its messages were skipped with the reason
	}
	if !slices.Contains(m.watch[agent], place) {
		m.watch[agent] = append(m.watch[agent], place)
	}
}

func (m *migration) coordinates(it found, data []byte) {
	if m.coordsFrom != "" {
		m.skip(it.Rel, "coordinates were taken from %s", m.coordsFrom)
		return
	}
	layout := fmt.Sprintf("%d-agent", len(m.cfg.Agents))
	positions, err := config.DreamOSCoords(data, layout)
	if err != nil {
		m.skip(it.Rel, "%v (by hand: agentctl calibrate --from-coords %s --layout NAME)", err, m.abs(it.Rel))
		return
	}
	windows, others := coordsWindows(m.cfg, positions)
	if len(windows) == 0 {
		m.skip(it.Rel, "none of its agents (%s) is in agentctl.yaml", strings.Join(others, ", "))
		return
	}
	if !m.dry {
		if err := config.SetWindows(m.env.Root, windows); err != nil {
			m.skip(it.Rel, "%v", err)
			return
		}
		if cfg, err := config.Load(m.env.Root); err == nil {
			m.cfg = cfg
		}
	}
	m.coordsFrom = it.Rel
	for _, a := range m.cfg.Agents {
		if _, ok := windows[a.Name]; ok {
			m.coords = append(m.coords, a.Name)
		}
	}
}

func (m *migration) board(it found, data []byte) {
	name := "dreamos-" + strings.Trim(unsafeName.ReplaceAllString(strings.TrimSuffix(it.Rel, filepath.Ext(it.Rel)), "_"), "_") + ".yaml"
	if it.Kind == foundBoardJSON {
		imp, err := projectboard.ImportDreamOS(filepath.Base(it.Rel), data)
		if err != nil {
			m.skip(it.Rel, "%v", err)
			return
		}
		data = imp.Data
	} else if _, err := projectboard.Parse(it.Rel, data); err != nil {
		// A Dream.OS board written as YAML: read it as the JSON it mirrors.
		imp, jerr := importYAMLBoard(filepath.Base(it.Rel), data)
		if jerr != nil {
			m.skip(it.Rel, "neither an agentctl board (%v) nor a Dream.OS one (%v)", err, jerr)
			return
		}
		data = imp.Data
	}
	if _, err := os.Stat(filepath.Join(projectboard.Dir(m.env.Root), name)); err == nil {
		m.notes = append(m.notes, fmt.Sprintf("board %s: imported before", name))
		return
	}
	if !m.dry {
		store := &projectboard.Store{Root: m.env.Root}
		if err := store.CreateBoard(m.ctx, name, data); err != nil {
			m.skip(it.Rel, "%v", err)
			return
		}
	}
	m.boards = append(m.boards, fmt.Sprintf("%s → %s", it.Rel, name))
}

// importYAMLBoard converts a Dream.OS task board kept as YAML the way its
// JSON boards are converted.
func importYAMLBoard(name string, data []byte) (*projectboard.Import, error) {
	var v any
	if err := yaml.Unmarshal(data, &v); err != nil {
		return nil, err
	}
	j, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return projectboard.ImportDreamOS(name, j)
}

func (m *migration) devlog(it found, data []byte) {
	dst := filepath.Join(layout.MigratedDevlogs(m.env.Root), strings.ReplaceAll(it.Rel, "/", "__"))
	if _, err := os.Stat(dst); err == nil {
		m.notes = append(m.notes, fmt.Sprintf("devlog %s: copied before", it.Rel))
		return
	}
	if !m.dry {
		if err := atomicfile.MkdirAll(filepath.Dir(dst)); err != nil {
			m.skip(it.Rel, "%v", err)
			return
		}
		if err := atomicfile.Create(dst, data); err != nil && !errors.Is(err, fs.ErrExist) {
			m.skip(it.Rel, "%v", err)
			return
		}
	}
	m.devlogs++
}

// finish writes the watch places and prints what was done, skipped and
// still needed.
func (m *migration) finish() error {
	w := m.env.Stdout
	would := ""
	if m.dry {
		would = "would have "
		fmt.Fprintf(w, "dry run: nothing was changed\n")
	}
	added := 0
	if len(m.watch) > 0 || len(m.shared) > 0 {
		var err error
		if !m.dry {
			if added, err = config.AddWatch(m.env.Root, m.watch, m.shared, false); err != nil {
				return fmt.Errorf("cannot add the old writers' places to agentctl.yaml: %w", err)
			}
		}
	}
	total, per := 0, []string{}
	for _, a := range m.cfg.AgentNames() {
		if n := m.imported[a]; n > 0 {
			total += n
			per = append(per, fmt.Sprintf("%s %d", a, n))
		}
	}
	fmt.Fprintf(w, "messages: %simported %d", would, total)
	if len(per) > 0 {
		fmt.Fprintf(w, " (%s)", strings.Join(per, ", "))
	}
	fmt.Fprintf(w, ", %d imported before\n", m.already)
	for _, b := range m.boards {
		fmt.Fprintf(w, "board: %simported %s\n", would, b)
	}
	if m.coordsFrom != "" {
		fmt.Fprintf(w, "coordinates: %simported %s from %s\n", would, strings.Join(m.coords, ", "), m.coordsFrom)
	}
	fmt.Fprintf(w, "devlogs: %scopied %d into %s\n", would, m.devlogs, layout.MigratedDevlogs(m.env.Root))
	for _, n := range m.notes {
		fmt.Fprintf(w, "%s\n", n)
	}
	if len(m.watch) > 0 || len(m.shared) > 0 {
		fmt.Fprintf(w, "old writers left running keep working: the runners watch (agentctl.yaml, %d added)\n", added)
		for _, a := range m.cfg.AgentNames() {
			for _, p := range m.watch[a] {
				fmt.Fprintf(w, "  %s: %s\n", a, p)
			}
		}
		for _, p := range m.shared {
			fmt.Fprintf(w, "  shared: %s\n", p)
		}
	}
	if len(m.skipped) > 0 {
		fmt.Fprintf(w, "skipped %d:\n", len(m.skipped))
		for _, g := range groupSkips(m.skipped) {
			fmt.Fprintf(w, "  %s\n", g)
		}
	}
	if len(m.unknown) > 0 {
		sort.Strings(m.unknown)
		fmt.Fprintf(w, "hint: add %s to agents in agentctl.yaml ('agentctl init' then makes their mailboxes) and migrate again to import their messages\n", strings.Join(m.unknown, ", "))
	}
	var needed []string
	for _, a := range m.cfg.Agents {
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
	return nil
}

// groupSkips says in one line what was skipped for one reason in one file
// (the entries of a queue), so the list stays readable.
func groupSkips(skips []skipped) []string {
	type group struct {
		file, why string
		entries   []string
	}
	var groups []*group
	byKey := map[[2]string]*group{}
	for _, s := range skips {
		file, entry, isEntry := strings.Cut(s.Rel, "[")
		if !isEntry {
			groups = append(groups, &group{file: s.Rel, why: s.Why})
			continue
		}
		key := [2]string{file, s.Why}
		g := byKey[key]
		if g == nil {
			g = &group{file: file, why: s.Why}
			byKey[key] = g
			groups = append(groups, g)
		}
		g.entries = append(g.entries, "["+entry)
	}
	out := make([]string, 0, len(groups))
	for _, g := range groups {
		switch {
		case len(g.entries) == 0:
			out = append(out, g.file+": "+g.why)
		case len(g.entries) <= 3:
			out = append(out, g.file+strings.Join(g.entries, "")+": "+g.why)
		default:
			out = append(out, fmt.Sprintf("%s: %d entries: %s", g.file, len(g.entries), g.why))
		}
	}
	return out
}
