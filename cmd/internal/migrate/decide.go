package migrate

import (
	"path"
	"regexp"
	"slices"
	"strings"
	"sync"
	"unicode"

	"github.com/agentctl/agentctl/mailbox/intake"
)

// What migrate makes of each file of a Dream.OS folder. decideFile is a
// pure function of the file's path, relative to the folder and
// slash-separated; New (plan.go) reads the files it
// chose to read, and Execute (execute.go) acts on the plan.

// Kind is what one file becomes.
type Kind string

const (
	KindMessages Kind = "messages"    // work waiting: into its recipients' inboxes
	KindHistory  Kind = "history"     // messages handled or kept aside: into the archive
	KindDocument Kind = "document"    // notes, reports, analyses: copied for people to read
	KindBoard    Kind = "board"       // a task board: project_board/dreamos-*.yaml
	KindCoords   Kind = "coordinates" // cursor_agent_coords.json: windows in agentctl.yaml
	KindDevlog   Kind = "devlog"      // copied into devlogs/dreamos/
	KindLore     Kind = "lore"        // copied into lore/dreamos/; a translation dictionary becomes lore/dictionary.yaml
	KindSkipped  Kind = "skipped"     // of the old system, but left: see the reason
	KindNotOurs  Kind = "not ours"    // not part of the old messaging at all
)

// Format is how a file of messages holds them.
type Format string

const (
	FormatOne      Format = "one message"       // one message per file
	FormatAppended Format = "appended messages" // Markdown messages appended one after another (.txt)
	FormatList     Format = "list of messages"  // inbox.json, queue files: an array or container
)

// decision is what decideFile makes of one file.
type decision struct {
	Kind   Kind
	Format Format // for messages and history
	Reason string
	// Agent is whose folder the file sat in ("" in shared places); a
	// message goes to its recipient all the same.
	Agent string
	// Watch is the place an old writer keeps writing to that the runner
	// should watch ("" for none), and Shared whether it holds every
	// agent's messages.
	Watch  string
	Shared bool
}

