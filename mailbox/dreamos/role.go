package dreamos

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// agentInRole finds the agent a role text names: "Captain Agent-4",
// "Agent-2 (Architecture & Design Specialist)", "AGENT 5".
var agentInRole = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?i)\bagent[-_ ]?(\d{1,3})\b`) })

// roleAgent turns the role text a writer put where a name belongs into
// the one agent it names, noting the fallback; a plain name, or text that
// names no agent or several, is kept as written.
func (m *Message) roleAgent(field, value string) string {
	v := strings.TrimSpace(value)
	if !strings.Contains(v, " ") || strings.ContainsAny(v, `/\`) {
		return value // a name, or a path that is no one's: kept for the check that refuses it
	}
	named := AgentsNamed(v)
	if len(named) != 1 {
		return value // none, or several: not for us to pick one
	}
	m.fallback(field, value, named[0], "a role text, not a name: the agent it names")
	return named[0]
}

// AgentsNamed lists, once each and in order, the agents a text names as
// "Agent-n" in any spelling ("AGENT 5", "agent_3", "Captain Agent-4"):
// one for a role, several for "Agent-1 and Agent-2", none for "the team".
func AgentsNamed(text string) []string {
	var names []string
	for _, f := range agentInRole().FindAllStringSubmatch(text, -1) {
		n, _ := strconv.Atoi(f[1])
		if name := fmt.Sprintf("Agent-%d", n); !slices.Contains(names, name) {
			names = append(names, name)
		}
	}
	return names
}
