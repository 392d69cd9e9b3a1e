package missioncontrol

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/agentctl/agentctl/mailbox"
)

// MaxPage is the most messages one page holds.
const MaxPage = 500

// Page asks for the messages of one folder of a mailbox past the ones a
// snapshot holds.
type Page struct {
	Mailbox string `json:"mailbox"`
	State   string `json:"state"` // pending, processing, done or dead
	Offset  int    `json:"offset"`
	Limit   int    `json:"limit"`
}

// PageOf is one page: Total counts the whole folder, and Next is the
// offset of the page after it, or zero when this one is the last.
type PageOf struct {
	Page
	Total   int      `json:"total"`
	Letters []Letter `json:"letters"`
	Next    int      `json:"next,omitempty"`
}

type pageRequest struct {
	Page
	reply chan PageOf
}

// errNotServing says the feed's Run has ended.
var errNotServing = errors.New("mission control is not running")

// Page reads a page of a mailbox's folder: pending messages in the order
// they are worked, the others newest first. The held folders are answered
// by Run, which owns them; the archive's pages are read from its files
// here, the newest day first, so asking for one costs the page and not the
// archive.
func (f *Feed) Page(ctx context.Context, p Page) (PageOf, error) {
	if !slices.Contains(f.reader.Settings.mailboxNames(), p.Mailbox) {
		return PageOf{}, fmt.Errorf("no mailbox %q is shown here", p.Mailbox)
	}
	if !slices.Contains(mailbox.States, p.State) {
		return PageOf{}, fmt.Errorf("no state %q: want one of pending, processing, done, dead", p.State)
	}
	if p.Offset < 0 {
		p.Offset = 0
	}
	if p.Limit <= 0 {
		p.Limit = f.reader.shown()
	}
	p.Limit = min(p.Limit, MaxPage)
	req := pageRequest{Page: p, reply: make(chan PageOf, 1)}
	select {
	case f.pages <- req:
	case <-f.done:
		return PageOf{}, errNotServing
	case <-ctx.Done():
		return PageOf{}, ctx.Err()
	}
	out := <-req.reply
	if p.State != mailbox.StateDone {
		return out, nil
	}
	mb, err := mailbox.Open(f.reader.Root, p.Mailbox)
	if err != nil {
		return PageOf{}, err
	}
	entries, err := mb.DonePage(p.Offset, p.Limit)
	if err != nil {
		return PageOf{}, err
	}
	for _, e := range entries {
		out.Letters = append(out.Letters, letter(p.Mailbox, e))
	}
	out.Next = nextOffset(p, len(out.Letters), out.Total)
	return out, nil
}

// page answers a page of a held folder; of the archive, only its count.
func (r *Reader) page(p Page) PageOf {
	out := PageOf{Page: p, Letters: []Letter{}}
	part := r.parts[p.Mailbox]
	if part == nil {
		return out
	}
	if p.State == mailbox.StateDone {
		out.Total = part.done()
		return out
	}
	all := part.list(p.State)
	out.Total = len(all)
	if p.Offset < len(all) {
		out.Letters = append(out.Letters, first(all[p.Offset:], p.Limit)...)
	}
	out.Next = nextOffset(p, len(out.Letters), out.Total)
	return out
}

func nextOffset(p Page, got, total int) int {
	if got > 0 && p.Offset+got < total {
		return p.Offset + got
	}
	return 0
}
