// Package mailbox owns each agent's mailbox folder under the runtime root:
// the canonical message, delivery, ingest of dropped files, of the Dream.OS
// inbox.json and of the places outside the mailbox where old writers left
// running still write (extra.go; reading their shapes is package dreamos's
// job), the claim → complete / fail / postpone / dead-letter life cycle,
// crash recovery, the folder
// watcher, the status.json heartbeat, and what a person does by hand
// (admin.go, skip.go: find a message anywhere, settle it, requeue a dead
// letter, ask a runner to skip a turn or abandon it when no runner is up).
//
// The on-disk contract is the product's main interface, so everything here
// is observable from a shell:
//
//	agent_mailboxes/Agent-3/
//	  inbox.json          Dream.OS writers append here under flock(inbox.json.lock)
//	  inbox/              pending messages, one canonical <stem>.json each
//	  processing/         the one message in flight, with its <stem>.progress.jsonl log
//	  archive/YYYY-MM-DD/ finished messages, each with its <stem>.receipt.jsonl
//	  deadletter/         what could not be used, each with <name>.reason.txt
//	  .seen/              one empty marker per id ever delivered
//	  .ingest/            inbox.json taken away under its lock, being delivered
//	  .offsets/           how far each watched appended .txt inbox has been read
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
//   - inbox.json is taken away under the same flock the Dream.OS writers
//     take, by a rename into .ingest/, and replaced by its empty shape
//     ("[]", or the object shape its writer uses); it is never
//     left invalid and the lock is never held for deliveries. The spool file
//     is removed only once every entry is delivered or dead-lettered, and
//     going through it again after a crash changes nothing: ids derived for
//     entries without one, and dead-letter names, come from the spool's name.
//   - Nothing is deleted silently: what cannot be decoded, addressed or
//     delivered goes to deadletter/ with a readable reason beside it.
//   - Only one consumer per agent claims messages (a lock under
//     runtime/locks/); whatever a crashed consumer left in processing/ is
//     recovered by the next one.
//   - A folder of the mailbox that someone removes is recreated by the next
//     scan or claim, and said so; a removed mailbox stops its consumer with
//     an error that says so. Nothing waits forever on a folder that is gone.
//
// Serve is the one consumer loop: claim and hand each message to a Worker,
// then sleep until a file event, the consumer's next wake-up or the
// worker's. Its time comes from a clock.Clock, so tests step time instead of
// sleeping.
//
// The package never reads agentctl.yaml (callers pass the settings in), never
// prompts agents and never touches boards or devlogs. What a caller did for a
// claim is kept in its progress log as the caller's own JSON and version
// (Progress.Data), which this package writes and reads back but never looks
// into: what a turn is, and how its record changed shape, is the caller's. Outside the runtime
// it touches only the places it is told to watch: it removes a message file
// there once delivered and never changes an appended .txt inbox.
package mailbox
