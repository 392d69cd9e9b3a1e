package missioncontrol

import (
	"os"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/agentctl/agentctl/agents/cost"
	"github.com/agentctl/agentctl/agents/hub/hubseats"
	"github.com/agentctl/agentctl/agents/missioncontrol/verdict"
	"github.com/agentctl/agentctl/cursor/lockholder"
	"github.com/agentctl/agentctl/devlog"
	"github.com/agentctl/agentctl/internal/layout"
	"github.com/agentctl/agentctl/internal/process"
	"github.com/agentctl/agentctl/mailbox"
	"github.com/agentctl/agentctl/projectboard"
)

// Reader builds snapshots of one runtime, re-reading only what changed.
type Reader struct {
	Root     string
	Settings Settings
	// Shown is how many messages of each folder of a mailbox a snapshot
	// holds; DefaultShown when zero.
	Shown int
	host  string

	parts   map[string]*mailboxPart
	logs    map[string]devlogLine
	columns []Column
	boardEr string
	locks   []lockholder.Holder
	seats   *hubseats.Seats // hub/seats.json, when the runtime has remote agents
	seatsEr string
	tally   *cost.Tally
	spent   *cost.Summary
	spentEr string
}

type devlogLine struct {
	text string
	at   *time.Time
}

// NewReader reads nothing yet; the first Read reads everything.
func NewReader(root string, s Settings) *Reader {
	host, _ := os.Hostname()
	return &Reader{Root: root, Settings: s, host: host, parts: map[string]*mailboxPart{}, logs: map[string]devlogLine{}}
}

func (r *Reader) shown() int {
	if r.Shown > 0 {
		return r.Shown
	}
	return DefaultShown
}

// Changed says what to read again.
type Changed struct {
	All     bool
	Mailbox map[string]bool // the mailbox's messages, all of them
	// Files are the files of a mailbox that changed, relative to its
	// folder: only they are read again.
	Files    map[string][]string
	Status   map[string]bool // only its status.json
	Devlog   map[string]bool
	Board    bool
	Locks    bool
	Seats    bool // hub/seats.json
	Costs    bool // the cost ledger
	Liveness bool // runners' pids may have died: re-judge every status.json and seat
}

// Empty reports whether nothing needs reading.
func (c Changed) Empty() bool {
	return !c.All && !c.Board && !c.Locks && !c.Seats && !c.Costs && !c.Liveness && len(c.Mailbox) == 0 && len(c.Files) == 0 && len(c.Status) == 0 && len(c.Devlog) == 0
}

// Merge adds o to c.
func (c *Changed) Merge(o Changed) {
	c.All = c.All || o.All
	c.Board = c.Board || o.Board
	c.Locks = c.Locks || o.Locks
	c.Seats = c.Seats || o.Seats
	c.Costs = c.Costs || o.Costs
	c.Liveness = c.Liveness || o.Liveness
	for _, m := range []struct {
		dst *map[string]bool
		src map[string]bool
	}{{&c.Mailbox, o.Mailbox}, {&c.Status, o.Status}, {&c.Devlog, o.Devlog}} {
		for k := range m.src {
			if *m.dst == nil {
				*m.dst = map[string]bool{}
			}
			(*m.dst)[k] = true
		}
	}
	for k, files := range o.Files {
		if c.Files == nil {
			c.Files = map[string][]string{}
		}
		for _, f := range files {
			if !slices.Contains(c.Files[k], f) {
				c.Files[k] = append(c.Files[k], f)
			}
		}
	}
}

// Read re-reads what changed and returns the whole snapshot.
func (r *Reader) Read(ch Changed, now time.Time) Snapshot {
	names := r.Settings.mailboxNames()
	for _, name := range names {
		p := r.parts[name]
		switch {
		case p == nil || ch.All || ch.Mailbox[name]:
			r.parts[name] = r.readMailbox(name, now)
		default:
			if ch.Status[name] || ch.Liveness {
				r.readRunner(p, name, now)
			}
			if files := ch.Files[name]; len(files) > 0 {
				r.readFiles(p, name, files)
			}
		}
	}
	for _, name := range r.Settings.Agents {
		if _, ok := r.logs[name]; !ok || ch.All || ch.Devlog[name] {
			r.logs[name] = readDevlog(r.Root, name)
		}
	}
	if r.columns == nil || ch.All || ch.Board {
		r.readBoard()
	}
	if r.locks == nil || ch.All || ch.Locks || ch.Liveness {
		r.locks = lockholder.List(layout.Locks(r.Root))
		if r.locks == nil {
			r.locks = []lockholder.Holder{}
		}
	}
	if r.seats == nil || ch.All || ch.Seats || ch.Liveness {
		r.readSeats()
	}
	// The tally reads only appended lines, and starts again with the day.
	if r.spent == nil || ch.All || ch.Costs || ch.Liveness {
		if r.tally == nil {
			r.tally = cost.NewTally(r.Root)
		}
		spent, err := r.tally.Today(now)
		r.spent, r.spentEr = &spent, ""
		if err != nil {
			r.spentEr = err.Error()
		}
	}
	return r.assemble(names, now)
}

