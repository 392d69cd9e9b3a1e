package config

import (
	"bytes"
	"fmt"
	"text/template"
)

// initialTemplate is the agentctl.yaml that `agentctl init` writes: every
// setting at its default, with a comment saying what it does, so users can
// learn the file by reading it.
var initialTemplate = template.Must(template.New("agentctl.yaml").Parse(`# agentctl configuration. Written by 'agentctl init'; edit freely.
# Durations are written like 500ms, 30s, 5m or 1h.

# The agents of this swarm. Messages to a name not listed here are refused,
# so a typo never creates a mailbox. Names are letters, digits, '-' and '_'.
agents:
{{- range .Agents}}
  - name: {{.}}
{{- end}}

mailbox:
  # How new messages are noticed: "events" (file system events, instant) or
  # "poll" (for network or synced folders where events never arrive).
  watch: {{.M.Watch}}
  # How often the poll mode looks at the folders.
  poll_interval: {{.M.PollInterval}}
  # A full rescan runs this often even with events on, in case one was lost.
  rescan_interval: {{.M.RescanInterval}}
  # A dropped file that is not complete JSON yet (a Markdown message, a copy
  # still running) is read once it has not changed for this long.
  settle: {{.M.Settle}}
  # Tries before a message goes to deadletter/ with its reason.
  max_attempts: {{.M.MaxAttempts}}
  # Wait before the first retry; it doubles with each further retry.
  backoff: {{.M.Backoff}}
`))

// Initial returns the commented agentctl.yaml for a new runtime with the
// given agents.
func Initial(agents []string) []byte {
	var buf bytes.Buffer
	data := struct {
		Agents []string
		M      Mailbox
	}{agents, Default().Mailbox}
	if err := initialTemplate.Execute(&buf, data); err != nil {
		panic(fmt.Sprintf("config template: %v", err))
	}
	return buf.Bytes()
}
