// Package agentcli gives tests the real agent command-line tools that
// scripts/agentclis installs (Claude Code, Codex, Gemini CLI and the ACP
// adapters), each with an environment of its own that points it at the
// model server whose URL it is given (fixtures/fakemodel's): a fresh home
// under the test's temporary folder, dummy keys, and no telemetry, update
// checks or error reports. Setup writes only into the home it is given
// (under the test's temporary folder, for Get), never the user's own home
// or the tools' settings there; Bin runs scripts/agentclis once, which
// installs the tools into agentctl's cache (~/.cache/agentctl).
//
// Where the tools cannot be installed (no Node.js 20, no network on a
// first run) the tests that need them are skipped with the reason, unless
// AGENTCTL_REQUIRE_AGENT_CLIS is set, as CI sets it: then they fail.
package agentcli

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/agentctl/agentctl/internal/testenv"
)

// Names of the tools.
const (
	Claude    = "claude"
	Codex     = "codex"
	Gemini    = "gemini"
	ClaudeACP = "claude-agent-acp"
	CodexACP  = "codex-acp"
)

// Tool is one agent command, ready to run against a fake model server.
type Tool struct {
	Name string
	// Path is the command.
	Path string
	// Env are the NAME=VALUE lines to add to (and replace in) the test's
	// environment; Environ gives the whole.
	Env []string
	// Home is the tool's fresh home folder (HOME, and CODEX_HOME inside it
	// for Codex).
	Home string
}

// Environ is the test process's environment with the tool's lines in
// place of any of the same name.
func (t Tool) Environ() []string {
	names := map[string]bool{}
	for _, kv := range t.Env {
		name, _, _ := strings.Cut(kv, "=")
		names[name] = true
	}
	var out []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if !names[name] {
			out = append(out, kv)
		}
	}
	return append(out, t.Env...)
}

var (
	findOnce sync.Once
	binDir   string
	findErr  error
)

// Bin returns the folder holding the installed commands, running
// scripts/agentclis the first time; it skips the test (or fails it, with
// AGENTCTL_REQUIRE_AGENT_CLIS set) when they cannot be had.
func Bin(tb testing.TB) string {
	tb.Helper()
	findOnce.Do(func() { binDir, findErr = install() })
	if findErr != nil {
		if os.Getenv("AGENTCTL_REQUIRE_AGENT_CLIS") != "" {
			tb.Fatalf("the real agent tools are required (AGENTCTL_REQUIRE_AGENT_CLIS) but missing: %v", findErr)
		}
		tb.Skipf("the real agent tools are not installed: %v (scripts/agentclis installs them)", findErr)
	}
	return binDir
}

func install() (string, error) {
	root, err := testenv.RepoRoot()
	if err != nil {
		return "", err
	}
	cmd := exec.Command("bash", filepath.Join(root, "scripts", "agentclis"))
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("scripts/agentclis failed: %v: %s", err, strings.TrimSpace(stderr.String()))
	}
	bin := filepath.Join(strings.TrimSpace(string(out)), "node_modules", ".bin")
	if _, err := os.Stat(filepath.Join(bin, Claude)); err != nil {
		return "", fmt.Errorf("scripts/agentclis printed a folder without the commands: %w", err)
	}
	return bin, nil
}

// quiet are the variables that keep the tools off the network apart from
// the model server.
var quiet = []string{
	"DISABLE_AUTOUPDATER=1", "DISABLE_TELEMETRY=1", "DISABLE_ERROR_REPORTING=1",
	"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "NO_UPDATE_NOTIFIER=1", "CI=1",
}

// Get returns tool name set up to talk to the fake model server at url,
// with a fresh home.
func Get(tb testing.TB, name, url string) Tool {
	tb.Helper()
	bin := Bin(tb)
	t, err := Setup(name, url, tb.TempDir())
	if err != nil {
		tb.Fatal(err)
	}
	t.Path = filepath.Join(bin, name)
	return t
}

