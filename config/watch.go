package config

import (
	"bytes"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/agentctl/agentctl/internal/atomicfile"
	"github.com/agentctl/agentctl/internal/sizecap"
)

// Place is one place old writers write to: a path or glob, given in
// agentctl.yaml as a plain string or as {path: ..., take: true}. The
// runner only reads a place, remembering what it delivered, unless Take
// says it may empty it: remove each message file once delivered, and give
// an inbox.json back empty under its writers' lock, as an old reader did.
type Place struct {
	Path string `yaml:"path"`
	Take bool   `yaml:"take,omitempty"`
}

// UnmarshalYAML reads a place written as a plain string or as a mapping.
func (p *Place) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		*p = Place{Path: n.Value}
		return nil
	}
	type plain Place
	return n.Decode((*plain)(p))
}

// MarshalYAML writes a place that is only read as a plain string.
func (p Place) MarshalYAML() (any, error) {
	if !p.Take {
		return p.Path, nil
	}
	type plain Place
	return plain(p), nil
}

// validateWatch checks the places old writers write to: each is a path or
// a glob that filepath.Match accepts.
func (c Config) validateWatch() error {
	check := func(where, p string) error {
		if strings.TrimSpace(p) == "" {
			return fmt.Errorf("%s: an empty path", where)
		}
		if _, err := filepath.Match(p, ""); err != nil {
			return fmt.Errorf("%s: %q is not a valid glob: %w", where, p, err)
		}
		return nil
	}
	for i, a := range c.Agents {
		for j, p := range a.Watch {
			if err := check(fmt.Sprintf("agents[%d] (%s).watch[%d]", i, a.Name, j), p.Path); err != nil {
				return err
			}
		}
	}
	for j, p := range c.Mailbox.Shared {
		if err := check(fmt.Sprintf("mailbox.shared[%d]", j), p.Path); err != nil {
			return err
		}
	}
	return nil
}

// WatchPaths are the agent's extra places, absolute (relative ones are
// taken from the runtime root).
func (a Agent) WatchPaths(root string) []string { return absolute(root, a.Watch, false) }

// SharedPaths are the shared places, absolute.
func (c Config) SharedPaths(root string) []string { return absolute(root, c.Mailbox.Shared, false) }

// TakePaths are, of the agent's places and the shared ones, those whose
// files its runner may take (Place.Take), absolute.
func (c Config) TakePaths(root string, a Agent) []string {
	return append(absolute(root, a.Watch, true), absolute(root, c.Mailbox.Shared, true)...)
}

// SharedDeadletters reports whether agent is the one whose runner
// dead-letters what the shared places hold for no agent: the first listed.
func (c Config) SharedDeadletters(agent string) bool {
	return len(c.Mailbox.Shared) > 0 && len(c.Agents) > 0 && c.Agents[0].Name == agent
}

func absolute(root string, places []Place, takenOnly bool) []string {
	var out []string
	for _, pl := range places {
		if takenOnly && !pl.Take {
			continue
		}
		p := pl.Path
		if !filepath.IsAbs(p) {
			p = filepath.Join(root, p)
		}
		if abs, err := filepath.Abs(p); err == nil {
			p = abs
		}
		out = append(out, filepath.Clean(p))
	}
	return out
}

// AddWatch adds places to the agents' watch lists and to mailbox.shared in
// root/agentctl.yaml, leaving out those listed already, and reports how
// many it added. With take, each is written {path: ..., take: true}. Like SetWindows it edits the document node by node, so
// comments and other settings survive, and replaces the file atomically.
func AddWatch(root string, perAgent map[string][]string, shared []string, take bool) (int, error) {
	path := Path(root)
	data, err := sizecap.ReadFile(path)
	if err != nil {
		return 0, fmt.Errorf("cannot read config: %w", err)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil || len(doc.Content) == 0 {
		return 0, fmt.Errorf("%s: cannot read: %v", path, err)
	}
	top := doc.Content[0]
	added := 0
	appendNew := func(seq *yaml.Node, paths []string) {
		for _, p := range paths {
			if slices.ContainsFunc(seq.Content, func(n *yaml.Node) bool {
				return n.Value == p || mapValue(n, "path") != nil && mapValue(n, "path").Value == p
			}) {
				continue
			}
			entry := &yaml.Node{Kind: yaml.ScalarNode, Value: p}
			if take {
				entry = &yaml.Node{Kind: yaml.MappingNode, Content: []*yaml.Node{
					{Kind: yaml.ScalarNode, Value: "path"}, {Kind: yaml.ScalarNode, Value: p},
					{Kind: yaml.ScalarNode, Value: "take"}, {Kind: yaml.ScalarNode, Value: "true", Tag: "!!bool"}}}
			}
			seq.Content = append(seq.Content, entry)
			added++
		}
	}
	list := func(m *yaml.Node, key string) *yaml.Node {
		if seq := mapValue(m, key); seq != nil && seq.Kind == yaml.SequenceNode {
			seq.Style = 0 // one place a line: they are long
			return seq
		}
		seq := &yaml.Node{Kind: yaml.SequenceNode}
		m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: key}, seq)
		return seq
	}
	agents := mapValue(top, "agents")
	for name, paths := range perAgent {
		var entry *yaml.Node
		if agents != nil {
			for _, a := range agents.Content {
				if n := mapValue(a, "name"); n != nil && strings.EqualFold(n.Value, name) {
					entry = a
				}
			}
		}
		if entry == nil {
			return 0, fmt.Errorf("%s: agent %s is not listed", path, name)
		}
		appendNew(list(entry, "watch"), paths)
	}
	if len(shared) > 0 {
		mb := mapValue(top, "mailbox")
		if mb == nil {
			mb = &yaml.Node{Kind: yaml.MappingNode}
			top.Content = append(top.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: "mailbox"}, mb)
		}
		appendNew(list(mb, "shared"), shared)
	}
	if added == 0 {
		return 0, nil
	}
	var out bytes.Buffer
	enc := yaml.NewEncoder(&out)
	enc.SetIndent(2)
	if err := enc.Encode(&doc); err != nil {
		return 0, fmt.Errorf("cannot encode config: %w", err)
	}
	if _, err := Parse(path, out.Bytes()); err != nil {
		return 0, fmt.Errorf("the config with the watch places would not be valid: %w", err)
	}
	return added, atomicfile.WriteFile(path, out.Bytes())
}
