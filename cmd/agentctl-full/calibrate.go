package main

import (
	"bufio"
	"context"
	"fmt"
	"image"
	"sort"
	"strconv"
	"strings"

	"github.com/agentctl/agentctl/cmd/internal/cli"
	"github.com/agentctl/agentctl/config"
	"github.com/agentctl/agentctl/config/driverconf"
	"github.com/agentctl/agentctl/cursor"
	"github.com/agentctl/agentctl/internal/sizecap"
)

const calibrateUsage = `
Usage: agentctl calibrate AGENT --title PATTERN [--input X,Y --copy X,Y --reply X,Y,W,H --busy X,Y]
                         [--absolute] [--pid N] [--copy-keys K,K] [--profile vscode] [--submit-key K] [--new-chat-key K]
       agentctl calibrate --from-coords FILE [--layout NAME]
       agentctl calibrate AGENT --cdp URL [--target PATTERN] [--composer SEL --submit SEL --busy SEL
                         --reply-selector SEL --copy SEL --new-chat SEL] [--force] [--probe=false]
                         [--prompt TEXT] [--proof-prompt TEXT]

Records where an agent's chat window and its controls are, in agentctl.yaml.
Only the lines it sets change; comments and blank lines are kept.

--busy is the busy indicator: a point that looks different while the model
works and as before whenever it rests. In Cursor, use the send button's
place, which shows a stop button while the model works. With it a reply is
read as soon as the model has finished; without it only once the reply has
not changed for gui.max_pause, and a reply that pauses longer mid-stream is
cut short ('agentctl doctor' warns about such seats).

With --input, --copy, --reply and --busy, the positions are written as given:
offsets from the window's top-left corner, or screen coordinates with
--absolute. Without them, calibration is guided: hover the mouse over each
place it asks for (the input box, the copy button, the reply region's
top-left and bottom-right corners, the send/stop button) and press Enter
in this terminal. Guided
positions are made relative to the window found by --title unless
--absolute is given.

--profile vscode records VS Code's chat view (or code-server's): the reply
is copied by keys from the input box through its context menu, whatever its
height, and checked against the chat's "Copy All", so no copy button is
recorded (see docs/drivers.md, "A VS Code chat seat").

--from-coords imports a Dream.OS cursor_agent_coords.json (any of its
generations) for every configured agent it lists. Dream.OS positions are
screen coordinates; files keyed by layout ("4-agent", ...) need --layout.
Dream.OS files have no reply region or window title: add them afterwards.

--cdp makes AGENT a seat driven through the DevTools port of the app showing
its chat (driver: cdp). It finds the one page whose title matches --target
(default: the agent's name); recognises VS Code's or Cursor's chat and writes
profile: vscode or cursor, checking the profile's selectors on the live page;
proposes, for what no profile covers, selectors that each match exactly their
element (the composer: the one visible editable element that is the chat's
input, not a code block's or a search box). It then sends a probe prompt
(--prompt) to find what shows the model busy, the copy button that gives the
reply, and the reply element, and proves the settings with a turn of the
driver (--proof-prompt): two prompts reach the chat. With --cdp, --busy and
--copy are CSS selectors. A selector given wins; one already in agentctl.yaml
is kept over a different proposal unless --force. Anything it cannot resolve
is named and calibrate exits 1: set it by hand (a page with no copy action:
cdp.read: rendered). --probe=false only looks.

Examples:
  agentctl calibrate Agent-1 --cdp http://127.0.0.1:9222
  agentctl calibrate Agent-1 --cdp http://127.0.0.1:9222 --target 'Agent-1.*Cursor' --busy '[aria-label="Stop"]'
  agentctl calibrate Agent-1 --cdp http://127.0.0.1:9222 --force
  agentctl calibrate Agent-1 --cdp http://127.0.0.1:9222 --probe=false
  agentctl calibrate Agent-3 --title 'Agent-3.*Cursor'
  agentctl calibrate Agent-3 --title 'Agent-3.*Cursor' --input 420,610 --copy 760,380 --reply 20,60,760,500 --busy 790,610
  agentctl calibrate Agent-3 --busy 790,610
  agentctl calibrate Agent-5 --title '^Agent-5 — VS Code' --profile vscode --input 870,717 --reply 760,76,225,576 --busy 952,746
  agentctl calibrate Agent-3 --title Cursor --absolute --input -1280,479 --copy -1018,299 --reply -1500,100,700,350
  agentctl calibrate --from-coords cursor_agent_coords.json --layout 4-agent
`

