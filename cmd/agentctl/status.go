package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"text/tabwriter"
	"time"

	"agentctl/internal/process"
	"agentctl/mailbox"
)

const statusUsage = `
Usage: agentctl status [--json]

Shows one row per configured agent: whether its runner is alive (the pid
in its heartbeat is checked, not just read), what it is doing, how many
messages wait, are in flight, are done or dead, and how old its heartbeat
is.

Examples:
  agentctl status
  watch -n 2 agentctl status
  agentctl status --json | jq '.[] | select(.dead > 0) | .agent'
`

// agentStatus is one row of the status table.
type agentStatus struct {
	Agent        string     `json:"agent"`
	Runner       string     `json:"runner"` // running, stopped, or gone (heartbeat of a dead pid)
	PID          int        `json:"pid,omitempty"`
	State        string     `json:"state"`
	Current      string     `json:"current,omitempty"`
	Pending      int        `json:"pending"`
	Processing   int        `json:"processing"`
	Done         int        `json:"done"`
	Dead         int        `json:"dead"`
	Heartbeat    *time.Time `json:"heartbeat,omitempty"`
	HeartbeatAge string     `json:"heartbeat_age,omitempty"`
}

func runStatus(ctx context.Context, env *Env, args []string) error {
	fs := newFlagSet(env, "status", statusUsage)
	asJSON := fs.Bool("json", false, "print a JSON array")
	rest, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if err := wantArgs(fs, rest, 0, 0, "no arguments"); err != nil {
		return err
	}
	cfg, err := loadConfig(env)
	if err != nil {
		return err
	}
	now := time.Now()
	host, _ := os.Hostname()
	rows := []agentStatus{}
	for _, name := range cfg.AgentNames() {
		mb, err := openMailbox(env, cfg, name)
		if err != nil {
			return err
		}
		row, err := readAgentStatus(mb, host, now)
		if err != nil {
			return err
		}
		rows = append(rows, row)
	}
	if *asJSON {
		enc := json.NewEncoder(env.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(rows)
	}
	tw := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "AGENT\tRUNNER\tSTATE\tPENDING\tPROCESSING\tDONE\tDEAD\tHEARTBEAT")
	for _, r := range rows {
		runner := r.Runner
		if r.PID > 0 {
			runner = fmt.Sprintf("%s (pid %d)", r.Runner, r.PID)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%d\t%d\t%s\n", r.Agent, runner, r.State, r.Pending, r.Processing, r.Done, r.Dead, dash(r.HeartbeatAge))
	}
	return tw.Flush()
}

func readAgentStatus(mb *mailbox.Mailbox, host string, now time.Time) (agentStatus, error) {
	row := agentStatus{Agent: mb.Agent, Runner: "stopped", State: "-"}
	counts, err := mb.Count()
	if err != nil {
		return row, err
	}
	row.Pending, row.Processing, row.Done, row.Dead = counts.Pending, counts.Processing, counts.Done, counts.Dead
	st, err := mb.ReadStatus()
	if errors.Is(err, fs.ErrNotExist) {
		return row, nil
	}
	if err != nil {
		return row, err
	}
	updated := st.UpdatedAt
	row.Heartbeat = &updated
	row.HeartbeatAge = now.Sub(st.UpdatedAt).Round(time.Second).String()
	switch {
	case st.Host != "" && st.Host != host:
		row.Runner, row.PID, row.State = "elsewhere", st.PID, st.State // on another machine: trust the heartbeat age
	case process.Alive(st.PID) && st.State != "stopped":
		row.Runner, row.PID, row.State, row.Current = "running", st.PID, st.State, st.Current
	case st.State == "stopped":
		row.State = "stopped"
	default:
		row.Runner, row.PID, row.State = "gone", st.PID, st.State+" (pid gone)"
	}
	return row, nil
}
