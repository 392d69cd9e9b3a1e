// Package notify tells people, outside their mailboxes, that a message
// landed there: a question, an approval request, a notice of a parked
// seat or of a lost hub. agentctl.yaml's notify: picks the ways (a desktop
// notification, a webhook in ntfy's shape, a command of the person's own).
//
// One process does it for a runtime: `agentctl up`, which already runs
// once per runtime, watches the people's inboxes (Watch). Watching the
// inboxes, rather than hooking every writer, tells of every message
// however it arrived (a runner, a command, the hub, an old writer's
// inbox.json) and keeps the telling out of every delivery: a notifier that
// fails or hangs never fails or delays one.
//
// Each message is told at least once, and once only across restarts: a
// record per message, under notified/<person>/ (internal/layout), is
// written after its telling, so only a crash between the two tells it
// twice. A way that fails is logged and tried again a few times on the
// injected clock, then given up for that message, as the record says. The
// first look at a person's inbox, with no records yet, tells of nothing
// already there: a backlog is no news.
//
// The package reads the mailboxes through package mailbox and writes
// nothing but its records.
package notify
