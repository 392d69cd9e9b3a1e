package mcp

import (
	"context"
	"slices"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentctl/agentctl/projectboard"
)

// BoardSetIn is what board_set takes.
type BoardSetIn struct {
	ID  string            `json:"id" jsonschema:"the task id, such as T-3"`
	Set map[string]string `json:"set" jsonschema:"the keys to change and their new values: status (todo, in_progress, review, blocked, done), owner (an agent, or empty to unassign), title, priority, notes, depends_on (comma-separated ids)"`
}

// BoardSetOut is the task as changed.
type BoardSetOut struct {
	Task projectboard.Task `json:"task"`
}

func (t *tools) addBoardSet(s *sdk.Server) {
	sdk.AddTool(s, &sdk.Tool{Name: "board_set", Description: "Change a task's status, owner, title, priority, notes or depends_on, as 'agentctl board set ID key=value...' does: every value is checked before a board is touched."}, t.boardSet)
}

func (t *tools) boardSet(ctx context.Context, _ *sdk.CallToolRequest, in BoardSetIn) (*sdk.CallToolResult, BoardSetOut, error) {
	kvs := make([]string, 0, len(in.Set))
	for k, v := range in.Set {
		kvs = append(kvs, k+"="+v)
	}
	slices.Sort(kvs) // the order a map gives is no order at all
	task, err := t.board.SetTask(ctx, in.ID, kvs)
	return nil, BoardSetOut{Task: task}, toolError(err)
}
