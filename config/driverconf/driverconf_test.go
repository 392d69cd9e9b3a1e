package driverconf

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/agentctl/agentctl/config"
	"github.com/agentctl/agentctl/cursor"
)

// The drivers' defaults are their own; a file that sets nothing must get
// what `agentctl init` writes and doctor describes.
func TestDefaultsAgreeWithTheFile(t *testing.T) {
	if got, want := Timings(config.DefaultGUI()), cursor.DefaultTimings(); got != want {
		t.Errorf("the file's default timings %+v, the drivers' %+v", got, want)
	}
	for _, c := range []struct {
		name       string
		file, want any
	}{
		{"exec timeout", config.DefaultExecTimeout, cursor.DefaultExecTimeout},
		{"cdp quiet", config.DefaultCDPQuiet, cursor.DefaultCDPQuiet},
		{"prompt placeholder", config.PromptPlaceholder, cursor.PromptPlaceholder},
		{"session placeholder", config.SessionPlaceholder, cursor.SessionPlaceholder},
		{"no busy", config.CDPNoBusy, cursor.NoBusy},
	} {
		if c.file != c.want {
			t.Errorf("%s: the file's %v, the drivers' %v", c.name, c.file, c.want)
		}
	}
}

// useFakeCLI puts the stand-in for claude first on PATH, so that the
// preset's own command runs it.
func useFakeCLI(t *testing.T) {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("..", "..", "fixtures", "fakecli"))
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	t.Setenv("FAKE_AGENT_HOME", t.TempDir())
	t.Setenv("FAKE_AGENT_OUTPUT", "")
}

