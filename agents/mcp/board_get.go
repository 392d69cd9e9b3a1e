package mcp

import (
	"context"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentctl/agentctl/agents/actions"
	"github.com/agentctl/agentctl/projectboard"
)

// BoardGetIn is what board_get takes: an id for one task, else filters.
type BoardGetIn struct {
	ID     string `json:"id,omitempty" jsonschema:"a task id such as T-3, to get that task only"`
	Status string `json:"status,omitempty" jsonschema:"only tasks with this status: todo, in_progress, review, blocked or done"`
	Owner  string `json:"owner,omitempty" jsonschema:"only tasks owned by this agent"`
}

// BoardGetOut is the tasks found.
type BoardGetOut struct {
	Tasks []projectboard.Task `json:"tasks" jsonschema:"the tasks, each with the board file and line it is on"`
}

func (t *tools) addBoardGet(s *sdk.Server) {
	sdk.AddTool(s, &sdk.Tool{Name: "board_get", Description: "Read the task boards: one task by id, or the tasks with a status and owner, as 'agentctl board show' and 'board list' do. Changes nothing."}, t.boardGet)
}

func (t *tools) boardGet(ctx context.Context, _ *sdk.CallToolRequest, in BoardGetIn) (*sdk.CallToolResult, BoardGetOut, error) {
	if in.ID != "" {
		task, err := t.board.Store.Find(in.ID)
		if err != nil {
			return nil, BoardGetOut{Tasks: []projectboard.Task{}}, toolError(actions.TaskError(err))
		}
		return nil, BoardGetOut{Tasks: []projectboard.Task{task}}, nil
	}
	tasks, err := t.board.Tasks(in.Status, in.Owner)
	if tasks == nil {
		tasks = []projectboard.Task{}
	}
	return nil, BoardGetOut{Tasks: tasks}, toolError(err)
}
