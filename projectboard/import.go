package projectboard

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"time"

	"gopkg.in/yaml.v3"
)

// Import is a Dream.OS board converted to a YAML board.
type Import struct {
	Data     []byte   // the YAML board
	IDs      []string // the tasks' ids, in order
	Warnings []string // what was dropped or guessed, one line each
}

// ImportDreamOS converts a Dream.OS JSON board into a YAML board. It reads
// the shapes Dream.OS used: a list of tasks (working_tasks.json,
// task_ready_queue.json), a single task (backlog/*.json), a cycle plan with
// a "contracts" or "tasks" list, and a contracts store keyed by id. It
// tolerates the "//" comments Dream.OS wrote into JSON, drops values that
// are unrendered "{{...}}" placeholders, and keeps every other field.
func ImportDreamOS(name string, data []byte) (*Import, error) {
	clean := stripLineComments(data)
	if !json.Valid(clean) {
		var v any
		err := json.Unmarshal(clean, &v)
		return nil, fmt.Errorf("%s: not a JSON board even without // comments: %w", name, err)
	}
	var doc yaml.Node // JSON is YAML; nodes keep the fields' order
	if err := yaml.Unmarshal(clean, &doc); err != nil || len(doc.Content) == 0 {
		return nil, fmt.Errorf("%s: cannot read board: %v", name, err)
	}
	items, top, err := dreamosTasks(doc.Content[0])
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	imp := &Import{}
	seq := &yaml.Node{Kind: yaml.SequenceNode}
	for i, it := range items {
		t, err := importTask(it, imp)
		if err != nil {
			return nil, fmt.Errorf("%s: task %d: %w", name, i+1, err)
		}
		seq.Content = append(seq.Content, t)
	}
	root := &yaml.Node{Kind: yaml.MappingNode}
	plainStyle(seq)
	for _, kv := range top {
		plainStyle(kv[0])
		plainStyle(kv[1])
	}
	for _, kv := range top {
		root.Content = append(root.Content, kv...)
	}
	root.Content = append(root.Content, scalar("tasks"), seq)
	var out bytes.Buffer
	out.WriteString("# Imported from Dream.OS " + name + " by agentctl board import.\n")
	out.WriteString("# status is one of todo, in_progress, review, blocked, done;\n# dreamos_status keeps the original.\n")
	enc := yaml.NewEncoder(&out)
	enc.SetIndent(2)
	if err := enc.Encode(root); err != nil {
		return nil, fmt.Errorf("%s: cannot write board: %w", name, err)
	}
	enc.Close()
	b, err := Parse(name, out.Bytes())
	if err != nil {
		return nil, fmt.Errorf("%s: the converted board is not valid: %w", name, err)
	}
	for _, t := range b.Tasks {
		imp.IDs = append(imp.IDs, t.ID)
	}
	imp.Data = out.Bytes()
	return imp, nil
}

// stripLineComments removes "//" comments that are outside strings.
func stripLineComments(data []byte) []byte {
	var out []byte
	inString, escaped := false, false
	for i := 0; i < len(data); i++ {
		c := data[i]
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == '/' && i+1 < len(data) && data[i+1] == '/':
			for i < len(data) && data[i] != '\n' {
				i++
			}
			if i < len(data) {
				out = append(out, '\n')
			}
			continue
		}
		out = append(out, c)
	}
	return out
}

var idKeys = []string{"task_id", "contract_id", "id"}

// dreamosTasks finds the task mappings in a Dream.OS file, and any
// top-level fields to keep beside them.
func dreamosTasks(root *yaml.Node) ([]*yaml.Node, [][]*yaml.Node, error) {
	switch root.Kind {
	case yaml.SequenceNode:
		return root.Content, nil, nil
	case yaml.MappingNode:
		if field(root, idKeys...) != nil {
			return []*yaml.Node{root}, nil, nil
		}
		for _, list := range []string{"contracts", "tasks"} {
			if l := field(root, list); l != nil && l.Kind == yaml.SequenceNode {
				var top [][]*yaml.Node
				for i := 0; i < len(root.Content); i += 2 {
					if k := root.Content[i].Value; k != list && k != "tasks" {
						top = append(top, []*yaml.Node{root.Content[i], root.Content[i+1]})
					}
				}
				return l.Content, top, nil
			}
		}
		var items []*yaml.Node // a store keyed by id
		for i := 1; i < len(root.Content); i += 2 {
			if v := root.Content[i]; v.Kind == yaml.MappingNode {
				if field(v, idKeys...) == nil {
					v.Content = append([]*yaml.Node{scalar("id"), scalar(root.Content[i-1].Value)}, v.Content...)
				}
				items = append(items, v)
			}
		}
		if len(items) > 0 {
			return items, nil, nil
		}
	}
	return nil, nil, fmt.Errorf("no tasks found: want a list of tasks, one task, a plan with contracts, or a store keyed by id")
}

func field(m *yaml.Node, keys ...string) *yaml.Node {
	for _, k := range keys {
		for i := 0; i+1 < len(m.Content); i += 2 {
			if m.Content[i].Value == k && m.Content[i+1].Tag != "!!null" {
				return m.Content[i+1]
			}
		}
	}
	return nil
}

