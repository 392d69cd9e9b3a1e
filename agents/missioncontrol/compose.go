package missioncontrol

import (
	"sort"
	"strings"

	"github.com/agentctl/agentctl/agents/receipt"
	"github.com/agentctl/agentctl/mailbox"
)

func letter(mailboxName string, e mailbox.Entry) Letter {
	m := e.Message
	l := Letter{
		Mailbox: mailboxName, ID: m.ID, Ref: m.ID, From: m.From, To: m.To, Type: m.Type, Priority: string(m.Priority),
		Subject: m.Subject, Body: oneLine(m.Body, 2000), TaskID: m.TaskID, ThreadID: m.ThreadID, ReplyTo: m.ReplyTo,
		State: e.State, Reason: e.Reason, CreatedAt: m.CreatedAt, file: e.File,
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
		// Data that cannot be read shows no notes; the letter still shows.
		d, _ := receipt.Read(r)
		for _, n := range d.DriverNotes {
			l.Notes = append(l.Notes, oneLine(n, 200))
		}
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
			seen := map[string]bool{}
			for _, l := range ls {
				if !seen[l.ID] { // a message found twice, e.g. archived and dead after a mishap
					seen[l.ID] = true
					l.Body = ""
					t.Messages = append(t.Messages, l)
				}
			}
			out[i].Tasks[j] = t
		}
	}
	return out
}
