package missioncontrol

import (
	"errors"
	"io/fs"
	"os"
	"sort"
	"strings"
	"time"

	"agentctl/config"
	"agentctl/cursor"
	"agentctl/devlog"
	"agentctl/internal/process"
	"agentctl/mailbox"
	"agentctl/projectboard"
)

// Snapshot is everything mission control shows at one moment. It holds
// absolute times only, never ages, so that an idle runtime gives the same
// snapshot again and nothing is sent to anyone; views compute ages.
type Snapshot struct {
	Root       string    `json:"root"`
	StallAfter float64   `json:"stall_after_s"`
	Agents     []Agent   `json:"agents"`
	People     []Person  `json:"people"`
	Columns    []Column  `json:"columns"`
	Threads    []Thread  `json:"threads"`
	Dead       []Letter  `json:"dead"`
	Problems   []string  `json:"problems,omitempty"`
	Locks      []Lock    `json:"locks,omitempty"`
	Built      time.Time `json:"-"`
}

// Agent is one agent's tile.
type Agent struct {
	Name string `json:"name"`
	Runner
	// Queue counts pending messages by priority.
	Queue      map[string]int `json:"queue"`
	Pending    int            `json:"pending"`
	Processing int            `json:"processing"`
	Done       int            `json:"done"`
	Dead       int            `json:"dead"`
	LastLog    string         `json:"last_log,omitempty"`
	LastLogAt  *time.Time     `json:"last_log_at,omitempty"`
	HoldsLock  string         `json:"holds_lock,omitempty"`
	Problem    string         `json:"problem,omitempty"`
}

// Person is a person's mailbox: what waits for their answer.
type Person struct {
	Name    string   `json:"name"`
	Waiting []Letter `json:"waiting"`
	Problem string   `json:"problem,omitempty"`
}

// Letter is a message as the views show it.
type Letter struct {
	Mailbox     string     `json:"mailbox"`
	ID          string     `json:"id"`
	Ref         string     `json:"ref"` // what retry and drop accept: the id, or the file name of an unreadable one
	From        string     `json:"from"`
	To          string     `json:"to"`
	Type        string     `json:"type,omitempty"`
	Priority    string     `json:"priority,omitempty"`
	Subject     string     `json:"subject"`
	Body        string     `json:"body,omitempty"`
	TaskID      string     `json:"task_id,omitempty"`
	ThreadID    string     `json:"thread_id,omitempty"`
	ReplyTo     string     `json:"reply_to,omitempty"`
	State       string     `json:"state"`
	Outcome     string     `json:"outcome,omitempty"`
	Reason      string     `json:"reason,omitempty"`
	CreatedAt   time.Time  `json:"created_at"`
	ClaimedAt   *time.Time `json:"claimed_at,omitempty"`
	CompletedAt *time.Time `json:"completed_at,omitempty"`
}

// Column is one status of the board.
type Column struct {
	Status string `json:"status"`
	Tasks  []Task `json:"tasks"`
}

// Task is a board task and the messages that touched it.
type Task struct {
	ID       string   `json:"id"`
	Title    string   `json:"title"`
	Owner    string   `json:"owner,omitempty"`
	Priority string   `json:"priority,omitempty"`
	Board    string   `json:"board"`
	Messages []string `json:"messages,omitempty"` // ids, oldest first
}

// Thread is a conversation: messages linked by thread_id, oldest first.
type Thread struct {
	ID      string   `json:"id"`
	Subject string   `json:"subject"`
	Hops    []Letter `json:"hops"`
}

// Lock is a desktop input lock and who holds it.
type Lock struct {
	Lock  string    `json:"lock"`
	Agent string    `json:"agent,omitempty"`
	PID   int       `json:"pid"`
	Since time.Time `json:"since"`
}

// recentPerMailbox is how many archived messages of each mailbox the
// threads and tasks are built from: enough for the turns a person follows
// live, and a cost that does not grow with the archive.
const recentPerMailbox = 20

// maxDeadShown caps the dead letters listed per mailbox; the counts stay
// exact.
const maxDeadShown = 50

// mailboxPart is what one mailbox contributes, kept between refreshes so a
// file event re-reads only the mailbox it happened in.
type mailboxPart struct {
	agent   Agent
	person  Person
	letters []Letter // pending, in flight, recent done: for threads and tasks
	dead    []Letter
}

// Reader builds snapshots of one runtime, re-reading only what changed.
type Reader struct {
	Root string
	Cfg  config.Config
	host string

	parts   map[string]*mailboxPart
	logs    map[string]devlogLine
	columns []Column
	boardEr string
	locks   []cursor.Holder
}

type devlogLine struct {
	text string
	at   *time.Time
}

