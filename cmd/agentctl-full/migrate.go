package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/agentctl/agentctl/cmd/internal/cli"
	"github.com/agentctl/agentctl/cmd/internal/migrate"
	"github.com/agentctl/agentctl/config"
)

const migrateUsage = `
Usage: agentctl migrate DREAMOS_DIR [--dry-run] [--take] [--json]

Moves a Dream.OS setup over: finds in DREAMOS_DIR (a checkout or its
runtime folder) the mailboxes in every layout the old writers used, the
coordinate files, the task boards (JSON and YAML) and the devlogs, and
imports them into this runtime:

  - each waiting message goes to the inbox of the agent it is addressed
    to, wherever it sat; messages the old system had handled, and those
    in backups, snapshots, archives and corrupted queues, go straight to
    the agent's archive as history ('agentctl inbox --state done');
    a message addressed to several agents, or to none, goes to the
    human's inbox to be sent on by hand; notes, reports and analyses are
    copied into dreamos/documents/;
  - boards become project_board/dreamos-*.yaml (phases and agents holding
    tasks included), devlogs are copied into devlogs/dreamos/, lore into
    lore/dreamos/, coordinates go into agentctl.yaml;
  - the places old writers write to are added to agentctl.yaml (watch and
    mailbox.shared; every agent's folder by one glob, so folders made for
    new agents are read too), so a Dream.OS tool left running keeps
    working.

It says first whether DREAMOS_DIR is a git checkout, then what it made
of every file there (imported as what and where, skipped or not ours,
each with its reason) and the 'calibrate' commands still needed; --json
prints the same as JSON. Nothing in DREAMOS_DIR is changed, and the
runners only read the places they watch, remembering what they delivered,
unless --take lets them empty those places as the old readers did.
Running it again imports nothing twice. --dry-run prints exactly what a
run would do, without changing anything.

Examples:
  agentctl init --agents 4
  agentctl migrate ~/Dream.os --dry-run
  agentctl migrate ~/Dream.os
`

func runMigrate(ctx context.Context, env *cli.Env, args []string) error {
	fs := cli.NewFlagSet(env, "migrate", migrateUsage)
	dry := fs.Bool("dry-run", false, "print what would be done, change nothing")
	take := fs.Bool("take", false, "let the runners empty the watched places (remove delivered files, empty inbox.json)")
	asJSON := fs.Bool("json", false, "print the report as JSON")
	maxMB := fs.Int64("max-file-mb", migrate.DefaultMaxMB, "the largest file read whole, in MiB; a larger one is reported and not read")
	rest, err := cli.ParseArgs(fs, args)
	if err != nil {
		return err
	}
	if err := cli.WantArgs(fs, rest, 1, 1, "one DREAMOS_DIR"); err != nil {
		return err
	}
	dir, err := filepath.Abs(rest[0])
	if err != nil {
		return fmt.Errorf("cannot migrate: %w", err)
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return cli.WithHint(fmt.Errorf("cannot migrate: %s is not a folder", rest[0]), "give the Dream.OS checkout or its runtime folder")
	}
	files, unreadable, err := migrate.List(ctx, dir, env.Root)
	if err != nil {
		return fmt.Errorf("cannot migrate: %w", stopped(err))
	}
	cfg, err := cli.LoadConfig(env)
	if errors.Is(err, config.ErrNotFound) {
		return cli.WithHint(fmt.Errorf("cannot migrate: %w", err), fmt.Sprintf("run 'agentctl init --agents %d' first (the agents found in %s), then migrate again", max(migrate.AgentsIn(files), 1), rest[0]))
	}
	if err != nil {
		return err
	}
	p, err := migrate.New(ctx, dir, files, cfg, env.Root, time.Now(), *maxMB<<20)
	if err != nil {
		return fmt.Errorf("cannot migrate: %w", stopped(err))
	}
	p.Unread(unreadable)
	p.GitCheckout, p.DryRun, p.Take = migrate.GitCheckout(dir), *dry, *take
	if !*dry {
		if err := migrate.Execute(ctx, env.Root, cfg, p, time.Now()); err != nil {
			if ctx.Err() != nil {
				return cli.WithHint(errors.New("migrate stopped before the end; what it imported stands"),
					"run it again to finish: nothing is imported twice")
			}
			return err
		}
	}
	if *asJSON {
		enc := json.NewEncoder(env.Stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(p); err != nil {
			return err
		}
	} else {
		p.Print(env.Stdout, cfg)
	}
	return migrateIncomplete(p)
}

// migrateIncomplete is the error migrate ends with when it could not read
// or do everything; the report above it lists each.
func migrateIncomplete(p *migrate.Plan) error {
	if len(p.Unreadable) == 0 && len(p.Failed) == 0 {
		return nil
	}
	var what []string
	if n := len(p.Unreadable); n > 0 {
		what = append(what, fmt.Sprintf("%d files or folders could not be read: %s", n, strings.Join(p.Unreadable, "; ")))
	}
	if n := len(p.Failed); n > 0 {
		what = append(what, fmt.Sprintf("%d could not be migrated", n))
	}
	return cli.WithHint(fmt.Errorf("migrate is incomplete: %s", strings.Join(what, "; ")),
		"make them readable (or move them out of the folder) and run migrate again; what was migrated is not done twice")
}

// stopped words a stop asked for (Ctrl+C, SIGTERM) before anything was
// imported.
func stopped(err error) error {
	if errors.Is(err, context.Canceled) {
		return errors.New("stopped before anything was imported")
	}
	return err
}
