package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/agentctl/agentctl/config"
	"github.com/agentctl/agentctl/projectboard"
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
    notes, reports and analyses are copied into dreamos/documents/;
  - boards become project_board/dreamos-*.yaml, devlogs are copied into
    devlogs/dreamos/, coordinates go into agentctl.yaml;
  - the places old writers write to are added to agentctl.yaml (watch and
    mailbox.shared), so a Dream.OS tool left running keeps working.

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

func runMigrate(ctx context.Context, env *Env, args []string) error {
	fs := newFlagSet(env, "migrate", migrateUsage)
	dry := fs.Bool("dry-run", false, "print what would be done, change nothing")
	take := fs.Bool("take", false, "let the runners empty the watched places (remove delivered files, empty inbox.json)")
	asJSON := fs.Bool("json", false, "print the report as JSON")
	maxMB := fs.Int64("max-file-mb", defaultMigrateMaxMB, "the largest file read whole, in MiB; a larger one is reported and not read")
	rest, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if err := wantArgs(fs, rest, 1, 1, "one DREAMOS_DIR"); err != nil {
		return err
	}
	dir, err := filepath.Abs(rest[0])
	if err != nil {
		return fmt.Errorf("cannot migrate: %w", err)
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return withHint(fmt.Errorf("cannot migrate: %s is not a folder", rest[0]), "give the Dream.OS checkout or its runtime folder")
	}
	files, unreadable, err := listFiles(dir, env.Root)
	if err != nil {
		return fmt.Errorf("cannot migrate: %w", err)
	}
	cfg, err := loadConfig(env)
	if errors.Is(err, config.ErrNotFound) {
		return withHint(fmt.Errorf("cannot migrate: %w", err), fmt.Sprintf("run 'agentctl init --agents %d' first (the agents found in %s), then migrate again", max(agentsIn(files), 1), rest[0]))
	}
	if err != nil {
		return err
	}
	p := planMigration(dir, files, cfg, env.Root, time.Now(), *maxMB<<20)
	p.unread(unreadable)
	p.GitCheckout, p.DryRun, p.Take = gitCheckout(dir), *dry, *take
	if !*dry {
		if err := executePlan(ctx, env, cfg, p); err != nil {
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
		printPlan(env, cfg, p)
	}
	return p.incomplete()
}

// listFiles lists the regular files under dir, relative and slash-separated,
// and the folders it does not go into (version control, caches, the
// runtime itself), each ending in "/". What it cannot read is returned
// apart, with why: such a folder may hold messages, so the report names it
// and migrate fails.
func listFiles(dir, runtimeRoot string) (files []string, unreadable map[string]error, err error) {
	rootAbs, _ := filepath.Abs(runtimeRoot)
	unreadable = map[string]error{}
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		if err != nil {
			if p == dir {
				return err
			}
			if d != nil && d.IsDir() {
				rel += "/"
			}
			unreadable[rel] = err
			return nil
		}
		if d.IsDir() {
			if p != dir && (slices.Contains(skipDirs, d.Name()) || p == rootAbs) {
				files = append(files, rel+"/")
				return filepath.SkipDir
			}
			return nil
		}
		files = append(files, rel)
		return nil
	})
	sort.Strings(files)
	return files, unreadable, err
}

func agentsIn(files []string) int {
	seen := map[string]bool{}
	for _, rel := range files {
		if d := decideFile(rel); d.Agent != "" {
			seen[strings.ToLower(d.Agent)] = true
		}
	}
	return len(seen)
}

// gitCheckout reports whether dir is, or is inside, a git work tree: the
// user's history, which nothing here may change.
func gitCheckout(dir string) bool {
	if git, err := exec.LookPath("git"); err == nil {
		out, err := exec.Command(git, "-C", dir, "rev-parse", "--is-inside-work-tree").Output()
		if err == nil {
			return strings.TrimSpace(string(out)) == "true"
		}
	}
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return true
		}
		if filepath.Dir(d) == d {
			return false
		}
	}
}

// importYAMLBoard converts a Dream.OS task board kept as YAML the way its
// JSON boards are converted.
func importYAMLBoard(name string, data []byte) (*projectboard.Import, error) {
	var v any
	if err := yaml.Unmarshal(data, &v); err != nil {
		return nil, err
	}
	j, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return projectboard.ImportDreamOS(name, j)
}