// Setup makes home the home of tool name, set up to talk to the fake
// model server at url, and returns the tool without its Path: Get's work,
// for a program that is no test (the fake model's own command, which sets
// up the demo's agents).
func Setup(name, url, home string) (Tool, error) {
	t := Tool{Name: name, Home: home}
	// The tools' temporary files (Gemini CLI writes one per failed
	// request) stay in the tool's home, which goes with the test.
	tmp := filepath.Join(home, "tmp")
	if err := os.MkdirAll(tmp, 0o700); err != nil {
		return Tool{}, fmt.Errorf("cannot make the tool's temporary folder: %w", err)
	}
	t.Env = append([]string{"HOME=" + home, "TMPDIR=" + tmp, "XDG_CONFIG_HOME=" + filepath.Join(home, ".config"),
		"XDG_CACHE_HOME=" + filepath.Join(home, ".cache"), "XDG_DATA_HOME=" + filepath.Join(home, ".local", "share")}, quiet...)
	switch name {
	case Claude, ClaudeACP:
		// As root, --dangerously-skip-permissions wants IS_SANDBOX.
		t.Env = append(t.Env, "ANTHROPIC_BASE_URL="+url, "ANTHROPIC_API_KEY=fakemodel-key",
			"ANTHROPIC_AUTH_TOKEN=", "IS_SANDBOX=1")
	case Codex, CodexACP:
		codexHome := filepath.Join(home, ".codex")
		if err := writeConfig(codexHome, "config.toml", codexConfig(url)); err != nil {
			return Tool{}, err
		}
		t.Env = append(t.Env, "CODEX_HOME="+codexHome, "OPENAI_API_KEY=fakemodel-key", "OPENAI_BASE_URL=")
	case Gemini:
		if err := writeConfig(filepath.Join(home, ".gemini"), "settings.json", geminiSettings); err != nil {
			return Tool{}, err
		}
		t.Env = append(t.Env, "GEMINI_API_KEY=fakemodel-key", "GOOGLE_GEMINI_BASE_URL="+url,
			"GEMINI_CLI_TRUST_WORKSPACE=true", "GOOGLE_API_KEY=", "GOOGLE_GENAI_USE_VERTEXAI=")
	default:
		return Tool{}, fmt.Errorf("agentcli: no tool named %q", name)
	}
	return t, nil
}

// writeConfig writes a tool's configuration file into its folder dir.
func writeConfig(dir, name, text string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("cannot make the tool's configuration folder: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600); err != nil {
		return fmt.Errorf("cannot write the tool's configuration: %w", err)
	}
	return nil
}

// codexConfig points Codex at the server as a provider of its own: Codex
// 0.169 takes no base URL from its environment for the built-in one.
func codexConfig(url string) string {
	return `model = "gpt-5"
model_provider = "fakemodel"
check_for_update_on_startup = false

[analytics]
enabled = false

[model_providers.fakemodel]
name = "fakemodel"
base_url = "` + url + `/v1"
env_key = "OPENAI_API_KEY"
wire_api = "responses"
`
}

// geminiSettings choose the API-key login, which Gemini CLI otherwise
// asks for interactively, and turn off its statistics and updates.
const geminiSettings = `{
  "security": {"auth": {"selectedType": "gemini-api-key"}},
  "privacy": {"usageStatisticsEnabled": false},
  "general": {"disableAutoUpdate": true, "disableUpdateNag": true},
  "telemetry": {"enabled": false}
}
`

// NoRetries turns off the tool's own retries of a request the model API
// refused (429, 5xx), which each tool makes with a backoff of its own,
// seconds to minutes of wall time: the turn then fails at the first
// refusal, as it does after the tool gave up, and a test sees it at once.
// Claude Code reads CLAUDE_CODE_MAX_RETRIES; Codex, the provider's
// request_max_retries and stream_max_retries; Gemini CLI, the setting
// general.maxAttempts (1 to 10; its auxiliary questions keep their own).
func (t *Tool) NoRetries() error {
	switch t.Name {
	case Claude, ClaudeACP:
		t.Env = append(t.Env, "CLAUDE_CODE_MAX_RETRIES=0")
	case Codex, CodexACP:
		// The provider's table is the last of codexConfig's, so the lines
		// appended are its.
		f, err := os.OpenFile(filepath.Join(t.Home, ".codex", "config.toml"), os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			return fmt.Errorf("cannot open Codex's configuration: %w", err)
		}
		_, err = f.WriteString("request_max_retries = 0\nstream_max_retries = 0\n")
		if err2 := f.Close(); err == nil {
			err = err2
		}
		if err != nil {
			return fmt.Errorf("cannot turn off Codex's retries: %w", err)
		}
	case Gemini:
		settings := strings.Replace(geminiSettings, `"disableUpdateNag": true}`, `"disableUpdateNag": true, "maxAttempts": 1}`, 1)
		if settings == geminiSettings {
			return fmt.Errorf("agentcli: Gemini CLI's settings have no general section to add maxAttempts to")
		}
		return writeConfig(filepath.Join(t.Home, ".gemini"), "settings.json", settings)
	default:
		return fmt.Errorf("agentcli: no tool named %q", t.Name)
	}
	return nil
}
