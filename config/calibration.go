package config

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/agentctl/agentctl/internal/atomicfile"
	"github.com/agentctl/agentctl/internal/sizecap"
)

// SetWindows replaces the window section of the named agents in
// root/agentctl.yaml. Only the lines that change are rewritten: comments,
// blank lines and every other setting stay as written.
func SetWindows(root string, windows map[string]Window) error {
	sections := map[string][]keyValue{}
	for name, w := range windows {
		sections[name] = []keyValue{{"window", w}}
	}
	return setAgentKeys(root, sections)
}

// SetCDP makes the named agent a cdp seat with settings c, the same way
// SetWindows records a window.
func SetCDP(root, agent string, c CDP) error {
	return setAgentKeys(root, map[string][]keyValue{agent: {{"driver", DriverCDP}, {"cdp", c}}})
}

type keyValue struct {
	key   string
	value any
}

// setAgentKeys replaces (or adds) keys of the named agents' entries,
// changing only the lines it must (editAgentKeys), checks that the result
// is a valid config, and replaces the file atomically.
func setAgentKeys(root string, agentKeys map[string][]keyValue) error {
	path := Path(root)
	data, err := sizecap.ReadFile(path)
	if err != nil {
		return fmt.Errorf("cannot read config: %w", err)
	}
	out, err := editAgentKeys(data, agentKeys)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if _, err := Parse(path, out); err != nil {
		return fmt.Errorf("the calibrated config would not be valid: %w", err)
	}
	return atomicfile.WriteFile(path, out)
}

// mapValue returns the value of key in a mapping node, or nil.
func mapValue(m *yaml.Node, key string) *yaml.Node {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

// DreamOSCoords reads a Dream.OS cursor_agent_coords.json, in any of its
// generations, and returns the window positions per agent name. All of them
// are screen coordinates.
//
//   - Victor.os: {"Agent-1": {"input_box": {x,y}, "copy_button": {x,y}, ...}, "global_ui": ...}
//   - Agent_Cellphone: {"4-agent": {"Agent-1": {"input_box": {x,y}, ...}}, ...}, one per layout
//   - AutoDream.Os / Dream.os: {"agents": {"Agent-1": {"chat_input_coordinates": [x,y], ...}}}
//   - flat: {"Agent-1": {"input_box_x": x, "input_box_y": y, "copy_button_x": x, "copy_button_y": y}}
func DreamOSCoords(data []byte, layout string) (map[string]Window, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		return nil, fmt.Errorf("not a cursor_agent_coords.json: %w", err)
	}
	if raw, ok := top["agents"]; ok {
		return dreamAgents(raw)
	}
	var layouts []string
	for k := range top {
		if strings.HasSuffix(k, "-agent") {
			layouts = append(layouts, k)
		}
	}
	sort.Strings(layouts)
	if len(layouts) > 0 {
		raw, ok := top[layout]
		if !ok {
			return nil, fmt.Errorf("the file has one set of positions per layout (%s): choose one with --layout", strings.Join(layouts, ", "))
		}
		return dreamAgents(raw)
	}
	return dreamAgents(data)
}

// DreamOSWindows merges Dream.OS positions (DreamOSCoords) into the
// configured agents' windows; skipped are the names of agents not
// configured.
func (c Config) DreamOSWindows(found map[string]Window) (windows map[string]Window, skipped []string) {
	windows = map[string]Window{}
	for name, pos := range found {
		agent, err := c.Agent(name)
		if err != nil {
			skipped = append(skipped, name)
			continue
		}
		w := agent.Window
		w.Absolute, w.Input = true, pos.Input
		if pos.Copy != nil {
			w.Copy, w.CopyKeys = pos.Copy, nil
		}
		windows[agent.Name] = w
	}
	return windows, skipped
}

type dreamPoint struct {
	X *int `json:"x"`
	Y *int `json:"y"`
}

type dreamAgent struct {
	InputBox   *dreamPoint `json:"input_box"`
	CopyButton *dreamPoint `json:"copy_button"`
	ChatInput  []int       `json:"chat_input_coordinates"`
	// Flat keys, as some generations wrote them.
	InputX      *int   `json:"input_box_x"`
	InputY      *int   `json:"input_box_y"`
	CopyX       *int   `json:"copy_button_x"`
	CopyY       *int   `json:"copy_button_y"`
	Description string `json:"description"`
}

func dreamAgents(raw json.RawMessage) (map[string]Window, error) {
	var entries map[string]json.RawMessage
	if err := json.Unmarshal(raw, &entries); err != nil {
		return nil, fmt.Errorf("unexpected layout of agents: %w", err)
	}
	out := map[string]Window{}
	for name, e := range entries {
		var a dreamAgent
		if json.Unmarshal(e, &a) != nil {
			continue // not an agent entry (version, description, ...)
		}
		w := Window{Absolute: true}
		switch {
		case a.InputBox != nil && a.InputBox.X != nil && a.InputBox.Y != nil:
			w.Input = &Point{*a.InputBox.X, *a.InputBox.Y}
		case a.InputX != nil && a.InputY != nil:
			w.Input = &Point{*a.InputX, *a.InputY}
		case len(a.ChatInput) == 2:
			if a.ChatInput[0] == 0 && a.ChatInput[1] == 0 {
				continue // Dream.os marks non-window recipients (Discord) with [0, 0]
			}
			w.Input = &Point{a.ChatInput[0], a.ChatInput[1]}
		default:
			continue
		}
		if a.CopyButton != nil && a.CopyButton.X != nil && a.CopyButton.Y != nil {
			w.Copy = &Point{*a.CopyButton.X, *a.CopyButton.Y}
		} else if a.CopyX != nil && a.CopyY != nil {
			w.Copy = &Point{*a.CopyX, *a.CopyY}
		}
		out[name] = w
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no agent positions found")
	}
	return out, nil
}
