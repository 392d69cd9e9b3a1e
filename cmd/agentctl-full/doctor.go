package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"

	"github.com/agentctl/agentctl/cmd/internal/cli"
	"github.com/agentctl/agentctl/config"
	"github.com/agentctl/agentctl/config/driverconf"
	"github.com/agentctl/agentctl/cursor"
	"github.com/agentctl/agentctl/internal/atomicfile"
)

const doctorUsage = `
Usage: agentctl doctor [--machine NAME]

Checks that this desktop can run agentctl's agents: the display, the window
manager, the clipboard tool, the lock folder, and for every configured
agent its window (found exactly once), its chat page (found exactly once,
each cdp selector resolving) or the program its exec or acp seat starts
(found on PATH, Cursor's CLI under either of its names). Prints one line
per check, with a hint for each failure, and exits non-zero if any failed.
It never sends a key or a click, and types nothing into a page.

With a hub section in agentctl.yaml (machines of a swarm, see 'agentctl
hub') it also checks the hub's secret files (readable by their owner only),
its TLS files, and that it would not listen off loopback without
credentials; agents of other machines are listed with their machine, not
checked: run doctor there with --machine.

Examples:
  agentctl doctor
  DISPLAY=:1 agentctl doctor
  agentctl doctor --machine laptop-2
`

// check is one line of the doctor's report.
type check struct {
	name string
	err  error
	hint string
	note string
	warn string // works, but less safely than it could; not a failure
}

func runDoctor(ctx context.Context, env *cli.Env, args []string) error {
	fs := cli.NewFlagSet(env, "doctor", doctorUsage)
	machine := fs.String("machine", "", "this machine's `name` in agentctl.yaml (default: hub.machine)")
	rest, err := cli.ParseArgs(fs, args)
	if err != nil {
		return err
	}
	if err := cli.WantArgs(fs, rest, 0, 0, "no arguments"); err != nil {
		return err
	}
	cfg, cfgErr := config.Load(env.Root)
	checks := []check{{name: "config " + config.Path(env.Root), err: cfgErr, hint: "run 'agentctl init', or fix the file"}}
	checks = append(checks, rootCheck(env.Root), lockCheck(env.Root))
	me := thisMachine(*machine, cfg.Hub.Machine)
	var here []config.Agent // the agents whose window or command is on this machine
	for _, a := range cfg.Agents {
		if m := machineOf(cfg, a); m == "" || m == me {
			here = append(here, a)
		}
	}
	if hubConfigured(cfg.Hub) {
		checks = append(checks, hubChecks(env.Root, cfg, me)...)
	}

	needGUI := false
	for _, a := range here {
		needGUI = needGUI || a.EffectiveDriver() == config.DriverGUI
	}
	desktopOK := false
	if needGUI {
		checks = append(checks, displayCheck())
		dc := check{name: "desktop control and window manager", err: cursor.CheckDesktop(),
			hint: "use a Linux or Windows build without the nogui tag, run an EWMH window manager, and set DISPLAY"}
		desktopOK = dc.err == nil
		checks = append(checks, dc, clipboardCheck())
	}
	for _, a := range here {
		if a.EffectiveDriver() == config.DriverCDP {
			checks = append(checks, cdpChecks(ctx, a)...)
			continue
		}
		checks = append(checks, agentCheck(a, desktopOK))
		if a.EffectiveDriver() == config.DriverGUI && driverconf.Calibrated(a.Window) == nil {
			checks = append(checks, busyCheck(a, cfg.GUI))
		}
	}

	failed := 0
	for _, c := range checks {
		if c.err != nil {
			failed++
			fmt.Fprintf(env.Stdout, "FAIL %s: %v\n     hint: %s\n", c.name, c.err, c.hint)
			continue
		}
		if c.warn != "" {
			fmt.Fprintf(env.Stdout, "WARN %s: %s\n     hint: %s\n", c.name, c.warn, c.hint)
			continue
		}
		line := "ok   " + c.name
		if c.note != "" {
			line += " (" + c.note + ")"
		}
		fmt.Fprintln(env.Stdout, line)
	}
	if failed > 0 {
		return fmt.Errorf("%d of %d checks failed", failed, len(checks))
	}
	return nil
}

// rootCheck warns when other accounts may enter the runtime folder: the
// files inside follow the umask, so they can read every prompt, message
// and agentctl.yaml there.
func rootCheck(root string) check {
	c := check{name: "runtime folder " + root}
	fi, err := os.Stat(root)
	switch {
	case err != nil:
		c.err, c.hint = err, "run 'agentctl init'"
	case runtime.GOOS != "windows" && fi.Mode().Perm()&0o007 != 0:
		// Windows keeps access in ACLs, which file modes do not show.
		c.warn = fmt.Sprintf("open to other accounts (%v): they can read every prompt, message and agentctl.yaml in it", fi.Mode().Perm())
		c.hint = "chmod o-rwx " + root
	}
	return c
}

