package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"

	"github.com/agentctl/agentctl/cmd/internal/cli"
	"github.com/agentctl/agentctl/internal/layout"
	"github.com/agentctl/agentctl/internal/sizecap"
	"github.com/agentctl/agentctl/lore"
	"github.com/agentctl/agentctl/projectboard"
)

const loreUsage = `
Usage: agentctl lore [--date YYYY-MM-DD] [--dict FILE] [--template FILE] [--print]

Writes the lore of a day, <root>/lore/YYYY-MM-DD.md: a chronicle of what the
agents did (their devlog entries) and how the board moved (tasks whose
updated_at falls on that day), told through a text/template and a
translation dictionary. Days are UTC days; the default is today. The same
events always give the same file, so running it again is safe.

The dictionary is --dict, else <root>/lore/dictionary.yaml, else the
built-in one; Dream.OS dream_translation.yaml files work as they are. The
template is --template, else <root>/lore/template.md.tmpl, else the
built-in one (run with --print-template to start your own).

Examples:
  agentctl lore
  agentctl lore --date 2026-11-21 --print
  agentctl lore --dict dream_translation.yaml
`

func runLore(ctx context.Context, env *cli.Env, args []string) error {
	fset := cli.NewFlagSet(env, "lore", loreUsage)
	date := fset.String("date", time.Now().UTC().Format(time.DateOnly), "the UTC `day` to tell")
	dictPath := fset.String("dict", "", "translation dictionary `FILE` (YAML)")
	tmplPath := fset.String("template", "", "text/template `FILE`")
	print := fset.Bool("print", false, "print the lore instead of writing it")
	printTemplate := fset.Bool("print-template", false, "print the built-in template and exit")
	rest, err := cli.ParseArgs(fset, args)
	if err != nil {
		return err
	}
	if err := cli.WantArgs(fset, rest, 0, 0, "no arguments"); err != nil {
		return err
	}
	if *printTemplate {
		fmt.Fprint(env.Stdout, lore.DefaultTemplate())
		return nil
	}
	if _, _, err := lore.Day(*date); err != nil {
		return cli.UsageError{Msg: "lore: " + err.Error()}
	}
	dict := lore.DefaultDictionary()
	if p := orExisting(*dictPath, layout.LoreDictionary(env.Root)); p != "" {
		if dict, err = lore.LoadDictionary(p); err != nil {
			return err
		}
	}
	text := lore.DefaultTemplate()
	if p := orExisting(*tmplPath, layout.LoreTemplate(env.Root)); p != "" {
		data, err := sizecap.ReadFile(p)
		if err != nil {
			return fmt.Errorf("cannot read template: %w", err)
		}
		text = string(data)
	}
	tmpl, err := lore.ParseTemplate("lore", text, dict)
	if err != nil {
		return err
	}
	agents, err := devlogAgents(env, nil, true)
	if err != nil {
		return err
	}
	in, err := lore.Gather(env.Root, agents, *date)
	if err != nil {
		var pe *projectboard.ParseError
		if !errors.As(err, &pe) {
			return err
		}
		cli.Warnf(env, "board changes left out: %v", err)
	}
	out, err := lore.Render(in, dict, tmpl)
	if err != nil {
		return err
	}
	if *print {
		_, err := env.Stdout.Write(out)
		return err
	}
	if err := lore.Write(env.Root, *date, out); err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "wrote %s\n", lore.Path(env.Root, *date))
	return nil
}

// orExisting returns flag if set, else def when that file exists.
func orExisting(flag, def string) string {
	if flag != "" {
		return flag
	}
	if _, err := os.Stat(def); errors.Is(err, fs.ErrNotExist) || err != nil {
		return ""
	}
	return def
}
