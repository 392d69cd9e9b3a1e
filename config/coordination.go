package config

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"
)

// Coordination holds what the runner does without a model turn: how each
// message type is handled, how long digest notes wait, how often an idle
// runner looks at the boards, and when the day's lore is refreshed.
type Coordination struct {
	// Policy says, per message type (lower case), whether a message costs a
	// turn ("turn"), is handled by the runner alone ("runner": status
	// requests and pings are answered, board updates applied, anything else
	// acknowledged), or is folded into the next turn's prompt ("digest").
	// Types not listed take a turn.
	Policy map[string]string `yaml:"policy"`
	// DigestWait is the longest a digest note waits for a turn to carry
	// it; after that it gets a turn of its own.
	DigestWait Duration `yaml:"digest_wait"`
	// BoardLook is how often an idle runner looks at the boards for work
	// it may take and for dependency notices to send.
	BoardLook Duration   `yaml:"board_look"`
	Lore      LoreEvents `yaml:"lore"`
}

// LoreEvents say when the day's lore is written again, by a runner or by
// reconcile.
type LoreEvents struct {
	// OnTaskDone refreshes the lore whenever a runner sees a task become
	// done.
	OnTaskDone bool `yaml:"on_task_done"`
	// EveryMessages refreshes it after every N messages a runner settles;
	// 0: never on that account.
	EveryMessages int `yaml:"every_messages"`
	// Narrate, if set, is a command (any headless model CLI) that gets the
	// deterministic lore on stdin and prints the narrated one; when it
	// fails, the deterministic lore is written.
	Narrate []string `yaml:"narrate"`
	// NarrateTimeout bounds the narrating command.
	NarrateTimeout Duration `yaml:"narrate_timeout"`
}

// BoardWork is one agent's opt-in to take work from the boards.
type BoardWork struct {
	// Take lets the agent's idle runner take the next todo task it may do.
	Take bool `yaml:"take"`
	// Labels limit the unowned tasks it takes to those whose labels (or
	// role) name one of these; empty: any unowned task.
	Labels []string `yaml:"labels,omitempty"`
}

// The message policies.
const (
	PolicyTurn   = "turn"
	PolicyRunner = "runner"
	PolicyDigest = "digest"
)

func defaultCoordination() Coordination {
	return Coordination{
		Policy: map[string]string{
			"receipt":        PolicyRunner,
			"ping":           PolicyRunner,
			"pong":           PolicyRunner,
			"status-request": PolicyRunner,
			"board-update":   PolicyRunner,
			"ack":            PolicyRunner,
		},
		DigestWait: Duration(30 * time.Minute),
		BoardLook:  Duration(30 * time.Second),
		Lore:       LoreEvents{NarrateTimeout: Duration(2 * time.Minute)},
	}
}

// PolicyTypes lists the types with a policy, sorted, for the file init
// writes.
func (c Coordination) PolicyTypes() []string {
	types := make([]string, 0, len(c.Policy))
	for t := range c.Policy {
		types = append(types, t)
	}
	sort.Strings(types)
	return types
}

func (c Coordination) validate() error {
	for typ, p := range c.Policy {
		if typ == "" || typ != strings.ToLower(typ) {
			return fmt.Errorf("coordination.policy: message type %q must be lower case", typ)
		}
		if !slices.Contains([]string{PolicyTurn, PolicyRunner, PolicyDigest}, p) {
			return fmt.Errorf("coordination.policy.%s: %q is not turn, runner or digest", typ, p)
		}
	}
	if c.DigestWait <= 0 || c.BoardLook <= 0 || c.Lore.NarrateTimeout <= 0 {
		return fmt.Errorf("coordination.digest_wait, board_look and lore.narrate_timeout: must be positive durations such as 30s")
	}
	if c.Lore.EveryMessages < 0 {
		return fmt.Errorf("coordination.lore.every_messages: cannot be negative (0 means never)")
	}
	return nil
}
