package mcp

import (
	"context"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// DevlogAppendIn is what devlog_append takes: the note only, since the
// devlog is the caller's.
type DevlogAppendIn struct {
	Text string `json:"text" jsonschema:"the note to add to your devlog"`
}

// DevlogAppendOut says where the note went.
type DevlogAppendOut struct {
	Path string `json:"path" jsonschema:"your devlog file"`
}

func (t *tools) addDevlogAppend(s *sdk.Server) {
	sdk.AddTool(s, &sdk.Tool{Name: "devlog_append", Description: "Add a note to your own devlog, as 'agentctl devlog' does: one entry in a single append."}, t.devlogAppend)
}

func (t *tools) devlogAppend(ctx context.Context, _ *sdk.CallToolRequest, in DevlogAppendIn) (*sdk.CallToolResult, DevlogAppendOut, error) {
	n, err := t.rt.Note(t.as, t.as, in.Text)
	return nil, DevlogAppendOut{Path: n.Path}, toolError(err)
}
