package cli

import (
	"context"
	"fmt"
	"strings"

	"github.com/agentctl/agentctl/agents/actions"
	"github.com/agentctl/agentctl/config"
	"github.com/agentctl/agentctl/internal/agentname"
	"github.com/agentctl/agentctl/internal/sizecap"
)

const sendUsage = `
Usage: agentctl send --to NAME|all [flags] [TEXT | -]

Delivers a message to an agent's or a person's inbox, durably and
atomically, and prints its id. With --to all it goes to every configured
agent except the sender, one id per line. TEXT is the message body; "-"
reads it from stdin.

Examples:
  agentctl send --to Agent-3 "Review the parser changes in PR 12"
  agentctl send --to Agent-2 --priority urgent --subject "build broken" -- "main fails to compile"
  git log -5 | agentctl send --to Agent-1 --type task --task T-7 -
  agentctl send --to all --from Agent-1 "Standup in 5 minutes"
  agentctl send --to human --from Agent-2 "Which branch should I rebase on?"
`

func runSend(ctx context.Context, env *Env, args []string) error {
	fs := NewFlagSet(env, "send", sendUsage)
	to := fs.String("to", "", "recipient `name` (an agent or a person), or all")
	from := fs.String("from", "human", "sender `name`")
	typ := fs.String("type", "message", "message `type` (message, task, …)")
	priority := fs.String("priority", "normal", "`priority`: low, normal, high or urgent")
	subject := fs.String("subject", "", "`subject` line")
	replyTo := fs.String("reply-to", "", "`id` of the message this answers")
	task := fs.String("task", "", "board task `id` the message is about")
	ack := fs.Bool("ack", false, "ask for a receipt message when the message is done or dead-lettered")
	rest, err := ParseArgs(fs, args)
	if err != nil {
		return err
	}
	if *to == "" {
		return UsageError{Msg: "send: --to is required", Fix: toHint(env, rest)}
	}
	body, err := MessageText(env, "send", rest)
	if err != nil {
		return err
	}
	cfg, err := LoadConfig(env)
	if err != nil {
		return err
	}
	sent, err := RuntimeOf(env, cfg).Send(actions.Draft{
		To: *to, From: *from, Type: *typ, Priority: *priority, Subject: *subject, Body: body,
		ReplyTo: *replyTo, TaskID: *task, Ack: *ack,
	})
	for _, msg := range sent {
		fmt.Fprintln(env.Stdout, msg.ID)
	}
	return err
}

// toHint is the fix for a missing --to: the command meant, when the first
// word of rest names a mailbox (send Agent-3 "text"), or else an example.
func toHint(env *Env, rest []string) string {
	if len(rest) >= 2 {
		if cfg, err := config.Load(env.Root); err == nil {
			if name, err := agentname.Resolve(cfg.MailboxNames(), rest[0]); err == nil {
				return fmt.Sprintf("the recipient goes after --to: agentctl send --to %s %s", name, shellQuoted(strings.Join(rest[1:], " ")))
			}
		}
	}
	return "name an agent, e.g. --to Agent-3, or --to all"
}

// shellQuoted is s as a shell reads it back: in single quotes, which
// leave $, backquotes, ! and line ends as they are.
func shellQuoted(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// MessageText is the body: the arguments joined, or stdin for "-".
func MessageText(env *Env, command string, args []string) (string, error) {
	if len(args) == 1 && args[0] == "-" {
		data, err := sizecap.ReadAll(env.Stdin, "the message on stdin")
		if err != nil {
			return "", fmt.Errorf("cannot read the message from stdin: %w", err)
		}
		args = []string{string(data)}
	}
	text := strings.Join(args, " ")
	if strings.TrimSpace(text) == "" {
		return "", UsageError{Msg: command + ": no message text", Fix: `give the text as arguments, or "-" to read it from stdin`}
	}
	return text, nil
}