// plainStyle drops the JSON quoting and brackets of carried-over fields,
// so the board reads like YAML a human would write; the encoder quotes
// whatever needs it.
func plainStyle(n *yaml.Node) {
	n.Style = 0
	for _, c := range n.Content {
		plainStyle(c)
	}
}

func scalar(v string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: v} }

var placeholder = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\{\{.*\}\}`) })

var dreamosStatus = map[string]Status{}

func init() {
	for st, words := range map[Status]string{
		Todo:       "PENDING READY TODO NEW OPEN QUEUED BACKLOG ASSIGNED PROPOSED",
		InProgress: "WORKING CLAIMED IN_PROGRESS EXECUTING ACTIVE RUNNING STARTED",
		Review:     "REVIEW IN_REVIEW PENDING_REVIEW VALIDATING REVIEW_PENDING",
		Blocked:    "BLOCKED BLOCKED_PASSIVE FAILED ERROR ON_HOLD STALLED",
		Done:       "COMPLETED COMPLETE DONE CLOSED RESOLVED FINISHED",
	} {
		for _, w := range strings.Fields(words) {
			dreamosStatus[w] = st
		}
	}
}

// importTask maps one Dream.OS task onto the board's keys; other fields
// follow in their original order.
func importTask(n *yaml.Node, imp *Import) (*yaml.Node, error) {
	if n.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("a task must be a JSON object")
	}
	idNode := field(n, idKeys...)
	if idNode == nil || idNode.Kind != yaml.ScalarNode || strings.TrimSpace(idNode.Value) == "" {
		return nil, fmt.Errorf("it has no task_id, contract_id or id")
	}
	id := idNode.Value
	warn := func(format string, args ...any) {
		imp.Warnings = append(imp.Warnings, fmt.Sprintf("%s: ", id)+fmt.Sprintf(format, args...))
	}
	used := map[string]bool{}
	text := func(keys ...string) string {
		for _, k := range keys {
			if v := field(n, k); v != nil && v.Kind == yaml.ScalarNode {
				used[k] = true
				if placeholder().MatchString(v.Value) {
					warn("dropped %s %q, an unrendered placeholder", k, v.Value)
					continue
				}
				return strings.TrimSpace(v.Value)
			}
		}
		return ""
	}
	out := &yaml.Node{Kind: yaml.MappingNode}
	add := func(k string, v *yaml.Node) { out.Content = append(out.Content, scalar(k), v) }
	text(idKeys...)
	add(keyID, scalar(id))
	title := text("name", "title", "summary")
	if title == "" {
		title = id
	}
	add(keyTitle, scalar(title))
	orig := text("status")
	st, ok := dreamosStatus[strings.ToUpper(strings.ReplaceAll(orig, "-", "_"))]
	if !ok {
		st = Todo
		warn("status %q is unknown; imported as todo", orig)
	}
	add(keyStatus, scalar(string(st)))
	owners := []string{"assigned_agent", "agent_assigned", "assigned_to", "claimed_by", "owner"}
	add(keyOwner, scalar(text(owners...)))
	if o := field(n, owners...); o != nil && o.Kind != yaml.ScalarNode {
		warn("owner is not a name; left empty")
	}
	for _, k := range owners {
		if k != "claimed_by" || field(n, "assigned_agent", "agent_assigned", "assigned_to") == nil {
			used[k] = true
		}
	}
	if p := text("priority"); p != "" {
		add(keyPriority, scalar(strings.ToLower(p)))
	}
	if deps := field(n, "dependencies", "depends_on"); deps != nil && deps.Kind == yaml.SequenceNode && len(deps.Content) > 0 {
		add(keyDependsOn, deps)
	}
	used["dependencies"], used["depends_on"] = true, true
	if notes := text("notes"); notes != "" {
		add(keyNotes, scalar(notes))
	}
	for _, k := range []string{"timestamp_updated", "last_updated", "updated_at", "timestamp_updated_utc"} {
		if v := field(n, k); v != nil && !used[keyUpdatedAt] {
			if t, ok := parseDreamosTime(v.Value); ok {
				add(keyUpdatedAt, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!timestamp", Value: t.UTC().Format(time.RFC3339)})
				used[k], used[keyUpdatedAt] = true, true
			}
		}
	}
	if orig != "" && orig != string(st) {
		add("dreamos_status", scalar(orig))
	}
	for i := 0; i < len(n.Content); i += 2 {
		k, v := n.Content[i].Value, n.Content[i+1]
		if used[k] || isKnown(k) {
			continue
		}
		if v.Kind == yaml.ScalarNode && placeholder().MatchString(v.Value) {
			warn("dropped %s %q, an unrendered placeholder", k, v.Value)
			continue
		}
		add(k, v)
	}
	return out, nil
}

func parseDreamosTime(s string) (time.Time, bool) {
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999", "2006-01-02T15:04:05.999999999-07:00Z", "2006-01-02 15:04:05"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}

// ImportDreamOSYAML converts a Dream.OS task board kept as YAML the way
// its JSON boards are converted.
func ImportDreamOSYAML(name string, data []byte) (*Import, error) {
	var v any
	if err := yaml.Unmarshal(data, &v); err != nil {
		return nil, err
	}
	j, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return ImportDreamOS(name, j)
}
