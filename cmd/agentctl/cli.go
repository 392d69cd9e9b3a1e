package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
)

// errHelpShown ends a command that printed its usage because --help asked.
var errHelpShown = errors.New("help shown")

// usageError is a mistake in how a command was called; it exits 2.
type usageError struct {
	msg  string
	hint string
}

func (e usageError) Error() string { return e.msg }
func (e usageError) Hint() string  { return e.hint }

// hintError carries the fix for an error when agentctl knows it.
type hintError struct {
	err  error
	hint string
}

func (e hintError) Error() string { return e.err.Error() }
func (e hintError) Unwrap() error { return e.err }
func (e hintError) Hint() string  { return e.hint }

// withHint attaches a "hint:" line to err.
func withHint(err error, hint string) error {
	if err == nil {
		return nil
	}
	return hintError{err: err, hint: hint}
}

func defaultRoot() string {
	if r := os.Getenv("AGENTCTL_ROOT"); r != "" {
		return r
	}
	return "runtime"
}

// parseGlobal consumes the flags that come before the command name.
func parseGlobal(env *Env, args []string) ([]string, error) {
	fs := flag.NewFlagSet("agentctl", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&env.Root, "root", env.Root, "")
	help := fs.Bool("help", false, "")
	fs.BoolVar(help, "h", false, "")
	if err := fs.Parse(args); err != nil {
		return nil, usageError{msg: err.Error(), hint: "run 'agentctl help' for usage"}
	}
	if *help {
		printUsage(env.Stdout)
		return nil, errHelpShown
	}
	return fs.Args(), nil
}

// newFlagSet makes a subcommand's flag set. Every subcommand also accepts
// --root, so it may come before or after the command name.
func newFlagSet(env *Env, name, usage string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&env.Root, "root", env.Root, "runtime `folder`")
	fs.Usage = func() {
		fmt.Fprint(env.Stdout, strings.TrimLeft(usage, "\n"))
		fmt.Fprintln(env.Stdout, "\nFlags:")
		fs.SetOutput(env.Stdout)
		fs.PrintDefaults()
		fs.SetOutput(io.Discard)
	}
	return fs
}

// parseArgs parses flags that may come before, between or after positional
// arguments (`agentctl inbox Agent-3 --json`) and returns the positionals.
// Everything after "--" is positional.
func parseArgs(fs *flag.FlagSet, args []string) ([]string, error) {
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) { // flag has printed the usage already
				return nil, errHelpShown
			}
			return nil, usageError{msg: err.Error(), hint: fmt.Sprintf("run 'agentctl %s --help' for usage", fs.Name())}
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return positional, nil
		}
		// flag stops at "--" and drops it; keep everything after it as is.
		if len(args) > len(rest) && args[len(args)-len(rest)-1] == "--" {
			return append(positional, rest...), nil
		}
		positional = append(positional, rest[0])
		args = rest[1:]
	}
}

// wantArgs checks the number of positional arguments.
func wantArgs(fs *flag.FlagSet, args []string, min, max int, what string) error {
	if len(args) < min || (max >= 0 && len(args) > max) {
		return usageError{msg: fmt.Sprintf("%s: want %s", fs.Name(), what), hint: fmt.Sprintf("run 'agentctl %s --help' for usage", fs.Name())}
	}
	return nil
}

// isFlagSet reports whether the user gave flag name explicitly.
func isFlagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}
