// Command agentctl runs a swarm of AI coding agents that live in Cursor chat
// windows (or headless CLI agents) and coordinates them through plain files.
//
// main only parses the global flags and dispatches; each subcommand lives in
// its own file with its own flag set and usage text.
package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"
	"time"

	"github.com/agentctl/agentctl/agents/supervise"
	"github.com/agentctl/agentctl/cursor"
)

func main() {
	// Before anything else: agentctl re-executed as a turn's guard runs
	// only that.
	cursor.GuardMain()
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// command is one subcommand: its name, a one-line summary for the top-level
// usage, and the function that parses its own flags and does the work.
type command struct {
	name    string
	summary string
	usage   string // the help text; its synopsis follows a usage error
	run     func(ctx context.Context, env *Env, args []string) error
}

// commands lists every subcommand in the order the usage shows them.
var commands = []command{
	{"init", "create a runtime folder and agentctl.yaml", initUsage, runInit},
	{"calibrate", "record where an agent's chat window and its controls are", calibrateUsage, runCalibrate},
	{"cursor", "start Cursor for a cdp seat, with its DevTools port on loopback", cursorUsage, runCursor},
	{"prompt", "take one turn with an agent and print its reply", promptUsage, runPrompt},
	{"doctor", "check the display, clipboard, locks and every agent's window", doctorUsage, runDoctor},
	{"send", "deliver a message to an agent's or a person's inbox", sendUsage, runSend},
	{"inbox", "list an agent's or a person's messages", inboxUsage, runInbox},
	{"reply", "answer a message in a person's mailbox", replyUsage, runReply},
	{"approve", "apply an effect held for a person's approval", approveUsage, runApprove},
	{"deny", "refuse an effect held for a person's approval", denyUsage, runDeny},
	{"status", "show every agent's runner and mailbox counts", statusUsage, runStatus},
	{"run", "run an agent's loop: mailbox → prompt → reply → effects", runUsage, runRun},
	{"hub", "connect the swarm's machines: runners here for seats elsewhere", hubUsage, runHub},
	{"up", "keep a runner alive for every agent (or the named ones)", upUsage, runUp},
	{"down", "stop the runtime's 'agentctl up' and its runners", downUsage, runDown},
	{"service", "make the runners start at login (systemd, launchd, Task Scheduler)", serviceUsage, runService},
	{"skip", "abandon the turn an agent is taking; its message is dead-lettered", skipUsage, runSkip},
	{"retry", "put a dead letter back into an inbox", retryUsage, runRetry},
	{"drop", "archive a pending or dead message without working it", dropUsage, runDrop},
	{"serve", "serve mission control: the swarm, live, in a browser", serveUsage, runServe},
	{"top", "mission control in the terminal: every agent, live", topUsage, runTop},
	{"reconcile", "run the recovery checks once (for a system cron)", reconcileUsage, runReconcile},
	{"board", "list, show, add, change and import board tasks", boardUsage, runBoard},
	{"tail", "print and follow agents' devlogs", tailUsage, runTail},
	{"devlog", "add a human note to an agent's devlog", devlogUsage, runDevlog},
	{"mcp", "serve an agent's mailbox, boards and devlog as MCP tools on stdio", mcpUsage, runMCP},
	{"lore", "write the day's lore from devlogs and the board", loreUsage, runLore},
	{"migrate", "import a Dream.OS setup: messages, boards, coordinates, devlogs", migrateUsage, runMigrate},
	{"completion", "print a shell completion script (bash, zsh, fish, powershell)", completionUsage, runCompletion},
	{"version", "print the version, the build and whether the GUI driver is in it", versionUsage, runVersion},
}

// Env is what every subcommand gets: where the runtime is and the standard
// streams, so tests can run commands in-process.
type Env struct {
	Root   string
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	// flagsOf, when set, is handed a command's flag set where --help
	// would print it, so completion learns the flags of the real thing.
	flagsOf func(*flag.FlagSet)
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	env := &Env{Root: defaultRoot(), Stdin: stdin, Stdout: stdout, Stderr: stderr}
	args, err := parseGlobal(env, args)
	if err == nil && len(args) == 0 {
		err = usageError{msg: "no command given"}
	}
	if err == nil {
		err = dispatch(env, args)
	}
	return report(stderr, err)
}

func dispatch(env *Env, args []string) error {
	name := args[0]
	if name == completeCommand {
		return runComplete(env, args[1:])
	}
	if name == "help" || name == "-h" || name == "--help" {
		if len(args) > 1 {
			return dispatch(env, []string{args[1], "--help"})
		}
		printUsage(env.Stdout)
		return nil
	}
	for _, c := range commands {
		if c.name == name {
			if name == "run" {
				idleForDays()
			}
			if !longRunning[name] {
				shortLived()
			}
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			err := asUsage(c.run(ctx, env, args[1:]))
			var u usageError
			if errors.As(err, &u) && u.usage == "" {
				u.usage = usageLine(c.usage, args...)
				return u
			}
			return err
		}
	}
	msg := fmt.Sprintf("unknown command %q", name)
	if s := suggest(name, commandNames()); s != "" {
		msg += fmt.Sprintf(" (did you mean %s?)", s)
	}
	return usageError{msg: msg, hint: "run 'agentctl help' to list the commands"}
}

// longRunning names the commands that may run until they are stopped;
// every other one ends by itself.
var longRunning = map[string]bool{"run": true, "hub": true, "up": true, "serve": true, "top": true, "tail": true, "mcp": true, "cursor": true}

// shortLivedMemory is where a command that ends by itself starts
// collecting garbage.
const shortLivedMemory = 512 << 20

// shortLived turns the garbage collector off, up to shortLivedMemory, for
// a command that ends by itself: what it would collect the exit frees, and
// on a board of 10,000 tasks the collector was a third of board set's
// CPU.
func shortLived() {
	debug.SetGCPercent(-1)
	debug.SetMemoryLimit(shortLivedMemory)
}

// settledAfter is when a runner is past its start-up.
const settledAfter = 5 * time.Second

// idleForDays lets go, once start-up is over, of the program's pages that
// only start-up needed (releaseProgramPages): there is a runner for every
// agent, and it idles for days. Only runners do: mapping the pages back
// stalls a process for a moment, which the hub's NATS servers, electing
// their leaders on short timeouts, were seen not to take well on a loaded
// machine.
func idleForDays() {
	time.AfterFunc(settledAfter, func() {
		debug.FreeOSMemory()
		releaseProgramPages()
	})
}

func commandNames() []string {
	names := make([]string, len(commands))
	for i, c := range commands {
		names[i] = c.name
	}
	return names
}

// report prints err the one way agentctl prints errors and returns the exit
// code: 0 for success, 2 for usage errors, supervise.ExitNeedsPerson for a
// stop only a person can mend (refused credentials: up then waits for
// their edit instead of restarting into the same refusal), 1 for
// everything else.
func report(stderr io.Writer, err error) int {
	if err == nil || errors.Is(err, errHelpShown) {
		return 0
	}
	var exit exitError
	if errors.As(err, &exit) {
		return exit.code // the child that failed has said why
	}
	fmt.Fprintf(stderr, "agentctl: %v\n", err)
	var h interface{ Hint() string }
	if errors.As(err, &h) && h.Hint() != "" {
		fmt.Fprintf(stderr, "hint: %s\n", h.Hint())
	}
	var u usageError
	if errors.As(err, &u) {
		fmt.Fprintf(stderr, "usage: %s\n", cmp.Or(u.usage, "agentctl [--root DIR] COMMAND [ARGS]"))
		return 2
	}
	var p interface{ NeedsPerson() bool }
	if errors.As(err, &p) && p.NeedsPerson() {
		return supervise.ExitNeedsPerson
	}
	return 1
}

func printUsage(w io.Writer) {
	fmt.Fprint(w, `agentctl coordinates AI coding agents through mailbox folders, a project
board and devlogs.

Usage:
  agentctl [--root DIR] COMMAND [ARGS]

Commands:
`)
	for _, c := range commands {
		fmt.Fprintf(w, "  %-11s %s\n", c.name, c.summary)
	}
	fmt.Fprint(w, `
Global flags:
  --root DIR   runtime folder (default ./runtime, or $AGENTCTL_ROOT)
  --version    print the version (as 'agentctl version')

Run 'agentctl help COMMAND' for a command's flags and examples.
`)
}
