package cursor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/agentctl/agentctl/internal/sizecap"
	acp "github.com/coder/acp-go-sdk"
)

// acpTurn is what the agent's calls and updates are measured against
// while a turn lasts.
type acpTurn struct {
	t       Turn
	ctx     context.Context // the turn's: a permission waits no longer
	session string

	mu    sync.Mutex
	reply strings.Builder
	tools map[string]string // tool call id → title
	// failed is why the turn cannot be trusted whatever the agent says:
	// a permission nobody could judge.
	failed error
	// refused are the tools the agent was refused, which may be why it
	// stopped (Codex ends its turn, cancelled, when refused).
	refused []string
	// afterLoad: the turn is the first in a session this agent loaded,
	// whose replay may run into it; toolSeen: the agent has called a
	// tool in it (Claude's adapter sends the user's side of a tool's
	// result as user_message_chunk too): one pending or under way, or
	// any update of one.
	afterLoad, toolSeen bool
}

func (at *acpTurn) progress(kind, text string) {
	if at.t.OnProgress != nil {
		at.t.OnProgress(Progress{Kind: kind, Text: text})
	}
}

func (at *acpTurn) fail(err error) {
	at.mu.Lock()
	defer at.mu.Unlock()
	if at.failed == nil {
		at.failed = err
	}
}

// acpClient serves the agent's side of the protocol: the updates of the
// turn under way, its permission requests, and the files of the seat's
// folder. Terminals are not offered (clientCapabilities says so), and
// asked for anyway they are refused.
type acpClient struct {
	d *ACP
}

var _ acp.Client = acpClient{}

// current is the turn the agent's call belongs to, nil if none: updates
// replayed by session/load, or late ones of a turn that ended, belong to
// no turn.
func (c acpClient) current(session acp.SessionId) *acpTurn {
	at := c.d.turn.Load()
	if at == nil || at.session != string(session) {
		return nil
	}
	return at
}

func (c acpClient) SessionUpdate(_ context.Context, n acp.SessionNotification) error {
	at := c.current(n.SessionId)
	if at == nil {
		c.d.idleUpdate.Store(time.Now().UnixNano())
		return nil
	}
	u := n.Update
	switch {
	case u.UserMessageChunk != nil:
		// Early in the first turn after a load, only the replay of the
		// history says what the user said, and the reply's chunks so far,
		// and the history's last reply still to come, may be the
		// history's. The turn's own prompt, echoed, is not the history.
		at.mu.Lock()
		early := at.afterLoad && !at.toolSeen
		at.mu.Unlock()
		if b := u.UserMessageChunk.Content; early && b.Text != nil && !strings.Contains(at.t.Prompt, b.Text.Text) {
			at.fail(errReplayInTurn)
		}
	case u.AgentMessageChunk != nil:
		b := u.AgentMessageChunk.Content
		if b.Text == nil {
			at.t.note("the agent's reply held a part that is not text (%s), which the reply leaves out", blockKind(b))
			return nil
		}
		at.mu.Lock()
		at.reply.WriteString(b.Text.Text)
		at.mu.Unlock()
		if b.Text.Text != "" {
			at.progress("message", b.Text.Text)
		}
	case u.AgentThoughtChunk != nil:
		if b := u.AgentThoughtChunk.Content; b.Text != nil {
			at.progress("thought", b.Text.Text)
		}
	case u.ToolCall != nil:
		tc := u.ToolCall
		at.mu.Lock()
		// A replay tells of its tool calls as ended; the turn's own begin
		// pending or under way.
		at.toolSeen = at.toolSeen || (tc.Status != acp.ToolCallStatusCompleted && tc.Status != acp.ToolCallStatusFailed)
		if at.tools == nil {
			at.tools = map[string]string{}
		}
		at.tools[string(tc.ToolCallId)] = tc.Title
		at.mu.Unlock()
		at.progress("tool", strings.TrimSpace(fmt.Sprintf("%s %s", tc.Title, orPending(string(tc.Status)))))
	case u.ToolCallUpdate != nil:
		tu := u.ToolCallUpdate
		at.mu.Lock()
		// Gemini's replay tells of each tool call once, ended, with no
		// update. (Claude's adapter replays tool calls pending, then
		// updated, but ends its replay before it answers session/load.)
		at.toolSeen = true
		title := at.tools[string(tu.ToolCallId)]
		if tu.Title != nil {
			title = *tu.Title
			if at.tools == nil {
				at.tools = map[string]string{}
			}
			at.tools[string(tu.ToolCallId)] = title
		}
		at.mu.Unlock()
		if tu.Status != nil {
			at.progress("tool", title+" "+string(*tu.Status))
		}
	case u.Plan != nil:
		var steps []string
		for _, e := range u.Plan.Entries {
			steps = append(steps, fmt.Sprintf("[%s] %s", e.Status, e.Content))
		}
		at.progress("plan", strings.Join(steps, "; "))
	}
	return nil
}

// errReplayInTurn: the replay of a loaded session went on into the turn
// (a session/load answered before its replay ended, and a pause in that
// longer than acpReplayQuiet).
var errReplayInTurn = errors.New("the agent was still replaying its session's history (session/load) when the prompt went, so the reply cannot be told from the history; its session holds the prompt")

func orPending(s string) string {
	if s == "" {
		return "pending"
	}
	return s
}

