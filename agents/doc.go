// Package agents owns the per-agent runner, the long-lived loop behind
// `agentctl run Agent-3`, and the recovery checks behind the runner's cron
// loops and `agentctl reconcile`.
//
// One runner serves one agent, one message at a time:
//
//	claim → self-prompt → driver turn → parse reply → effects → archive
//
// The claim comes from package mailbox (highest priority first, oldest
// first within a priority, deliver_after and expires_at honoured). The
// self-prompt is a text/template per message type, built in or overridden
// by <root>/templates/<type>.tmpl, and tells the agent the reply protocol.
// The turn goes through a cursor.Driver: a chat window on the desktop, or a
// headless command. The reply may end with a fenced block whose info string
// is agentctl, holding one JSON object with optional "send", "board" and
// "devlog" keys; a Dream.OS report (Task:, Actions:, Commit Message:,
// Status:) is read as a devlog note and Status: done completes the
// message's task.
//
// A reply's block is judged item by item (plan): what cannot be used is
// refused with its reason and the rest applies, and the message is then
// archived "done with errors". A reply with no block and no report, to a
// prompt that asked for the block (every built-in template does), is
// archived "done without block": the turn happened, nothing it meant did.
// Several in a row tell Settings.Human once (noblock.go); the run is kept
// in status.json, so it outlives the runner. A board change the boards
// cannot take now is kept by package projectboard and made later, never
// reported as made.
// Loop guards bound what replies can set off: a thread's hops and one
// reply's sends. Guardrails (guardrails.go) judge each item against the
// configured level of its kind (a broadcast, another's task, closing a
// task not its own, many sends): allowed, refused, or parked as an
// approval request in Human's mailbox that approval.go applies later
// through the same effect code. A tool an acp seat's agent asks to run
// during its turn meets guardrails.tool_permission the same way
// (permission.go), except that a parked request holds the turn: it waits
// until agentctl approve or deny settles the request. Every effect,
// refusal and approval goes to
// the audit log (package audit). People (Settings.People) have mailboxes
// but no runner; Settings.Human hears what needs a person.
//
// Every step is recorded in the claim's progress record before the next
// one starts, so a runner killed at any moment and started again resumes
// where it was: a prompt whose submission was recorded is never sent again
// (the driver reads the reply back instead), a reply that was read back is
// not asked for again, and each effect is applied once. Effects are also
// idempotent on their own: messages a reply causes get ids derived from the
// message that caused them, so delivering one again is refused as a
// duplicate; board changes set values; a devlog entry is looked for before
// it is written again. That is why a reply's effects share one synced
// record, the receipt's, after the last of them, and are audited once it
// is on disk; only a board change is recorded before the next effect, so
// that a resumed runner never replays it over work the messages sent
// after it started. What the runner did is one typed, versioned turn
// record (turnrecord.go), which package mailbox keeps in the progress
// record as JSON it never looks into: the record is this package's, and so
// is its one reader, which also reads the untyped records of earlier
// versions, so a runner upgraded mid-turn resumes it. What a receipt says
// beyond its outcome is typed the same way, in package receipt, below this
// one so that the hub and the actions a person takes write it too.
//
// Not every message costs a turn (policy.go): per message type, the
// runner answers status requests and pings itself, applies board updates
// and acknowledges the rest, or keeps digest notes waiting in the inbox
// until the next turn's prompt carries them. An idle runner looks at the
// boards (coordinate.go): it sends dependency notices with ids derived
// from the two tasks (dependency.go), takes the next task it may do when
// its agent takes work from the boards, under the boards' lock
// (board_work.go), and writes the day's lore again on the events
// configured (lore.go).
//
// A runtime that cannot be written (a full disk, a read-only file system,
// a runtime folder gone) does not end the runner (fault.go): a pure
// function tells such an error from the others, and Run alone acts on it,
// waiting with the seat's work left where it was and starting its loop
// again once a probe on its clock writes, the interrupted message resumed
// at no attempt's cost. Human hears of the wait once when it begins and
// once when it ends, each notice kept until it can be stored.
//
// A person can abandon the turn in flight (agentctl skip): the turn watches
// for the request in the mailbox folder, is cancelled, and its message is
// dead-lettered with the person's reason (skip.go).
//
// The package never reads agentctl.yaml (the command hands Settings down),
// never touches a window except through package cursor, and never edits a
// board, devlog, lore or audit file except through packages projectboard,
// devlog, lore and audit.
package agents