// NewReader reads nothing yet; the first Read reads everything.
func NewReader(root string, cfg config.Config) *Reader {
	host, _ := os.Hostname()
	return &Reader{Root: root, Cfg: cfg, host: host, parts: map[string]*mailboxPart{}, logs: map[string]devlogLine{}}
}

// Changed says what to read again.
type Changed struct {
	All      bool
	Mailbox  map[string]bool // the mailbox's messages
	Status   map[string]bool // only its status.json
	Devlog   map[string]bool
	Board    bool
	Locks    bool
	Liveness bool // runners' pids may have died: re-judge every status.json
}

// Empty reports whether nothing needs reading.
func (c Changed) Empty() bool {
	return !c.All && !c.Board && !c.Locks && !c.Liveness && len(c.Mailbox) == 0 && len(c.Status) == 0 && len(c.Devlog) == 0
}

// Merge adds o to c.
func (c *Changed) Merge(o Changed) {
	c.All = c.All || o.All
	c.Board = c.Board || o.Board
	c.Locks = c.Locks || o.Locks
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
}

// Read re-reads what changed and returns the whole snapshot.
func (r *Reader) Read(ch Changed, now time.Time) Snapshot {
	names := r.Cfg.MailboxNames()
	for _, name := range names {
		p := r.parts[name]
		switch {
		case p == nil || ch.All || ch.Mailbox[name]:
			r.parts[name] = r.readMailbox(name, now)
		case ch.Status[name] || ch.Liveness:
			r.readRunner(p, name, now)
		}
	}
	for _, name := range r.Cfg.AgentNames() {
		if _, ok := r.logs[name]; !ok || ch.All || ch.Devlog[name] {
			r.logs[name] = readDevlog(r.Root, name)
		}
	}
	if r.columns == nil || ch.All || ch.Board {
		r.readBoard()
	}
	if r.locks == nil || ch.All || ch.Locks || ch.Liveness {
		r.locks = cursor.Holders(cursor.LockDir(r.Root))
		if r.locks == nil {
			r.locks = []cursor.Holder{}
		}
	}
	return r.assemble(names, now)
}

func (r *Reader) readMailbox(name string, now time.Time) *mailboxPart {
	p := &mailboxPart{agent: Agent{Name: name, Queue: map[string]int{}}, person: Person{Name: name, Waiting: []Letter{}}}
	mb, err := mailbox.Open(r.Root, name)
	if err != nil {
		p.agent.Problem, p.person.Problem = err.Error(), err.Error()
		p.agent.Runner = Runner{Runner: "-", State: "-"}
		return p
	}
	r.readRunner(p, name, now)
	problem := func(err error) {
		if err != nil && p.agent.Problem == "" {
			p.agent.Problem, p.person.Problem = err.Error(), err.Error()
		}
	}
	counts, err := mb.Count()
	problem(err)
	p.agent.Pending, p.agent.Processing, p.agent.Done, p.agent.Dead = counts.Pending, counts.Processing, counts.Done, counts.Dead
	for _, state := range []string{mailbox.StatePending, mailbox.StateProcessing} {
		entries, err := mb.List(state)
		problem(err)
		for _, e := range entries {
			l := letter(name, e)
			if state == mailbox.StatePending {
				p.agent.Queue[l.Priority]++
				if r.Cfg.IsPerson(name) {
					p.person.Waiting = append(p.person.Waiting, l)
				}
			}
			p.letters = append(p.letters, l)
		}
	}
	if st, err := mb.ReadStatus(); err == nil && st.Current != "" {
		// A claim's progress log has the claim's time, for the thread view.
		if prog, err := mb.ReadProgress(st.Current); err == nil {
			for i := range p.letters {
				if p.letters[i].ID == st.Current && !prog.ClaimedAt.IsZero() {
					at := prog.ClaimedAt
					p.letters[i].ClaimedAt = &at
				}
			}
		}
	}
	done, err := mb.RecentDone(recentPerMailbox)
	problem(err)
	for _, e := range done {
		p.letters = append(p.letters, letter(name, e))
	}
	dead, err := mb.List(mailbox.StateDead)
	problem(err)
	for i, e := range dead {
		if i == maxDeadShown {
			break
		}
		p.dead = append(p.dead, letter(name, e))
	}
	return p
}

