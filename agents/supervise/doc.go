// Package supervise owns what `agentctl up` does with runner processes:
// it starts one `agentctl run` child per agent (and one `agentctl hub`
// child when agents take their turns on other machines), restarts a child
// that dies after a backoff that grows while it keeps dying, tells the
// person in the loop (their mailbox) and the agent's devlog once when it has died several
// times in a row, merges the children's output into one log with every line
// prefixed by its agent, and stops them all when its context ends or a
// stop is requested (RequestStop, for `agentctl down` where no signal can
// reach it).
//
// A runner started by hand is never duplicated: before every start the
// agent's consumer lock is asked who holds it (mailbox.RunnerPID), and while
// a live runner that is not one of ours holds it, the seat only watches; a
// hub started by hand is found the same way, through the locks of the
// agents whose runners it keeps.
//
// One supervisor runs per runtime: it holds locks/up.lock, whose record
// names it for `agentctl down` (Lock, Running).
//
// The package never claims a message, never reads agentctl.yaml (the command
// hands Settings down) and never writes anything but its lock, the stop
// request (written by RequestStop, removed once seen), the crash notice and
// its devlog entry; how a verdict is reached (Next) is a pure
// function, and seat.run is the one place that acts on it.
package supervise
