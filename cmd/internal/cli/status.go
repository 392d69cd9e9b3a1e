package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/agentctl/agentctl/agents/cost"
	"github.com/agentctl/agentctl/agents/missioncontrol/verdict"
	"github.com/agentctl/agentctl/config"
	"github.com/agentctl/agentctl/cursor/lockholder"
	"github.com/agentctl/agentctl/internal/layout"
	"github.com/agentctl/agentctl/internal/process"
	"github.com/agentctl/agentctl/mailbox"
)

const statusUsage = `
Usage: agentctl status [--json]

Shows one row per configured agent, then one per person: whether its runner
is alive (the pid in its heartbeat is checked, not just read), what it is
doing, how many messages wait, are in flight, are done or dead, and how old
its heartbeat is; DONE also says how many of them the running runner
finished "with errors" (part of a reply refused or waiting for a board) and
"without block" (the prompt asked for an agentctl block, the reply had
none, so nothing it meant was done), and how many turns in a row lately
ended without the block.
A runner working on one message for longer than
recovery.stall_after shows as stalled with the turn's age, and what a
runner waits for (a lock another process holds) is shown with its state.
The last lines say who holds the desktop input lock, if anyone does.

Once a turn today (UTC) has reported what it used (runtime/costs/), a TODAY
column shows what each agent spent: dollars where a price is known (the
agent's own or costs.prices), else tokens; a line below gives the swarm's
total and its budget (costs.budget). A seat whose budget is spent shows as
budget-spent and takes no prompt until the next UTC day.

With agents on other machines (agents[].machine, see 'agentctl hub'), a
SEAT column says where each remote agent's turns are taken and how the hub
last heard that seat (hub/seats.json): present and idle or working, absent
since its last beat, or never heard; a hint line says what to start where.
Their RUNNER is the hub's runner here.

A mailbox that is missing or cannot be read gets a row saying so; the other
rows are still shown, and status exits non-zero.

Examples:
  agentctl status
  watch -n 2 agentctl status
  agentctl status --json | jq '.[] | select(.dead > 0) | .agent'
`

// agentStatus is one row of the status table.
type agentStatus struct {
	Agent      string     `json:"agent"`
	Runner     string     `json:"runner"` // running, stopped, gone (heartbeat of a process that ended), elsewhere, person, or -
	PID        int        `json:"pid,omitempty"`
	State      string     `json:"state"`
	Current    string     `json:"current,omitempty"`
	Since      *time.Time `json:"since,omitempty"`
	TurnAge    string     `json:"turn_age,omitempty"`
	Stalled    bool       `json:"stalled,omitempty"`
	Silent     string     `json:"silent,omitempty"` // a runner up whose heartbeat is older than recovery.stale_after
	Waiting    string     `json:"waiting,omitempty"`
	InputLock  string     `json:"input_lock,omitempty"` // the desktop lock this agent's process holds
	Pending    int        `json:"pending"`
	Processing int        `json:"processing"`
	Done       int        `json:"done"`
	// DoneWithErrors counts the messages the running runner finished with
	// part of their reply refused or waiting (agentctl inbox --state done
	// lists them all).
	DoneWithErrors int `json:"done_with_errors,omitempty"`
	// DoneWithoutBlock counts those whose reply had no agentctl block
	// though the prompt asked for one; NoBlockRun how many turns in a row
	// lately ended so, across runners.
	DoneWithoutBlock int        `json:"done_without_block,omitempty"`
	NoBlockRun       int        `json:"no_block_run,omitempty"`
	Dead             int        `json:"dead"`
	Heartbeat        *time.Time `json:"heartbeat,omitempty"`
	HeartbeatAge     string     `json:"heartbeat_age,omitempty"`
	// Seat is where a remote agent's turns are taken (agentctl hub keeps
	// its runner here); absent for agents of this machine.
	Seat *seatStatus `json:"seat,omitempty"`
	// Today is what the agent's turns used today (UTC), from the cost
	// ledger; nil when none reported anything.
	Today   *cost.Totals `json:"today,omitempty"`
	Problem string       `json:"problem,omitempty"`
	Hint    string       `json:"hint,omitempty"`
}