func lockCheck(root string) check {
	dir := cursor.LockDir(root)
	c := check{name: "lock folder " + dir, hint: "run 'agentctl init', or make " + dir + " writable by this user"}
	if err := atomicfile.MkdirAll(dir); err != nil {
		c.err = err
		return c
	}
	f, err := os.CreateTemp(dir, ".doctor-*")
	if err != nil {
		c.err = fmt.Errorf("not writable: %w", err)
		return c
	}
	f.Close()
	os.Remove(f.Name())
	// Windows keeps access in ACLs, which file modes do not show: Go
	// reports every folder there as 0777.
	if fi, err := os.Stat(dir); err == nil && runtime.GOOS != "windows" && fi.Mode().Perm()&0o002 != 0 {
		c.err = fmt.Errorf("world-writable (%v): another user could hold the desktop lock", fi.Mode().Perm())
		c.hint = "chmod o-w " + dir
	}
	return c
}

func displayCheck() check {
	c := check{name: "display"}
	if runtime.GOOS != "linux" {
		c.note = runtime.GOOS + " desktop"
		return c
	}
	if d := os.Getenv("DISPLAY"); d == "" {
		c.err = fmt.Errorf("DISPLAY is not set")
		c.hint = "run agentctl from a terminal on the desktop, or set DISPLAY (e.g. DISPLAY=:0)"
	} else {
		c.note = d
	}
	return c
}

func clipboardCheck() check {
	c := check{name: "clipboard tool"}
	if runtime.GOOS != "linux" {
		c.note = "built in"
		return c
	}
	for _, tool := range []string{"xclip", "xsel"} {
		if p, err := exec.LookPath(tool); err == nil {
			c.note = p
			return c
		}
	}
	c.err = fmt.Errorf("neither xclip nor xsel is installed")
	c.hint = "sudo apt-get install xclip"
	return c
}

// busyCheck warns about a seat without a busy indicator: its replies count
// as finished only by stillness, which a longer pause mid-reply defeats.
func busyCheck(a config.Agent, gui config.GUI) check {
	c := check{name: fmt.Sprintf("agent %s: busy indicator", a.Name)}
	if a.Window.Busy != nil {
		c.note = fmt.Sprintf("at %d,%d", a.Window.Busy.X, a.Window.Busy.Y)
		return c
	}
	c.warn = fmt.Sprintf("none calibrated: a reply counts as finished only after %s unchanged (gui.max_pause), and one that pauses longer mid-reply is cut short", gui.MaxPause)
	if gui.MaxPause.D() < config.SafeMaxPause {
		c.warn += fmt.Sprintf("; gui.max_pause is under %s, shorter than models pause for tool runs", config.SafeMaxPause)
	}
	c.hint = "run 'agentctl calibrate " + a.Name + " --busy X,Y' with the position of the chat's stop button"
	return c
}

func agentCheck(a config.Agent, desktopOK bool) check {
	switch a.EffectiveDriver() {
	case config.DriverExec:
		e := a.Exec.Resolved()
		c := check{name: fmt.Sprintf("agent %s: exec command", a.Name), hint: "install it, or fix exec.command for " + a.Name}
		c.note, c.err = cursor.ProgramPath(e.Preset, e.Command[0])
		return c
	case config.DriverACP:
		c := check{name: fmt.Sprintf("agent %s: acp command", a.Name), hint: "install it (the acp presets' programs come from npm; see docs/drivers.md), or fix acp.command for " + a.Name}
		c.note, c.err = exec.LookPath(a.ACP.Resolved().Command[0])
		return c
	}
	c := check{name: fmt.Sprintf("agent %s: window", a.Name)}
	if err := driverconf.Calibrated(a.Window); err != nil {
		c.err, c.hint = err, "run 'agentctl calibrate "+a.Name+"'"
		return c
	}
	if !desktopOK {
		c.err, c.hint = fmt.Errorf("not checked: no desktop control"), "fix the desktop check above"
		return c
	}
	found, err := cursor.FindWindows(a.Window.Title, a.Window.PID)
	switch {
	case err != nil:
		c.err = err
	case len(found) == 0:
		c.err = fmt.Errorf("no window with a title matching %q", a.Window.Title)
		c.hint = "open the agent's window, or fix window.title"
	case len(found) > 1:
		titles := make([]string, len(found))
		for i, f := range found {
			titles[i] = fmt.Sprintf("%q", f.Title)
		}
		c.err = fmt.Errorf("%d windows match %q: %s", len(found), a.Window.Title, strings.Join(titles, ", "))
		c.hint = "make window.title match exactly one window, or set window.pid"
	default:
		c.note = fmt.Sprintf("%q at %v", found[0].Title, found[0].Bounds.Min)
	}
	return c
}
