package main

import (
	"path"
	"regexp"
	"slices"
	"strings"

	"github.com/agentctl/agentctl/mailbox/intake"
)

// What migrate finds in a Dream.OS folder. findDreamOS is a pure function
// from the folder's file list (slash-separated paths relative to it) to
// these; migrate.go acts on them.

type foundKind int

const (
	foundMessage   foundKind = iota // one message per file
	foundAppended                   // Markdown messages appended one after another
	foundInboxJSON                  // a JSON array (or container) of messages: inbox.json, queue files
	foundCoords
	foundBoardJSON
	foundBoardYAML
	foundDevlog
)

// found is one file of the old system and what migrate does with it.
type found struct {
	Rel  string
	Kind foundKind
	// Agent is whose folder the file sat in ("" in shared places); a
	// message goes to its recipient all the same.
	Agent string
	// Watch is the place an old writer keeps writing to that the runner
	// should watch ("" for none), and Shared whether it holds every
	// agent's messages.
	Watch  string
	Shared bool
}

// skipped is a file or folder migrate leaves, and why.
type skipped struct{ Rel, Why string }

var (
	agentDir    = regexp.MustCompile(`(?i)^agent[-_]?\d+$`)
	boardName   = regexp.MustCompile(`(?i)(^|_)(working|future|completed|ready|pending|backlog)?_?tasks?(_[a-z]+)?\.json$|^task_ready_queue\.json$|^contracts\.json$`)
	archiveDirs = []string{"archive", "archives", "processed", "completed", "outbox", "sent", "deadletter", "dead_letter", "root_cleanup_archive"}
	skipDirs    = []string{".git", "node_modules", "__pycache__", ".venv", "venv", "site-packages", ".mypy_cache", ".pytest_cache"}
	// Files in the old mailboxes that are no messages.
	notMessageFiles = []string{"status.json", "claim.json", "heartbeat.json", "inbox.json.lock", "cursor_agent_coords.json"}
)

func isMessageFile(name string) bool {
	switch strings.ToLower(path.Ext(name)) {
	case ".json", ".md", ".msg":
		return !slices.Contains(notMessageFiles, strings.ToLower(name))
	}
	return false
}

// findDreamOS sorts the files of a Dream.OS checkout or runtime folder.
func findDreamOS(files []string) (out []found, skips []skipped) {
	archived := map[string]bool{}
	for _, rel := range files {
		parts := strings.Split(rel, "/")
		dirs, base := parts[:len(parts)-1], parts[len(parts)-1]
		lower := strings.ToLower(base)
		ext := strings.ToLower(path.Ext(base))
		if i := slices.IndexFunc(dirs, func(d string) bool {
			return slices.Contains(archiveDirs, strings.ToLower(d)) || strings.HasPrefix(strings.ToLower(d), "root_cleanup_archive")
		}); i >= 0 {
			dir := strings.Join(dirs[:i+1], "/")
			if !archived[dir] && (isMessageFile(base) || ext == ".txt") {
				archived[dir] = true
				skips = append(skips, skipped{dir + "/", "an archive of messages handled long ago"})
			}
			continue
		}
		dir := strings.Join(dirs, "/")
		inDir := func(names ...string) bool {
			return slices.ContainsFunc(dirs, func(d string) bool { return slices.Contains(names, strings.ToLower(d)) })
		}
		switch {
		case lower == "cursor_agent_coords.json":
			out = append(out, found{Rel: rel, Kind: foundCoords})
			continue
		case ext == ".md" && inDir("devlogs", "devlog"):
			out = append(out, found{Rel: rel, Kind: foundDevlog})
			continue
		case ext == ".json" && (inDir("central_task_boards", "task_boards", "project_board", "project_boards") || boardName.MatchString(lower)):
			out = append(out, found{Rel: rel, Kind: foundBoardJSON})
			continue
		case (ext == ".yaml" || ext == ".yml") && inDir("central_task_boards", "task_boards", "project_board", "project_boards", "boards"):
			out = append(out, found{Rel: rel, Kind: foundBoardYAML})
			continue
		}
		if f, ok := findMessage(dirs, base, dir); ok {
			if (f.Kind == foundMessage) && intake.HandledName(base) {
				skips = append(skips, skipped{rel, "its old reader renamed it once handled"})
				continue
			}
			out = append(out, f)
		}
	}
	return out, skips
}

// findMessage places a file in one of the mailbox layouts of the old
// writers, or reports it is none.
func findMessage(dirs []string, base, dir string) (found, bool) {
	lower := strings.ToLower(base)
	ext := strings.ToLower(path.Ext(base))
	rel := path.Join(dir, base)
	n := len(dirs)
	parentIs := func(i int, pred func(string) bool) bool { return i >= 0 && i < n && pred(strings.ToLower(dirs[i])) }
	isBoxes := func(d string) bool { return d == "agent_workspaces" || strings.Contains(d, "mailbox") }
	// <mailboxes>/Agent-n/<file>: directly in the agent's folder.
	if n >= 2 && agentDir.MatchString(dirs[n-1]) && parentIs(n-2, isBoxes) {
		agent := dirs[n-1]
		switch {
		case lower == "inbox.json":
			return found{Rel: rel, Kind: foundInboxJSON, Agent: agent, Watch: rel}, true
		case ext == ".txt":
			return found{Rel: rel, Kind: foundAppended, Agent: agent, Watch: rel}, true
		case isMessageFile(base) && strings.Contains(strings.ToLower(dirs[n-2]), "mailbox"):
			return found{Rel: rel, Kind: foundMessage, Agent: agent, Watch: path.Join(dir, "*"+path.Ext(base))}, true
		}
		return found{}, false
	}
	// <mailboxes>/Agent-n/inbox/<file>
	if n >= 3 && strings.EqualFold(dirs[n-1], "inbox") && agentDir.MatchString(dirs[n-2]) && parentIs(n-3, isBoxes) {
		agent := dirs[n-2]
		switch {
		case ext == ".txt":
			return found{Rel: rel, Kind: foundAppended, Agent: agent, Watch: rel}, true
		case isMessageFile(base):
			return found{Rel: rel, Kind: foundMessage, Agent: agent, Watch: dir}, true
		}
		return found{}, false
	}
	// inboxes/Agent-n.txt: one appended file per agent.
	if ext == ".txt" && agentDir.MatchString(strings.TrimSuffix(base, path.Ext(base))) && n >= 1 && strings.Contains(strings.ToLower(dirs[n-1]), "inbox") {
		return found{Rel: rel, Kind: foundAppended, Agent: strings.TrimSuffix(base, path.Ext(base)), Watch: rel}, true
	}
	// One folder for every agent: agent_comms/inbox, a shared inbox.
	if n >= 1 && (strings.EqualFold(dirs[n-1], "inbox") || strings.EqualFold(dirs[n-1], "shared_inbox")) {
		switch {
		case lower == "inbox.json":
			return found{Rel: rel, Kind: foundInboxJSON}, true
		case ext == ".txt":
			return found{Rel: rel, Kind: foundAppended, Watch: rel, Shared: true}, true
		case isMessageFile(base):
			return found{Rel: rel, Kind: foundMessage, Watch: dir, Shared: true}, true
		}
	}
	// A message queue: arrays of queue entries, each naming its recipient.
	if n >= 1 && strings.EqualFold(dirs[n-1], "message_queue") && ext == ".json" {
		return found{Rel: rel, Kind: foundInboxJSON}, true
	}
	return found{}, false
}
