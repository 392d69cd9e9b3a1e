package projectboard

import (
	"bytes"
	"cmp"
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
	return importDoc(name, doc.Content[0])
}

// importDoc converts a Dream.OS board read as YAML nodes, which keep its
// fields' order and its values' text as written.
func importDoc(name string, doc *yaml.Node) (*Import, error) {
	items, top, err := dreamosTasks(doc)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	imp := &Import{}
	seq := &yaml.Node{Kind: yaml.SequenceNode}
	seen := map[string]bool{}
	for i, it := range items {
		t, err := importTask(inherit(it), imp)
		if err != nil {
			return nil, fmt.Errorf("%s: task %d: %w", name, i+1, err)
		}
		// Two tasks under one id (a task copied into two phases, two
		// agents' lists): both are kept, the later one renamed.
		id := t.Content[1].Value
		if seen[id] {
			renamed := id
			for n := 2; seen[renamed]; n++ {
				renamed = fmt.Sprintf("%s-%d", id, n)
			}
			imp.Warnings = append(imp.Warnings, fmt.Sprintf("%s: a second task with this id (task %d); kept as %s", id, i+1, renamed))
			t.Content[1] = scalar(renamed)
			id = renamed
		}
		seen[id] = true
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

// nested is a task found inside a phase or an agent's list: the phase and
// the owner it inherits from where it sat.
type nested struct {
	node         *yaml.Node
	phase, owner string
}

var agentKey = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?i)^agent[-_ ]?\d+$`) })

// dreamosTasks finds the task mappings in a Dream.OS file, and any
// top-level fields to keep beside them.
func dreamosTasks(root *yaml.Node) ([]nested, [][]*yaml.Node, error) {
	plain := func(ns []*yaml.Node) []nested {
		out := make([]nested, len(ns))
		for i, n := range ns {
			out[i] = nested{node: n}
		}
		return out
	}
	switch root.Kind {
	case yaml.SequenceNode:
		return plain(root.Content), nil, nil
	case yaml.MappingNode:
		if field(root, idKeys...) != nil {
			return []nested{{node: root}}, nil, nil
		}
		// Nested layouts: phases holding tasks, agents holding theirs.
		if items, top, ok := groupedTasks(root); ok {
			return items, top, nil
		}
		for _, list := range []string{"contracts", "tasks"} {
			if l := field(root, list); l != nil && l.Kind == yaml.SequenceNode {
				var top [][]*yaml.Node
				for i := 0; i < len(root.Content); i += 2 {
					if k := root.Content[i].Value; k != list && k != "tasks" {
						top = append(top, []*yaml.Node{root.Content[i], root.Content[i+1]})
					}
				}
				return plain(l.Content), top, nil
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
			return plain(items), nil, nil
		}
	}
	return nil, nil, fmt.Errorf("no tasks found: want a list of tasks, one task, a plan with contracts, phases or agents holding tasks, or a store keyed by id")
}

// groupedTasks reads the nested layouts: {"phases": [{"name": …, "tasks":
// […]}]} or {"phases": {"Phase 1": […]}}, {"agents": {"Agent-1": […]}},
// and a board keyed by agent name ({"Agent-1": {"tasks": […]}}), in any
// nesting of one in the other. Every task keeps the phase and the agent
// it sat under; the other top-level fields are kept beside the tasks.
func groupedTasks(root *yaml.Node) ([]nested, [][]*yaml.Node, bool) {
	var items []nested
	var top [][]*yaml.Node
	found := false
	byAgent := len(root.Content) > 0
	for i := 0; i < len(root.Content); i += 2 {
		if !agentKey().MatchString(root.Content[i].Value) {
			byAgent = false
		}
	}
	for i := 0; i < len(root.Content); i += 2 {
		k, v := root.Content[i].Value, root.Content[i+1]
		switch {
		case byAgent:
			items = append(items, groupTasks(v, nested{owner: k})...)
			found = true
		case strings.EqualFold(k, "phases") && (v.Kind == yaml.SequenceNode || v.Kind == yaml.MappingNode):
			items = append(items, groups(v, func(name string, g *yaml.Node) []nested { return groupTasks(g, nested{phase: name}) }, "name", "phase", "title", "id")...)
			found = true
		case strings.EqualFold(k, "agents") && v.Kind == yaml.MappingNode:
			items = append(items, groups(v, func(name string, g *yaml.Node) []nested { return groupTasks(g, nested{owner: name}) }, "agent", "agent_id", "name")...)
			found = true
		case (k == "tasks" || k == "contracts") && v.Kind == yaml.SequenceNode:
			items = append(items, groupTasks(v, nested{})...) // tasks beside the phases
		default:
			top = append(top, root.Content[i:i+2])
		}
	}
	return items, top, found
}

// groups calls each on every group of a list or a mapping of groups, named
// by its key in a mapping, else by the first of nameKeys it holds.
func groups(v *yaml.Node, each func(name string, g *yaml.Node) []nested, nameKeys ...string) []nested {
	var out []nested
	if v.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(v.Content); i += 2 {
			out = append(out, each(v.Content[i].Value, v.Content[i+1])...)
		}
		return out
	}
	for i, g := range v.Content {
		name := fmt.Sprint(i + 1)
		if n := field(g, nameKeys...); n != nil && n.Kind == yaml.ScalarNode {
			name = n.Value
		}
		out = append(out, each(name, g)...)
	}
	return out
}

// groupTasks lists the tasks of one group: a list of tasks, or a mapping
// holding them under tasks or contracts, or phases or agents further in.
func groupTasks(g *yaml.Node, in nested) []nested {
	var list *yaml.Node
	switch g.Kind {
	case yaml.SequenceNode:
		list = g
	case yaml.MappingNode:
		list = field(g, "tasks", "contracts")
		if list == nil || list.Kind != yaml.SequenceNode {
			inner, _, _ := groupedTasks(g)
			for i := range inner {
				inner[i].phase = cmp.Or(inner[i].phase, in.phase)
				inner[i].owner = cmp.Or(inner[i].owner, in.owner)
			}
			return inner
		}
		if in.owner == "" {
			if a := field(g, "agent", "agent_id", "owner"); a != nil && a.Kind == yaml.ScalarNode {
				in.owner = a.Value
			}
		}
	default:
		return nil
	}
	out := make([]nested, 0, len(list.Content))
	for _, t := range list.Content {
		out = append(out, nested{node: t, phase: in.phase, owner: in.owner})
	}
	return out
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

// inherit gives a task found in a phase or an agent's list that phase, as
// its phase field, and that agent as its owner, unless it names its own.
func inherit(it nested) *yaml.Node {
	n := it.node
	if n.Kind != yaml.MappingNode {
		return n
	}
	var extra []*yaml.Node
	if it.phase != "" && field(n, "phase") == nil {
		extra = append(extra, scalar("phase"), scalar(it.phase))
	}
	if it.owner != "" && field(n, "assigned_agent", "agent_assigned", "assigned_to", "claimed_by", "owner") == nil {
		extra = append(extra, scalar("assigned_to"), scalar(it.owner))
	}
	if len(extra) == 0 {
		return n
	}
	c := *n
	c.Content = append(append([]*yaml.Node(nil), n.Content...), extra...)
	return &c
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
		// The board's own key, when another gave the owner, is kept
		// aside below, as every board key not taken.
		if k != "claimed_by" && k != keyOwner || k == "claimed_by" && field(n, "assigned_agent", "agent_assigned", "assigned_to") == nil {
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
	// Notes as written, but for blank lines around them: their first
	// line's indentation may be a code block's.
	if v := field(n, "notes"); v != nil && v.Kind == yaml.ScalarNode {
		used["notes"] = true
		switch {
		case placeholder().MatchString(v.Value):
			warn("dropped notes %q, an unrendered placeholder", v.Value)
		case strings.TrimSpace(v.Value) != "":
			add(keyNotes, scalar(withoutBlankLines(v.Value)))
		}
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
		if used[k] {
			continue
		}
		if v.Kind == yaml.ScalarNode && placeholder().MatchString(v.Value) {
			warn("dropped %s %q, an unrendered placeholder", k, v.Value)
			continue
		}
		if isKnown(k) {
			// A board key the task's value came from another field for
			// (its id from task_id, its title from name): kept aside.
			warn("kept %s as dreamos_%s: the board's %s comes from another field", k, k, k)
			k = "dreamos_" + k
		}
		add(k, v)
	}
	return out, nil
}

// withoutBlankLines is s without its leading blank lines and trailing
// white space.
func withoutBlankLines(s string) string {
	for {
		line, rest, found := strings.Cut(s, "\n")
		if !found || strings.TrimSpace(line) != "" {
			break
		}
		s = rest
	}
	return strings.TrimRight(s, " \t\r\n")
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
// its JSON boards are converted, from its nodes: a value keeps its text
// (a date stays a date, not a time at midnight) and a task its fields'
// order. Aliases and merge keys are resolved first, as a reader of the
// file sees them.
func ImportDreamOSYAML(name string, data []byte) (*Import, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, err
	}
	if len(doc.Content) == 0 {
		return nil, fmt.Errorf("%s: cannot read board: it is empty", name)
	}
	budget := maxResolvedNodes
	root := resolved(doc.Content[0], 0, &budget)
	if budget < 0 {
		return nil, fmt.Errorf("%s: cannot read board: its aliases expand past %d values", name, maxResolvedNodes)
	}
	return importDoc(name, root)
}

// maxResolvedNodes bounds what a board's aliases may expand to: a few
// hundred bytes of aliases of aliases can name billions of values.
const maxResolvedNodes = 1 << 20

// resolved is n with its aliases replaced by what they name and its merge
// keys (<<) expanded, the mapping's own keys first. Each node it makes
// costs one of *budget; past it, it stops and leaves *budget negative.
func resolved(n *yaml.Node, depth int, budget *int) *yaml.Node {
	if *budget--; *budget < 0 || depth > 100 {
		*budget = -1
		return n
	}
	if n.Kind == yaml.AliasNode && n.Alias != nil {
		return resolved(n.Alias, depth+1, budget)
	}
	if len(n.Content) == 0 {
		return n
	}
	c := *n
	c.Content = nil
	var merged []*yaml.Node
	for i := 0; i < len(n.Content); i++ {
		if n.Kind == yaml.MappingNode && i%2 == 0 && n.Content[i].Value == "<<" && n.Content[i].Tag == "!!merge" && i+1 < len(n.Content) {
			from := resolved(n.Content[i+1], depth+1, budget)
			if from.Kind == yaml.SequenceNode {
				for _, m := range from.Content {
					merged = append(merged, resolved(m, depth+1, budget).Content...)
				}
			} else {
				merged = append(merged, from.Content...)
			}
			i++
			continue
		}
		c.Content = append(c.Content, resolved(n.Content[i], depth+1, budget))
	}
	for i := 0; i+1 < len(merged); i += 2 {
		if field(&c, merged[i].Value) == nil {
			c.Content = append(c.Content, merged[i], merged[i+1])
		}
	}
	return &c
}