// readSeats reads the hub's record of the remote agents' seats. A seat's
// absence changes no file, so presence is judged again at every Liveness
// tick too.
func (r *Reader) readSeats() {
	r.seats, r.seatsEr = &hubseats.Seats{}, ""
	if len(r.Settings.Remote) == 0 {
		return
	}
	s, _, err := hubseats.Read(r.Root)
	if err != nil {
		r.seatsEr = err.Error()
		return
	}
	r.seats = &s
}

func (r *Reader) readRunner(p *mailboxPart, name string, now time.Time) {
	mb, err := mailbox.Open(r.Root, name)
	if err != nil {
		return
	}
	st, err := mb.ReadStatus()
	current := p.runner.Current
	p.runner = verdict.Judge(st, err, r.host, now, r.Settings.StallAfter, r.Settings.StaleAfter, process.Is)
	if r.Settings.isPerson(name) {
		p.runner.Runner = "person"
	}
	if p.runner.Current != current || (current != "" && p.claimed == nil) {
		r.readClaim(p, mb)
	}
}

func readDevlog(root, agent string) devlogLine {
	path, err := devlog.Path(root, agent)
	if err != nil {
		return devlogLine{}
	}
	data, err := devlog.Last(path, 1, -1)
	if err != nil || len(data) == 0 {
		return devlogLine{}
	}
	entries, err := devlog.Read(strings.NewReader(string(data)))
	if err != nil || len(entries) == 0 {
		return devlogLine{}
	}
	e := entries[len(entries)-1]
	text := e.Subject
	switch {
	case e.IsNote():
		text = "note: " + e.Note
	case e.Outcome != "":
		text = e.Outcome + ": " + e.Subject
	}
	at := e.Time
	return devlogLine{text: oneLine(text, 160), at: &at}
}

func oneLine(s string, max int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > max {
		return string(r[:max-1]) + "…"
	}
	return s
}

// boardStatuses are the board's columns, in the order work moves.
var boardStatuses = []string{"todo", "in_progress", "review", "blocked", "done"}

func (r *Reader) readBoard() {
	store := &projectboard.Store{Root: r.Root}
	tasks, err := store.Tasks()
	r.boardEr = ""
	if err != nil {
		r.boardEr = err.Error()
	}
	byStatus := map[string][]Task{}
	for _, t := range tasks {
		byStatus[string(t.Status)] = append(byStatus[string(t.Status)], Task{ID: t.ID, Title: t.Title, Owner: t.Owner, Priority: t.Priority, Board: t.Board})
	}
	r.columns = []Column{}
	for _, s := range boardStatuses {
		r.columns = append(r.columns, Column{Status: s, Tasks: nonNil(byStatus[s])})
		delete(byStatus, s)
	}
	var other []string
	for s := range byStatus {
		other = append(other, s)
	}
	sort.Strings(other)
	for _, s := range other { // a status a person typed by hand still shows
		r.columns = append(r.columns, Column{Status: s, Tasks: byStatus[s]})
	}
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

func (r *Reader) assemble(names []string, now time.Time) Snapshot {
	s := Snapshot{Root: r.Root, StallAfter: r.Settings.StallAfter.Seconds(), Agents: []Agent{}, People: []Person{}, Dead: []Letter{}}
	var letters []Letter
	for _, name := range names {
		p := r.parts[name]
		v := p.view(r.shown())
		letters = append(letters, v.pending...)
		letters = append(letters, first(p.inFlight(), r.shown())...)
		letters = append(letters, p.recent...)
		s.Dead = append(s.Dead, v.dead...)
		pending := len(p.inbox) + len(p.waiting)
		if r.Settings.isPerson(name) {
			person := Person{Name: name, Waiting: nonNil(slices.Clone(v.pending)), Pending: pending, Dead: len(p.dead), Problem: p.problem()}
			s.People = append(s.People, person)
			continue
		}
		a := Agent{Name: name, Runner: p.runner, Queue: v.queue, Pending: pending, Processing: len(p.processing),
			Done: p.done(), Dead: len(p.dead), Problem: p.problem()}
		a.LastLog, a.LastLogAt = r.logs[name].text, r.logs[name].at
		for _, h := range r.locks {
			if h.Agent == name {
				a.HoldsLock = h.Lock
			}
		}
		if machine, ok := r.Settings.Remote[name]; ok {
			seat := verdict.JudgeSeat(*r.seats, name, machine, now)
			a.Seat = &seat
		}
		a.Today = r.spent.Agents[name]
		a.TodayBrief = a.Today.Brief()
		if a.Problem != "" {
			s.Problems = append(s.Problems, name+": "+a.Problem)
		}
		s.Agents = append(s.Agents, a)
	}
	for _, h := range r.locks {
		s.Locks = append(s.Locks, Lock{Lock: h.Lock, Agent: h.Agent, PID: h.PID, Since: h.Since})
	}
	if r.seatsEr != "" {
		s.Problems = append(s.Problems, "seats: "+r.seatsEr)
	}
	if r.boardEr != "" {
		s.Problems = append(s.Problems, "board: "+r.boardEr)
	}
	s.Spent = r.spent.Swarm
	if r.spentEr != "" {
		s.Problems = append(s.Problems, "costs: "+r.spentEr)
	}
	sort.SliceStable(s.Dead, func(i, j int) bool { return s.Dead[i].CreatedAt.After(s.Dead[j].CreatedAt) })
	letters = append(letters, s.Dead...)
	s.Threads = threads(letters)
	s.Columns = withMessages(r.columns, letters)
	return s
}
