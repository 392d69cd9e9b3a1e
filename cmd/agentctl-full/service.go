package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/agentctl/agentctl/cmd/internal/cli"
	"github.com/agentctl/agentctl/config"
	"github.com/agentctl/agentctl/internal/agentname"
	"github.com/agentctl/agentctl/internal/atomicfile"
	"github.com/agentctl/agentctl/internal/codepage"
	"github.com/agentctl/agentctl/internal/layout"
)

const serviceUsage = `
Usage:
  agentctl service install AGENT|--all [--name NAME] [--force] [--print] [--platform linux|darwin|windows]
  agentctl service uninstall AGENT|--all [--name NAME]
  agentctl service status AGENT|--all [--name NAME]

Makes the runners start by themselves when you log in. --all installs one
service that runs 'agentctl up' (every agent, restarted when they die);
AGENT installs one that runs 'agentctl run AGENT'. Each names this
agentctl program and this runtime (--root) by absolute path.

  Linux    a systemd user unit in ~/.config/systemd/user/agentctl-NAME.service,
           enabled and started with systemctl --user. When an agent drives a
           window, the unit is part of graphical-session.target and gets
           DISPLAY and XAUTHORITY as they are now; PATH is kept too, for exec
           agents' commands.
  macOS    a launchd agent in ~/Library/LaunchAgents/com.github.agentctl.NAME.plist,
           loaded with launchctl into your login session; its output goes to
           <root>/logs/NAME.log.
  Windows  a Task Scheduler task \agentctl\NAME that starts at your logon in
           your desktop session and restarts on failure (schtasks).

The service is named after the agent, or "up" for --all. A service of
that name that runs another runtime is left alone: install, uninstall and
status refuse it and say which runtime it runs. Give this runtime's
service a name of its own with --name (the same --name again for status
and uninstall), or replace the other with install --force.

--print shows the file instead of installing it; --platform shows another
system's. status says whether the service is installed and what the system
says about it. uninstall stops the service and removes it.

Examples:
  agentctl service install --all
  agentctl service install Agent-3 --print
  agentctl service install --all --print --platform windows
  agentctl service status --all
  agentctl service uninstall --all
  agentctl --root ~/work2/runtime service install --all --name work2
`

func runService(ctx context.Context, env *cli.Env, args []string) error {
	if len(args) == 0 {
		return cli.UsageError{Msg: "service: want install, uninstall or status"}
	}
	action := args[0]
	switch action {
	case "-h", "--help", "help":
		cli.NewFlagSet(env, "service", serviceUsage).Usage()
		return cli.ErrHelpShown
	case "install", "uninstall", "status":
	default:
		msg := fmt.Sprintf("service: unknown action %q", action)
		if s := cli.Suggest(action, []string{"install", "uninstall", "status"}); s != "" {
			msg += fmt.Sprintf(" (did you mean %s?)", s)
		}
		return cli.UsageError{Msg: msg + "; want install, uninstall or status"}
	}
	fs := cli.NewFlagSet(env, "service "+action, serviceUsage)
	all := fs.Bool("all", false, "every agent: a service running 'agentctl up'")
	ownName := fs.String("name", "", "the service's `name`, instead of the agent's or \"up\"")
	var print, force *bool
	var platform *string
	if action == "install" {
		print = fs.Bool("print", false, "print the service file instead of installing it")
		force = fs.Bool("force", false, "replace a service of the same name that runs another runtime")
		platform = fs.String("platform", runtime.GOOS, "with --print, the `system` to write it for: linux, darwin or windows")
	}
	rest, err := cli.ParseArgs(fs, args[1:])
	if err != nil {
		return err
	}
	if *all == (len(rest) == 1) || len(rest) > 1 {
		return cli.UsageError{Msg: fmt.Sprintf("service %s: want one AGENT or --all", action)}
	}
	goos := runtime.GOOS
	if platform != nil {
		goos = *platform
		switch {
		case goos != "linux" && goos != "darwin" && goos != "windows":
			return cli.UsageError{Msg: fmt.Sprintf("service install: --platform %q is not linux, darwin or windows", goos)}
		case goos != runtime.GOOS && !*print:
			return cli.UsageError{Msg: "service install: a service for " + goos + " can only be printed here", Fix: "add --print"}
		}
	}
	if goos != "linux" && goos != "darwin" && goos != "windows" {
		return fmt.Errorf("service: agentctl installs services on Linux, macOS and Windows, not on %s", goos)
	}
	cfg, err := cli.LoadConfig(env)
	if err != nil {
		return err
	}
	agent, agents := "", cfg.Agents
	if !*all {
		if agent, err = resolveAgent(env, cfg, rest[0]); err != nil {
			return err
		}
		a, _ := cfg.Agent(agent)
		agents = []config.Agent{a}
	}
	name := cmp.Or(*ownName, agent, "up")
	if err := agentname.Valid(name); err != nil {
		return cli.UsageError{Msg: fmt.Sprintf("service %s: --name %q cannot name a service: %v", action, name, err)}
	}
	root, err := filepath.Abs(env.Root)
	if err != nil {
		return err
	}
	switch action {
	case "install":
		spec, err := newServiceSpec(env, cfg, name, agent, root, agents, goos)
		if err != nil {
			return err
		}
		if *print {
			_, err := fmt.Fprint(env.Stdout, renderService(goos, spec))
			return err
		}
		for _, a := range agents { // a service that can only crash is no service
			if err := runnable("service install", a); err != nil {
				return err
			}
		}
		if !*force {
			if err := ownedHere(ctx, name, root); err != nil {
				return err
			}
		}
		return installService(ctx, env, spec)
	}
	if err := ownedHere(ctx, name, root); err != nil {
		return err
	}
	if action == "uninstall" {
		return uninstallService(ctx, env, name)
	}
	return serviceStatus(ctx, env, name)
}

