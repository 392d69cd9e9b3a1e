// Package migrate moves a Dream.OS folder over to this runtime. It lists
// the folder (List), decides what becomes of every file in it without
// changing anything (New, a Plan: messages, history, documents, boards,
// coordinates, devlogs, lore, skipped, not ours, each with its reason; a
// message whose recipient names several agents or none is a review item
// for the human, never a guess), and one executor carries the plan out
// (Execute); Print and the Plan's JSON are the report. A dry run is the
// plan printed without Execute, so the two never differ.
//
// It is agentctl migrate's alone, which is why it lives under cmd/ and no
// other package imports it. It writes through the owner of each thing:
// messages through the store (package mailbox, and intake for what old
// writers' places held), boards through projectboard, windows and watched
// places into agentctl.yaml through config; documents, devlogs and lore
// are copied as new files, never over one.
//
// Nothing in the Dream.OS folder is ever written: the plan reads it, and
// Execute writes only into the runtime.
package migrate
