package mcp

import (
	"context"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentctl/agentctl/agents/missioncontrol"
	"github.com/agentctl/agentctl/internal/clock"
)

// StatusIn takes nothing.
type StatusIn struct{}

// StatusOut is every agent's and person's row, as 'agentctl status' shows.
type StatusOut struct {
	Agents   []AgentStatus  `json:"agents"`
	People   []PersonStatus `json:"people"`
	Problems []string       `json:"problems,omitempty" jsonschema:"what could not be read: a mailbox, a heartbeat, a board"`
}

// AgentStatus is one agent's runner and queue.
type AgentStatus struct {
	Agent      string     `json:"agent"`
	Runner     string     `json:"runner" jsonschema:"running, stopped, gone (its heartbeat names a dead process) or elsewhere (another machine's)"`
	State      string     `json:"state" jsonschema:"what the runner says it does: idle, working, rate-limited, stopped; - when none ever ran"`
	Current    string     `json:"current,omitempty" jsonschema:"id of the message being worked on"`
	Subject    string     `json:"subject,omitempty"`
	Since      *time.Time `json:"since,omitempty"`
	Stalled    bool       `json:"stalled,omitempty" jsonschema:"the turn has run longer than recovery.stall_after while messages wait"`
	Waiting    string     `json:"waiting,omitempty" jsonschema:"what the runner waits for, such as a lock another process holds"`
	Pending    int        `json:"pending"`
	Processing int        `json:"processing"`
	Done       int        `json:"done"`
	Dead       int        `json:"dead"`
	Problem    string     `json:"problem,omitempty"`
}

// PersonStatus is a person's mailbox: how many messages wait for them.
type PersonStatus struct {
	Person  string `json:"person"`
	Waiting int    `json:"waiting"`
}

func (t *tools) addStatus(s *sdk.Server) {
	sdk.AddTool(s, &sdk.Tool{Name: "status", Description: "Show every agent's runner and mailbox counts and what waits for people, as 'agentctl status' does. Changes nothing."}, t.statusTool)
}

func (t *tools) statusTool(ctx context.Context, _ *sdk.CallToolRequest, _ StatusIn) (*sdk.CallToolResult, StatusOut, error) {
	snap := missioncontrol.NewReader(t.rt.Root, t.status).Read(missioncontrol.Changed{All: true}, clock.Or(t.rt.Clock).Now())
	out := StatusOut{Agents: []AgentStatus{}, People: []PersonStatus{}, Problems: snap.Problems}
	for _, a := range snap.Agents {
		out.Agents = append(out.Agents, AgentStatus{Agent: a.Name, Runner: a.Runner.Runner, State: a.State, Current: a.Current,
			Subject: a.Subject, Since: a.Since, Stalled: a.Stalled, Waiting: a.Waiting,
			Pending: a.Pending, Processing: a.Processing, Done: a.Done, Dead: a.Dead, Problem: a.Problem})
	}
	for _, p := range snap.People {
		out.People = append(out.People, PersonStatus{Person: p.Name, Waiting: len(p.Waiting)})
		if p.Problem != "" {
			out.Problems = append(out.Problems, p.Name+": "+p.Problem)
		}
	}
	return nil, out, nil
}