// An agent that names only its preset gets the preset's command, its
// reading of the output and its resumed session, through the driver.
func TestPresetAgentContinuesItsSession(t *testing.T) {
	useFakeCLI(t)
	a := config.Agent{Name: "Agent-4", Driver: config.DriverExec, Exec: config.Exec{Preset: config.PresetClaude}}
	d, err := cursor.New(Settings(a, config.DefaultGUI()), cursor.Options{Sessions: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	said := regexp.MustCompile(`^claude turn (\d+) of session (\S+);`)
	var sessions []string
	for i, prompt := range []string{"first", "second"} {
		reply, err := d.Run(context.Background(), cursor.Turn{Prompt: prompt})
		if err != nil {
			t.Fatal(err)
		}
		m := said.FindStringSubmatch(reply)
		if m == nil || m[1] != []string{"1", "2"}[i] {
			t.Fatalf("turn %d: reply %q, want the stand-in's turn %d", i+1, reply, i+1)
		}
		sessions = append(sessions, m[2])
	}
	// Each turn forks the session it continues: the second turn's is new,
	// and counts the first turn in it.
	if sessions[0] == sessions[1] {
		t.Errorf("the second turn continued session %s itself instead of a fork of it", sessions[0])
	}
}

// --new-session is refused for the reason the file's settings give.
func TestNewSessionRefusalNamesTheSetting(t *testing.T) {
	plain := config.Agent{Name: "Agent-4", Driver: config.DriverExec, Exec: config.Exec{Command: []string{"cat"}}}
	_, err := cursor.New(Settings(plain, config.DefaultGUI()), cursor.Options{Sessions: t.TempDir(), NewSession: true})
	if err == nil || !strings.Contains(err.Error(), "no exec.preset") {
		t.Errorf("err = %v, want a refusal naming exec.preset", err)
	}
}

// A seat gets its profile's selectors, and its quiet period as written:
// a page with nothing busy and no quiet period is refused, not given the
// default.
func TestCDPSeatGetsItsProfile(t *testing.T) {
	seat := config.CDP{Endpoint: "http://127.0.0.1:9222", Target: "^Chat$", Profile: config.ProfileVSCode}
	got := CDP(seat)
	want := config.VSCodeProfile()
	if got.Composer != want.Composer || got.CopyMenu != want.CopyMenu || got.Body != want.Body || got.NewChat != want.NewChat ||
		got.Read != cursor.ReadCopy || got.Clipboard != cursor.ClipboardPage || got.Profile != cursor.ProfileVSCode {
		t.Errorf("settings %+v lack the vscode profile's", got)
	}
	if _, err := cursor.NewCDP(got, cursor.Timings{}, cursor.Options{}); err != nil {
		t.Errorf("a seat with its profile was refused: %v", err)
	}
	seat.Busy = config.CDPNoBusy
	if _, err := cursor.NewCDP(CDP(seat), cursor.Timings{}, cursor.Options{}); !errors.Is(err, cursor.ErrNotCalibrated) || !strings.Contains(err.Error(), "cdp.quiet") {
		t.Errorf("err = %v, want cdp.quiet refused as unset", err)
	}
	seat.Quiet = config.Duration(10 * time.Second)
	if got := CDP(seat); got.Quiet != 10*time.Second {
		t.Errorf("quiet = %s, want 10s", got.Quiet)
	}
}

// A window gets its profile's copy route and composer, and the driver
// finds it calibrated, or not, as the file's check does.
func TestWindowGetsItsProfile(t *testing.T) {
	w := config.Window{Title: "^Chat$", Profile: config.ProfileVSCode, Input: &config.Point{X: 1, Y: 2},
		Reply: &config.Rect{X: 3, Y: 4, W: 5, H: 6}, Busy: &config.Point{X: 7, Y: 8}}
	got := Window(w)
	if strings.Join(got.CopyKeys, " ") != strings.Join(config.VSCodeWindow().CopyKeys, " ") || !got.CopyFromInput ||
		got.Composer != cursor.ComposerMonaco || *got.Input != (cursor.Point{X: 1, Y: 2}) ||
		*got.Reply != (cursor.Rect{X: 3, Y: 4, W: 5, H: 6}) || *got.Busy != (cursor.Point{X: 7, Y: 8}) || got.Copy != nil {
		t.Errorf("settings %+v lack the window's or the vscode profile's", got)
	}
	if _, err := cursor.NewGUI(got, cursor.Timings{}, cursor.Options{LockDir: t.TempDir()}); err != nil {
		t.Errorf("a calibrated window was refused: %v", err)
	}
	for _, w := range []config.Window{{}, {Title: "x", Input: &config.Point{}}, {Title: "x", Profile: config.ProfileVSCode, Reply: &config.Rect{W: 1, H: 1}}} {
		_, err := cursor.NewGUI(Window(w), cursor.Timings{}, cursor.Options{LockDir: t.TempDir()})
		if want := Calibrated(w); !errors.Is(err, cursor.ErrNotCalibrated) || !strings.Contains(err.Error(), want.Error()) {
			t.Errorf("window %+v: err = %v, want not calibrated: %v", w, err, want)
		}
	}
}

// A seat's working folder, environment and model reach the program it
// runs: the stand-in records the folder it ran in and the model option.
func TestSeatProgramGetsItsFolderEnvironmentAndModel(t *testing.T) {
	dir := t.TempDir()
	a := config.Agent{Name: "Agent-4", Driver: config.DriverExec,
		Exec:    config.Exec{Command: []string{"sh", "-c", `printf '%s|%s|%s' "$(pwd)" "$SEAT_KEY" "$HOME"`}},
		Program: config.Program{Cwd: dir, Env: map[string]string{"SEAT_KEY": "k-7", "HOME": "/nonexistent-home"}}}
	if err := a.Validate(); err != nil {
		t.Fatal(err)
	}
	d, err := cursor.New(Settings(a, config.DefaultGUI()), cursor.Options{Sessions: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	reply, err := d.Run(context.Background(), cursor.Turn{Prompt: "x"})
	if err != nil {
		t.Fatal(err)
	}
	real, _ := filepath.EvalSymlinks(dir)
	if want := real + "|k-7|/nonexistent-home"; reply != want {
		t.Errorf("the program saw %q, want %q", reply, want)
	}

	useFakeCLI(t)
	a = config.Agent{Name: "Agent-4", Driver: config.DriverExec, Exec: config.Exec{Preset: config.PresetClaude},
		Program: config.Program{Model: "claude-sonnet-4-5"}}
	if got := Settings(a, config.DefaultGUI()).Exec.ModelArgs; strings.Join(got, " ") != "--model claude-sonnet-4-5" {
		t.Errorf("model args %q, want the preset's --model option", got)
	}
	d, err = cursor.New(Settings(a, config.DefaultGUI()), cursor.Options{Sessions: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Run(context.Background(), cursor.Turn{Prompt: "x"}); err != nil {
		t.Errorf("the preset refused its own model option: %v", err)
	}
}

func TestACPSeatGetsItsCommandFolderEnvironmentAndModel(t *testing.T) {
	a := config.Agent{Name: "Agent-5", Driver: config.DriverACP, ACP: config.ACP{Preset: config.ACPCodex},
		Program: config.Program{Cwd: "~/work", Env: map[string]string{"B": "2", "A": "1"}, Model: "gpt-5.4"}}
	if err := a.Validate(); err != nil {
		t.Fatal(err)
	}
	s := Settings(a, config.DefaultGUI())
	home, _ := os.UserHomeDir()
	if s.Driver != cursor.DriverACP || strings.Join(s.ACP.Command, " ") != "codex-acp" || s.ACP.Preset != "codex" ||
		s.ACP.Dir != filepath.Join(home, "work") || strings.Join(s.ACP.Env, ",") != "A=1,B=2" || s.ACP.Model != "gpt-5.4" || !s.KeepsConversation {
		t.Errorf("settings %+v", s)
	}
}
