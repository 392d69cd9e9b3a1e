// Package intake turns files that are not yet canonical messages into
// messages, and hands them to the store (package mailbox): the Dream.OS
// inbox.json of a mailbox and its inbox.json.lock, the places outside the
// mailbox where old writers that are still running keep writing (folders,
// globs and files given as Options.Watch and Options.Shared, inbox.json
// files there too), text files to which a writer appends one Markdown
// message after another, and the messages other machines forward to this
// runtime (DeliverForwarded, which package hub calls with what its server
// carried). Reading their shapes is package dreamos's job.
//
// An Intake wraps one mailbox.Consumer and is what a runner's Serve loop
// looks at the mailbox through (it is a mailbox.Feed): it takes in
// inbox.json and the outside places, and passes on to the Consumer what is
// the Consumer's (names in inbox/, its settle and retry wake-ups). Idle
// does its work once for commands that act while no runner is up.
//
// What it owns, inside the mailbox folder: inbox.json, which it takes away
// whole under the writers' flock by a rename into .ingest/ and gives back
// in its writer's empty shape ("[]", or the object its writer uses; never
// invalid, and the lock is never held for deliveries); the spool files in
// .ingest/, each removed only once every entry is delivered or
// dead-lettered, and gone through again after a crash with the same
// outcome (ids derived for entries without one, and dead-letter names,
// come from the spool's name); .offsets/, how far each appended text
// file has been read; and .watched/, what each watched file held when it
// was delivered. Outside the runtime it changes nothing, creates nothing
// and removes nothing, unless a place is one of Options.Take: only there
// does it remove a message file once delivered (or dead-lettered) and take
// an inbox.json under its writers' lock, as an old reader did. Every other
// place is only read (watched.go), under its writers' lock taken shared on
// a lock file opened read-only when it is there (lockfile.Open), and an
// appended text file is never changed.
//
// What it never touches: inbox/, processing/, archive/ and deadletter/. A
// message goes in through Consumer.DeliverFound (or Mailbox.Deliver, for a
// broadcast's copies to other agents, and for a message addressed to
// several agents or none, the review item put before the person who
// routes by hand: review.go; Mailbox.Deliver, or DeliverBytes for bytes
// that are no message, for a forwarded one), and what cannot be used goes through
// Mailbox.WriteDeadLetter, the store's one writer of dead letters.
// It never claims, settles or reads a message back, and never reads
// agentctl.yaml: callers pass the settings in.
package intake
