// Package cli is agentctl's command line: the table of commands, the
// global flags, how a command parses its flags and how errors are told,
// and the quick commands themselves (version, status, send, board,
// completion).
//
// Two programs run it. agentctl, the one people type, has only the quick
// commands, so that it starts about as fast as a Go program can; it hands
// every other command over to agentctl-full, installed beside it, which
// has them all (Program).
//
// It owns the words of the command line, not the work: it writes no file
// itself (send and the board's changes go through package actions and
// projectboard's Store, status and completion only read), and it links
// none of the drivers, NATS, MCP or mission control's server, as
// cmd/agentctl's deps test checks.
package cli

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

	"github.com/agentctl/agentctl/agents/supervise"
)

// Command is one subcommand: its name, a one-line summary for the
// top-level usage, and the function that parses its own flags and does
// the work.
type Command struct {
	Name    string
	Summary string
	Usage   string // the help text; its synopsis follows a usage error
	Run     func(ctx context.Context, env *Env, args []string) error
}

// Commands lists every subcommand in the order the usage shows them. Those
// without Usage and Run are agentctl-full's own: it gives them
// (Program.Full), and agentctl hands them over to it.
var Commands = []Command{
	{Name: "init", Summary: "create a runtime folder and agentctl.yaml"},
	{Name: "calibrate", Summary: "record where an agent's chat window and its controls are"},
	{Name: "cursor", Summary: "start Cursor for a cdp seat, with its DevTools port on loopback"},
	{Name: "prompt", Summary: "take one turn with an agent and print its reply"},
	{Name: "doctor", Summary: "check the display, clipboard, locks and every agent's window"},
	{Name: "send", Summary: "deliver a message to an agent's or a person's inbox", Usage: sendUsage, Run: runSend},
	{Name: "inbox", Summary: "list an agent's or a person's messages"},
	{Name: "reply", Summary: "answer a message in a person's mailbox"},
	{Name: "approve", Summary: "apply an effect held for a person's approval"},
	{Name: "deny", Summary: "refuse an effect held for a person's approval"},
	{Name: "status", Summary: "show every agent's runner and mailbox counts", Usage: statusUsage, Run: runStatus},
	{Name: "run", Summary: "run an agent's loop: mailbox → prompt → reply → effects"},
	{Name: "hub", Summary: "connect the swarm's machines: runners here for seats elsewhere"},
	{Name: "up", Summary: "keep a runner alive for every agent (or the named ones)"},
	{Name: "down", Summary: "stop the runtime's 'agentctl up' and its runners"},
	{Name: "service", Summary: "make the runners start at login (systemd, launchd, Task Scheduler)"},
	{Name: "skip", Summary: "abandon the turn an agent is taking; its message is dead-lettered"},
	{Name: "retry", Summary: "put a dead letter back into an inbox"},
	{Name: "drop", Summary: "archive a pending or dead message without working it"},
	{Name: "serve", Summary: "serve mission control: the swarm, live, in a browser"},
	{Name: "top", Summary: "mission control in the terminal: every agent, live"},
	{Name: "reconcile", Summary: "run the recovery checks once (for a system cron)"},
	{Name: "board", Summary: "list, show, add, change and import board tasks", Usage: boardUsage, Run: runBoard},
	{Name: "tail", Summary: "print and follow agents' devlogs"},
	{Name: "devlog", Summary: "add a human note to an agent's devlog"},
	{Name: "mcp", Summary: "serve an agent's mailbox, boards and devlog as MCP tools on stdio"},
	{Name: "lore", Summary: "write the day's lore from devlogs and the board"},
	{Name: "migrate", Summary: "import a Dream.OS setup: messages, boards, coordinates, devlogs"},
	{Name: "completion", Summary: "print a shell completion script (bash, zsh, fish, powershell)", Usage: completionUsage, Run: runCompletion},
	{Name: "version", Summary: "print the version, the build and whether the GUI driver is in it", Usage: versionUsage, Run: runVersion},
}

// Program is one of the two programs the table is built into.
type Program struct {
	// Full gives the Usage and Run of the commands the table lists without
	// them, by name: agentctl-full has them all; agentctl, none.
	Full map[string]Command
	// HandOver runs the command line args (as typed, global flags and
	// all) in agentctl-full, for command name, which this program has not.
	HandOver func(name string, args []string) error
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

// Main runs the command line args and returns the exit code.
func (p Program) Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	env := &Env{Root: defaultRoot(), Stdin: stdin, Stdout: stdout, Stderr: stderr}
	words, err := parseGlobal(env, args)
	if err == nil && len(words) == 0 {
		err = UsageError{Msg: "no command given"}
	}
	if err == nil {
		err = p.dispatch(env, args, words)
	}
	return report(stderr, err)
}

