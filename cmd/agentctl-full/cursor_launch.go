package main

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"time"

	"github.com/agentctl/agentctl/cmd/internal/cli"
	"github.com/agentctl/agentctl/config"
	"github.com/agentctl/agentctl/internal/atomicfile"
	"github.com/agentctl/agentctl/internal/layout"
)

const cursorUsage = `
Usage: agentctl cursor launch AGENT [--port N] [--folder DIR] [-- PATH [ARGS...]]

Starts Cursor for AGENT's cdp seat (driver: cdp): a Cursor of its own (its
own profile, <root>/cursor/AGENT/profile, so it is a separate instance and
not a window of one already running), with its DevTools port open on
loopback (--port, else the port of the agent's cdp.endpoint, else 9222),
showing DIR (default <root>/workspaces/AGENT, whose name puts the agent's
name in the window title). PATH is Cursor's program when it is not the
usual one ('cursor' on PATH; /Applications/Cursor.app/Contents/MacOS/Cursor
on macOS; %LOCALAPPDATA%\Programs\cursor\Cursor.exe on Windows).

Any local process can drive an app whose DevTools port is open: type into
it and run code in it. The port is never opened beyond loopback, and a port
something already answers on is refused. Close the seat's Cursor when the
agent is done.

Then: agentctl calibrate AGENT --cdp http://127.0.0.1:PORT

Examples:
  agentctl cursor launch Agent-1
  agentctl cursor launch Agent-2 --port 9223 --folder ~/src/project
  agentctl cursor launch Agent-1 -- /opt/cursor/cursor.AppImage --no-sandbox
`

func runCursor(ctx context.Context, env *cli.Env, args []string) error {
	fs := cli.NewFlagSet(env, "cursor", cursorUsage)
	port := fs.Int("port", 0, "DevTools `port` on loopback (default: cdp.endpoint's, else 9222)")
	folder := fs.String("folder", "", "the `folder` Cursor opens (default <root>/workspaces/AGENT)")
	rest, err := cli.ParseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(rest) < 2 || rest[0] != "launch" {
		return cli.UsageError{Msg: "cursor: want launch AGENT", Fix: "run 'agentctl cursor --help' for usage"}
	}
	cfg, err := cli.LoadConfig(env)
	if err != nil {
		return err
	}
	agent, err := cfg.Agent(rest[1])
	if err != nil {
		return cli.WithHint(err, "agents are listed in "+config.Path(env.Root))
	}
	program := rest[2:]
	if len(program) == 0 {
		program = []string{defaultCursorPath()}
	}
	p, err := launchPort(agent, *port)
	if err != nil {
		return err
	}
	endpoint := "http://127.0.0.1:" + strconv.Itoa(p)
	if answers(ctx, endpoint) {
		return cli.WithHint(fmt.Errorf("something already answers on %s", endpoint),
			"give another --port, or use the app already there: agentctl calibrate "+agent.Name+" --cdp "+endpoint)
	}
	paths, err := layout.For(env.Root, agent.Name)
	if err != nil {
		return err
	}
	profile := paths.CursorProfile()
	dir := *folder
	if dir == "" {
		dir = paths.Workspace()
	}
	for _, d := range []string{profile, dir} {
		if err := atomicfile.MkdirAll(d); err != nil {
			return fmt.Errorf("cannot launch Cursor: %w", err)
		}
	}
	logFile, err := os.OpenFile(paths.CursorLaunchLog(), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("cannot launch Cursor: %w", err)
	}
	defer logFile.Close()
	cmd := exec.Command(program[0], append(program[1:],
		"--user-data-dir="+profile, "--remote-debugging-port="+strconv.Itoa(p), "--new-window", dir)...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		return cli.WithHint(fmt.Errorf("cannot start Cursor: %w", err), "give Cursor's program after --: agentctl cursor launch "+agent.Name+" -- PATH")
	}
	fmt.Fprintf(env.Stdout, "started Cursor for %s (pid %d), DevTools on %s, its output in %s\n", agent.Name, cmd.Process.Pid, endpoint, logFile.Name())
	fmt.Fprintf(env.Stdout, "next: agentctl calibrate %s --cdp %s\n", agent.Name, endpoint)
	return cmd.Process.Release()
}

// launchPort is the port a seat's Cursor listens on: --port, else the
// agent's cdp.endpoint's, else 9222.
func launchPort(a config.Agent, flagPort int) (int, error) {
	if flagPort > 0 {
		return flagPort, nil
	}
	if a.CDP.Endpoint != "" {
		u, err := url.Parse(a.CDP.Endpoint)
		if err == nil {
			if p, err := strconv.Atoi(u.Port()); err == nil {
				return p, nil
			}
		}
		return 0, fmt.Errorf("%s: cdp.endpoint %q has no port", a.Name, a.CDP.Endpoint)
	}
	return 9222, nil
}

// answers reports whether a DevTools endpoint (or anything) answers at
// endpoint.
func answers(ctx context.Context, endpoint string) bool {
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, endpoint+"/json/version", nil)
	if err != nil {
		return false
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return true
}

func defaultCursorPath() string {
	switch runtime.GOOS {
	case "darwin":
		return "/Applications/Cursor.app/Contents/MacOS/Cursor"
	case "windows":
		return filepath.Join(os.Getenv("LOCALAPPDATA"), "Programs", "cursor", "Cursor.exe")
	}
	return "cursor"
}