// seatStatus is a remote agent's seat as the hub last heard it.
type seatStatus struct {
	Machine  string     `json:"machine"`
	Heard    bool       `json:"heard"`
	Present  bool       `json:"present"`
	State    string     `json:"state,omitempty"`
	LastBeat *time.Time `json:"last_beat,omitempty"`
	BeatAge  string     `json:"beat_age,omitempty"`
	// HubDown says the hub that keeps the record has stopped writing it:
	// whether the seat is there cannot be told.
	HubDown bool `json:"hub_down,omitempty"`
}

func runStatus(ctx context.Context, env *Env, args []string) error {
	fs := NewFlagSet(env, "status", statusUsage)
	asJSON := fs.Bool("json", false, "print a JSON array")
	rest, err := ParseArgs(fs, args)
	if err != nil {
		return err
	}
	if err := WantArgs(fs, rest, 0, 0, "no arguments"); err != nil {
		return err
	}
	cfg, err := LoadConfig(env)
	if err != nil {
		return err
	}
	now := time.Now()
	host, _ := os.Hostname()
	holders := lockholder.List(layout.Locks(env.Root))
	rows := []agentStatus{}
	var problems, hints []string
	day, costErr := cost.Day(env.Root, now)
	if costErr != nil {
		problems = append(problems, "costs: "+costErr.Error())
	}
	spent := cost.Sum(day)
	seats, seatsErr := readSeats(env, cfg)
	if seatsErr != nil {
		problems = append(problems, "seats: "+seatsErr.Error())
		hints = append(hints, layout.HubSeatsFile+" is rewritten by 'agentctl hub' every few seconds; if no hub runs, remove it")
	}
	for _, name := range cfg.MailboxNames() {
		row := mailboxStatus(env, cfg, name, host, now)
		if t, ok := spent.Agents[name]; ok {
			row.Today = &t
		}
		row.Seat = seatOf(cfg, seats, name, now)
		for _, h := range holders {
			if h.Agent == row.Agent {
				row.InputLock = h.Lock
			}
		}
		if row.Problem != "" {
			problems = append(problems, row.Agent+": "+row.Problem)
			if row.Hint != "" && !slices.Contains(hints, row.Hint) {
				hints = append(hints, row.Hint)
			}
		}
		rows = append(rows, row)
	}
	if *asJSON {
		enc := json.NewEncoder(env.Stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rows); err != nil {
			return err
		}
	} else if err := printStatus(env, rows, holders, now, len(cfg.RemoteAgents()) > 0); err != nil {
		return err
	} else {
		if line := swarmSpending(spent.Swarm, cfg.Costs.Budget); line != "" {
			fmt.Fprintln(env.Stdout, line)
		}
		for _, h := range seatHints(cfg, rows, seats, seatsErr == nil, now) {
			fmt.Fprintln(env.Stdout, "hint: "+h)
		}
	}
	if len(problems) > 0 {
		return WithHint(fmt.Errorf("status: %s", strings.Join(problems, "; ")), strings.Join(hints, "; "))
	}
	return nil
}