// command finds name in the table, with this program's Usage and Run for
// it; a command without Run is one to hand over. quick says it is one of
// the quick commands, the table's own. They are left to Ctrl+C's default,
// which ends them at once: they write by rename and their locks are the
// kernel's, so nothing is left half done, and hearing the signal would
// cost every run a thread.
func (p Program) command(name string) (c Command, quick, ok bool) {
	for _, t := range Commands {
		if t.Name == name {
			if t.Run != nil {
				return t, true, true
			}
			full := p.Full[name]
			t.Usage, t.Run = full.Usage, full.Run
			return t, false, true
		}
	}
	return Command{}, false, false
}

// dispatch runs the command words name; line is the whole command line,
// which a command this program has not is handed over with.
func (p Program) dispatch(env *Env, line, words []string) error {
	name := words[0]
	if name == completeCommand {
		return p.runComplete(env, line, words[1:])
	}
	if name == "help" || name == "-h" || name == "--help" {
		if len(words) > 1 {
			return p.dispatch(env, line, []string{words[1], "--help"})
		}
		printUsage(env.Stdout)
		return nil
	}
	c, quick, ok := p.command(name)
	if !ok {
		msg := fmt.Sprintf("unknown command %q", name)
		if s := Suggest(name, commandNames()); s != "" {
			msg += fmt.Sprintf(" (did you mean %s?)", s)
		}
		return UsageError{Msg: msg, Fix: "run 'agentctl help' to list the commands"}
	}
	if c.Run == nil {
		return p.handOver(name, line)
	}
	switch {
	case !longRunning[name]:
		shortLived()
	case name != "tail" && name != "top":
		// What follows a log into a pipe still ends when the pipe does.
		survivePipeClose()
	}
	ctx := context.Background()
	if !quick {
		var stop func()
		ctx, stop = signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
		defer stop()
	}
	err := asUsage(c.Run(ctx, env, words[1:]))
	var u UsageError
	if errors.As(err, &u) && u.Usage == "" {
		u.Usage = usageLine(c.Usage, words...)
		return u
	}
	return err
}

func (p Program) handOver(name string, line []string) error {
	if p.HandOver == nil {
		return fmt.Errorf("%q is not in this program", name)
	}
	return p.HandOver(name, line)
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

func commandNames() []string {
	names := make([]string, len(Commands))
	for i, c := range Commands {
		names[i] = c.Name
	}
	return names
}

// ExitError ends agentctl with a child's exit code, the child having said
// why on the stderr they share.
type ExitError struct {
	Code int
	Err  error
}

func (e ExitError) Error() string { return e.Err.Error() }
func (e ExitError) Unwrap() error { return e.Err }

// report prints err the one way agentctl prints errors and returns the exit
// code: 0 for success, 2 for usage errors, supervise.ExitNeedsPerson for a
// stop only a person can mend (refused credentials: up then waits for
// their edit instead of restarting into the same refusal), 1 for
// everything else.
// Warnf tells the person, on stderr, of something that went less than
// fully, in the form every agentctl message takes: "agentctl: warning: …".
func Warnf(env *Env, format string, args ...any) {
	fmt.Fprintf(env.Stderr, "agentctl: warning: "+format+"\n", args...)
}

// Notef tells the person, on stderr, something they may want to know
// about what was done: "agentctl: note: …".
func Notef(env *Env, format string, args ...any) {
	fmt.Fprintf(env.Stderr, "agentctl: note: "+format+"\n", args...)
}

func report(stderr io.Writer, err error) int {
	if err == nil || errors.Is(err, ErrHelpShown) {
		return 0
	}
	var exit ExitError
	if errors.As(err, &exit) {
		return exit.Code // the child that failed has said why
	}
	fmt.Fprintf(stderr, "agentctl: %v\n", err)
	var h interface{ Hint() string }
	if errors.As(err, &h) && h.Hint() != "" {
		fmt.Fprintf(stderr, "hint: %s\n", h.Hint())
	}
	var u UsageError
	if errors.As(err, &u) {
		fmt.Fprintf(stderr, "usage: %s\n", cmp.Or(u.Usage, "agentctl [--root DIR] COMMAND [ARGS]"))
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
	for _, c := range Commands {
		fmt.Fprintf(w, "  %-11s %s\n", c.Name, c.Summary)
	}
	fmt.Fprint(w, `
Global flags:
  --root DIR   runtime folder (default ./runtime, or $AGENTCTL_ROOT)
  --version    print the version (as 'agentctl version')

Run 'agentctl help COMMAND' for a command's flags and examples.
`)
}
