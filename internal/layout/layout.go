// Package layout is the one owner of the runtime folder's paths: every
// file and folder agentctl reads or writes under a runtime root is named
// here and nowhere else, so the on-disk contract can be read in one place
// and no package spells a folder its own way. A file named after a key (a
// message's stem, a digest, a day, an agent) has its folder and the ending
// after the key named here; the package that writes it chooses only the
// key.
//
// The whole tree, under a root (./runtime by default):
//
//	agentctl.yaml                    the configuration `agentctl init` writes (ConfigFile)
//	agent_mailboxes/                 one folder per agent or person (Mailboxes)
//	  <agent>/                       Agent.Mailbox
//	    inbox.json                   Dream.OS compatibility ingest
//	    inbox.json.lock              the lock Dream.OS writers take on it
//	    inbox/                       pending messages, one <stem>.json each (MessageSuffix)
//	      .<stem>.json.<n>.withdrawing  a delivery's own copy, checked before it is taken back (WithdrawingSuffix)
//	    processing/                  the message being worked on, with its <stem>.progress.jsonl
//	    archive/YYYY-MM-DD/          finished messages, each with its <stem>.receipt.jsonl
//	    deadletter/                  what could not be processed, each with its <name>.reason.txt
//	    status.json                  the runner's heartbeat
//	    skip.json                    a person's request that the runner abandon its turn
//	    .seen/                       one marker per message id ever delivered
//	    .ingest/<spool>.json         what was taken out of inbox.json, not yet delivered (RecordSuffix)
//	    .offsets/<digest>.json       how far each appended file outside the mailbox was read
//	    .watched/<digest>.json       what each watched file outside the mailbox held when delivered (digests)
//	devlogs/<agent>.md               append-only devlogs (Agent.Devlog, DevlogSuffix)
//	devlogs/dreamos/                 Dream.OS devlogs `agentctl migrate` copied (MigratedDevlogs)
//	dreamos/documents/               Dream.OS notes, reports and analyses `agentctl migrate` kept (MigratedDocuments)
//	project_board/*.yaml             task boards (Boards, BoardSuffix); board.yaml when none is named (DefaultBoard)
//	project_board/dreamos-*.yaml     Dream.OS boards `agentctl migrate` imported
//	project_board/.deferred/         changes asked while the boards could not take them (BoardsDeferred):
//	  <digest>.json                  one waiting, then <digest>.json.applied or .json.dropped until reported,
//	                                 or <digest>.json.unreadable, set aside
//	lore/YYYY-MM-DD.md               the day's lore (LoreDay)
//	lore/dictionary.yaml             a person's lore dictionary, if any
//	lore/template.md.tmpl            a person's lore template, if any
//	lore/dreamos/                    Dream.OS lore `agentctl migrate` copied (MigratedLore)
//	locks/                           cross-process locks (Locks)
//	  <agent>.consumer.lock          who consumes an agent's mailbox (Agent.ConsumerLock)
//	  <agent>.by-hand.lock           a person's command acting on its messages (Agent.ByHandLock)
//	  project_board.lock             writers of the boards (BoardsLock)
//	  desktop-<display>.lock         the desktop input lock of one display (DesktopLock)
//	  desktop-<display>.lock.holder  who holds it, for `agentctl status` (HolderSuffix)
//	  up.lock                        the runtime's `agentctl up` (SupervisorLock)
//	  <agent>.mcp-keys.lock          writers of the agent's idempotency keys (Agent.SendKeysLock)
//	  up.stop                        `agentctl down`'s request to it (SupervisorStop)
//	  hub.lock                       the runtime's one `agentctl hub` (HubLock)
//	audit/YYYY-MM-DD.jsonl           the audit log of effects (Audit, DaySuffix)
//	costs/YYYY-MM-DD.jsonl           what each turn used: tokens and price (Costs)
//	sessions/<agent>.json            an agent's conversation between turns (SessionFile)
//	sessions/<agent>.raw/<time>.txt  what an exec command printed in a turn with no reply (RawOutput, OutputSuffix)
//	seats/<agent>/<digest>.json      a seat's journal of its turns, a record each (Agent.Journal)
//	hub/jetstream/                   the embedded hub's store, unless the config moves it (HubStore)
//	hub/seats.json                   the seats the hub last knew (HubSeats)
//	hub/undeliverable/               forwarded messages for no mailbox here (HubUndeliverable):
//	  <n>.json, <n>.reason.txt       each with why, <n> its number in the hub's stream
//	hub/credentials/                 the embedded hub's nkey seeds, 0700 (HubCredentials)
//	  _hub.nk                        the hub's own identity: its runners and commands
//	  <machine>.nk                   each seat machine's identity, copied over to it
//	cursor/<agent>/                  a Cursor started for a cdp seat (Agent.CursorHome):
//	  profile/                       its profile (Agent.CursorProfile)
//	  launch.log                     what it prints (Agent.CursorLaunchLog)
//	workspaces/<agent>/              that Cursor's workspace, unless the config names one
//	worktrees/<agent>/               an exec seat's git worktree, with worktree: true (Agent.Worktree)
//	logs/<service>.log               what an installed service prints (ServiceLog)
//	mcp/<agent>/keys/<hash>.json     `agentctl mcp --as <agent>`'s idempotency keys of its sends (Agent.SendKeys)
//	mission-control.token            `agentctl serve`'s token, 0600 (Token)
//	notified/<person>/<stem>.json    one record per message a person was told of by notify (Notified)
//	templates/<type>.tmpl            prompt templates, unless the config names another folder (TemplateSuffix)
//
// Agent names become folder and file names, so every path that holds one
// is made through For, which refuses a name internal/agentname does not
// accept. The package names paths only: it creates nothing, what each
// file holds is the business of the package that writes it, and taking
// and waiting for the locks is internal/lockfile's.
package layout