func runCalibrate(ctx context.Context, env *cli.Env, args []string) error {
	fs := cli.NewFlagSet(env, "calibrate", calibrateUsage)
	title := fs.String("title", "", "regular expression `PATTERN` matching the window's title")
	pid := fs.Int("pid", 0, "the window must belong to process `N`")
	input := fs.String("input", "", "input box position `X,Y`")
	copyAt := fs.String("copy", "", "copy button position `X,Y`")
	reply := fs.String("reply", "", "reply region `X,Y,W,H`")
	busy := fs.String("busy", "", "busy indicator `X,Y`, such as the chat's send/stop button")
	absolute := fs.Bool("absolute", false, "positions are screen coordinates, not offsets in the window")
	copyKeys := fs.String("copy-keys", "", "key chords that copy the reply, `K,K` (instead of --copy)")
	profile := fs.String("profile", "", "the chat app `NAME` (vscode: the reply is copied by keys, no copy button to record)")
	submitKey := fs.String("submit-key", "", "key that sends the prompt: enter or ctrl+enter")
	newChatKey := fs.String("new-chat-key", "", "key that starts a new chat, e.g. ctrl+n")
	fromCoords := fs.String("from-coords", "", "import a Dream.OS cursor_agent_coords.json `FILE`")
	layout := fs.String("layout", "", "with --from-coords: the layout `NAME` to import, e.g. 4-agent")
	cdpEndpoint := fs.String("cdp", "", "make AGENT a cdp seat: the app's DevTools `URL`, http://127.0.0.1:PORT")
	target := fs.String("target", "", "with --cdp: regular expression `PATTERN` matching the page's title (default: the agent's name)")
	composer := fs.String("composer", "", "with --cdp: CSS `SELECTOR` of the prompt box")
	submitSel := fs.String("submit", "", "with --cdp: CSS `SELECTOR` of the send button (default: Enter)")
	replySel := fs.String("reply-selector", "", "with --cdp: CSS `SELECTOR` matching replies (the last is read)")
	newChatSel := fs.String("new-chat", "", "with --cdp: CSS `SELECTOR` of the new-chat button")
	probe := fs.Bool("probe", true, "with --cdp: send a probe prompt and a proof prompt to find and prove busy, reply and copy")
	force := fs.Bool("force", false, "with --cdp: proposals replace selectors already in agentctl.yaml")
	probePrompt := fs.String("prompt", "Reply with the word ready.", "with --cdp: the probe's `TEXT`")
	proofPrompt := fs.String("proof-prompt", "Reply with the word proven.", "with --cdp: the `TEXT` of the proof turn, whose reply must differ from the probe's")
	rest, err := cli.ParseArgs(fs, args)
	if err != nil {
		return err
	}
	cfg, err := cli.LoadConfig(env)
	if err != nil {
		return err
	}
	if *fromCoords != "" {
		if err := cli.WantArgs(fs, rest, 0, 0, "no AGENT with --from-coords"); err != nil {
			return err
		}
		return importCoords(env, cfg, *fromCoords, *layout)
	}
	if err := cli.WantArgs(fs, rest, 1, 1, "AGENT"); err != nil {
		return err
	}
	agent, err := cfg.Agent(rest[0])
	if err != nil {
		return cli.WithHint(err, "agents are listed in "+config.Path(env.Root))
	}
	if *cdpEndpoint != "" {
		given := map[string]string{}
		for role, v := range map[string]string{"composer": *composer, "submit": *submitSel, "busy": *busy,
			"reply": *replySel, "copy": *copyAt, "new_chat": *newChatSel} {
			if v != "" {
				given[role] = v
			}
		}
		return calibrateCDP(ctx, env, cfg, agent, cdpCalibration{endpoint: *cdpEndpoint, target: *target, given: given,
			probe: *probe, force: *force, prompt: *probePrompt, proof: *proofPrompt})
	}
	w := agent.Window
	if *title != "" {
		w.Title = *title
	}
	if cli.IsFlagSet(fs, "pid") {
		w.PID = *pid
	}
	if cli.IsFlagSet(fs, "absolute") {
		w.Absolute = *absolute
	}
	if *submitKey != "" {
		w.SubmitKey = *submitKey
	}
	if *newChatKey != "" {
		w.NewChatKey = *newChatKey
	}
	if *copyKeys != "" {
		w.CopyKeys, w.Copy = strings.Split(*copyKeys, ","), nil
	}
	if *profile != "" {
		if _, ok := config.WindowProfile(*profile); !ok {
			return cli.UsageError{Msg: fmt.Sprintf("calibrate: --profile %q is not a known app (%s)", *profile, config.ProfileVSCode)}
		}
		w.Profile, w.Copy = *profile, nil
	}
	byKeys := len(w.WithProfile().CopyKeys) > 0
	given := *input != "" || *copyAt != "" || *reply != "" || *busy != ""
	if given {
		if err := applyPositions(&w, *input, *copyAt, *reply, *busy); err != nil {
			return err
		}
	} else if !byKeys || w.Input == nil || w.Reply == nil {
		if w.Title == "" {
			return cli.UsageError{Msg: "calibrate: guided calibration needs --title"}
		}
		if err := guide(env, &w, !byKeys); err != nil {
			return err
		}
	}
	if err := writeWindow(env.Root, agent.Name, w); err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "calibrated %s in %s\n", agent.Name, config.Path(env.Root))
	if err := driverconf.Calibrated(w); err != nil {
		fmt.Fprintf(env.Stdout, "note: %v\n", err)
	}
	return nil
}

