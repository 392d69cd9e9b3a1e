package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"github.com/agentctl/agentctl/agents/hub"
	"github.com/agentctl/agentctl/cmd/internal/cli"
	"github.com/agentctl/agentctl/internal/atomicfile"
	"github.com/agentctl/agentctl/internal/layout"
)

const hubCredentialsUsage = `
Usage: agentctl hub credentials MACHINE [--out FILE]

Prints the nkey seed by which the hub knows MACHINE, one of the machines
agents[].machine names, making the hub's credentials first if it has none
yet. Copy it to that machine, readable there by its user only: as
hub/credentials/MACHINE.nk under its runtime, where 'agentctl run AGENT
--hub URL' looks first, or anywhere hub.credentials or --creds names. The
seed lets MACHINE take its own agents' turns and send as them, nothing
else. --out writes it to FILE (mode 0600) instead of printing it. On
Linux and macOS it is not printed into a file other accounts can read (a
shell's redirection under the usual umask): they could read it as it is
written. Windows has no such mode to check: use --out there.

Examples:
  agentctl hub credentials desk-2 --out desk-2.nk
  agentctl hub credentials desk-2 --out /mnt/usb/desk-2.nk
  agentctl hub credentials desk-2 | ssh desk-2 'umask 077; cat > runtime/hub/credentials/desk-2.nk'
`

func runHubCredentials(env *cli.Env, args []string) error {
	fs := cli.NewFlagSet(env, "hub credentials", hubCredentialsUsage)
	out := fs.String("out", "", "write the seed to `file` (mode 0600) instead of stdout")
	rest, err := cli.ParseArgs(fs, args)
	if err != nil {
		return err
	}
	if err := cli.WantArgs(fs, rest, 1, 1, "one machine's name"); err != nil {
		return err
	}
	cfg, err := cli.LoadConfig(env)
	if err != nil {
		return err
	}
	seats := cfg.Seats()
	machine := rest[0]
	if _, ok := seats[machine]; !ok {
		names := make([]string, 0, len(seats))
		for m := range seats {
			names = append(names, m)
		}
		slices.Sort(names)
		return cli.WithHint(fmt.Errorf("hub credentials: no agent sits on %q", machine),
			"name one of the machines agents[].machine names: "+strings.Join(names, ", "))
	}
	if _, err := hub.Identities(env.Root, seats); err != nil {
		return fmt.Errorf("cannot make the hub's credentials: %w", err)
	}
	seed, err := os.ReadFile(layout.HubMachineSeed(env.Root, machine))
	if err != nil {
		return fmt.Errorf("cannot read %s's credentials: %w", machine, err)
	}
	if *out == "" {
		if open := openToOthers(env.Stdout); open != "" {
			return cli.WithHint(fmt.Errorf("hub credentials: will not print %s's seed into %s, which other accounts can read", machine, open),
				fmt.Sprintf("write it with 'agentctl hub credentials %s --out FILE' (mode 0600)", machine))
		}
		_, err = env.Stdout.Write(seed)
		return err
	}
	if err := os.MkdirAll(filepath.Dir(*out), 0o700); err != nil {
		return fmt.Errorf("cannot write %s's credentials: %w", machine, err)
	}
	if err := atomicfile.WriteSecret(*out, seed); err != nil {
		return err
	}
	fmt.Fprintf(env.Stderr, "%s's credentials written to %s; copy it to %s as %s under its runtime\n", machine, *out, machine, filepath.ToSlash(layout.HubMachineSeed("", machine)))
	return nil
}

// openToOthers names w when it is a file of its own that other accounts
// may read (stdout redirected by a shell, made as the umask says); "" for
// anything else (a terminal, a pipe, a private file).
func openToOthers(w io.Writer) string {
	f, ok := w.(*os.File)
	if !ok || runtime.GOOS == "windows" { // no mode bits for others there
		return ""
	}
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm()&0o077 == 0 {
		return ""
	}
	return fmt.Sprintf("%s (mode %v)", f.Name(), fi.Mode().Perm())
}
