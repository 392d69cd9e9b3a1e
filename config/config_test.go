package config

import (
	"os"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestInitialConfigParsesToTheDefaults(t *testing.T) {
	cfg, err := Parse("agentctl.yaml", Initial([]string{"Agent-1", "Agent-2"}))
	if err != nil {
		t.Fatalf("the file init writes does not load: %v", err)
	}
	if got := cfg.AgentNames(); len(got) != 2 || got[1] != "Agent-2" || strings.Join(cfg.PeopleNames(), ",") != "human" {
		t.Errorf("agents = %v", got)
	}
	if cfg.Guardrails != Default().Guardrails {
		t.Errorf("guardrails = %+v, want the defaults %+v", cfg.Guardrails, Default().Guardrails)
	}
	if !reflect.DeepEqual(cfg.Mailbox, Default().Mailbox) {
		t.Errorf("mailbox = %+v, want the defaults %+v", cfg.Mailbox, Default().Mailbox)
	}
	if cfg.Run != Default().Run || cfg.Run.NoBlockNotice != 3 {
		t.Errorf("run = %+v, want the defaults %+v", cfg.Run, Default().Run)
	}
}

func TestParseRefusesWhatCannotWork(t *testing.T) {
	tests := map[string]string{
		"agents:\n  - name: ../etc\n":                        "not a valid agent name",
		"agents:\n  - name: A\n  - name: a\n":                `agent "a" is listed twice`,
		"mailbox:\n  watch: sometimes\n":                     "neither events nor poll",
		"mailbox:\n  settle: soon\n":                         `"soon" is not a duration`,
		"mailbox:\n  backoff: -1s\n":                         "mailbox.backoff: must be a positive duration",
		"mailbox:\n  max_attempts: 0\n":                      "max_attempts: must be at least 1",
		"mailbox:\n  max_inbox_json_bytes: 0\n":              "max_inbox_json_bytes: must be a positive number",
		"mailbox:\n  watchh: events\n":                       "field watchh not found",
		"agents: [\n":                                        "agentctl.yaml",
		"agents:\n  - name: Agent-1\n    watch: ['old/[']\n": "agents[0] (Agent-1).watch[0]: \"old/[\" is not a valid glob",
		"mailbox:\n  shared: ['']\n":                         "mailbox.shared[0]: an empty path",
		"gui:\n  quiet: 10ms\n":                              "gui.quiet: 10ms is shorter than 80ms",
		"gui:\n  max_pause: 50ms\n":                          "gui.max_pause: must be at least gui.quiet",
		"gui:\n  max_pause: 20m\n":                           "gui.turn_timeout: must be longer than gui.max_pause",
		"guardrails:\n  broadcast: ask\n":                    `guardrails.broadcast: "ask" is not allow, confirm or deny`,
		"guardrails:\n  many_sends_over: 0\n":                "guardrails.many_sends_over: must be at least 1",
		"run:\n  no_block_notice: -1\n":                      "run.no_block_notice: must be 0 (never) or more",
		"run:\n  templates: /etc/agentctl\n":                 "run.templates: \"/etc/agentctl\" must be a folder inside the runtime root",
	}
	for data, want := range tests {
		_, err := Parse("agentctl.yaml", []byte(data))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Parse(%q) = %v, want an error containing %q", data, err, want)
		}
	}
}

func TestOlderGUISettingsStillParse(t *testing.T) {
	// Files written before the busy indicator set first_change and an
	// 800ms quiet period.
	c, err := Parse("agentctl.yaml", []byte("gui:\n  quiet: 800ms\n  first_change: 2m\n"))
	if err != nil {
		t.Fatal(err)
	}
	if c.GUI.MaxPause != DefaultGUI().MaxPause || c.GUI.MaxPause.D() < SafeMaxPause {
		t.Errorf("max_pause = %s, want the default of at least %s", c.GUI.MaxPause, SafeMaxPause)
	}
}

func TestAgentLookupIgnoresCase(t *testing.T) {
	cfg, err := Parse("x", []byte("agents:\n  - name: Agent-1\n  - name: Reviewer\nmailbox:\n  settle: 250ms\n"))
	if err != nil {
		t.Fatal(err)
	}
	a, err := cfg.Agent("reviewer")
	if err != nil || a.Name != "Reviewer" {
		t.Errorf("Agent(reviewer) = %+v, %v", a, err)
	}
	if _, err := cfg.Agent("Agent-2"); err == nil {
		t.Error("an unknown agent was found")
	}
	if cfg.Mailbox.Settle.D() != 250*time.Millisecond {
		t.Errorf("settle = %v", cfg.Mailbox.Settle)
	}
}