func applyPositions(w *config.Window, input, copyAt, reply, busy string) error {
	if busy != "" {
		p, err := parseInts(busy, 2, "--busy")
		if err != nil {
			return err
		}
		w.Busy = &config.Point{X: p[0], Y: p[1]}
	}
	if input != "" {
		p, err := parseInts(input, 2, "--input")
		if err != nil {
			return err
		}
		w.Input = &config.Point{X: p[0], Y: p[1]}
	}
	if copyAt != "" {
		p, err := parseInts(copyAt, 2, "--copy")
		if err != nil {
			return err
		}
		w.Copy, w.CopyKeys = &config.Point{X: p[0], Y: p[1]}, nil
	}
	if reply != "" {
		r, err := parseInts(reply, 4, "--reply")
		if err != nil {
			return err
		}
		w.Reply = &config.Rect{X: r[0], Y: r[1], W: r[2], H: r[3]}
	}
	return nil
}

func parseInts(s string, n int, flag string) ([]int, error) {
	parts := strings.Split(s, ",")
	if len(parts) != n {
		return nil, cli.UsageError{Msg: fmt.Sprintf("%s %q: want %d numbers separated by commas", flag, s, n)}
	}
	out := make([]int, n)
	for i, p := range parts {
		v, err := strconv.Atoi(strings.TrimSpace(p))
		if err != nil {
			return nil, cli.UsageError{Msg: fmt.Sprintf("%s %q: %q is not a whole number", flag, s, p)}
		}
		out[i] = v
	}
	return out, nil
}

