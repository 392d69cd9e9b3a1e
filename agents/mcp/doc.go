// Package mcp owns `agentctl mcp`: the mailbox, the boards and the devlog
// of one agent as tools of a Model Context Protocol server, so that an
// agent running in Claude Code, Cursor, Codex or any MCP client reads and
// writes them itself.
//
// The server speaks for one agent, fixed when it starts and checked
// against the configured agents like every agent name: no tool takes a
// sender, so an agent cannot write as another. Each tool is one small file
// and makes its change through package actions, the same functions as the
// commands of the same names (send, reply, board add, board set, devlog),
// with their locks; status reads the runtime as mission control does. A
// tool's error is the sentence the command prints, with its hint line.
//
// Its only files of its own are a sender's idempotency keys, one per key
// under the folder internal/layout names (Agent.SendKeys): a send repeated
// with the same key delivers once and answers with the first delivery's
// ids, for KeyLifetime. Every other write is package actions': it never
// writes a message, a board or a devlog itself, and never starts a runner
// or a driver.
package mcp
