package actions

import (
	"strings"

	"github.com/agentctl/agentctl/devlog"
)

// Noted is a note added to an agent's devlog.
type Noted struct {
	Agent string
	// Path is the devlog the note went into.
	Path string
}

// Note appends text to agent's devlog as one entry by author ("human"
// when empty), in a single write beside the agent's own entries.
func (rt Runtime) Note(agent, author, text string) (Noted, error) {
	who, err := rt.ResolveAgent(agent)
	if err != nil {
		return Noted{}, err
	}
	if strings.TrimSpace(text) == "" {
		return Noted{}, inputError("devlog: the note is empty", "")
	}
	if author == "" {
		author = "human"
	}
	if err := devlog.Append(rt.Root, devlog.Entry{Time: rt.now(), Agent: who, Note: text, Author: author}); err != nil {
		return Noted{}, err
	}
	path, err := devlog.Path(rt.Root, who)
	return Noted{Agent: who, Path: path}, err
}
