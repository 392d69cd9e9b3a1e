// Package config owns agentctl.yaml: its defaults, how it is read, what makes
// it valid, and the commented file that `agentctl init` writes.
//
// No other package reads YAML configuration. Commands load a Config here and
// hand plain values (durations, names, coordinates) down to the packages that
// do the work, so those packages never depend on the file's shape.
//
// The one file it writes is agentctl.yaml, and only to record what
// calibrate and migrate found (SetWindows, SetCDP, AddWatch), keeping the
// file's comments and other settings; it writes no other file.
package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/agentctl/agentctl/internal/agentname"
	"github.com/agentctl/agentctl/internal/layout"
	"github.com/agentctl/agentctl/internal/sizecap"
)

// FileName is the config file's name inside the runtime root.
const FileName = layout.ConfigFile

// Config is the whole of agentctl.yaml.
type Config struct {
	// Agents are the agents this runtime knows. A name not listed here is
	// refused everywhere, so a typo never creates a mailbox.
	Agents []Agent `yaml:"agents"`
	// People have mailboxes but no runner (config/people.go); nil means
	// DefaultPeople.
	People  []string `yaml:"people"`
	Mailbox Mailbox  `yaml:"mailbox"`
	GUI     GUI      `yaml:"gui"`
	// The runner's settings (config/agents.go).
	Run        Run        `yaml:"run"`
	RateLimit  RateLimit  `yaml:"rate_limit"`
	Recovery   Recovery   `yaml:"recovery"`
	Supervisor Supervisor `yaml:"supervisor"`
	// What the runner does without a model turn (config/coordination.go).
	Coordination Coordination `yaml:"coordination"`
	// What a reply may do without a person's approval (config/guardrails.go).
	Guardrails Guardrails `yaml:"guardrails"`
	// How the machines of a swarm meet (config/hub.go).
	Hub Hub `yaml:"hub,omitempty"`
	// Model prices and daily budgets (config/costs.go).
	Costs Costs `yaml:"costs,omitempty"`
	// Who is told of a message for a person, and how (config/notify.go).
	Notify Notify `yaml:"notify,omitempty"`
}

// Agent is one agent's seat: its name and how its turns are driven.
type Agent struct {
	Name string `yaml:"name"`
	// Driver is how turns reach the agent: "gui" (a chat window on this
	// desktop, the default), "exec" (a headless command per turn) or "cdp"
	// (a chat page driven through the app's DevTools protocol) or "acp" (an
	// agent speaking the Agent Client Protocol on a child's stdio).
	Driver string `yaml:"driver,omitempty"`
	Window Window `yaml:"window,omitempty"`
	Exec   Exec   `yaml:"exec,omitempty"`
	CDP    CDP    `yaml:"cdp,omitempty"`
	ACP    ACP    `yaml:"acp,omitempty"`
	// Program is the working folder, environment and model of a seat that
	// runs a program (config/program.go).
	Program `yaml:",inline"`
	// NewChat says when a fresh conversation starts (config/preset.go).
	NewChat NewChat `yaml:"new_chat,omitempty"`
	// Board lets the agent's idle runner take work from the boards.
	Board BoardWork `yaml:"board,omitempty"`
	// Watch lists places outside the mailbox where old (Dream.OS) writers
	// that keep running write this agent's messages: folders, files and
	// globs, relative to the runtime root unless absolute (config/watch.go).
	// A place is only read unless it says take: true.
	Watch []Place `yaml:"watch,omitempty"`
	// Machine is where the agent's window or command is, when that is not
	// the hub's machine: its turns then cross over from `agentctl hub` to
	// `agentctl run AGENT --hub` on that machine (config/hub.go).
	Machine string `yaml:"machine,omitempty"`
}

// Mailbox holds the mailbox and watcher settings shared by every agent.
type Mailbox struct {
	// Watch is "events" (fsnotify, the default) or "poll" for network and
	// synced folders where file events never arrive.
	Watch string `yaml:"watch"`
	// PollInterval is how often the poll mode looks at the folders.
	PollInterval Duration `yaml:"poll_interval"`
	// RescanInterval is how often a full rescan runs even with events on,
	// because events can be lost when the kernel queue overflows.
	RescanInterval Duration `yaml:"rescan_interval"`
	// Settle is how long a dropped file that is not yet complete JSON (a
	// Markdown message, a copy in progress) must stay unchanged before it is
	// read.
	Settle Duration `yaml:"settle"`
	// MaxAttempts is how many times a message is tried before it is
	// dead-lettered.
	MaxAttempts int `yaml:"max_attempts"`
	// Backoff is the wait before the first retry; it doubles on each retry.
	Backoff Duration `yaml:"backoff"`
	// MaxInboxJSONBytes is the largest Dream.OS inbox.json ingested; a
	// larger one goes to deadletter/ unread.
	MaxInboxJSONBytes int64 `yaml:"max_inbox_json_bytes"`
	// Shared lists folders where old writers put every agent's messages;
	// each is read by the runner of the agent it is addressed to.
	Shared []Place `yaml:"shared,omitempty"`
}

