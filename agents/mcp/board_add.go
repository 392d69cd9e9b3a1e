package mcp

import (
	"context"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentctl/agentctl/agents/actions"
	"github.com/agentctl/agentctl/projectboard"
)

// BoardAddIn is what board_add takes.
type BoardAddIn struct {
	Title    string `json:"title" jsonschema:"what the task is"`
	Owner    string `json:"owner,omitempty" jsonschema:"agent who owns the task; unassigned when omitted"`
	Priority string `json:"priority,omitempty" jsonschema:"priority, such as high or 2"`
	Status   string `json:"status,omitempty" jsonschema:"todo, in_progress, review, blocked or done; todo when omitted"`
	Board    string `json:"board,omitempty" jsonschema:"board file in project_board/; the only board, or board.yaml, when omitted"`
	ID       string `json:"id,omitempty" jsonschema:"task id; the next free T-N when omitted"`
	New      bool   `json:"new,omitempty" jsonschema:"start the named board if it does not exist; otherwise a board not there is refused"`
}

// BoardAddOut is the task added.
type BoardAddOut struct {
	Task projectboard.Task `json:"task"`
}

func (t *tools) addBoardAdd(s *sdk.Server) {
	sdk.AddTool(s, &sdk.Tool{Name: "board_add", Description: "Add a task to a board, as 'agentctl board add' does: only its lines are written, under the boards lock."}, t.boardAdd)
}

func (t *tools) boardAdd(ctx context.Context, _ *sdk.CallToolRequest, in BoardAddIn) (*sdk.CallToolResult, BoardAddOut, error) {
	task, err := t.board.AddTask(ctx, actions.NewTask{Title: in.Title, Owner: in.Owner, Priority: in.Priority, Status: in.Status, Board: in.Board, ID: in.ID, New: in.New})
	return nil, BoardAddOut{Task: task}, toolError(err)
}