func blockKind(b acp.ContentBlock) string {
	switch {
	case b.Image != nil:
		return "an image"
	case b.Audio != nil:
		return "audio"
	case b.ResourceLink != nil:
		return "a resource link"
	case b.Resource != nil:
		return "a resource"
	}
	return "unknown"
}

// RequestPermission asks the runner, and answers cancelled when the turn
// is being cancelled, as the protocol asks, or when nobody could judge.
func (c acpClient) RequestPermission(ctx context.Context, p acp.RequestPermissionRequest) (acp.RequestPermissionResponse, error) {
	cancelled := acp.RequestPermissionResponse{Outcome: acp.NewRequestPermissionOutcomeCancelled()}
	at := c.current(p.SessionId)
	if at == nil {
		return cancelled, nil
	}
	req := permissionRequest(p)
	wait, stop := context.WithCancel(at.ctx)
	defer stop()
	defer context.AfterFunc(ctx, stop)()
	at.progress("permission", "asks to run "+req.Title)
	v, err := at.t.askPermission(wait, req)
	if err != nil {
		if wait.Err() == nil {
			at.fail(err)
		}
		return cancelled, nil
	}
	id, ok := chooseOption(req.Options, v)
	verdict := "refused"
	if v.Allow {
		verdict = "allowed"
	}
	if !ok {
		at.t.note("the agent asked to run %q and it was %s, but the agent offered no option saying so; the request was answered cancelled", req.Title, verdict)
		return cancelled, nil
	}
	if !v.Allow {
		at.mu.Lock()
		at.refused = append(at.refused, req.Title)
		at.mu.Unlock()
	}
	at.progress("permission", fmt.Sprintf("%s %s: %s", verdict, req.Title, v.Reason))
	return acp.RequestPermissionResponse{Outcome: acp.NewRequestPermissionOutcomeSelected(acp.PermissionOptionId(id))}, nil
}

// maxPermissionInput bounds the raw input a permission request carries to
// the runner.
const maxPermissionInput = 4096

func permissionRequest(p acp.RequestPermissionRequest) PermissionRequest {
	tc := p.ToolCall
	req := PermissionRequest{ToolCall: string(tc.ToolCallId)}
	if tc.Title != nil {
		req.Title = *tc.Title
	}
	if req.Title == "" {
		req.Title = "tool call " + req.ToolCall
	}
	if tc.Kind != nil {
		req.Kind = string(*tc.Kind)
	}
	if tc.RawInput != nil {
		if data, err := json.Marshal(tc.RawInput); err == nil {
			req.Input = string(data)
			if len(req.Input) > maxPermissionInput {
				req.Input = req.Input[:maxPermissionInput] + "…"
			}
		}
	}
	for _, l := range tc.Locations {
		req.Locations = append(req.Locations, l.Path)
	}
	for _, o := range p.Options {
		req.Options = append(req.Options, PermissionOption{ID: string(o.OptionId), Name: o.Name, Kind: string(o.Kind)})
	}
	return req
}

func (c acpClient) ReadTextFile(_ context.Context, p acp.ReadTextFileRequest) (acp.ReadTextFileResponse, error) {
	path, err := insideDir(c.d.dir, p.Path)
	if err != nil {
		return acp.ReadTextFileResponse{}, acp.NewInvalidParams(map[string]any{"error": err.Error()})
	}
	data, err := sizecap.ReadFile(path)
	if err != nil {
		return acp.ReadTextFileResponse{}, acp.NewInternalError(map[string]any{"error": err.Error()})
	}
	line, limit := 0, 0
	if p.Line != nil {
		line = *p.Line
	}
	if p.Limit != nil {
		limit = *p.Limit
	}
	return acp.ReadTextFileResponse{Content: readLines(string(data), line, limit)}, nil
}

func (c acpClient) WriteTextFile(_ context.Context, p acp.WriteTextFileRequest) (acp.WriteTextFileResponse, error) {
	if err := writeFileIn(c.d.dir, p.Path, p.Content); err != nil {
		return acp.WriteTextFileResponse{}, acp.NewInvalidParams(map[string]any{"error": err.Error()})
	}
	return acp.WriteTextFileResponse{}, nil
}

func noTerminal(method string) error { return acp.NewMethodNotFound(method) }

func (acpClient) CreateTerminal(context.Context, acp.CreateTerminalRequest) (acp.CreateTerminalResponse, error) {
	return acp.CreateTerminalResponse{}, noTerminal(acp.ClientMethodTerminalCreate)
}

func (acpClient) KillTerminal(context.Context, acp.KillTerminalRequest) (acp.KillTerminalResponse, error) {
	return acp.KillTerminalResponse{}, noTerminal(acp.ClientMethodTerminalKill)
}

func (acpClient) TerminalOutput(context.Context, acp.TerminalOutputRequest) (acp.TerminalOutputResponse, error) {
	return acp.TerminalOutputResponse{}, noTerminal(acp.ClientMethodTerminalOutput)
}

func (acpClient) ReleaseTerminal(context.Context, acp.ReleaseTerminalRequest) (acp.ReleaseTerminalResponse, error) {
	return acp.ReleaseTerminalResponse{}, noTerminal(acp.ClientMethodTerminalRelease)
}

func (acpClient) WaitForTerminalExit(context.Context, acp.WaitForTerminalExitRequest) (acp.WaitForTerminalExitResponse, error) {
	return acp.WaitForTerminalExitResponse{}, noTerminal(acp.ClientMethodTerminalWaitForExit)
}