// Default returns the configuration used when a setting is absent.
func Default() Config {
	return Config{
		Mailbox: Mailbox{
			Watch:             "events",
			PollInterval:      Duration(time.Second),
			RescanInterval:    Duration(30 * time.Second),
			Settle:            Duration(time.Second),
			MaxAttempts:       3,
			Backoff:           Duration(30 * time.Second),
			MaxInboxJSONBytes: 64 << 20,
		},
		GUI:       DefaultGUI(),
		Run:       defaultRun(),
		RateLimit: defaultRateLimit(),
		Recovery:  defaultRecovery(),

		Coordination: defaultCoordination(),
		Guardrails:   defaultGuardrails(),
		Hub:          defaultHub(),
	}
}

// ErrNotFound is returned by Load when the runtime has no agentctl.yaml.
var ErrNotFound = errors.New("no agentctl.yaml")

// Path is where the config file of a runtime root lives.
func Path(root string) string { return layout.Config(root) }

// Load reads and validates root/agentctl.yaml, filling absent settings with
// their defaults.
func Load(root string) (Config, error) {
	data, err := sizecap.ReadFile(Path(root))
	if errors.Is(err, fs.ErrNotExist) {
		return Config{}, fmt.Errorf("%w in %s", ErrNotFound, root)
	}
	if err != nil {
		return Config{}, fmt.Errorf("cannot read config: %w", err)
	}
	return Parse(Path(root), data)
}

// Parse decodes and validates config data; name is used in error messages.
func Parse(name string, data []byte) (Config, error) {
	cfg := Default()
	dec := yaml.NewDecoder(bytes.NewReader(blankComments(data)))
	dec.KnownFields(true)
	if err := dec.Decode(&cfg); err != nil && !errors.Is(err, io.EOF) {
		return Config{}, fmt.Errorf("%s: %w", name, err)
	}
	if err := cfg.Validate(); err != nil {
		return Config{}, fmt.Errorf("%s: %w", name, err)
	}
	return cfg, nil
}

// Validate reports the first thing in the config that cannot work.
func (c Config) Validate() error {
	seen := map[string]bool{}
	for i, a := range c.Agents {
		if err := agentname.Valid(a.Name); err != nil {
			return fmt.Errorf("agents[%d]: %w", i, err)
		}
		key := strings.ToLower(a.Name)
		if seen[key] {
			return fmt.Errorf("agents[%d]: agent %q is listed twice", i, a.Name)
		}
		seen[key] = true
		if err := a.Validate(); err != nil {
			return fmt.Errorf("agents[%d] (%s): %w", i, a.Name, err)
		}
	}
	if err := c.validatePeople(); err != nil {
		return err
	}
	if err := c.GUI.validate(); err != nil {
		return err
	}
	if err := c.validateRunner(); err != nil {
		return err
	}
	if err := c.Coordination.validate(); err != nil {
		return err
	}
	if err := c.Guardrails.validate(); err != nil {
		return err
	}
	if err := c.Hub.validate(c.Agents); err != nil {
		return err
	}
	if err := c.Notify.validate(); err != nil {
		return err
	}
	m := c.Mailbox
	switch m.Watch {
	case "events", "poll":
	default:
		return fmt.Errorf("mailbox.watch: %q is neither events nor poll", m.Watch)
	}
	for _, d := range []struct {
		name string
		v    Duration
	}{{"poll_interval", m.PollInterval}, {"rescan_interval", m.RescanInterval}, {"settle", m.Settle}, {"backoff", m.Backoff}} {
		if d.v <= 0 {
			return fmt.Errorf("mailbox.%s: must be a positive duration such as 30s", d.name)
		}
	}
	if m.MaxAttempts < 1 {
		return fmt.Errorf("mailbox.max_attempts: must be at least 1")
	}
	if m.MaxInboxJSONBytes < 1 {
		return fmt.Errorf("mailbox.max_inbox_json_bytes: must be a positive number of bytes such as 67108864")
	}
	if err := c.validateCosts(); err != nil {
		return err
	}
	return c.validateWatch()
}

// AgentNames lists the configured agents in file order.
func (c Config) AgentNames() []string {
	names := make([]string, len(c.Agents))
	for i, a := range c.Agents {
		names[i] = a.Name
	}
	return names
}

// Agent finds a configured agent by name, ignoring case, because Dream.OS
// wrote "agent-2" as often as "Agent-2".
func (c Config) Agent(name string) (Agent, error) {
	canonical, err := agentname.Resolve(c.AgentNames(), name)
	if err != nil {
		return Agent{}, err
	}
	for _, a := range c.Agents {
		if a.Name == canonical {
			return a, nil
		}
	}
	panic("unreachable")
}
