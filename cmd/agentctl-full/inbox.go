package main

import (
	"context"
	"encoding/json"
	"fmt"
	"path"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/agentctl/agentctl/agents/receipt"
	"github.com/agentctl/agentctl/cmd/internal/cli"
	"github.com/agentctl/agentctl/mailbox"
)

const inboxUsage = `
Usage: agentctl inbox NAME [--state pending|processing|done|dead|all] [--json]

Lists an agent's or a person's messages without changing anything. Pending
messages include those still waiting inside inbox.json, in the order they
will be processed; the other states are listed newest first. Dead letters
show the reason they could not be used; one that could not be read at all
is listed by its file name, which retry and drop accept as well as an id.
Done messages show how they ended: done; done with errors (part of the
reply refused or waiting for a board); done without block (the prompt
asked for an agentctl block and the reply had none, so nothing it meant
was done); waiting for approval; or what settled them (answered, …).
--json adds the reasons and the driver's notes on how the reply was read.

A person's inbox (human by default) holds what agents and runners send
back: receipts, notices of dead letters and stalls, and questions, which
'agentctl reply ID TEXT' answers.

Examples:
  agentctl inbox Agent-3
  agentctl inbox human
  agentctl inbox Agent-3 --state dead
  agentctl inbox Agent-3 --state all --json | jq -r '.[] | [.state, .id] | @tsv'
`

// inboxItem is one message in --json output.
type inboxItem struct {
	ID        string    `json:"id"`
	From      string    `json:"from"`
	To        string    `json:"to"`
	Type      string    `json:"type"`
	Priority  string    `json:"priority"`
	Subject   string    `json:"subject"`
	Body      string    `json:"body"`
	CreatedAt time.Time `json:"created_at"`
	State     string    `json:"state"`
	File      string    `json:"file"`
	TaskID    string    `json:"task_id,omitempty"`
	ReplyTo   string    `json:"reply_to,omitempty"`
	Attempts  int       `json:"attempts,omitempty"`
	LastError string    `json:"last_error,omitempty"`
	Problem   string    `json:"problem,omitempty"`
	Reason    string    `json:"reason,omitempty"`
	Reply     string    `json:"reply,omitempty"`
	// Outcome is how a done message ended: "done", "done with errors"
	// when part of what its reply asked for was refused or has to wait,
	// "done without block" when the reply had no agentctl block though
	// its prompt asked for one (NoBlock says so), "waiting for approval"
	// when part of it waits for a person, or what settled it ("answered",
	// "approved", "denied", …).
	Outcome string   `json:"outcome,omitempty"`
	Errors  []string `json:"errors,omitempty"`
	NoBlock string   `json:"no_block,omitempty"`
	// DriverNotes are what the driver said of the turn that a reader must
	// know to trust the reply, such as a reply read from the rendering.
	DriverNotes []string `json:"driver_notes,omitempty"`
	// Fallbacks are the fields of an old-format message that could not be
	// read as written ("priority: unknown priority \"Agent-7\" ..."); meta
	// keeps the originals.
	Fallbacks []string       `json:"fallbacks,omitempty"`
	Meta      map[string]any `json:"meta,omitempty"`
}

func runInbox(ctx context.Context, env *cli.Env, args []string) error {
	fs := cli.NewFlagSet(env, "inbox", inboxUsage)
	state := fs.String("state", mailbox.StatePending, "`state` to list: pending, processing, done, dead or all")
	asJSON := fs.Bool("json", false, "print a JSON array")
	rest, err := cli.ParseArgs(fs, args)
	if err != nil {
		return err
	}
	if err := cli.WantArgs(fs, rest, 1, 1, "one agent or person"); err != nil {
		return err
	}
	states := []string{*state}
	if *state == "all" {
		states = mailbox.States
	} else if !contains(mailbox.States, *state) {
		return cli.UsageError{Msg: fmt.Sprintf("--state %q: want pending, processing, done, dead or all", *state)}
	}
	cfg, err := cli.LoadConfig(env)
	if err != nil {
		return err
	}
	mb, err := cli.OpenMailbox(env, cfg, rest[0])
	if err != nil {
		return err
	}
	items := []inboxItem{}
	for _, s := range states {
		entries, err := mb.List(s)
		if err != nil {
			return err
		}
		for _, e := range entries {
			items = append(items, toItem(e))
		}
	}
	if *asJSON {
		enc := json.NewEncoder(env.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(items)
	}
	if len(items) == 0 {
		fmt.Fprintf(env.Stdout, "no %s messages for %s\n", strings.Join(states, "/"), mb.Agent)
		return nil
	}
	tw := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "STATE\tPRIORITY\tCREATED\tFROM\tID\tSUBJECT")
	for _, it := range items {
		subject := it.Subject
		if subject == "" {
			subject = firstLine(it.Body)
		}
		if it.Reason != "" {
			subject = "(" + it.Reason + ")"
		} else if it.Problem != "" {
			subject = "(" + it.Problem + ")"
		}
		state := it.State
		if it.Outcome != "" && it.Outcome != state {
			state = it.Outcome
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", state, cli.Dash(it.Priority), it.CreatedAt.Local().Format("2006-01-02 15:04"),
			cli.Dash(it.From), refOf(it), clipText(subject, 60))
	}
	return tw.Flush()
}

func toItem(e mailbox.Entry) inboxItem {
	m := e.Message
	it := inboxItem{
		ID: m.ID, From: m.From, To: m.To, Type: m.Type, Priority: string(m.Priority), Subject: m.Subject,
		Body: m.Body, CreatedAt: m.CreatedAt, State: e.State, File: e.File, TaskID: m.TaskID, ReplyTo: m.ReplyTo,
		Attempts: m.Attempts, LastError: m.LastError, Problem: e.Problem, Reason: e.Reason,
		Fallbacks: mailbox.Fallbacks(m),
	}
	if len(m.Meta) > 0 {
		it.Meta = m.Meta
	}
	if e.Receipt != nil {
		it.Reply = e.Receipt.Reply
		it.Attempts = e.Receipt.Attempts
		it.Outcome = e.Receipt.Outcome
		// What of the data cannot be read is left out of the listing, as
		// before: the rest of the receipt still tells how it went.
		d, _ := receipt.Read(e.Receipt)
		it.Errors, it.DriverNotes, it.NoBlock = d.Errors, d.DriverNotes, d.NoBlock
	}
	return it
}

// refOf is how the other commands can name a message: its id, or for a
// file that never decoded, the file's name.
func refOf(it inboxItem) string {
	if it.ID != "" {
		return it.ID
	}
	return path.Base(it.File)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}

func clipText(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
