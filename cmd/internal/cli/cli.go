package cli

import (
	"cmp"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/agentctl/agentctl/agents/actions"
	"github.com/agentctl/agentctl/internal/typo"
)

// ErrHelpShown ends a command that printed what was asked instead of
// running: its help (--help), or the version (--version).
var ErrHelpShown = errors.New("help shown")

// UsageError is a mistake in how a command was called; it exits 2, and
// report follows it with the command's usage line (dispatch fills it in).
type UsageError struct {
	Msg   string
	Fix   string // the hint, if known
	Usage string // the synopsis; dispatch fills it in
}

func (e UsageError) Error() string { return e.Msg }
func (e UsageError) Hint() string  { return e.Fix }

// hintError carries the fix for an error when agentctl knows it.
type hintError struct {
	err  error
	hint string
}

func (e hintError) Error() string { return e.err.Error() }
func (e hintError) Unwrap() error { return e.err }
func (e hintError) Hint() string  { return e.hint }

// asUsage makes a request the actions refused as written (an
// actions.InputError) a usage mistake: it exits 2 with the usage line.
func asUsage(err error) error {
	var in *actions.InputError
	if errors.As(err, &in) {
		return UsageError{Msg: err.Error(), Fix: in.Hint()}
	}
	return err
}

// WithHint attaches a "hint:" line to err.
func WithHint(err error, hint string) error {
	if err == nil {
		return nil
	}
	return hintError{err: err, hint: hint}
}

func defaultRoot() string {
	r := cmp.Or(os.Getenv("AGENTCTL_ROOT"), "runtime")
	_ = rootFlag{&r}.Set(r) // as given, should it not be made absolute
	return r
}

// rootFlag is --root, made absolute as it is given: the root is handed on
// to programs that run elsewhere (an agent's command in its own folder,
// git working in a repository's top), where a relative one would name
// another folder.
type rootFlag struct{ root *string }

func (f rootFlag) String() string {
	if f.root == nil {
		return ""
	}
	return *f.root
}

func (f rootFlag) Set(v string) error {
	abs, err := filepath.Abs(v)
	if err != nil {
		return fmt.Errorf("cannot make %s an absolute path: %w", v, err)
	}
	*f.root = abs
	return nil
}

// parseGlobal consumes the flags that come before the command name.
func parseGlobal(env *Env, args []string) ([]string, error) {
	fs := flag.NewFlagSet("agentctl", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Var(rootFlag{&env.Root}, "root", "")
	help := fs.Bool("help", false, "")
	fs.BoolVar(help, "h", false, "")
	version := fs.Bool("version", false, "")
	if err := fs.Parse(args); err != nil {
		return nil, flagError(fs, err)
	}
	if *help {
		printUsage(env.Stdout)
		return nil, ErrHelpShown
	}
	if *version {
		printVersion(env.Stdout)
		return nil, ErrHelpShown
	}
	return fs.Args(), nil
}

// NewFlagSet makes a subcommand's flag set. Every subcommand also accepts
// --root, so it may come before or after the command name.
func NewFlagSet(env *Env, name, usage string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Var(rootFlag{&env.Root}, "root", "runtime `folder`")
	fs.Usage = func() {
		if env.flagsOf != nil {
			env.flagsOf(fs)
			return
		}
		fmt.Fprint(env.Stdout, strings.TrimLeft(usage, "\n"))
		fmt.Fprintln(env.Stdout, "\nFlags:")
		fs.SetOutput(env.Stdout)
		fs.PrintDefaults()
		fs.SetOutput(io.Discard)
	}
	return fs
}

// ParseArgs parses flags that may come before, between or after positional
// arguments (`agentctl inbox Agent-3 --json`) and returns the positionals.
// Everything after "--" is positional. The whole help is printed only when
// asked for; a mistake gets one line (report).
func ParseArgs(fs *flag.FlagSet, args []string) ([]string, error) {
	help := fs.Usage
	fs.Usage = func() {} // flag calls it on every error too
	defer func() { fs.Usage = help }()
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				help()
				return nil, ErrHelpShown
			}
			return nil, flagError(fs, err)
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

// WantArgs checks the number of positional arguments.
func WantArgs(fs *flag.FlagSet, args []string, min, max int, what string) error {
	if len(args) < min || (max >= 0 && len(args) > max) {
		return UsageError{Msg: fmt.Sprintf("%s: want %s", fs.Name(), what)}
	}
	return nil
}

// flagError turns the flag package's error into agentctl's words, with
// the flag the user probably meant.
func flagError(fs *flag.FlagSet, err error) error {
	msg := err.Error()
	if name, ok := strings.CutPrefix(msg, "flag provided but not defined: -"); ok {
		var known []string
		fs.VisitAll(func(f *flag.Flag) { known = append(known, f.Name) })
		msg = "unknown flag --" + name
		if fs.Name() != "agentctl" {
			msg = fs.Name() + ": " + msg
		}
		if s := Suggest(name, known); s != "" {
			msg += fmt.Sprintf(" (did you mean --%s?)", s)
		}
		return UsageError{Msg: msg}
	}
	if fs.Name() != "agentctl" {
		msg = fs.Name() + ": " + msg
	}
	return UsageError{Msg: msg}
}

// Suggest returns the one candidate closest to word, if it is close enough
// to be a typo of it (typo.Closest).
func Suggest(word string, candidates []string) string { return typo.Closest(word, candidates) }

// usageLine picks from a command's usage text the synopsis line that fits
// what was typed: the line for "board set" when words are [board set],
// else the first.
func usageLine(usage string, words ...string) string {
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(usage), "\n") {
		l = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(l), "Usage:"))
		if l == "" && len(lines) > 0 {
			break
		}
		if strings.HasPrefix(l, "agentctl ") {
			lines = append(lines, l)
		}
	}
	if len(lines) == 0 {
		return ""
	}
	for n := len(words); n > 0; n-- {
		prefix := "agentctl " + strings.Join(words[:n], " ")
		for _, l := range lines {
			if l == prefix || strings.HasPrefix(l, prefix+" ") {
				return l
			}
		}
	}
	return lines[0]
}

// IsFlagSet reports whether the user gave flag name explicitly.
func IsFlagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}
