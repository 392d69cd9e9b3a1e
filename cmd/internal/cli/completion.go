package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/agentctl/agentctl/config"
	"github.com/agentctl/agentctl/mailbox"
	"github.com/agentctl/agentctl/projectboard"
)

const completionUsage = `
Usage: agentctl completion bash|zsh|fish|powershell

Prints a script that makes your shell complete agentctl's commands, flags,
agent and people names, and board task ids (read from the runtime that
--root or $AGENTCTL_ROOT names at the moment you press Tab). The script
asks agentctl itself, so it stays right as agentctl changes.

Examples:
  source <(agentctl completion bash)                  # in ~/.bashrc
  agentctl completion zsh > "${fpath[1]}/_agentctl"   # then restart zsh
  agentctl completion fish > ~/.config/fish/completions/agentctl.fish
  agentctl completion powershell | Out-String | Invoke-Expression   # in $PROFILE
`

// completeCommand is the hidden command the scripts call: its arguments
// are the words typed after "agentctl", the last being the one to
// complete; it prints one candidate per line.
const completeCommand = "__complete"

var completionScripts = map[string]string{
	"bash": `# bash completion for agentctl: source <(agentctl completion bash)
_agentctl() {
    local IFS=$'\n'
    COMPREPLY=($(agentctl __complete "${COMP_WORDS[@]:1:COMP_CWORD}" 2>/dev/null))
}
complete -o default -F _agentctl agentctl
`,
	"zsh": `#compdef agentctl
# zsh completion for agentctl: agentctl completion zsh > "${fpath[1]}/_agentctl"
_agentctl() {
    local -a candidates
    candidates=("${(@f)$(agentctl __complete "${(@)words[2,CURRENT]}" 2>/dev/null)}")
    if (( ${#candidates} )) && [[ -n ${candidates[1]} ]]; then
        compadd -a candidates
    else
        _files
    fi
}
if [[ $zsh_eval_context[-1] == loadautofunc ]]; then
    _agentctl "$@"
else
    compdef _agentctl agentctl
fi
`,
	"fish": `# fish completion for agentctl: agentctl completion fish > ~/.config/fish/completions/agentctl.fish
function __agentctl_complete
    set -l words (commandline -opc) (commandline -ct)
    agentctl __complete $words[2..-1] 2>/dev/null
end
complete -c agentctl -f -a '(__agentctl_complete)'
`,
	"powershell": `# PowerShell completion for agentctl: agentctl completion powershell | Out-String | Invoke-Expression
Register-ArgumentCompleter -Native -CommandName agentctl, agentctl.exe -ScriptBlock {
    param($wordToComplete, $commandAst, $cursorPosition)
    $words = @($commandAst.CommandElements | Select-Object -Skip 1 |
        Where-Object { $_.Extent.EndOffset -le $cursorPosition } | ForEach-Object { $_.ToString() })
    if ($wordToComplete -eq '') { $words += '""' }
    & agentctl __complete @words 2>$null | ForEach-Object {
        [System.Management.Automation.CompletionResult]::new($_, $_, 'ParameterValue', $_)
    }
}
`,
}

func runCompletion(ctx context.Context, env *Env, args []string) error {
	fs := NewFlagSet(env, "completion", completionUsage)
	rest, err := ParseArgs(fs, args)
	if err != nil {
		return err
	}
	if err := WantArgs(fs, rest, 1, 1, "a shell: bash, zsh, fish or powershell"); err != nil {
		return err
	}
	script, ok := completionScripts[strings.ToLower(rest[0])]
	if !ok {
		msg := fmt.Sprintf("completion: no script for %q", rest[0])
		if s := Suggest(rest[0], shells()); s != "" {
			msg += fmt.Sprintf(" (did you mean %s?)", s)
		}
		return UsageError{Msg: msg + "; want bash, zsh, fish or powershell"}
	}
	_, err = io.WriteString(env.Stdout, script)
	return err
}

func shells() []string { return []string{"bash", "zsh", "fish", "powershell"} }

// runComplete prints the candidates for the last of words. It never fails:
// a shell asking for completions must not get an error. The flags of a
// command this program has not are known to agentctl-full alone: the
// command line is handed over to it.
func (p Program) runComplete(env *Env, line, words []string) error {
	candidates, other := p.complete(env, words)
	if other != "" {
		return p.handOver(other, line)
	}
	for _, c := range candidates {
		fmt.Fprintln(env.Stdout, c)
	}
	return nil
}

