package mailbox

import (
	"container/heap"
	"time"
)

// pending is one message waiting in inbox/, as the consumer's index knows it.
type pending struct {
	stem      string
	rank      int
	createdAt time.Time
	notBefore time.Time // zero: claimable now
	index     int       // position in its heap, maintained by the heap
}

// queue is the consumer's in-memory index of inbox/, so that claiming costs
// the same with ten or ten thousand messages pending: no directory listing,
// no file reads, one heap pop. Rescans rebuild it; events keep it current.
type queue struct {
	byStem  map[string]*pending
	ready   readyHeap   // claimable, most pressing first
	waiting waitingHeap // held back by deliver_after, soonest first
}

func newQueue() *queue {
	return &queue{byStem: map[string]*pending{}}
}

func (q *queue) len() int { return len(q.byStem) }

func (q *queue) has(stem string) bool { _, ok := q.byStem[stem]; return ok }

func (q *queue) add(p *pending) {
	if q.has(p.stem) {
		q.remove(p.stem)
	}
	q.byStem[p.stem] = p
	if p.notBefore.IsZero() {
		heap.Push(&q.ready, p)
	} else {
		heap.Push(&q.waiting, p)
	}
}

func (q *queue) remove(stem string) {
	p, ok := q.byStem[stem]
	if !ok {
		return
	}
	delete(q.byStem, stem)
	if p.notBefore.IsZero() {
		heap.Remove(&q.ready, p.index)
	} else {
		heap.Remove(&q.waiting, p.index)
	}
}

// pop removes and returns the most pressing message claimable at now.
func (q *queue) pop(now time.Time) *pending {
	for q.waiting.Len() > 0 && !q.waiting[0].notBefore.After(now) {
		p := heap.Pop(&q.waiting).(*pending)
		p.notBefore = time.Time{}
		heap.Push(&q.ready, p)
	}
	if q.ready.Len() == 0 {
		return nil
	}
	p := heap.Pop(&q.ready).(*pending)
	delete(q.byStem, p.stem)
	return p
}

// claimable reports whether pop would return a message at now.
func (q *queue) claimable(now time.Time) bool {
	return q.ready.Len() > 0 || q.waiting.Len() > 0 && !q.waiting[0].notBefore.After(now)
}

// nextDue is when the first held-back message becomes claimable.
func (q *queue) nextDue() (time.Time, bool) {
	if q.waiting.Len() == 0 {
		return time.Time{}, false
	}
	return q.waiting[0].notBefore, true
}

type readyHeap []*pending

func (h readyHeap) Len() int { return len(h) }
func (h readyHeap) Less(i, j int) bool {
	a, b := h[i], h[j]
	if a.rank != b.rank {
		return a.rank < b.rank
	}
	if !a.createdAt.Equal(b.createdAt) {
		return a.createdAt.Before(b.createdAt)
	}
	return a.stem < b.stem
}
func (h readyHeap) Swap(i, j int)   { h[i], h[j] = h[j], h[i]; h[i].index = i; h[j].index = j }
func (h *readyHeap) Push(x any)     { p := x.(*pending); p.index = len(*h); *h = append(*h, p) }
func (h *readyHeap) Pop() any       { return popLast((*[]*pending)(h)) }
func (h waitingHeap) Len() int      { return len(h) }
func (h waitingHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i]; h[i].index = i; h[j].index = j }
func (h *waitingHeap) Push(x any)   { p := x.(*pending); p.index = len(*h); *h = append(*h, p) }
func (h *waitingHeap) Pop() any     { return popLast((*[]*pending)(h)) }
func (h waitingHeap) Less(i, j int) bool {
	return h[i].notBefore.Before(h[j].notBefore)
}

type waitingHeap []*pending

func popLast(s *[]*pending) any {
	old := *s
	p := old[len(old)-1]
	old[len(old)-1] = nil
	*s = old[:len(old)-1]
	return p
}