// ownedHere refuses a service named name that is installed and runs
// another runtime than root: installing over it or uninstalling it would
// take another runtime's runners away from it.
func ownedHere(ctx context.Context, name, root string) error {
	text, err := installedService(ctx, name)
	if err != nil || text == "" || namesRoot(runtime.GOOS, text, root) {
		return err
	}
	return cli.WithHint(fmt.Errorf("%s is installed for another runtime than %s", serviceName(name), root),
		fmt.Sprintf("to keep both, give this one its own name with --name; to move the service to this runtime, 'agentctl service install --force'; it is %s", installedWhere(name)))
}

// installedService is the installed service's file as the system keeps
// it; "" when none is installed.
func installedService(ctx context.Context, name string) (string, error) {
	if runtime.GOOS == "windows" {
		out, err := tool(ctx, "schtasks", "/Query", "/TN", taskName(name), "/XML")
		if err != nil {
			return "", nil // no such task
		}
		// Printed in the console's code page, where the root's path may
		// have letters UTF-8 writes otherwise.
		return codepage.Console([]byte(out)), nil
	}
	path, err := servicePath(name)
	if err != nil {
		return "", err
	}
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("cannot read the installed %s: %w", serviceName(name), err)
	}
	return string(data), nil
}

// installedWhere says where to read the installed service.
func installedWhere(name string) string {
	if path, err := servicePath(name); err == nil && path != "" {
		return path
	}
	return "schtasks /Query /TN " + taskName(name) + " /XML"
}

// newServiceSpec gathers what the service file says: this program and
// runtime by absolute path, and the environment the runners need.
func newServiceSpec(env *cli.Env, cfg config.Config, name, agent, root string, agents []config.Agent, goos string) (serviceSpec, error) {
	exe, err := os.Executable()
	if err == nil {
		exe, err = filepath.EvalSymlinks(exe)
	}
	if err != nil {
		return serviceSpec{}, fmt.Errorf("cannot find the agentctl program for the service: %w", err)
	}
	wd, err := os.Getwd()
	if err != nil {
		return serviceSpec{}, err
	}
	logFile, err := layout.ServiceLog(root, name)
	if err != nil {
		return serviceSpec{}, err
	}
	s := serviceSpec{
		Name: name, WorkDir: wd, StopTimeout: cfg.Run.ShutdownGrace.D() + 30*time.Second,
		Log: logFile,
	}
	if agent == "" {
		s.Args = []string{exe, "--root", root, "up"}
		s.Description = "agentctl: keep the runners of " + root + " alive"
	} else {
		s.Args = []string{exe, "--root", root, "run", agent}
		s.Description = "agentctl: the runner of " + agent + " in " + root
	}
	for _, a := range agents {
		s.GUI = s.GUI || a.EffectiveDriver() == config.DriverGUI
	}
	switch goos {
	case "linux":
		if s.GUI {
			s.Env = append(s.Env, displayEnv()...)
		}
		s.Env = append(s.Env, envVar{"PATH", os.Getenv("PATH")})
	case "darwin":
		s.Env = append(s.Env, envVar{"PATH", os.Getenv("PATH")})
	case "windows":
		s.User = windowsUser()
	}
	return s, nil
}

