// Package projectboard owns the task boards: the *.yaml files under
// <root>/project_board/ that humans edit by hand while agents update them.
//
// A board is a YAML file with a top-level "tasks:" sequence. Each task is a
// mapping with id, title, status (todo, in_progress, review, blocked, done)
// and owner, and optionally priority, depends_on, notes and updated_at; any
// other key is kept as it is. Task ids are unique across all boards.
//
// Boards are the humans' files first. An agent's change is made as a text
// edit of exactly the lines it changes: the file is parsed into yaml.v3 nodes
// only to find where each value sits, and everything else (comments, key
// order, blank lines, quoting, indentation) stays byte for byte. Every edit is
// checked before it is written: the new text must parse, the changed task
// must read back with the new values, and every other task and top-level key
// must decode exactly as before. An edit that stays inside one task's block
// text is checked by parsing that text alone (the rest is the same bytes,
// read in the same state); anything else is checked by parsing the whole
// file. For the same reason the last board read from each file is kept in
// memory, and a later text that differs from it only inside one task is read
// by parsing that task alone, so a change parses a big board at most once.
// That one parse is the package's own where it can be: a board written in
// the usual part of YAML (block mappings and lists, plain and quoted
// scalars, literal and folded blocks, one-line flow lists and mappings,
// comments) is read line by line into the nodes yaml.v3 would build, and
// anything else is left to yaml.v3. A process that has kept no board yet
// (a command that changes one task and exits) does not build a board at
// all: it reads each one line by line, holding every task to the same
// checks and dropping its nodes once checked, then edits the one task's
// text (or adds after the last task's) as a board of its own, proves the
// edit from that text alone, and puts it in place of the old text; any
// other board or change takes the way above.
//
// Writers in several processes are serialised by a lock file in
// <root>/locks/. Humans' editors take no lock, so under the lock the board is
// read, edited, read again and compared just before the atomic replace: if a
// human saved in between, the edit is redone on the human's version instead
// of overwriting it. A board that does not parse is never written; the change
// fails with the file, line and reason, and the file stays as the human left
// it. No file protocol can stop an editor that saves a stale buffer from
// overwriting what was written after it loaded the file; editors warn about
// that ("file changed on disk"), and agentctl itself never does it.
//
// A change an agent asks for while the boards cannot take it (a board a
// person left invalid, the lock held too long, a task on two boards) is
// not lost: it waits in <root>/project_board/.deferred/ and is applied,
// exactly once and after the earlier changes of its task, as soon as the
// boards can take it (Store.Apply, Store.ApplyDeferred). It holds back
// nothing but its own task's later changes, and a person's Update makes it
// first. A change that no wait mends is refused (Refused).
//
// The package never reads agentctl.yaml and never decides who may own a
// task: callers check agent names before they reach a board.
package projectboard
