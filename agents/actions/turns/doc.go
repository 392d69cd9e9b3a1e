// Package turns holds the actions on an agent's turns that need the
// runner's own code (package agents): applying or refusing an effect a
// turn left for a person's approval, and skipping the turn in flight.
// They are apart from package actions so that the actions on mailboxes
// and boards, 'agentctl send' and 'board' among them, do not link the
// runner and its drivers.
//
// It opens no file itself: the effect applied, the denial's notice and
// the skip's dead letter are the runner's own code's (agents.ApplyApproved,
// Deny, Skip), the settling the store's and the record the audit log's;
// it never starts a runner or a driver.
package turns

import "github.com/agentctl/agentctl/agents/actions"

// Runtime is the runtime folder the actions of package actions change,
// with the actions on turns besides.
type Runtime struct{ actions.Runtime }