// complete works out what the last word may become; or, when that needs
// the flags of a command this program has not, names it (other).
func (p Program) complete(env *Env, words []string) (candidates []string, other string) {
	if len(words) == 0 {
		words = []string{""}
	}
	cur, typed := words[len(words)-1], words[:len(words)-1]
	if cur == `""` { // PowerShell's way of passing an empty word
		cur = ""
	}
	root := env.Root
	i := 0
	for i < len(typed) && strings.HasPrefix(typed[i], "-") {
		if name, value, ok := strings.Cut(strings.TrimLeft(typed[i], "-"), "="); name == "root" {
			if ok {
				root = value
			} else if i+1 < len(typed) {
				root = typed[i+1]
				i++
			}
		}
		i++
	}
	if i == len(typed) {
		if last := lastOf(typed); last == "--root" || last == "-root" {
			return nil, "" // a folder: the shell completes file names
		}
		if strings.HasPrefix(cur, "-") {
			return matching(cur, []string{"--root", "--version", "--help"}), ""
		}
		return matching(cur, append(commandNames(), "help")), ""
	}
	name, rest := typed[i], typed[i+1:]
	switch name {
	case "help":
		return matching(cur, commandNames()), ""
	case "completion":
		return matching(cur, shells()), ""
	}
	c, _, ok := p.command(name)
	if !ok {
		return nil, ""
	}
	if c.Run == nil {
		return nil, name
	}
	sub := []string{}
	if name == "board" {
		if len(rest) == 0 {
			return matching(cur, []string{"list", "show", "add", "set", "import"}), ""
		}
		sub, rest = []string{rest[0]}, rest[1:]
	}
	flags := commandFlags(env, c, sub)
	names := namesIn(root)
	if name == "mcp" {
		names.mailboxes = names.agents // --as takes agents only: people have no tools
	}
	if f, ok := flags[strings.TrimLeft(lastOf(rest), "-")]; ok && strings.HasPrefix(lastOf(rest), "-") && !isBool(f) {
		return matching(cur, flagValues(f.Name, names)), ""
	}
	if strings.HasPrefix(cur, "-") {
		if flagName, value, ok := strings.Cut(strings.TrimLeft(cur, "-"), "="); ok {
			var out []string
			for _, v := range matching(value, flagValues(flagName, names)) {
				out = append(out, "--"+flagName+"="+v)
			}
			return out, ""
		}
		var out []string
		for n := range flags {
			out = append(out, "--"+n)
		}
		slices.Sort(out)
		return matching(cur, out), ""
	}
	nth := countPositionals(rest, flags)
	switch strings.Join(append([]string{name}, sub...), " ") {
	case "run", "prompt", "calibrate", "skip", "devlog":
		if nth == 0 {
			return matching(cur, names.agents), ""
		}
	case "up", "tail":
		return matching(cur, names.agents), ""
	case "inbox":
		if nth == 0 {
			return matching(cur, names.mailboxes), ""
		}
	case "board show":
		if nth == 0 {
			return matching(cur, names.tasks), ""
		}
	case "board set":
		if nth == 0 {
			return matching(cur, names.tasks), ""
		}
		return matching(cur, []string{"status=", "owner=", "title=", "priority=", "notes=", "depends_on="}), ""
	}
	return nil, ""
}

// commandFlags asks the command itself for its flags: it is run as with
// --help, and hands over its flag set instead of printing it.
func commandFlags(env *Env, c Command, sub []string) map[string]*flag.Flag {
	flags := map[string]*flag.Flag{}
	probe := &Env{Root: env.Root, Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: io.Discard,
		flagsOf: func(fs *flag.FlagSet) {
			fs.VisitAll(func(f *flag.Flag) { flags[f.Name] = f })
		}}
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // nothing is meant to run; if something did, it stops at once
	c.Run(ctx, probe, slices.Concat(sub, []string{"--help"}))
	return flags
}

func isBool(f *flag.Flag) bool {
	b, ok := f.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

// countPositionals counts the arguments among rest that are not flags or
// flag values.
func countPositionals(rest []string, flags map[string]*flag.Flag) int {
	n := 0
	for i := 0; i < len(rest); i++ {
		w := rest[i]
		if !strings.HasPrefix(w, "-") || w == "-" {
			n++
			continue
		}
		name, _, hasValue := strings.Cut(strings.TrimLeft(w, "-"), "=")
		if f, ok := flags[name]; ok && !hasValue && !isBool(f) {
			i++
		}
	}
	return n
}

// names are what the runtime at hand knows.
type names struct {
	agents, mailboxes, tasks []string
}

// namesIn reads the agents, people and task ids of root; a runtime that
// cannot be read gives none.
func namesIn(root string) names {
	var n names
	if cfg, err := config.Load(root); err == nil {
		n.agents, n.mailboxes = cfg.AgentNames(), cfg.MailboxNames()
	}
	tasks, _ := (&projectboard.Store{Root: root}).Tasks()
	for _, t := range tasks {
		n.tasks = append(n.tasks, t.ID)
	}
	return n
}

// flagValues are the values a flag takes, where agentctl knows them.
func flagValues(flagName string, n names) []string {
	switch flagName {
	case "to":
		return append(slices.Clone(n.mailboxes), "all")
	case "from", "as", "agent":
		return n.mailboxes
	case "owner":
		return n.agents
	case "task":
		return n.tasks
	case "driver":
		return []string{config.DriverGUI, config.DriverExec, config.DriverCDP, config.DriverACP}
	case "log-format":
		return []string{"console", "json"}
	case "state":
		return []string{mailbox.StatePending, mailbox.StateProcessing, mailbox.StateDone, mailbox.StateDead, "all"}
	case "status":
		var out []string
		for _, s := range projectboard.Statuses {
			out = append(out, string(s))
		}
		return out
	case "priority":
		return []string{"urgent", "high", "normal", "low"}
	}
	return nil
}

// matching keeps the candidates that start with prefix, ignoring case.
func matching(prefix string, candidates []string) []string {
	var out []string
	for _, c := range candidates {
		if strings.HasPrefix(strings.ToLower(c), strings.ToLower(prefix)) {
			out = append(out, c)
		}
	}
	return out
}

func lastOf(words []string) string {
	if len(words) == 0 {
		return ""
	}
	return words[len(words)-1]
}
