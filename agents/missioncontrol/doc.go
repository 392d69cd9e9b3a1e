// Package missioncontrol owns the live picture of a runtime folder that
// `agentctl serve` shows in a browser and `agentctl top` in a terminal: a
// Snapshot of every agent (its runner, turn, queue, last devlog entry, the
// desktop lock, and for a remote agent its seat as hub/seats.json tells),
// the board as columns, threads with their timings, dead
// letters and what waits for people; the Feed that rebuilds it from the
// runtime's own file events; and the HTTP server with its embedded page.
//
// It only reads the runtime. Every change a person makes from the page or
// the terminal goes through Actions, which RuntimeActions makes with package
// actions, the same functions as `agentctl send`, `retry`, `reply`,
// `approve`, `deny`, `board set` and `skip`; nothing here writes a message,
// a board or a lock itself. The
// server's only file of its own is its token, written by the command.
package missioncontrol