func TestDurationString(t *testing.T) {
	for d, want := range map[time.Duration]string{
		30 * time.Minute: "30m", time.Hour: "1h", 90 * time.Minute: "1h30m", 2 * time.Second: "2s",
		800 * time.Millisecond: "800ms", 61 * time.Second: "1m1s", 0: "0s",
	} {
		if got := Duration(d).String(); got != want {
			t.Errorf("Duration(%v) = %q, want %q", d, got, want)
		}
		if back, err := time.ParseDuration(Duration(d).String()); err != nil || back != d {
			t.Errorf("%q does not parse back to %v", Duration(d).String(), d)
		}
	}
}

func TestPeopleHaveMailboxesButAreNotAgents(t *testing.T) {
	cfg, err := Parse("x", []byte("agents:\n  - name: Agent-1\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(cfg.PeopleNames(), ","); got != "human" {
		t.Errorf("default people = %q, want human", got)
	}
	if got := strings.Join(cfg.MailboxNames(), ","); got != "Agent-1,human" {
		t.Errorf("everyone = %q", got)
	}
	if _, err := cfg.Agent("human"); err == nil {
		t.Error("a person was found as an agent")
	}
	cfg, err = Parse("x", []byte("agents:\n  - name: Agent-1\npeople: [alice, Bob]\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(cfg.MailboxNames(), ","); got != "Agent-1,alice,Bob" || !cfg.IsPerson("Bob") || cfg.IsPerson("Agent-1") {
		t.Errorf("everyone = %q", got)
	}
	cfg, err = Parse("x", []byte("people: []\n"))
	if err != nil || len(cfg.PeopleNames()) != 0 {
		t.Errorf("people: [] = %v, %v; want nobody", cfg.PeopleNames(), err)
	}
	for data, want := range map[string]string{
		"agents:\n  - name: Agent-1\npeople: [agent-1]\n": `"agent-1" is listed twice, or is also an agent`,
		"people: [human, Human]\n":                        `"Human" is listed twice`,
		"people: [../x]\n":                                "not a valid agent name",
		"people: [all]\n":                                 "reserved",
	} {
		if _, err := Parse("x", []byte(data)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Parse(%q) = %v, want %q", data, err, want)
		}
	}
}

func TestCoordinationSettings(t *testing.T) {
	cfg, err := Parse("x", []byte("agents:\n  - name: Agent-1\n    board: {take: true, labels: [docs]}\n"+
		"coordination:\n  policy:\n    note: digest\n    ping: turn\n  digest_wait: 5m\n  lore: {on_task_done: true, every_messages: 10}\n"))
	if err != nil {
		t.Fatal(err)
	}
	c := cfg.Coordination
	if c.Policy["note"] != PolicyDigest || c.Policy["ping"] != PolicyTurn || c.Policy["status-request"] != PolicyRunner {
		t.Errorf("policy = %v, want the file's entries over the defaults", c.Policy)
	}
	if c.DigestWait.D() != 5*time.Minute || !c.Lore.OnTaskDone || c.Lore.EveryMessages != 10 {
		t.Errorf("coordination = %+v", c)
	}
	if a := cfg.Agents[0]; !a.Board.Take || len(a.Board.Labels) != 1 {
		t.Errorf("board work = %+v", a.Board)
	}
	for data, want := range map[string]string{
		"coordination:\n  policy: {note: later}\n":      `"later" is not turn, runner or digest`,
		"coordination:\n  policy: {Note: digest}\n":     "must be lower case",
		"coordination:\n  digest_wait: 0s\n":            "positive durations",
		"coordination:\n  lore: {every_messages: -1}\n": "cannot be negative",
	} {
		if _, err := Parse("x", []byte(data)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Parse(%q) = %v, want an error containing %q", data, err, want)
		}
	}
}

func TestWatchPathsAreAbsoluteFromTheRoot(t *testing.T) {
	cfg, err := Parse("x", []byte("agents:\n  - name: Agent-1\n    watch: [old/Agent-1/inbox, /srv/old/Agent-1/*.json]\n  - name: Agent-2\nmailbox:\n  shared: [old/comms/inbox]\n"))
	if err != nil {
		t.Fatal(err)
	}
	a, _ := cfg.Agent("agent-1")
	if got := a.WatchPaths("/rt"); !reflect.DeepEqual(got, []string{"/rt/old/Agent-1/inbox", "/srv/old/Agent-1/*.json"}) {
		t.Errorf("watch paths = %q", got)
	}
	if got := cfg.SharedPaths("/rt"); !reflect.DeepEqual(got, []string{"/rt/old/comms/inbox"}) {
		t.Errorf("shared paths = %q", got)
	}
	if !cfg.SharedDeadletters("Agent-1") || cfg.SharedDeadletters("Agent-2") {
		t.Error("the first agent's runner, and only it, dead-letters what the shared folders hold for no agent")
	}
}

func TestDreamOSCoordsFlatKeys(t *testing.T) {
	got, err := DreamOSCoords([]byte(`{"Agent-1": {"input_box_x": -1200, "input_box_y": 640, "copy_button_x": -900, "copy_button_y": 300},
		"Agent-2": {"input_box_x": 300, "input_box_y": 640}, "global_ui": {"theme": "dark"}}`), "")
	if err != nil {
		t.Fatal(err)
	}
	a1, a2 := got["Agent-1"], got["Agent-2"]
	if len(got) != 2 || *a1.Input != (Point{-1200, 640}) || *a1.Copy != (Point{-900, 300}) || *a2.Input != (Point{300, 640}) || a2.Copy != nil {
		t.Errorf("read %+v", got)
	}
}

// Prices and budgets are amounts of money for configured agents.
func TestCostsRefuseWhatIsNotAnAmount(t *testing.T) {
	base := "agents:\n  - name: Agent-1\n    driver: exec\n    exec: {command: [cat]}\n"
	for costs, want := range map[string]string{
		"costs: {budget: {agent_day_usd: -1}}":           "costs.budget.agent_day_usd: must be an amount",
		"costs: {budget: {per_agent: {Agent-9: 3}}}":     `"Agent-9" is not a configured agent`,
		"costs: {prices: {m1: {input: 3, output: -15}}}": "costs.prices.m1.output",
		"costs: {budget: {swarm_day_usd: .nan}}":         "costs.budget.swarm_day_usd",
	} {
		if _, err := Parse("agentctl.yaml", []byte(base+costs+"\n")); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want an error containing %q", costs, err, want)
		}
	}
	c, err := Parse("agentctl.yaml", []byte(base+"costs: {prices: {m1: {input: 3, output: 15}}, budget: {agent_day_usd: 5, per_agent: {Agent-1: 7}}}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if c.Costs.Prices["m1"].Output != 15 || c.Costs.Budget.PerAgent["Agent-1"] != 7 {
		t.Errorf("read %+v", c.Costs)
	}
}

func TestWatchPlacesAreReadUnlessTheySayTake(t *testing.T) {
	cfg, err := Parse("x", []byte("agents:\n  - name: Agent-1\n    watch:\n      - /old/a\n      - {path: /old/b, take: true}\nmailbox:\n  shared: [{path: /old/c}]\n"))
	if err != nil {
		t.Fatal(err)
	}
	a, _ := cfg.Agent("Agent-1")
	if got := a.WatchPaths("/rt"); !reflect.DeepEqual(got, []string{"/old/a", "/old/b"}) {
		t.Errorf("watch paths = %q", got)
	}
	if got := cfg.TakePaths("/rt", a); !reflect.DeepEqual(got, []string{"/old/b"}) {
		t.Errorf("taken = %q, want only the place that says take: true", got)
	}
}

func TestAddWatchWritesTakeOnlyWhenAsked(t *testing.T) {
	root := t.TempDir()
	if err := os.WriteFile(Path(root), []byte("agents:\n  - name: Agent-1\n    watch: [/old/a]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if n, err := AddWatch(root, map[string][]string{"Agent-1": {"/old/a", "/old/b"}}, nil, true); err != nil || n != 1 {
		t.Fatalf("AddWatch = %d, %v; want 1 added (/old/a is listed)", n, err)
	}
	cfg, err := Load(root)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := cfg.Agent("Agent-1")
	if got := cfg.TakePaths(root, a); !reflect.DeepEqual(got, []string{"/old/b"}) {
		t.Errorf("taken = %q, want the added place only", got)
	}
}

func TestNotifyIsReadAndChecked(t *testing.T) {
	c, err := Parse("x", []byte("agents: [{name: Agent-1, driver: exec, exec: {command: [x]}}]\nnotify: {desktop: true, webhook: 'https://u:p@ntfy.example/t', command: [page-me, -q]}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if n := c.Notify; !n.Enabled() || !n.Desktop || n.Webhook != "https://u:p@ntfy.example/t" || len(n.Command) != 2 {
		t.Errorf("notify read as %+v", n)
	}
	for _, bad := range []string{"notify: {webhook: 'ntfy.example/t'}", "notify: {command: ['']}"} {
		if _, err := Parse("x", []byte("agents: [{name: Agent-1, driver: exec, exec: {command: [x]}}]\n"+bad+"\n")); err == nil || !strings.Contains(err.Error(), "notify.") {
			t.Errorf("%s: %v", bad, err)
		}
	}
}
