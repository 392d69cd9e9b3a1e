package dreamos

import (
	"fmt"
	"regexp"
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
	found := agentInRole().FindAllStringSubmatch(v, -1)
	if len(found) == 0 {
		return value
	}
	for _, f := range found[1:] {
		if f[1] != found[0][1] {
			return value // several agents: not for us to pick one
		}
	}
	n, _ := strconv.Atoi(found[0][1])
	name := fmt.Sprintf("Agent-%d", n)
	m.fallback(field, value, name, "a role text, not a name: the agent it names")
	return name
}
