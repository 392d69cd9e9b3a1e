package config

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Program holds the settings of the program a seat runs, for the drivers
// that run one (exec): the folder it works in, what its environment adds,
// and the model it is asked to use.
type Program struct {
	// Cwd is the program's working folder; "~/" is the user's home. Empty:
	// the runner's own.
	Cwd string `yaml:"cwd,omitempty"`
	// Env adds to (or replaces in) the runner's environment, such as an API
	// base URL or key for this seat only.
	Env map[string]string `yaml:"env,omitempty"`
	// Model is passed to the program with its preset's model option (exec),
	// or chosen through the session's model selection (acp).
	Model string `yaml:"model,omitempty"`
	// Worktree runs the program in a git worktree of its own, of the
	// repository Cwd is in, on branch agentctl/<agent>, made under the
	// runtime folder on the first run and kept.
	Worktree bool `yaml:"worktree,omitempty"`
}

// runsProgram says whether the driver starts a program of its own, the
// only kind of seat Program applies to.
func runsProgram(driver string) bool { return driver == DriverExec || driver == DriverACP }

func (a Agent) validateProgram() error {
	if !runsProgram(a.EffectiveDriver()) {
		for _, set := range []struct {
			name string
			on   bool
		}{{"cwd", a.Cwd != ""}, {"env", len(a.Env) > 0}, {"model", a.Model != ""}, {"worktree", a.Worktree}} {
			if set.on {
				return fmt.Errorf("%s: only a seat that runs a program (driver: exec or acp) has one; this seat's driver is %s", set.name, a.EffectiveDriver())
			}
		}
		return nil
	}
	if a.Worktree && a.Cwd == "" {
		return errors.New("worktree: the seat's worktree is made from the git repository its cwd is in; set cwd")
	}
	for k := range a.Env {
		if k == "" || strings.ContainsAny(k, "=\x00") {
			return fmt.Errorf("env: %q is not a variable name", k)
		}
	}
	// An ACP agent is asked for its model over the protocol, when its
	// session offers the choice; the driver refuses a seat it cannot ask.
	if a.Model != "" && a.EffectiveDriver() == DriverExec && modelOptions[a.Exec.Preset] == nil {
		return fmt.Errorf("model: a plain command has no model option agentctl knows; put the model in exec.command, or use a preset (%s)", strings.Join(PresetNames(), ", "))
	}
	if strings.ContainsAny(a.Model, " \t\n") {
		return fmt.Errorf("model: %q holds white space; give the model's id, such as claude-sonnet-4-5", a.Model)
	}
	return nil
}

// ProgramDir returns the seat's working folder with "~/" expanded; empty
// when unset.
func (p Program) ProgramDir() (string, error) {
	dir := p.Cwd
	if dir == "~" || strings.HasPrefix(dir, "~/") {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("cwd: cannot find the home folder for %q: %w", dir, err)
		}
		dir = filepath.Join(home, strings.TrimPrefix(dir[1:], "/"))
	}
	return dir, nil
}

// EnvList returns Env as NAME=VALUE lines, sorted, for a process's
// environment.
func (p Program) EnvList() []string {
	out := make([]string, 0, len(p.Env))
	for k, v := range p.Env {
		out = append(out, k+"="+v)
	}
	slices.Sort(out)
	return out
}