func (r *Reader) readRunner(p *mailboxPart, name string, now time.Time) {
	mb, err := mailbox.Open(r.Root, name)
	if err != nil {
		return
	}
	st, err := mb.ReadStatus()
	p.agent.Runner = Judge(st, err, r.host, now, r.Cfg.Recovery.StallAfter.D(), process.Alive)
	if r.Cfg.IsPerson(name) {
		p.agent.Runner.Runner = "person"
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
	s := Snapshot{Root: r.Root, StallAfter: r.Cfg.Recovery.StallAfter.D().Seconds(), Agents: []Agent{}, People: []Person{}, Dead: []Letter{}, Built: now}
	var letters []Letter
	for _, name := range names {
		p := r.parts[name]
		letters = append(letters, p.letters...)
		s.Dead = append(s.Dead, p.dead...)
		if r.Cfg.IsPerson(name) {
			s.People = append(s.People, p.person)
			continue
		}
		a := p.agent
		a.LastLog, a.LastLogAt = r.logs[name].text, r.logs[name].at
		for _, h := range r.locks {
			if h.Agent == name {
				a.HoldsLock = h.Lock
			}
		}
		if a.Problem != "" {
			s.Problems = append(s.Problems, name+": "+a.Problem)
		}
		s.Agents = append(s.Agents, a)
	}
	for _, h := range r.locks {
		s.Locks = append(s.Locks, Lock{Lock: h.Lock, Agent: h.Agent, PID: h.PID, Since: h.Since})
	}
	if r.boardEr != "" {
		s.Problems = append(s.Problems, "board: "+r.boardEr)
	}
	sort.SliceStable(s.Dead, func(i, j int) bool { return s.Dead[i].CreatedAt.After(s.Dead[j].CreatedAt) })
	letters = append(letters, s.Dead...)
	s.Threads = threads(letters)
	s.Columns = withMessages(r.columns, letters)
	return s
}

func letter(mailboxName string, e mailbox.Entry) Letter {
	m := e.Message
	l := Letter{
		Mailbox: mailboxName, ID: m.ID, Ref: m.ID, From: m.From, To: m.To, Type: m.Type, Priority: string(m.Priority),
		Subject: m.Subject, Body: oneLine(m.Body, 2000), TaskID: m.TaskID, ThreadID: m.ThreadID, ReplyTo: m.ReplyTo,
		State: e.State, Reason: e.Reason, CreatedAt: m.CreatedAt,
	}
	if l.Priority == "" {
		l.Priority = string(mailbox.Normal)
	}
	if l.Ref == "" {
		l.Ref = e.File[strings.LastIndexByte(e.File, '/')+1:]
	}
	if l.Subject == "" {
		l.Subject = oneLine(m.Body, 60)
	}
	if e.Problem != "" && l.Reason == "" {
		l.Reason = e.Problem
	}
	if r := e.Receipt; r != nil {
		l.Outcome = r.Outcome
		if !r.ClaimedAt.IsZero() {
			at := r.ClaimedAt
			l.ClaimedAt = &at
		}
		if !r.CompletedAt.IsZero() {
			at := r.CompletedAt
			l.CompletedAt = &at
		}
	}
	return l
}

// threadOf is the thread a message belongs to: its thread_id, or the
// message itself when it starts one.
func threadOf(l Letter) string {
	if l.ThreadID != "" {
		return l.ThreadID
	}
	return l.ID
}

// threads groups messages into conversations of two messages or more,
// newest conversation first.
func threads(letters []Letter) []Thread {
	by := map[string][]Letter{}
	for _, l := range letters {
		if l.ID == "" {
			continue
		}
		by[threadOf(l)] = append(by[threadOf(l)], l)
	}
	out := []Thread{}
	for id, hops := range by {
		if len(hops) < 2 {
			continue
		}
		sort.SliceStable(hops, func(i, j int) bool { return hops[i].CreatedAt.Before(hops[j].CreatedAt) })
		out = append(out, Thread{ID: id, Subject: hops[0].Subject, Hops: hops})
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i].Hops[len(out[i].Hops)-1].CreatedAt, out[j].Hops[len(out[j].Hops)-1].CreatedAt
		if !a.Equal(b) {
			return a.After(b)
		}
		return out[i].ID < out[j].ID
	})
	return out
}

// withMessages lists on each task the messages about it, oldest first.
func withMessages(columns []Column, letters []Letter) []Column {
	byTask := map[string][]Letter{}
	for _, l := range letters {
		if l.TaskID != "" && l.ID != "" {
			byTask[l.TaskID] = append(byTask[l.TaskID], l)
		}
	}
	out := make([]Column, len(columns))
	for i, c := range columns {
		out[i] = Column{Status: c.Status, Tasks: make([]Task, len(c.Tasks))}
		for j, t := range c.Tasks {
			ls := byTask[t.ID]
			sort.SliceStable(ls, func(a, b int) bool { return ls[a].CreatedAt.Before(ls[b].CreatedAt) })
			t.Messages = nil
			for _, l := range ls {
				if !contains(t.Messages, l.ID) {
					t.Messages = append(t.Messages, l.ID)
				}
			}
			out[i].Tasks[j] = t
		}
	}
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

var errNoStatus = fs.ErrNotExist

// isNoStatus reports a mailbox without a heartbeat: no runner ever ran.
func isNoStatus(err error) bool { return errors.Is(err, errNoStatus) }
