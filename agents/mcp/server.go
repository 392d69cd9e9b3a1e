package mcp

import (
	"fmt"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentctl/agentctl/agents/actions"
	"github.com/agentctl/agentctl/agents/missioncontrol"
	"github.com/agentctl/agentctl/internal/clock"
	"github.com/agentctl/agentctl/internal/layout"
	"github.com/agentctl/agentctl/projectboard"
)

// Options are what the server needs: the runtime it changes, who it
// speaks for, and how mission control reads the runtime for status.
type Options struct {
	Runtime actions.Runtime
	// As is the agent every tool acts for.
	As string
	// Status are mission control's settings, for the status tool.
	Status missioncontrol.Settings
	// Version is the server's version, as the client sees it.
	Version string
	// KeyLifetime is how long an idempotency key is kept; KeyLifetime (the
	// package's) when zero.
	KeyLifetime time.Duration
}

// New makes the server of opts.As, or says why that agent cannot have one:
// it must be one of the runtime's agents, as the other commands check.
func New(opts Options) (*sdk.Server, error) {
	as, err := opts.Runtime.ResolveAgent(opts.As)
	if err != nil {
		return nil, err
	}
	if opts.KeyLifetime <= 0 {
		opts.KeyLifetime = KeyLifetime
	}
	c := clock.Or(opts.Runtime.Clock)
	me := layout.MustFor(opts.Runtime.Root, as)
	t := &tools{
		rt: opts.Runtime, as: as, status: opts.Status,
		board: actions.Board{Store: &projectboard.Store{Root: opts.Runtime.Root, Clock: c}, Agents: func() ([]string, error) {
			return opts.Runtime.Config.AgentNames(), nil
		}},
		keys: &keyStore{dir: me.SendKeys(), lock: me.SendKeysLock(), lifetime: opts.KeyLifetime, Clock: c},
	}
	s := sdk.NewServer(&sdk.Implementation{Name: "agentctl", Title: "agentctl as " + as, Version: opts.Version},
		&sdk.ServerOptions{Instructions: fmt.Sprintf(instructions, as)})
	for _, add := range []func(*sdk.Server){
		t.addSend, t.addInbox, t.addAnswer, t.addReplyHuman,
		t.addBoardGet, t.addBoardAdd, t.addBoardSet, t.addDevlogAppend, t.addStatus,
	} {
		add(s)
	}
	return s, nil
}

const instructions = `These tools act for %[1]s in an agentctl swarm: messages you send are from
%[1]s, the inbox is %[1]s's, and devlog notes go into %[1]s's devlog. Use inbox
to read what waits for you, answer to reply to one of your messages in its
thread, send to write to another agent (give an idempotency_key so that a
retried call delivers once), reply_human to write to the person in the loop,
board_get, board_add and board_set for the task boards, and status to see
every agent's runner and queue.`

// tools are the tools of one server, acting for agent as.
type tools struct {
	rt     actions.Runtime
	as     string
	status missioncontrol.Settings
	board  actions.Board
	keys   *keyStore
}
