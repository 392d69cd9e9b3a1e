// Package turns holds the actions on an agent's turns that need the
// runner's own code (package agents): applying or refusing an effect a
// turn left for a person's approval, and skipping the turn in flight.
// They are apart from package actions so that the actions on mailboxes
// and boards, 'agentctl send' and 'board' among them, do not link the
// runner and its drivers.
package turns

import "github.com/agentctl/agentctl/agents/actions"

// Runtime is the runtime folder the actions of package actions change,
// with the actions on turns besides.
type Runtime struct{ actions.Runtime }
