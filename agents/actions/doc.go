// Package actions owns the changes a person makes to a runtime by hand:
// send a message, retry a dead letter, drop a message unworked, reply to a
// question, approve or deny a held effect, change a board task, skip a
// turn. The command line (agentctl send, retry, drop, reply, approve, deny,
// board set, skip) and mission control (serve, top) make them through the
// same functions, which return what they did as values and never print:
// each caller words it its own way. Those that settle or move a message
// hold its mailbox's by-hand lock (mailbox.LockByHand) from the moment they
// look for it, so two of them never act on one message.
//
// An error may carry a Hint() with the fix; an *InputError says the
// request itself is wrong (a bad priority, an empty text), which the
// command line reports as a usage mistake.
//
// It writes through package mailbox, package projectboard and the agents
// package's approval and skip code; it never starts a runner or a driver.
package actions
