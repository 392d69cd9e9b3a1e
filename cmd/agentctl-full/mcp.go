package main

import (
	"context"
	"errors"
	"io"

	"github.com/agentctl/agentctl/agents/mcp"
	"github.com/agentctl/agentctl/cmd/internal/cli"
)

const mcpUsage = `
Usage: agentctl mcp --as AGENT

Serves the mailbox, the boards and the devlog of AGENT as the tools of a
Model Context Protocol server on standard input and output, for an agent
running in an MCP client (Claude Code, Cursor, Codex, ...). Every tool
acts for AGENT, which must be one of the runtime's agents: messages are
sent from it, the inbox and the devlog are its own, and no tool takes
another sender.

Tools: send (with an idempotency_key, a retried send delivers once; keys
are kept 7 days under <root>/mcp/AGENT/keys/), inbox, answer (a message
in AGENT's inbox, in its thread), reply_human, board_get, board_add,
board_set, devlog_append and status. They make their changes through the
same code as the commands of the same names; an error is the sentence the
command prints, with its hint.

The client starts the server; nothing is printed on standard output but
the protocol. It stops when the client closes its input.

Examples:
  claude mcp add agentctl -- agentctl mcp --as Agent-3
  agentctl --root /srv/swarm/runtime mcp --as Agent-2
  # in .cursor/mcp.json:
  #   {"mcpServers": {"agentctl": {"command": "agentctl", "args": ["mcp", "--as", "Agent-3"]}}}
`

func runMCP(ctx context.Context, env *cli.Env, args []string) error {
	fs := cli.NewFlagSet(env, "mcp", mcpUsage)
	as := fs.String("as", "", "the `agent` every tool acts for (required)")
	rest, err := cli.ParseArgs(fs, args)
	if err != nil {
		return err
	}
	if err := cli.WantArgs(fs, rest, 0, 0, "no arguments besides --as"); err != nil {
		return err
	}
	if *as == "" {
		return cli.UsageError{Msg: "mcp: --as is required", Fix: "name the agent the client works as, e.g. --as Agent-3"}
	}
	cfg, err := cli.LoadConfig(env)
	if err != nil {
		return err
	}
	s, err := mcp.New(mcp.Options{Runtime: cli.RuntimeOf(env, cfg), As: *as, Status: mcSettings(cfg), Version: cli.Version()})
	if err != nil {
		return err
	}
	err = s.Run(ctx, mcp.Stdio(ctx, env.Stdin, env.Stdout))
	if errors.Is(err, io.EOF) || errors.Is(err, context.Canceled) {
		return nil // the client closed its end, or the server was stopped
	}
	return err
}