// printStatus prints the table; with remote agents it has a SEAT column.
func printStatus(env *Env, rows []agentStatus, holders []lockholder.Holder, now time.Time, remote bool) error {
	tw := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', 0)
	header := "AGENT\tRUNNER\tSTATE\tPENDING\tPROCESSING\tDONE\tDEAD\tHEARTBEAT"
	if remote {
		header += "\tSEAT"
	}
	costs := slices.ContainsFunc(rows, func(r agentStatus) bool { return r.Today != nil })
	if costs {
		header += "\tTODAY"
	}
	fmt.Fprintln(tw, header)
	for _, r := range rows {
		runner := r.Runner
		if r.PID > 0 {
			runner = fmt.Sprintf("%s (pid %d)", r.Runner, r.PID)
		}
		state := r.State
		if r.Stalled {
			state = fmt.Sprintf("stalled (turn %s)", r.TurnAge)
		}
		if r.Waiting != "" {
			state += ", waiting: " + r.Waiting
		}
		if r.Silent != "" {
			state += " (" + r.Silent + ")"
		}
		if r.Problem != "" {
			state = "broken (see below)"
		}
		done := fmt.Sprint(r.Done) + doneDetail(r)
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%s\t%d\t%s", r.Agent, runner, state, r.Pending, r.Processing, done, r.Dead, Dash(r.HeartbeatAge))
		if remote {
			fmt.Fprintf(tw, "\t%s", seatCell(r.Seat))
		}
		if costs {
			today := cost.Totals{}
			if r.Today != nil {
				today = *r.Today
			}
			fmt.Fprintf(tw, "\t%s", today.Brief())
		}
		fmt.Fprintln(tw)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, h := range holders {
		who := Dash(h.Agent)
		fmt.Fprintf(env.Stdout, "desktop input lock %s: held by %s (pid %d) for %s\n", h.Lock, who, h.PID, now.Sub(h.Since).Round(time.Second))
	}
	return nil
}

// mailboxStatus is one row; a mailbox that cannot be read gives a row with
// the problem rather than an error, so that one broken agent does not hide
// the others.
func mailboxStatus(env *Env, cfg config.Config, name, host string, now time.Time) agentStatus {
	mb, err := OpenMailbox(env, cfg, name)
	if err != nil {
		return agentStatus{Agent: name, Runner: "-", State: "-", Problem: err.Error(), Hint: HintOf(err)}
	}
	row, err := readAgentStatus(mb, host, now, cfg.Recovery.StallAfter.D(), cfg.Recovery.StaleAfter.D())
	if err != nil {
		row.Problem = err.Error()
		row.Hint = "run 'agentctl init' to create the missing folders; it never destroys anything"
	}
	if cfg.IsPerson(name) {
		row.Runner = "person"
	}
	return row
}

// HintOf is the fix an error carries (its Hint), or "".
func HintOf(err error) string {
	var h interface{ Hint() string }
	if errors.As(err, &h) {
		return h.Hint()
	}
	return ""
}

func readAgentStatus(mb *mailbox.Mailbox, host string, now time.Time, stallAfter, staleAfter time.Duration) (agentStatus, error) {
	row := agentStatus{Agent: mb.Agent, Runner: "stopped", State: "-"}
	counts, err := mb.Count()
	if err != nil {
		return row, err
	}
	row.Pending, row.Processing, row.Done, row.Dead = counts.Pending, counts.Processing, counts.Done, counts.Dead
	st, err := mb.ReadStatus()
	r := verdict.Judge(st, err, host, now, stallAfter, staleAfter, process.Is)
	if r.StatusProblem != "" {
		row.Problem, row.Hint = r.StatusProblem, "status.json is the runner's heartbeat, rewritten every run.heartbeat (30s by default); if no runner is up, remove it"
		return row, nil
	}
	row.Runner, row.PID, row.State, row.Current, row.Waiting, row.Since, row.Stalled, row.Silent = r.Runner, r.PID, r.State, r.Current, r.Waiting, r.Since, r.Stalled, r.Silent
	if r.Heartbeat != nil {
		row.Heartbeat = r.Heartbeat
		row.HeartbeatAge = now.Sub(*r.Heartbeat).Round(time.Second).String()
	}
	if r.Since != nil && r.State == "working" {
		row.TurnAge = now.Sub(*r.Since).Round(time.Second).String()
	}
	row.DoneWithErrors, row.DoneWithoutBlock, row.NoBlockRun = r.DoneWithErrors, r.DoneWithoutBlock, r.NoBlockRun
	return row, nil
}

// doneDetail says, beside the DONE count, what did not end plainly done:
// " (2 with errors, 3 without block, last 3 in a row without block)".
func doneDetail(r agentStatus) string {
	var parts []string
	if r.DoneWithErrors > 0 {
		parts = append(parts, fmt.Sprintf("%d with errors", r.DoneWithErrors))
	}
	if r.DoneWithoutBlock > 0 {
		parts = append(parts, fmt.Sprintf("%d without block", r.DoneWithoutBlock))
	}
	if r.NoBlockRun > 1 {
		parts = append(parts, fmt.Sprintf("last %d in a row without block", r.NoBlockRun))
	}
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, ", ") + ")"
}

// Dash stands in for an empty cell or value.
func Dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