var (
	agentDir  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?i)^agent[-_]?\d+$`) })
	boardName = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)(^|_)(working|future|completed|ready|pending|backlog)?_?tasks?(_[a-z]+)?\.json$|^task_ready_queue\.json$|^contracts\.json$`)
	})
	loreName    = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(^|[_.-])lore([_.-]|$)`) })
	handledDirs = []string{"archive", "archives", "processed", "completed", "outbox", "sent", "deadletter", "dead_letter", "root_cleanup_archive", "backup", "backups", "snapshots", "old"}
	skipDirs    = []string{".git", "node_modules", "__pycache__", ".venv", "venv", "site-packages", ".mypy_cache", ".pytest_cache"}
	// Files in the old mailboxes that are no messages.
	notMessageFiles = []string{"status.json", "claim.json", "heartbeat.json", "inbox.json.lock", "cursor_agent_coords.json"}
)

func isMessageExt(name string) bool {
	switch strings.ToLower(path.Ext(name)) {
	case ".json", ".md", ".msg", ".txt":
		return true
	}
	return false
}

// decideFile says what migrate makes of the file at rel.
func decideFile(rel string) decision {
	parts := strings.Split(rel, "/")
	dirs, base := parts[:len(parts)-1], parts[len(parts)-1]
	lower := strings.ToLower(base)
	ext := strings.ToLower(path.Ext(base))
	inDir := func(names ...string) bool {
		return slices.ContainsFunc(dirs, func(d string) bool { return slices.Contains(names, strings.ToLower(d)) })
	}
	inAgentDir := slices.ContainsFunc(dirs, agentDir().MatchString)
	switch {
	case strings.HasSuffix(lower, ".lock"):
		return decision{Kind: KindNotOurs, Reason: "a lock file of the old writers"}
	case lower == "cursor_agent_coords.json":
		return decision{Kind: KindCoords}
	case inDir("devlogs", "devlog") || (ext == ".md" && strings.HasPrefix(lower, "devlog")):
		// Every file of the devlogs, whatever its form: they are the
		// swarm's history, copied whole.
		return decision{Kind: KindDevlog}
	case inDir("lore") || loreName().MatchString(lower) || lower == "dream_translation.yaml":
		return decision{Kind: KindLore}
	case ext == ".json" && (inDir("central_task_boards", "task_boards", "project_board", "project_boards") || boardName().MatchString(lower)):
		return decision{Kind: KindBoard}
	case (ext == ".yaml" || ext == ".yml") && inDir("central_task_boards", "task_boards", "project_board", "project_boards", "boards"):
		return decision{Kind: KindBoard}
	case slices.Contains(notMessageFiles, lower):
		return decision{Kind: KindNotOurs, Reason: "the old runners' own state, no message"}
	}
	if !isMessageExt(base) {
		return decision{Kind: KindNotOurs, Reason: "not a message, board, coordinate file or devlog (" + extOrName(base) + ")"}
	}
	if intake.DocumentName(base) && (inAgentDir || inDir("inbox", "inboxes") || strings.Contains(strings.ToLower(rel), "mailbox")) {
		return decision{Kind: KindDocument, Reason: "notes, a report or an analysis: a document, not a message"}
	}
	d, inMailbox := findMessage(dirs, base, strings.Join(dirs, "/"))
	if i := slices.IndexFunc(dirs, func(d string) bool {
		d = strings.ToLower(d)
		return slices.Contains(handledDirs, d) || strings.HasPrefix(d, "root_cleanup_archive")
	}); i >= 0 && (inMailbox || ext != ".txt") {
		return history(d, ext, "kept in "+strings.Join(dirs[:i+1], "/")+"/, a folder of messages handled or set aside")
	}
	if why := intake.HistoryName(base); why != "" && (inMailbox || inDir("message_queue", "inbox", "inboxes") || strings.Contains(strings.ToLower(rel), "mailbox")) {
		return history(d, ext, why)
	}
	if !inMailbox {
		if inAgentDir && (ext == ".txt" || ext == ".md") {
			return decision{Kind: KindDocument, Reason: "text in an agent's folder, outside its inbox: a document, not a message"}
		}
		return decision{Kind: KindNotOurs, Reason: "not in any of the old mailbox layouts"}
	}
	if d.Format == FormatOne && intake.HandledName(base) {
		return history(d, ext, "renamed by its old reader once handled")
	}
	return d
}

// history turns what would be a message file into history, kept in the
// archive and not watched.
func history(d decision, ext, why string) decision {
	switch {
	case ext == ".json":
		d.Format = FormatList // an array, a container or one message: all read the same
	case ext == ".txt":
		d.Format = FormatAppended
	default:
		d.Format = FormatOne
	}
	return decision{Kind: KindHistory, Format: d.Format, Agent: d.Agent, Reason: why}
}

func extOrName(base string) string {
	if e := path.Ext(base); e != "" {
		return e + " file"
	}
	return "no extension"
}

// findMessage places a file in one of the mailbox layouts of the old
// writers, or reports it is none.
func findMessage(dirs []string, base, dir string) (decision, bool) {
	lower := strings.ToLower(base)
	ext := strings.ToLower(path.Ext(base))
	rel := path.Join(dir, base)
	n := len(dirs)
	isMsg := ext == ".json" || ext == ".md" || ext == ".msg"
	parentIs := func(i int, pred func(string) bool) bool { return i >= 0 && i < n && pred(strings.ToLower(dirs[i])) }
	isBoxes := func(d string) bool { return d == "agent_workspaces" || strings.Contains(d, "mailbox") }
	msgs := func(f Format, agent, watch string, shared bool) (decision, bool) {
		return decision{Kind: KindMessages, Format: f, Agent: agent, Watch: watch, Shared: shared}, true
	}
	// <mailboxes>/Agent-n/<file>: directly in the agent's folder. Every
	// agent's folder is watched by one shared glob, so that a folder the
	// old writers make later for an agent added since is followed too; the
	// folder says whom a message that names no one is for.
	if n >= 2 && agentDir().MatchString(dirs[n-1]) && parentIs(n-2, isBoxes) {
		agent := dirs[n-1]
		every := func(name string) string { return path.Join(path.Join(dirs[:n-1]...), "*", name) }
		switch {
		case lower == "inbox.json":
			return msgs(FormatList, agent, every(base), true)
		case ext == ".txt" && (strings.Contains(strings.ToLower(dirs[n-2]), "mailbox") || strings.Contains(lower, "inbox") || strings.Contains(lower, "incoming")):
			// In a workspace, a text file is an inbox only by its name.
			return msgs(FormatAppended, agent, every(base), true)
		case isMsg && strings.Contains(strings.ToLower(dirs[n-2]), "mailbox"):
			// Every agent's folder, those made later included: a shared
			// glob, in which the folder says whom a message is for.
			return msgs(FormatOne, agent, every("*"+path.Ext(base)), true)
		}
		return decision{}, false
	}
	// <mailboxes>/Agent-n/inbox/<file>
	if n >= 3 && strings.EqualFold(dirs[n-1], "inbox") && agentDir().MatchString(dirs[n-2]) && parentIs(n-3, isBoxes) {
		agent := dirs[n-2]
		every := path.Join(path.Join(dirs[:n-2]...), "*", dirs[n-1]) // every agent's inbox/, as for FormatOne above
		switch {
		case ext == ".txt":
			return msgs(FormatAppended, agent, every, true)
		case isMsg:
			return msgs(FormatOne, agent, every, true)
		}
		return decision{}, false
	}
	// inboxes/Agent-n.txt, Agent-n_incoming.txt: one appended file per
	// agent, all of them, those of agents added later too, watched by one
	// shared glob ("inboxes/Agent*.txt") in which the name says whom.
	if stem := intake.AgentFile(base); ext == ".txt" && stem != "" && n >= 1 && strings.Contains(strings.ToLower(dirs[n-1]), "inbox") {
		letters := strings.IndexFunc(stem, func(r rune) bool { return !unicode.IsLetter(r) }) // "Agent" of "Agent-3"
		return msgs(FormatAppended, stem, path.Join(dir, stem[:letters]+"*"+path.Ext(base)), true)
	}
	// One folder for every agent: agent_comms/inbox, a shared inbox, a
	// broadcast folder.
	if n >= 1 && slices.Contains([]string{"inbox", "shared_inbox", "broadcast", "broadcasts"}, strings.ToLower(dirs[n-1])) {
		switch {
		case lower == "inbox.json":
			return msgs(FormatList, "", "", false)
		case ext == ".txt":
			return msgs(FormatAppended, "", rel, true)
		case isMsg:
			return msgs(FormatOne, "", dir, true)
		}
	}
	// A message queue: arrays of queue entries, each naming its recipient.
	if n >= 1 && strings.EqualFold(dirs[n-1], "message_queue") && ext == ".json" {
		return msgs(FormatList, "", "", false)
	}
	return decision{}, false
}
