package migrate

import (
	"fmt"
	"io"
	"maps"
	"strings"

	"github.com/agentctl/agentctl/config"
	"github.com/agentctl/agentctl/config/driverconf"
)

// Print prints the plan for people: whether the folder is a git
// checkout, the counts, then every file under its kind.
func (p *Plan) Print(w io.Writer, cfg config.Config) {
	if p.GitCheckout {
		fmt.Fprintf(w, "%s is a git checkout: nothing in it is changed", p.Dir)
	} else {
		fmt.Fprintf(w, "%s is not a git checkout; nothing in it is changed all the same", p.Dir)
	}
	if p.Take {
		fmt.Fprintf(w, ", but the runners will empty the places they watch (--take)\n")
	} else {
		fmt.Fprintf(w, ", and the runners only read the places they watch\n")
	}
	would := ""
	if p.DryRun {
		would = "would be "
		fmt.Fprintf(w, "dry run: nothing was changed\n")
	}
	var counts []string
	for _, k := range []Kind{KindMessages, KindHistory, KindDocument, KindBoard, KindCoords, KindDevlog, KindLore, KindSkipped, KindNotOurs} {
		counts = append(counts, fmt.Sprintf("%s %d", k, p.Counts[k]))
	}
	fmt.Fprintf(w, "files: %d (%s)\n", len(p.Files), strings.Join(counts, ", "))
	perAgent := map[string]int{}
	for _, f := range p.Files {
		for _, m := range f.Messages {
			if m.As == "pending" {
				perAgent[m.To]++
			}
		}
	}
	var per []string
	for _, a := range cfg.AgentNames() {
		if n := perAgent[a]; n > 0 {
			per = append(per, fmt.Sprintf("%s %d", a, n))
		}
	}
	fmt.Fprintf(w, "messages: %s%d imported as work", would, p.Messages.Pending)
	if len(per) > 0 {
		fmt.Fprintf(w, " (%s)", strings.Join(per, ", "))
	}
	fmt.Fprintf(w, ", %d as history, %d imported before, %d skipped", p.Messages.History, p.Messages.Before, p.Messages.Skipped)
	if p.Messages.Review > 0 {
		fmt.Fprintf(w, ", %d %sgiven to %s to route by hand (recipient unclear)", p.Messages.Review, would, cfg.Human())
	}
	fmt.Fprintln(w)
	for _, k := range []Kind{KindMessages, KindHistory, KindDocument, KindBoard, KindCoords, KindDevlog, KindLore, KindSkipped, KindNotOurs} {
		if p.Counts[k] == 0 {
			continue
		}
		fmt.Fprintf(w, "%s (%d):\n", k, p.Counts[k])
		for _, f := range p.Files {
			if f.Kind != k {
				continue
			}
			line := "  " + f.Path
			if f.To != "" {
				line += " → " + f.To
			}
			switch {
			case f.Tasks == 1:
				line += " (1 task)"
			case f.Tasks > 1:
				line += fmt.Sprintf(" (%d tasks)", f.Tasks)
			}
			if f.Reason != "" {
				line += ": " + f.Reason
			}
			fmt.Fprintln(w, line)
			for _, n := range f.Notes {
				fmt.Fprintf(w, "    note: %s\n", n)
			}
			for _, m := range f.Messages {
				note := ""
				if m.Note != "" {
					note = " (" + m.Note + ")"
				}
				if m.As == "pending" && m.Reason == "" {
					fmt.Fprintf(w, "    %s → %s %s%s\n", strings.TrimSpace(m.At+" "+m.ID), m.To, "inbox", note)
				} else {
					fmt.Fprintf(w, "    %s: %s %s%s\n", strings.TrimSpace(m.At+" "+m.ID), m.As, strings.TrimSpace(m.To+" "+m.Reason), note)
				}
			}
		}
	}
	if len(p.Watch) > 0 || len(p.Shared) > 0 {
		fmt.Fprintf(w, "old writers left running keep working: the runners %swatch (agentctl.yaml)\n", would)
		for _, a := range cfg.AgentNames() {
			for _, pl := range p.Watch[a] {
				fmt.Fprintf(w, "  %s: %s\n", a, pl)
			}
		}
		for _, pl := range p.Shared {
			fmt.Fprintf(w, "  shared: %s\n", pl)
		}
	}
	for _, f := range p.Failed {
		fmt.Fprintf(w, "agentctl: failed: %s\n", f)
	}
	// What is still needed once the plan is carried out: the windows it
	// sets count as set, in a dry run too.
	planned := map[string]config.Window{}
	for _, f := range p.Files {
		maps.Copy(planned, f.coord)
	}
	var needed []string
	for _, a := range cfg.Agents {
		if a.Driver == "exec" {
			continue
		}
		w, ok := planned[a.Name]
		if !ok {
			w = a.Window
		}
		if err := driverconf.Calibrated(w); err != nil {
			needed = append(needed, fmt.Sprintf("  agentctl calibrate %s --title '%s.*Cursor'  # %v", a.Name, a.Name, err))
		}
	}
	if len(needed) > 0 {
		fmt.Fprintf(w, "still needed (Dream.OS kept no window titles or reply regions):\n%s\n", strings.Join(needed, "\n"))
	}
}
