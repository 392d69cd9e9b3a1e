// Package hub bridges the machines of a swarm over NATS JetStream: one
// machine, the hub, keeps the runtime folder; agents whose windows or
// commands are on other machines take their turns there.
//
// What crosses the network is the turn, not the record. The hub keeps a
// runner (package agents) for every remote agent, whose cursor.Driver is a
// Driver of this package: the runner claims the agent's messages from the
// mailbox on the hub, renders the prompt, and hands the turn to the seat on
// the other machine; the reply comes back and the runner judges and applies
// it there, next to the boards, devlogs and archive. So policies,
// guardrails, loop guards and the exactly-once effects of a local runner
// hold for remote agents unchanged, and `agentctl status`, `tail` and
// mission control on the hub see them as they see local ones.
//
// Three work-queue streams carry the traffic, each on file storage and
// replicated as configured:
//
//	AGENTCTL_TURNS    agentctl.turn.AGENT     asks, hub → seat (durable consumer seat-AGENT)
//	AGENTCTL_REPLIES  agentctl.reply.AGENT    answers, seat → hub (durable consumer hub-AGENT)
//	AGENTCTL_DELIVER  agentctl.deliver.TO.FROM  messages dropped on other machines → hub (hub-intake)
//
// Exactly once, across crashes of either side and cuts between them:
//   - A turn has an id that every resume of it keeps (cursor.Turn.ID: the
//     message id and attempt); each ask of it has a fresh one, used as
//     JetStream's message id, so asking again is always safe.
//   - The seat keeps a journal (Journal) under its own runtime folder, one
//     record per turn, each step appended and synced before the next: a
//     turn whose prompt may be with the agent is resumed, never sent
//     again, and a turn already answered is answered again from the
//     record. Each line carries the version of its shape; a line of a
//     newer release counts as a turn whose prompt went out. An ask is acknowledged only after its answer, in the
//     journal, is either taken by the hub's runner waiting for it (sent
//     over core NATS on agentctl.answer.AGENT, which the runner confirms)
//     or stored by the server in the replies stream, where it goes when
//     no runner takes it.
//   - The hub's runner records every step in the claim's progress, as for
//     a local agent, and a restarted hub asks again for the turn it was
//     waiting for.
//   - A forwarded message carries its id as JetStream's message id, and the
//     hub's mailbox refuses an id it has seen (mailbox.ErrDuplicate).
//
// Who may do what: the hub's server accepts, by default, only the
// identities of Identities (nkeys kept in hub/credentials/): the hub's
// own, for its runners and commands, may use every subject; a seat
// machine's may use only the subjects of the agents seated on it (their
// turns' consumer, their replies, stages, beats and cancels, and
// forwarding as them) and its own reply inbox (InboxPrefix). A forwarded
// message names its sender in its subject, which the server lets a
// machine publish for its own agents only; the intake refuses one whose
// body names another sender, or a sender seated on no other machine, and
// keeps it in hub/undeliverable/ with the reason.
//
// Core NATS subjects carry what may be missed without harm: a turn's
// stages as they happen (the answer says them again), the hub's cancel of
// a turn it no longer waits for, and the seats' heartbeats, which the hub
// writes to hub/seats.json (hubseats.File).
//
// What the package decides by time (the seats' beats and keepalives, the
// hub's record of them, the stamps on asks and forwarded messages, a
// forwarder's next try at a mailbox another seat holds, Connect's word
// that it is still waiting) goes through the Clock of its settings, as
// package clock asks. Waits on the server itself (retries while JetStream
// is not ready, nats.go's reconnects, the bound on the purge of an
// abandoned turn's ask) are in real time: the server does not move with a
// test's clock.
//
// The package makes the connections (Connect) with the swarm's TLS and
// credentials, and says what the hub's NATS server is to accept
// (ServerSettings, Identity.Permissions); it never runs that server,
// which package hubserver does in its own program, agentctl-hub, so that
// no other agentctl process carries the server's code. It never reads
// agentctl.yaml (the command hands down plain settings), never touches a
// window except through the cursor.Driver it is given, and writes in the
// runtime folder only through package mailbox, its journal (seats/AGENT/),
// hub/seats.json, hub/undeliverable/ and hub/credentials/.
package hub
