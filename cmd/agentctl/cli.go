package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
)

// errHelpShown ends a command that printed what was asked instead of
// running: its help (--help), or the version (--version).
var errHelpShown = errors.New("help shown")

// usageError is a mistake in how a command was called; it exits 2, and
// report follows it with the command's usage line (dispatch fills it in).
type usageError struct {
	msg   string
	hint  string
	usage string
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
	version := fs.Bool("version", false, "")
	if err := fs.Parse(args); err != nil {
		return nil, flagError(fs, err)
	}
	if *help {
		printUsage(env.Stdout)
		return nil, errHelpShown
	}
	if *version {
		printVersion(env.Stdout)
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

// parseArgs parses flags that may come before, between or after positional
// arguments (`agentctl inbox Agent-3 --json`) and returns the positionals.
// Everything after "--" is positional. The whole help is printed only when
// asked for; a mistake gets one line (report).
func parseArgs(fs *flag.FlagSet, args []string) ([]string, error) {
	help := fs.Usage
	fs.Usage = func() {} // flag calls it on every error too
	defer func() { fs.Usage = help }()
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				help()
				return nil, errHelpShown
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

// wantArgs checks the number of positional arguments.
func wantArgs(fs *flag.FlagSet, args []string, min, max int, what string) error {
	if len(args) < min || (max >= 0 && len(args) > max) {
		return usageError{msg: fmt.Sprintf("%s: want %s", fs.Name(), what)}
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
		if s := suggest(name, known); s != "" {
			msg += fmt.Sprintf(" (did you mean --%s?)", s)
		}
		return usageError{msg: msg}
	}
	if fs.Name() != "agentctl" {
		msg = fs.Name() + ": " + msg
	}
	return usageError{msg: msg}
}

// suggest returns the one candidate closest to word, if it is close enough
// to be a typo of it (ignoring case) or the only one word begins (--prio
// for --priority), and "" when none or several are.
func suggest(word string, candidates []string) string {
	var starts []string
	for _, c := range candidates {
		if len([]rune(word)) >= 2 && strings.HasPrefix(strings.ToLower(c), strings.ToLower(word)) {
			starts = append(starts, c)
		}
	}
	if len(starts) == 1 {
		return starts[0]
	}
	return typoOf(word, candidates)
}

func typoOf(word string, candidates []string) string {
	best, bestDist, ties := "", 0, 0
	for _, c := range candidates {
		d := editDistance(strings.ToLower(word), strings.ToLower(c))
		switch {
		case best == "" || d < bestDist:
			best, bestDist, ties = c, d, 1
		case d == bestDist:
			ties++
		}
	}
	if best == "" || ties > 1 || bestDist > max(1, len([]rune(word))/3) {
		return ""
	}
	return best
}

// editDistance counts the insertions, deletions, substitutions and swaps
// of neighbours that turn a into b.
func editDistance(a, b string) int {
	x, y := []rune(a), []rune(b)
	d := make([][]int, len(x)+1)
	for i := range d {
		d[i] = make([]int, len(y)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(x); i++ {
		for j := 1; j <= len(y); j++ {
			cost := 1
			if x[i-1] == y[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && x[i-1] == y[j-2] && x[i-2] == y[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(x)][len(y)]
}

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

// isFlagSet reports whether the user gave flag name explicitly.
func isFlagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}