// displayEnv is the X display and authority of this session, which a
// systemd user unit does not otherwise get for certain.
func displayEnv() []envVar {
	var vars []envVar
	if d := os.Getenv("DISPLAY"); d != "" {
		vars = append(vars, envVar{"DISPLAY", d})
	}
	xauth := os.Getenv("XAUTHORITY")
	if home, err := os.UserHomeDir(); xauth == "" && err == nil {
		if _, err := os.Stat(filepath.Join(home, ".Xauthority")); err == nil {
			xauth = filepath.Join(home, ".Xauthority")
		}
	}
	if xauth != "" {
		vars = append(vars, envVar{"XAUTHORITY", xauth})
	}
	return vars
}

func windowsUser() string {
	if d, u := os.Getenv("USERDOMAIN"), os.Getenv("USERNAME"); u != "" {
		if d != "" {
			return d + `\` + u
		}
		return u
	}
	if u, err := user.Current(); err == nil {
		return u.Username
	}
	return ""
}

func renderService(goos string, s serviceSpec) string {
	switch goos {
	case "darwin":
		return launchdPlist(s)
	case "windows":
		return taskXML(s)
	}
	return systemdUnit(s)
}

// servicePath is where the service file of name lives on this system; ""
// on Windows, where Task Scheduler keeps it.
func servicePath(name string) (string, error) {
	switch runtime.GOOS {
	case "linux":
		dir := os.Getenv("XDG_CONFIG_HOME")
		if dir == "" {
			home, err := os.UserHomeDir()
			if err != nil {
				return "", err
			}
			dir = filepath.Join(home, ".config")
		}
		return filepath.Join(dir, "systemd", "user", systemdUnitName(name)), nil
	case "darwin":
		home, err := os.UserHomeDir()
		if err != nil {
			return "", err
		}
		return filepath.Join(home, "Library", "LaunchAgents", launchdLabel(name)+".plist"), nil
	}
	return "", nil
}

func installService(ctx context.Context, env *cli.Env, s serviceSpec) error {
	path, err := servicePath(s.Name)
	if err != nil {
		return err
	}
	var steps [][]string
	switch runtime.GOOS {
	case "linux":
		steps = [][]string{{"systemctl", "--user", "daemon-reload"}, {"systemctl", "--user", "enable", "--now", systemdUnitName(s.Name)}}
	case "darwin":
		if err := atomicfile.MkdirAll(filepath.Dir(s.Log)); err != nil {
			return err
		}
		domain := "gui/" + strconv.Itoa(os.Getuid())
		tool(ctx, "launchctl", "bootout", domain+"/"+launchdLabel(s.Name)) // an older copy, if loaded
		steps = [][]string{{"launchctl", "bootstrap", domain, path}}
	case "windows":
		f, err := os.CreateTemp("", "agentctl-task-*.xml")
		if err != nil {
			return err
		}
		f.Close()
		defer os.Remove(f.Name())
		path = f.Name()
		steps = [][]string{{"schtasks", "/Create", "/TN", taskName(s.Name), "/XML", path, "/F"}, {"schtasks", "/Run", "/TN", taskName(s.Name)}}
	}
	data := []byte(renderService(runtime.GOOS, s))
	if runtime.GOOS == "windows" {
		data = utf16File(string(data))
	}
	if err := atomicfile.MkdirAll(filepath.Dir(path)); err != nil {
		return err
	}
	if err := atomicfile.WriteFile(path, data); err != nil {
		return err
	}
	if runtime.GOOS != "windows" {
		fmt.Fprintf(env.Stdout, "wrote %s\n", path)
	}
	for _, step := range steps {
		if out, err := tool(ctx, step[0], step[1:]...); err != nil {
			return cli.WithHint(fmt.Errorf("cannot install the service: %s: %w%s", strings.Join(step, " "), err, indentOutput(out)),
				"once the problem is fixed, run 'agentctl service install' again")
		}
	}
	fmt.Fprintf(env.Stdout, "installed and started %s; it starts again at every login\n", serviceName(s.Name))
	return nil
}

func uninstallService(ctx context.Context, env *cli.Env, name string) error {
	path, err := servicePath(name)
	if err != nil {
		return err
	}
	if path != "" {
		if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("%s is not installed (no %s)", serviceName(name), path)
		}
	}
	var stop []string
	switch runtime.GOOS {
	case "linux":
		stop = []string{"systemctl", "--user", "disable", "--now", systemdUnitName(name)}
	case "darwin":
		stop = []string{"launchctl", "bootout", "gui/" + strconv.Itoa(os.Getuid()) + "/" + launchdLabel(name)}
	case "windows":
		stop = []string{"schtasks", "/Delete", "/TN", taskName(name), "/F"}
	}
	if out, err := tool(ctx, stop[0], stop[1:]...); err != nil {
		return cli.WithHint(fmt.Errorf("cannot stop the service: %s: %w%s", strings.Join(stop, " "), err, indentOutput(out)),
			"stop it by hand, then run 'agentctl service uninstall' again")
	}
	if path != "" {
		if err := os.Remove(path); err != nil {
			return fmt.Errorf("stopped %s but cannot remove it: %w", serviceName(name), err)
		}
		fmt.Fprintf(env.Stdout, "removed %s\n", path)
	}
	if runtime.GOOS == "linux" {
		tool(ctx, "systemctl", "--user", "daemon-reload") // forgets the unit; harmless if it fails
	}
	fmt.Fprintf(env.Stdout, "uninstalled %s\n", serviceName(name))
	return nil
}

func serviceStatus(ctx context.Context, env *cli.Env, name string) error {
	path, err := servicePath(name)
	if err != nil {
		return err
	}
	if path != "" {
		if _, err := os.Stat(path); err != nil {
			fmt.Fprintf(env.Stdout, "%s: not installed (no %s)\n", serviceName(name), path)
			return nil
		}
		fmt.Fprintf(env.Stdout, "%s: installed in %s\n", serviceName(name), path)
	}
	var query []string
	switch runtime.GOOS {
	case "linux":
		query = []string{"systemctl", "--user", "--no-pager", "status", systemdUnitName(name)}
	case "darwin":
		query = []string{"launchctl", "print", "gui/" + strconv.Itoa(os.Getuid()) + "/" + launchdLabel(name)}
	case "windows":
		query = []string{"schtasks", "/Query", "/TN", taskName(name), "/V", "/FO", "LIST"}
	}
	out, err := tool(ctx, query[0], query[1:]...)
	fmt.Fprint(env.Stdout, out)
	if err != nil && !statusAnswer(err) {
		return fmt.Errorf("cannot ask %s: %w", query[0], err)
	}
	return nil
}

// statusAnswer reports an exit of the service manager's status query that
// still answers it: systemctl status exits 3 for a unit that is not
// running and 4 for one it does not know; any other failure (no session
// bus to ask) is no answer. Elsewhere any exit of the tool is one.
func statusAnswer(err error) bool {
	var exit *exec.ExitError
	if !errors.As(err, &exit) {
		return false
	}
	return runtime.GOOS != "linux" || exit.ExitCode() == 3 || exit.ExitCode() == 4
}

func serviceName(name string) string {
	switch runtime.GOOS {
	case "darwin":
		return launchdLabel(name)
	case "windows":
		return "task " + taskName(name)
	}
	return systemdUnitName(name)
}

// tool runs one of the system's service tools and returns what it said.
func tool(ctx context.Context, name string, args ...string) (string, error) {
	out, err := exec.CommandContext(ctx, name, args...).CombinedOutput()
	return string(out), err
}

func indentOutput(out string) string {
	out = strings.TrimSpace(out)
	if out == "" {
		return ""
	}
	return "\n  " + strings.ReplaceAll(out, "\n", "\n  ")
}