import "path/filepath"

// Names under the runtime root.
const (
	ConfigFile    = "agentctl.yaml"
	MailboxesDir  = "agent_mailboxes"
	DevlogsDir    = "devlogs"
	BoardsDir     = "project_board"
	LoreDir       = "lore"
	LocksDir      = "locks"
	AuditDir      = "audit"
	CostsDir      = "costs"
	SessionsDir   = "sessions"
	SeatsDir      = "seats"
	HubDir        = "hub"
	CursorDir     = "cursor"
	WorkspacesDir = "workspaces"
	WorktreesDir  = "worktrees"
	LogsDir       = "logs"
	TokenFile     = "mission-control.token"
	TemplatesDir  = "templates"
	MCPDir        = "mcp"
	NotifiedDir   = "notified"
	// MigratedDir holds what `agentctl migrate` kept of Dream.OS: at the
	// root (its documents), in devlogs/ and in lore/.
	MigratedDir = "dreamos"
)

// Names inside one agent's mailbox folder.
const (
	InboxDir      = "inbox"
	ProcessingDir = "processing"
	ArchiveDir    = "archive"
	DeadletterDir = "deadletter"
	SeenDir       = ".seen"
	IngestDir     = ".ingest"
	OffsetsDir    = ".offsets"
	WatchedDir    = ".watched"
	InboxJSON     = "inbox.json"
	InboxJSONLock = "inbox.json.lock"
	StatusJSON    = "status.json"
	SkipJSON      = "skip.json"
)

// Suffixes of the files kept beside a message in the mailbox, after the
// message's stem (or, for a dead letter, its file name), and beside a
// message kept in hub/undeliverable/.
const (
	ProgressSuffix = ".progress.jsonl"
	ReceiptSuffix  = ".receipt.jsonl"
	ReasonSuffix   = ".reason.txt"
)

// Endings of the names agentctl gives files after a key: a message's
// stem, a digest, a day, an agent.
const (
	// MessageSuffix ends a message's file in inbox/, processing/,
	// archive/ and hub/undeliverable/: <stem>.json.
	MessageSuffix = ".json"
	// RecordSuffix ends a JSON record named by a digest or a stem: in
	// .ingest/, .watched/, .offsets/, notified/<person>/, mcp/<agent>/keys/,
	// seats/<agent>/ and project_board/.deferred/.
	RecordSuffix = ".json"
	// DaySuffix ends a day of the audit log and of the cost ledger.
	DaySuffix = ".jsonl"
	// BoardSuffix ends a task board's file.
	BoardSuffix = ".yaml"
	// DevlogSuffix ends an agent's devlog.
	DevlogSuffix = ".md"
	// TemplateSuffix ends a prompt template's file.
	TemplateSuffix = ".tmpl"
	// OutputSuffix ends what a command printed in a turn that gave no
	// reply, kept in sessions/<agent>.raw/.
	OutputSuffix = ".txt"
	// WithdrawingSuffix ends the dot-name in inbox/ under which a delivery
	// that found its id seen checks the file it linked.
	WithdrawingSuffix = ".withdrawing"
)

// Endings a deferred board change's record takes once it is settled:
// applied, dropped, or set aside as unreadable.
const (
	AppliedSuffix    = ".applied"
	DroppedSuffix    = ".dropped"
	UnreadableSuffix = ".unreadable"
)

// DayFormat names an archive day folder, a day's lore and a day's audit
// log: the day in UTC.
const DayFormat = "2006-01-02"

// HubStore is the embedded hub's store relative to the root, written with
// '/' as the configuration writes it.
const HubStore = HubDir + "/jetstream"

// LockSuffix ends the name of every lock file.
const LockSuffix = ".lock"

// Config is the configuration file.
func Config(root string) string { return filepath.Join(root, ConfigFile) }

// Mailboxes is the folder holding every mailbox.
func Mailboxes(root string) string { return filepath.Join(root, MailboxesDir) }

// Devlogs is the devlogs folder.
func Devlogs(root string) string { return filepath.Join(root, DevlogsDir) }

// MigratedDevlogs is where the Dream.OS devlogs a migration copied live.
func MigratedDevlogs(root string) string { return filepath.Join(Devlogs(root), MigratedDir) }

