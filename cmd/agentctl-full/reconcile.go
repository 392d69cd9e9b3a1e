package main

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/agentctl/agentctl/agents"
	"github.com/agentctl/agentctl/cmd/internal/cli"
)

const reconcileUsage = `
Usage: agentctl reconcile [--json]

Runs the recovery checks once, the same ones every runner runs on its cron
schedule (recovery.cron in agentctl.yaml), so that a system cron keeps the
swarm healthy even when no runner is up:

  - a claim left in processing/ by a runner that is gone is put back in the
    inbox once recovery.lease has passed (unless its prompt was already
    submitted: then it waits for 'agentctl run' to read the reply back);
  - pending messages past their expires_at are dead-lettered, and their
    senders told;
  - inbox.json of every idle mailbox is ingested;
  - a stalled agent (heartbeat older than recovery.stale_after, or a turn
    longer than recovery.stall_after while messages wait) is reported to
    supervisor.agent and its devlog, once per stall, and nudged with
    supervisor.nudge if set;
  - the owner of a task whose depends_on became done gets one
    task-dependency-fulfilled message per dependency, exactly once;
  - the day's lore is written again when coordination.lore asks for
    refreshes and the devlogs or boards changed since it was written.

It prints one line per finding and exits 0; mailboxes with a live runner
are left to that runner.

Examples:
  agentctl reconcile
  * * * * * cd /srv/swarm && agentctl reconcile >>runtime/reconcile.log 2>&1
`

func runReconcile(ctx context.Context, env *cli.Env, args []string) error {
	fs := cli.NewFlagSet(env, "reconcile", reconcileUsage)
	asJSON := fs.Bool("json", false, "print the findings as JSON")
	logFormat := fs.String("log-format", "console", "log `format` on stderr: console or json")
	rest, err := cli.ParseArgs(fs, args)
	if err != nil {
		return err
	}
	if err := cli.WantArgs(fs, rest, 0, 0, "no arguments"); err != nil {
		return err
	}
	log, err := newLogger(env.Stderr, *logFormat)
	if err != nil {
		return err
	}
	cfg, err := cli.LoadConfig(env)
	if err != nil {
		return err
	}
	rc := &agents.Recovery{S: recoverySettings(cfg), Root: env.Root, Agents: cfg.AgentNames(), People: cfg.PeopleNames(), Consumer: consumerOptions(cfg), Intake: intakeOptions(cfg), Log: log}
	now := time.Now()
	found, err := rc.Reconcile(now)
	if l := loreSettings(cfg); (l.OnTaskDone || l.EveryMessages > 0) && agents.LoreStale(env.Root, now) {
		narrated, lerr := agents.RefreshLore(ctx, env.Root, cfg.AgentNames(), now, l)
		if lerr != nil {
			cli.Warnf(env, "%v", lerr)
		} else {
			found = append(found, agents.Finding{Agent: "swarm", Kind: "lore", Detail: fmt.Sprintf("refreshed the day's lore (narrated: %v)", narrated)})
		}
	}
	if *asJSON {
		if found == nil {
			found = []agents.Finding{}
		}
		data, jerr := json.MarshalIndent(found, "", "  ")
		if jerr != nil {
			return jerr
		}
		fmt.Fprintf(env.Stdout, "%s\n", data)
	} else {
		for _, f := range found {
			fmt.Fprintln(env.Stdout, f)
		}
		if len(found) == 0 {
			fmt.Fprintln(env.Stdout, "nothing to do")
		}
	}
	if err != nil {
		return fmt.Errorf("reconcile: %w", err)
	}
	return nil
}
