// Package mailbox is the store: each agent's mailbox folder under the
// runtime root, and everything that happens to a message once it is a
// canonical file there. It owns the canonical message, delivery (Deliver,
// and DeliverBytes for bytes that may be no message), the files people drop
// into inbox/, the claim → complete / retry / postpone / dead-letter life
// cycle with its progress log and receipt, crash recovery, expiry, the
// folder watcher, the consumer loop (Serve), the status.json heartbeat, and
// what a person does by hand (admin.go, skip.go: find a message anywhere,
// settle it, requeue a dead letter, ask a runner to skip a turn or abandon
// it when no runner is up).
//
// It is the only code that writes into a mailbox's inbox/, processing/,
// archive/ and deadletter/ folders, and WriteDeadLetter is the one writer
// of deadletter/: whatever dead-letters, here or in package intake, goes
// through it. Package intake, which takes in inbox.json and the places
// outside the mailbox where old writers still write, hands its messages to
// a Consumer (DeliverFound) and never writes into those four folders
// itself; this package never imports it.
//
// The on-disk contract is the product's main interface, so everything here
// is observable from a shell:
//
//	agent_mailboxes/Agent-3/
//	  inbox.json          Dream.OS writers append here under flock(inbox.json.lock); package intake's
//	  inbox/              pending messages, one canonical <stem>.json each
//	  processing/         the one message in flight, with its <stem>.progress.jsonl log
//	  archive/YYYY-MM-DD/ finished messages, each with its <stem>.receipt.jsonl
//	  deadletter/         what could not be used, each with <name>.reason.txt
//	  .seen/              one empty marker per id ever delivered
//	  .ingest/            inbox.json taken away under its lock, being delivered; package intake's
//	  .offsets/           how far each watched appended .txt inbox has been read; package intake's
//	  .watched/           what each watched file outside the mailbox held when delivered; package intake's
//	  status.json         the runner's heartbeat
//	  skip.json           a person's request that the runner abandon the turn in flight
//
// The rules that keep messages from being lost or doubled:
//
//   - A message is in exactly one place and moves by rename. Files that are
//     replaced are replaced atomically (package atomicfile).
//   - A message's file name is derived from its id, and delivery links the
//     file into inbox/ only if the name is free, so concurrent deliveries of
//     one id store it once. A marker in .seen/ remembers the id after the
//     message has moved on, so a late duplicate is refused too.
//   - Files humans drop into inbox/ are read only when complete: JSON once it
//     parses in full, anything else once it has stopped changing for a
//     settle period. Dot-files and editor temp names are never read.
//   - Nothing is deleted silently: what cannot be decoded, addressed or
//     delivered goes to deadletter/ with a readable reason beside it,
//     written before the letter itself.
//   - Only one consumer per agent claims messages (a lock under
//     runtime/locks/); whatever a crashed consumer left in processing/ is
//     recovered by the next one.
//   - A folder of the mailbox that someone removes is recreated by the next
//     scan or claim, and said so; a removed mailbox stops its consumer with
//     an error that says so. Nothing waits forever on a folder that is gone.
//
// Listings count what still waits in inbox.json and .ingest/ as pending:
// they read those files (inbox.json under its writers' lock, in the shapes
// package dreamos reads) and never change them.
//
// Serve is the one consumer loop: claim and hand each message to a Worker,
// then sleep until a file event, the Feed's next wake-up (a Consumer's, or
// an intake's that includes its Consumer's) or the worker's. Its time is
// its Consumer's Clock (Options.Clock), so tests step time instead of
// sleeping, and one clock paces the loop and the consumer's lock waits.
//
// The package never reads agentctl.yaml (callers pass the settings in), never
// prompts agents and never touches boards or devlogs. What a caller did for a
// claim is kept in its progress log as the caller's own JSON and version
// (Progress.Data), which this package writes and reads back but never looks
// into: what a turn is, and how its record changed shape, is the caller's.
// It never writes inbox.json, .ingest/, .offsets/ or .watched/, nor
// anything outside the runtime.
package mailbox
