package missioncontrol

import (
	"iter"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/agentctl/agentctl/mailbox"
)

// recentPerMailbox is how many archived messages of each mailbox the
// threads and tasks are built from: enough for the turns a person follows
// live, and a cost that does not grow with the archive.
const recentPerMailbox = 20

// DefaultShown is how many messages of each folder of a mailbox a
// snapshot holds; the rest are paged (Feed.Page), and the counts stay
// exact.
const DefaultShown = 50

// mailboxPart is what one mailbox contributes, kept between refreshes. A
// file event re-reads only the file it names: the messages of inbox/,
// processing/ and deadletter/ are held by file, the archive as a count per
// day folder and its newest few, so neither a long queue nor a long
// archive is read again on a change.
type mailboxPart struct {
	runner  Runner
	claimed *time.Time // when the message in flight was claimed, from its progress log

	inbox      map[string]Letter // by file, relative to the mailbox folder
	waiting    []Letter          // still inside inbox.json, or taken out of it into .ingest/
	processing map[string]Letter
	dead       map[string]Letter
	days       map[string]int // archive day folder → messages archived
	recent     []Letter       // the newest archived, newest first

	shown *partView // nil when it changed since the last snapshot

	// problems are the folders that could not be read, by folder.
	problems map[string]string
	openErr  string
}

// problemOrder is the order a mailbox's problems show in ("recent" is the
// newest of the archive); a day folder's come after, by name.
var problemOrder = []string{mailbox.InboxDir, mailbox.InboxJSON, mailbox.ProcessingDir, mailbox.ArchiveDir, "recent", mailbox.DeadletterDir}

func (p *mailboxPart) problem() string {
	if p.openErr != "" {
		return p.openErr
	}
	for _, k := range problemOrder {
		if e := p.problems[k]; e != "" {
			return e
		}
	}
	for _, k := range slices.Sorted(maps.Keys(p.problems)) {
		return p.problems[k]
	}
	return ""
}

func (p *mailboxPart) setProblem(folder string, err error) {
	if err != nil {
		p.problems[folder] = err.Error()
	} else {
		delete(p.problems, folder)
	}
}

// readMailbox reads a whole mailbox: every pending, in-flight and dead
// message (a queue's priorities need each one), and of the archive the day
// folders' listings and the newest few.
func (r *Reader) readMailbox(name string, now time.Time) *mailboxPart {
	p := &mailboxPart{inbox: map[string]Letter{}, processing: map[string]Letter{}, dead: map[string]Letter{}, days: map[string]int{}, problems: map[string]string{}}
	mb, err := mailbox.Open(r.Root, name)
	if err != nil {
		p.openErr = err.Error()
		p.runner = Runner{Runner: "-", State: "-"}
		return p
	}
	r.readRunner(p, name, now)
	p.inbox = p.readFolder(mb, name, mailbox.StatePending, mailbox.InboxDir)
	r.readWaiting(p, mb, name)
	r.readProcessing(p, mb, name)
	p.dead = p.readFolder(mb, name, mailbox.StateDead, mailbox.DeadletterDir)
	days, err := mb.ArchiveDays()
	p.setProblem(mailbox.ArchiveDir, err)
	if days != nil {
		p.days = days
	}
	r.readRecent(p, mb, name)
	return p
}

// readFolder reads every message of one folder.
func (p *mailboxPart) readFolder(mb *mailbox.Mailbox, name, state, folder string) map[string]Letter {
	entries, err := mb.List(state)
	p.setProblem(folder, err)
	out := map[string]Letter{}
	for _, e := range entries {
		if !strings.HasPrefix(e.File, folder+"/") {
			continue // inbox.json's, read on their own
		}
		out[e.File] = letter(name, e)
	}
	return out
}

func (r *Reader) readWaiting(p *mailboxPart, mb *mailbox.Mailbox, name string) {
	entries, err := mb.Waiting()
	p.setProblem(mailbox.InboxJSON, err)
	p.waiting = nil
	for _, e := range entries {
		p.waiting = append(p.waiting, letter(name, e))
	}
}

func (r *Reader) readProcessing(p *mailboxPart, mb *mailbox.Mailbox, name string) {
	entries, err := mb.List(mailbox.StateProcessing)
	p.setProblem(mailbox.ProcessingDir, err)
	p.processing = map[string]Letter{}
	for _, e := range entries {
		p.processing[e.File] = letter(name, e)
	}
	r.readClaim(p, mb)
}

// readClaim reads when the message in flight was claimed: its progress
// log has the claim's time, for the thread view.
func (r *Reader) readClaim(p *mailboxPart, mb *mailbox.Mailbox) {
	p.claimed = nil
	if p.runner.Current == "" {
		return
	}
	if prog, err := mb.ReadProgress(p.runner.Current); err == nil && !prog.ClaimedAt.IsZero() {
		at := prog.ClaimedAt
		p.claimed = &at
	}
}

func (r *Reader) readRecent(p *mailboxPart, mb *mailbox.Mailbox, name string) {
	done, err := mb.RecentDone(recentPerMailbox)
	p.setProblem("recent", err)
	p.recent = nil
	for _, e := range done {
		p.recent = append(p.recent, letter(name, e))
	}
}

