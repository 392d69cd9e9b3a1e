package config

import "fmt"

// Guardrails say, per kind of effect a reply may have, whether it is
// applied ("allow"), held for a person's approval ("confirm": an approval
// request in the person's mailbox, settled with agentctl approve or deny)
// or refused ("deny"). Every level defaults to allow, which is what
// agentctl did before guardrails existed: tightening them is a choice for
// the runtime's owner, not something an upgrade springs on running swarms.
type Guardrails struct {
	// Broadcast: a send to "all" (every other agent).
	Broadcast string `yaml:"broadcast"`
	// OthersTask: a board change of a task another agent owns.
	OthersTask string `yaml:"others_task"`
	// CloseUnowned: marking done a task the agent does not own (owned by
	// another agent, a person, or nobody).
	CloseUnowned string `yaml:"close_unowned"`
	// ManySends: the sends of a reply past its first ManySendsOver
	// messages (run.max_sends_per_reply still refuses those past its cap).
	ManySends     string `yaml:"many_sends"`
	ManySendsOver int    `yaml:"many_sends_over"`
	// ToolPermission: a tool an acp seat's agent asks permission to run
	// while it works (session/request_permission): allowed, parked for a
	// person while the turn waits, or refused.
	ToolPermission string `yaml:"tool_permission"`
}

// The guardrail levels.
const (
	GuardAllow   = "allow"
	GuardConfirm = "confirm"
	GuardDeny    = "deny"
)

func defaultGuardrails() Guardrails {
	return Guardrails{Broadcast: GuardAllow, OthersTask: GuardAllow, CloseUnowned: GuardAllow, ManySends: GuardAllow, ManySendsOver: 5, ToolPermission: GuardAllow}
}

func (g Guardrails) validate() error {
	for _, l := range []struct{ name, v string }{
		{"broadcast", g.Broadcast}, {"others_task", g.OthersTask}, {"close_unowned", g.CloseUnowned}, {"many_sends", g.ManySends},
		{"tool_permission", g.ToolPermission},
	} {
		switch l.v {
		case GuardAllow, GuardConfirm, GuardDeny:
		default:
			return fmt.Errorf("guardrails.%s: %q is not allow, confirm or deny", l.name, l.v)
		}
	}
	if g.ManySendsOver < 1 {
		return fmt.Errorf("guardrails.many_sends_over: must be at least 1 (the messages a reply sends before many_sends applies)")
	}
	return nil
}
