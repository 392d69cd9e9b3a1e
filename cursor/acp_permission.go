package cursor

import (
	"context"
	"fmt"
)

// PermissionRequest is what an ACP agent asks before it runs a tool
// (session/request_permission), as the runner's guardrails see it.
type PermissionRequest struct {
	// ToolCall is the agent's id of the call, unique within its session.
	ToolCall string
	// Title is the agent's own words for the call, such as "Run ls -la".
	Title string
	// Kind is the protocol's kind of tool: read, edit, delete, move,
	// search, execute, think, fetch or other; empty if the agent says none.
	Kind string
	// Input is the call's raw input as JSON, cut to a few kilobytes.
	Input string
	// Locations are the files the call touches, as the agent names them.
	Locations []string
	// Options are the answers the agent offers.
	Options []PermissionOption
}

// PermissionOption is one answer an agent offers to a permission request.
type PermissionOption struct {
	ID   string
	Name string
	// Kind is allow_once, allow_always, reject_once or reject_always.
	Kind string
}

// PermissionVerdict is the runner's answer to a permission request.
type PermissionVerdict struct {
	Allow bool
	// Reason says why, for the turn's progress and notes.
	Reason string
}

// The permission option kinds of the protocol.
const (
	permAllowOnce    = "allow_once"
	permAllowAlways  = "allow_always"
	permRejectOnce   = "reject_once"
	permRejectAlways = "reject_always"
)

// chooseOption picks the option that carries out v: a one-time answer
// where the agent offers one, so that every later call is asked about
// again. ok is false when the agent offers no option of that sense; the
// request is then answered cancelled, which no agent takes as a yes.
func chooseOption(opts []PermissionOption, v PermissionVerdict) (id string, ok bool) {
	prefer := []string{permRejectOnce, permRejectAlways}
	if v.Allow {
		prefer = []string{permAllowOnce, permAllowAlways}
	}
	for _, kind := range prefer {
		for _, o := range opts {
			if o.Kind == kind {
				return o.ID, true
			}
		}
	}
	return "", false
}

// askPermission asks the turn's callback, refusing when there is none: a
// seat whose runner cannot judge a tool call must not let it run.
func (t Turn) askPermission(ctx context.Context, req PermissionRequest) (PermissionVerdict, error) {
	if t.OnPermission == nil {
		return PermissionVerdict{Reason: "no one judges tool calls for this turn"}, nil
	}
	v, err := t.OnPermission(ctx, req)
	if err != nil {
		return PermissionVerdict{}, fmt.Errorf("cannot judge the agent's request to run %q: %w", req.Title, err)
	}
	return v, nil
}