// MigratedDocuments is where the Dream.OS documents (notes, reports,
// analyses found among the messages) a migration kept live: they are read
// by people, never delivered.
func MigratedDocuments(root string) string { return filepath.Join(root, MigratedDir, "documents") }

// MigratedLore is where the Dream.OS lore files a migration copied live,
// beside the runtime's own.
func MigratedLore(root string) string { return filepath.Join(Lore(root), MigratedDir) }

// Boards is the folder of the task boards.
func Boards(root string) string { return filepath.Join(root, BoardsDir) }

// DefaultBoard is the board a task goes on when there are several and
// none is named.
const DefaultBoard = "board" + BoardSuffix

// DeferredDir, inside the boards folder, keeps the changes asked while
// the boards could not take them.
const DeferredDir = ".deferred"

// BoardsDeferred is the folder of deferred board changes.
func BoardsDeferred(root string) string { return filepath.Join(Boards(root), DeferredDir) }

// Lore is the lore folder.
func Lore(root string) string { return filepath.Join(root, LoreDir) }

// LoreDay is the lore of a day, given as DayFormat.
func LoreDay(root, day string) string { return filepath.Join(Lore(root), day+".md") }

// LoreDictionary is the dictionary a person may leave for the lore.
func LoreDictionary(root string) string { return filepath.Join(Lore(root), "dictionary.yaml") }

// LoreTemplate is the template a person may leave for the lore.
func LoreTemplate(root string) string { return filepath.Join(Lore(root), "template.md.tmpl") }

// Locks is the folder of cross-process locks.
func Locks(root string) string { return filepath.Join(root, LocksDir) }

// BoardsLock is the lock every writer of the boards takes.
func BoardsLock(root string) string { return filepath.Join(Locks(root), "project_board"+LockSuffix) }

// DesktopLock is the desktop input lock of display, a key already safe as
// a file name, in the locks folder dir.
func DesktopLock(dir, display string) string {
	return filepath.Join(dir, "desktop-"+display+LockSuffix)
}

// HolderSuffix ends the name of the record beside a desktop lock that
// says who holds it: the lock file itself is never written, since on
// Windows a locked file cannot be written through another handle.
const HolderSuffix = ".holder"

// DesktopLockHolders matches the records beside the desktop locks in the
// locks folder dir.
func DesktopLockHolders(dir string) string {
	return filepath.Join(dir, "desktop-*"+LockSuffix+HolderSuffix)
}

// SupervisorLock is the lock held by the runtime's `agentctl up`.
func SupervisorLock(root string) string { return filepath.Join(Locks(root), "up"+LockSuffix) }

// HubLock is the lock held by the runtime's `agentctl hub`: two hubs on
// one store would run two servers over the same JetStream files.
func HubLock(root string) string { return filepath.Join(Locks(root), "hub"+LockSuffix) }

// SupervisorStop is the file by which `agentctl down` asks `agentctl up`
// to stop where no signal can.
func SupervisorStop(root string) string { return filepath.Join(Locks(root), "up.stop") }

// Audit is the audit log's folder.
func Audit(root string) string { return filepath.Join(root, AuditDir) }

// Costs is the folder of the cost ledger, a file a day.
func Costs(root string) string { return filepath.Join(root, CostsDir) }

// Sessions is the folder of the agents' conversations between turns.
func Sessions(root string) string { return filepath.Join(root, SessionsDir) }

// HubSeatsFile is the hub's record of the seats it last knew relative to
// the root, written with '/' as messages to people spell it.
const HubSeatsFile = HubDir + "/seats.json"

// HubSeats is the hub's record of the seats it last knew.
func HubSeats(root string) string { return filepath.Join(root, filepath.FromSlash(HubSeatsFile)) }

// HubUndeliverable keeps forwarded messages addressed to no mailbox here.
func HubUndeliverable(root string) string { return filepath.Join(root, HubDir, "undeliverable") }

// HubUndeliverableMessage is the forwarded message kept in
// HubUndeliverable under name (its number in the hub's stream), and
// HubUndeliverableReason the reason beside it.
func HubUndeliverableMessage(root, name string) string {
	return filepath.Join(HubUndeliverable(root), name+MessageSuffix)
}

// HubUndeliverableReason: see HubUndeliverableMessage.
func HubUndeliverableReason(root, name string) string {
	return filepath.Join(HubUndeliverable(root), name+ReasonSuffix)
}

// HubCredentials is the folder of the embedded hub's nkey seeds.
func HubCredentials(root string) string { return filepath.Join(root, HubDir, "credentials") }

// HubOwnSeed is the seed of the hub's own identity, "_hub.nk": machine
// names start with a letter or digit, so no machine's file can take it.
func HubOwnSeed(root string) string { return filepath.Join(HubCredentials(root), "_hub.nk") }

// HubMachineSeed is the seed of a seat machine's identity.
func HubMachineSeed(root, machine string) string {
	return filepath.Join(HubCredentials(root), machine+".nk")
}

// Token is the file holding `agentctl serve`'s write token.
func Token(root string) string { return filepath.Join(root, TokenFile) }