// guide asks the user to point at each control and records the pointer.
func guide(env *cli.Env, w *config.Window, wantCopy bool) error {
	found, err := cursor.FindWindows(w.Title, w.PID)
	if err != nil {
		return cli.WithHint(err, "run 'agentctl doctor'")
	}
	if len(found) != 1 {
		return cli.WithHint(fmt.Errorf("%d windows match %q", len(found), w.Title), "make --title match exactly one window")
	}
	origin := found[0].Bounds.Min
	if w.Absolute {
		origin = image.Point{}
	}
	in := bufio.NewReader(env.Stdin)
	skipped := false
	ask := func(what string) (image.Point, error) {
		fmt.Fprintf(env.Stdout, "Hover over %s and press Enter here: ", what)
		line, err := in.ReadString('\n')
		if err != nil {
			return image.Point{}, fmt.Errorf("calibration stopped: %w", err)
		}
		skipped = strings.TrimSpace(line) == "skip"
		p, err := cursor.Pointer()
		if err != nil {
			return image.Point{}, err
		}
		return p.Sub(origin), nil
	}
	fmt.Fprintf(env.Stdout, "Calibrating window %q.\n", found[0].Title)
	p, err := ask("the chat input box")
	if err != nil {
		return err
	}
	w.Input = &config.Point{X: p.X, Y: p.Y}
	if wantCopy {
		if p, err = ask("the reply's copy button"); err != nil {
			return err
		}
		w.Copy = &config.Point{X: p.X, Y: p.Y}
	}
	a, err := ask("the top-left corner of the reply region (no caret or spinner inside)")
	if err != nil {
		return err
	}
	b, err := ask("the bottom-right corner of the reply region")
	if err != nil {
		return err
	}
	r := image.Rectangle{Min: a, Max: b}.Canon()
	if r.Empty() {
		return fmt.Errorf("the reply region from %v to %v is empty", a, b)
	}
	w.Reply = &config.Rect{X: r.Min.X, Y: r.Min.Y, W: r.Dx(), H: r.Dy()}
	fmt.Fprintln(env.Stdout, "The busy indicator is a place that looks different while the model works, such as")
	fmt.Fprintln(env.Stdout, "the send button, which shows a stop button then. Skip it only if the chat has none.")
	if p, err = ask("the send/stop button (type skip and Enter if there is none)"); err != nil {
		return err
	}
	if skipped {
		fmt.Fprintln(env.Stdout, "note: no busy indicator; replies count as finished only after gui.max_pause unchanged")
		w.Busy = nil
	} else {
		w.Busy = &config.Point{X: p.X, Y: p.Y}
	}
	return nil
}

// writeWindow records one agent's window in agentctl.yaml.
func writeWindow(root, agent string, w config.Window) error {
	if err := config.SetWindows(root, map[string]config.Window{agent: w}); err != nil {
		return fmt.Errorf("cannot calibrate %s: %w", agent, err)
	}
	return nil
}

// importCoords imports a Dream.OS coordinates file for the configured
// agents it lists, keeping each agent's title and reply region.
func importCoords(env *cli.Env, cfg config.Config, file, layout string) error {
	data, err := sizecap.ReadFile(file)
	if err != nil {
		return fmt.Errorf("cannot import coordinates: %w", err)
	}
	found, err := config.DreamOSCoords(data, layout)
	if err != nil {
		return fmt.Errorf("cannot import %s: %w", file, err)
	}
	windows, skipped := cfg.DreamOSWindows(found)
	if len(windows) == 0 {
		return cli.WithHint(fmt.Errorf("none of the agents in %s is configured", file), "add them to agentctl.yaml first")
	}
	if err := config.SetWindows(env.Root, windows); err != nil {
		return fmt.Errorf("cannot import %s: %w", file, err)
	}
	names := make([]string, 0, len(windows))
	for _, a := range cfg.Agents {
		if w, ok := windows[a.Name]; ok {
			names = append(names, a.Name)
			if err := driverconf.Calibrated(w); err != nil {
				fmt.Fprintf(env.Stdout, "note: %s: %v\n", a.Name, err)
			}
		}
	}
	sort.Strings(skipped)
	fmt.Fprintf(env.Stdout, "imported %s from %s\n", strings.Join(names, ", "), file)
	if len(skipped) > 0 {
		fmt.Fprintf(env.Stdout, "skipped (not configured): %s\n", strings.Join(skipped, ", "))
	}
	return nil
}
