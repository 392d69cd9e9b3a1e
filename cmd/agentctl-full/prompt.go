package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/agentctl/agentctl/cmd/internal/cli"
	"github.com/agentctl/agentctl/config"
	"github.com/agentctl/agentctl/cursor"
	"github.com/agentctl/agentctl/internal/sizecap"
)

const promptUsage = `
Usage: agentctl prompt AGENT [TEXT | -] [--new-chat] [-v]

Takes one turn with AGENT through its configured driver: pastes TEXT into
the agent's chat window (or runs its exec command), waits for the reply and
prints it on stdout exactly as the agent wrote it. With no TEXT, or "-",
the prompt is read from stdin. On failure it exits non-zero and says why.

Use it to check a seat after calibrating it, or from scripts. An exec
preset's reply is read from the JSON its command prints; a prompt neither
continues nor changes the session the agent's runner keeps.

Examples:
  agentctl prompt Agent-3 "Reply with the word ready."
  git diff | agentctl prompt Agent-3 -
  agentctl prompt Agent-3 --new-chat -v "Summarise your task."
`

func runPrompt(ctx context.Context, env *cli.Env, args []string) error {
	fs := cli.NewFlagSet(env, "prompt", promptUsage)
	newChat := fs.Bool("new-chat", false, "start a fresh chat first (needs window.new_chat_key)")
	verbose := fs.Bool("v", false, "log each step of the turn on stderr")
	rest, err := cli.ParseArgs(fs, args)
	if err != nil {
		return err
	}
	if err := cli.WantArgs(fs, rest, 1, 2, "AGENT and optionally TEXT"); err != nil {
		return err
	}
	cfg, err := cli.LoadConfig(env)
	if err != nil {
		return err
	}
	agent, err := cfg.Agent(rest[0])
	if err != nil {
		return cli.WithHint(err, "agents are listed in "+config.Path(env.Root))
	}
	text := "-"
	if len(rest) == 2 {
		text = rest[1]
	}
	if text == "-" {
		data, err := sizecap.ReadAll(env.Stdin, "the prompt on stdin")
		if err != nil {
			return fmt.Errorf("cannot read the prompt from stdin: %w", err)
		}
		text = string(data)
	}
	if text == "" {
		return cli.UsageError{Msg: "the prompt is empty", Fix: "give TEXT, or pipe it in with -"}
	}
	opts := cursor.Options{LockDir: cursor.LockDir(env.Root), Agent: agent.Name}
	if *verbose {
		opts.Log = env.Stderr
	}
	settings, err := seatSettings(env.Root, agent, cfg.GUI)
	if err != nil {
		return err
	}
	driver, err := cursor.New(settings, opts)
	if err != nil {
		return promptError(agent, err)
	}
	start := time.Now()
	reply, err := driver.Run(ctx, cursor.Turn{Prompt: text, NewChat: *newChat})
	if err != nil {
		return promptError(agent, err)
	}
	if *verbose {
		fmt.Fprintf(env.Stderr, "turn took %s\n", time.Since(start).Round(time.Millisecond))
	}
	_, err = io.WriteString(env.Stdout, reply)
	return err
}

// promptError says what to do about a failed turn.
func promptError(a config.Agent, err error) error {
	agent := a.Name
	err = fmt.Errorf("%s: %w", agent, err)
	if a.EffectiveDriver() == config.DriverCDP {
		return cdpPromptError(agent, err)
	}
	for _, h := range []struct {
		target error
		hint   string
	}{
		{cursor.ErrNotCalibrated, "run 'agentctl calibrate " + agent + "'"},
		{cursor.ErrWindowNotFound, "open the agent's window, or check window.title with 'agentctl doctor'"},
		{cursor.ErrWindowNotConfirmed, "make window.title (and window.pid) match exactly one window; nothing was typed"},
		{cursor.ErrNotSubmitted, "the prompt is still in the input box; check window.submit_key and that the chat is not busy"},
		{cursor.ErrSubmitUnknown, "look in the chat before sending again: it may be at work on the prompt; calibrate window.busy so that the driver can see it"},
		{cursor.ErrNoReply, "the error names the sign that was missing; calibrate window.busy (the stop button), check the reply region and copy button, or raise gui.turn_timeout"},
		{cursor.ErrNothingCopied, "recalibrate the copy button, or set window.copy_keys"},
		{cursor.ErrInputLockTimeout, "another agentctl is using the desktop; raise gui.lock_wait or try again"},
		{cursor.ErrGUIUnavailable, "run 'agentctl doctor'"},
		{cursor.ErrExecTimeout, "raise exec.timeout for " + agent},
		{cursor.ErrExecFailed, "run the agent's exec.command by hand to see why it fails"},
	} {
		if errors.Is(err, h.target) {
			return cli.WithHint(err, h.hint)
		}
	}
	return err
}

// cdpPromptError says what to do about a failed turn of a chat page.
func cdpPromptError(agent string, err error) error {
	for _, h := range []struct {
		target error
		hint   string
	}{
		{cursor.ErrNotCalibrated, "run 'agentctl doctor' to see which cdp selectors match the page, and 'agentctl calibrate " + agent + " --cdp URL' to propose others"},
		{cursor.ErrWindowNotFound, "start the app with its DevTools port (agentctl cursor launch " + agent + "), or check cdp.endpoint and cdp.target with 'agentctl doctor'"},
		{cursor.ErrWindowNotConfirmed, "make cdp.target match exactly one page title; nothing was sent"},
		{cursor.ErrNotSubmitted, "check cdp.submit (empty: Enter in the composer) and that the chat is not busy"},
		{cursor.ErrSubmitUnknown, "look in the chat before sending again: it may be at work on the prompt; check cdp.busy with 'agentctl doctor' while the model works"},
		{cursor.ErrPromptRefused, "the error says why; change the message or its template so that the prompt does not begin that way"},
		{cursor.ErrNoReply, "the error names the sign that was missing; check cdp.busy and cdp.reply with 'agentctl doctor' while the model works, or raise gui.turn_timeout"},
		{cursor.ErrReplyLost, "the page reloaded after the prompt was sent; read the reply in the app"},
	} {
		if errors.Is(err, h.target) {
			return cli.WithHint(err, h.hint)
		}
	}
	return err
}