// readFiles brings p up to date with the files that changed, each named
// relative to the mailbox folder as the feed's events tell them.
func (r *Reader) readFiles(p *mailboxPart, name string, files []string) {
	mb, err := mailbox.Open(r.Root, name)
	if err != nil {
		p.openErr = err.Error()
		return
	}
	p.openErr = ""
	p.shown = nil
	var processing, recent bool
	for _, file := range files {
		folder, rest, _ := strings.Cut(file, "/")
		switch folder {
		case mailbox.InboxJSON, mailbox.InboxJSONLock:
			r.readWaiting(p, mb, name)
		case mailbox.InboxDir:
			readOne(mb, name, mailbox.StatePending, file, p.inbox)
		case mailbox.DeadletterDir:
			readOne(mb, name, mailbox.StateDead, strings.TrimSuffix(file, mailbox.ReasonSuffix), p.dead)
		case mailbox.ProcessingDir:
			processing = true
		case mailbox.ArchiveDir:
			day, _, _ := strings.Cut(rest, "/")
			n, err := mb.CountDay(day)
			p.setProblem(mailbox.ArchiveDir+"/"+day, err)
			if n > 0 {
				p.days[day] = n
			} else {
				delete(p.days, day)
			}
			recent = true
		}
	}
	if processing {
		r.readProcessing(p, mb, name)
	}
	if recent {
		r.readRecent(p, mb, name)
	}
}

// readOne reads the one message file into held, or drops it from held
// when it is no longer there.
func readOne(mb *mailbox.Mailbox, name, state, file string, held map[string]Letter) {
	if e, ok := mb.ReadEntry(state, file); ok {
		held[file] = letter(name, e)
		return
	}
	delete(held, file)
}

// pending is the mailbox's queue in the order it is worked.
func (p *mailboxPart) pending() []Letter {
	out := make([]Letter, 0, len(p.inbox)+len(p.waiting))
	for _, l := range p.inbox {
		out = append(out, l)
	}
	out = append(out, p.waiting...)
	slices.SortFunc(out, workOrder)
	return out
}

// workOrder is the order a queue is worked in: by priority, then oldest
// first.
func workOrder(a, b Letter) int {
	if ra, rb := mailbox.Priority(a.Priority).Rank(), mailbox.Priority(b.Priority).Rank(); ra != rb {
		return ra - rb
	}
	if c := a.CreatedAt.Compare(b.CreatedAt); c != 0 {
		return c
	}
	return strings.Compare(a.file, b.file)
}

// newestFirst is the order of the other folders.
func newestFirst(a, b Letter) int {
	if c := b.CreatedAt.Compare(a.CreatedAt); c != 0 {
		return c
	}
	return strings.Compare(a.file, b.file)
}

// newest lists held newest first.
func newest(held map[string]Letter) []Letter {
	out := make([]Letter, 0, len(held))
	for _, l := range held {
		out = append(out, l)
	}
	slices.SortFunc(out, newestFirst)
	return out
}

// top is the first n of some letters in order, found in one pass that
// sorts only what it keeps: a snapshot of a queue of ten thousand holds
// fifty, and a change sorts no more than those.
func top(n int, order func(a, b Letter) int, parts ...iter.Seq[Letter]) []Letter {
	out := make([]Letter, 0, n+1)
	for _, part := range parts {
		for l := range part {
			if len(out) == n && order(l, out[n-1]) >= 0 {
				continue
			}
			i, _ := slices.BinarySearchFunc(out, l, order)
			out = slices.Insert(out, i, l)
			if len(out) > n {
				out = out[:n]
			}
		}
	}
	return out
}

// partView is what a snapshot shows of a mailbox, kept until the mailbox
// changes.
type partView struct {
	queue   map[string]int
	pending []Letter // the first of the queue
	dead    []Letter // the newest
}

func (p *mailboxPart) view(n int) *partView {
	if p.shown != nil {
		return p.shown
	}
	v := &partView{queue: map[string]int{}}
	for _, l := range p.inbox {
		v.queue[l.Priority]++
	}
	for _, l := range p.waiting {
		v.queue[l.Priority]++
	}
	v.pending = top(n, workOrder, maps.Values(p.inbox), slices.Values(p.waiting))
	v.dead = top(n, newestFirst, maps.Values(p.dead))
	p.shown = v
	return v
}

func (p *mailboxPart) inFlight() []Letter {
	out := newest(p.processing)
	for i := range out {
		if out[i].ID == p.runner.Current && p.claimed != nil {
			out[i].ClaimedAt = p.claimed
		}
	}
	return out
}

func (p *mailboxPart) done() int {
	n := 0
	for _, c := range p.days {
		n += c
	}
	return n
}

// list is one folder's messages in the order pages show them.
func (p *mailboxPart) list(state string) []Letter {
	switch state {
	case mailbox.StatePending:
		return p.pending()
	case mailbox.StateProcessing:
		return p.inFlight()
	case mailbox.StateDead:
		return newest(p.dead)
	}
	return nil
}

func first[T any](s []T, n int) []T {
	if len(s) > n {
		return s[:n]
	}
	return s
}
