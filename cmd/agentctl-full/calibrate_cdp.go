package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"regexp"
	"strings"

	"github.com/agentctl/agentctl/cmd/internal/cli"
	"github.com/agentctl/agentctl/config"
	"github.com/agentctl/agentctl/config/driverconf"
	"github.com/agentctl/agentctl/cursor"
)

// cdpCalibration is what calibrate --cdp was asked: the selectors given on
// the command line, whether to send probe prompts, and whether a proposal
// replaces a selector agentctl.yaml already has.
type cdpCalibration struct {
	endpoint, target string
	given            map[string]string // by role: composer, submit, busy, reply, copy, new_chat
	probe, force     bool
	prompt, proof    string // the probe's prompt, and the proof's (another, so its reply differs)
}

// cdpRoles are the selectors of a seat, in the order calibrate settles them.
var cdpRoles = []string{"composer", "submit", "busy", "reply", "copy", "new_chat"}

// calibrateCDP makes agent a cdp seat: it finds the agent's page,
// recognises a known app's chat (profile), proposes selectors that each
// match exactly their element, proves them with a probe prompt and then a
// turn of the driver itself, and writes what it resolved. It fails naming
// every selector it could not resolve. What each selector becomes is
// decided by a cdpJudge (calibrate_cdp_verdict.go); this function only
// looks, probes, writes and reports.
func calibrateCDP(ctx context.Context, env *cli.Env, cfg config.Config, agent config.Agent, cal cdpCalibration) error {
	if err := config.CheckLoopbackEndpoint(cal.endpoint); err != nil {
		return cli.WithHint(err, "start the app with --remote-debugging-port=PORT (loopback is its default) and give --cdp http://127.0.0.1:PORT")
	}
	seat := agent.CDP
	seat.Endpoint = cal.endpoint
	title, target, err := findCDPPage(ctx, cal, seat.Target, agent.Name)
	if err != nil {
		return err
	}
	seat.Target = target
	fmt.Fprintf(env.Stdout, "page %q at %s\n", title, cal.endpoint)

	look, err := lookAtRest(ctx, seat, cal)
	if err != nil {
		return err
	}
	j := newCDPJudge(cal, agent.CDP, recogniseProfile(env.Stdout, agent.CDP.Profile, look), look)
	seat.Profile = j.profile
	verdicts := map[string]roleVerdict{"composer": j.composer(), "submit": j.submit(), "new_chat": j.newChat()}
	for _, role := range []string{"composer", "submit"} {
		setCDPSelector(&seat, role, verdicts[role].value)
	}

	probe, probed, err := probeCDP(ctx, env.Stdout, cfg, j, seat, verdicts)
	if err != nil {
		return err
	}
	verdicts["busy"], verdicts["copy"], verdicts["reply"] = j.busy(probe), j.copyAction(probe), j.reply(probe)
	if !probed {
		unproven(verdicts)
	}

	unresolved := reportCDP(env.Stdout, verdicts)
	for _, role := range cdpRoles {
		setCDPSelector(&seat, role, verdicts[role].value)
	}
	if err := config.SetCDP(env.Root, agent.Name, seat); err != nil {
		return fmt.Errorf("cannot calibrate %s: %w", agent.Name, err)
	}
	if len(unresolved) > 0 {
		fmt.Fprintf(env.Stdout, "wrote what resolved to %s\n", config.Path(env.Root))
		return cli.WithHint(fmt.Errorf("calibrate %s: %s not resolved", agent.Name, strings.Join(unresolved, ", ")),
			unresolvedHint(unresolved))
	}
	if !probed {
		fmt.Fprintf(env.Stdout, "calibrated %s as a cdp seat in %s (not proven: no probe)\n", agent.Name, config.Path(env.Root))
		return nil
	}
	if err := proveCDP(ctx, env.Stdout, cfg, agent.Name, seat, cal.proof); err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "calibrated %s as a cdp seat in %s\n", agent.Name, config.Path(env.Root))
	return nil
}

// findCDPPage finds the one page at the endpoint whose title matches
// --target, the seat's cdp.target, or else the agent's name, and returns
// its title and the pattern that found it.
func findCDPPage(ctx context.Context, cal cdpCalibration, written, agent string) (title, target string, err error) {
	pages, err := cursor.ListPages(ctx, cal.endpoint)
	if err != nil {
		return "", "", cli.WithHint(err, "start the app with its DevTools port: agentctl cursor launch "+agent)
	}
	target = cmp.Or(cal.target, written, regexp.QuoteMeta(agent))
	re, err := regexp.Compile(target)
	if err != nil {
		return "", "", cli.UsageError{Msg: fmt.Sprintf("calibrate: --target %q is not a regular expression: %v", target, err)}
	}
	var titles, matched []string
	for _, p := range pages {
		titles = append(titles, fmt.Sprintf("%q", p.Title))
		if re.MatchString(p.Title) {
			matched = append(matched, p.Title)
		}
	}
	if len(matched) != 1 {
		return "", "", cli.WithHint(fmt.Errorf("%d pages at %s have a title matching %q (pages: %s)", len(matched), cal.endpoint, target, strings.Join(titles, ", ")),
			"give --target PATTERN matching exactly one of them (open the agent's window with its name in the title)")
	}
	return matched[0], target, nil
}

// lookAtRest looks at the page before anything is sent: what each known
// profile's selectors and the seat's own (given or written) match, and
// which element is the chat's input. A seat selector that is not valid
// CSS is the user's to fix.
func lookAtRest(ctx context.Context, seat config.CDP, cal cdpCalibration) (cursor.CalibrationLook, error) {
	sels := map[string]string{}
	for _, name := range config.CDPProfileNames() {
		p, _ := config.CDPProfile(name)
		for role, s := range cdpSelectors(p) {
			sels[name+"."+role] = s
		}
	}
	for _, role := range cdpRoles {
		if s := cmp.Or(cal.given[role], cdpSelectors(seat)[role]); s != "" {
			sels["seat."+role] = s
		}
	}
	look, err := cursor.LookForCalibration(ctx, driverconf.CDP(seat), sels)
	if err != nil {
		return look, cli.WithHint(err, "run 'agentctl doctor'")
	}
	for _, role := range cdpRoles {
		if s, ok := sels["seat."+role]; ok && look.Counts["seat."+role] < 0 {
			return look, cli.UsageError{Msg: fmt.Sprintf("calibrate: cdp.%s %q is not a valid CSS selector", role, s)}
		}
	}
	return look, nil
}

// probeCDP sends the probe prompt, whose reply shows what is busy, what
// copies it and where it is, with the composer and submit settled and the
// other selectors as they would be; probed is false when no probe could
// or was to be sent.
func probeCDP(ctx context.Context, out io.Writer, cfg config.Config, j cdpJudge, seat config.CDP, verdicts map[string]roleVerdict) (probe cursor.ProbeResult, probed bool, err error) {
	switch {
	case !verdicts["composer"].works:
		fmt.Fprintf(out, "no probe: the composer is not resolved\n")
		return probe, false, nil
	case !j.cal.probe:
		fmt.Fprintf(out, "no probe (--probe=false): busy, reply and copy are not proven\n")
		return probe, false, nil
	}
	s := seat.Resolved()
	s.Composer, s.Submit = verdicts["composer"].shown, verdicts["submit"].shown
	for _, role := range []string{"busy", "reply", "copy"} {
		setCDPSelector(&s, role, cmp.Or(j.cal.given[role], cdpSelectors(j.written)[role], cdpSelectors(j.base)[role]))
	}
	fmt.Fprintf(out, "probe: sending %q\n", j.cal.prompt)
	probe, err = cursor.ProbeCDP(ctx, driverconf.CDP(s),
		cursor.ProbeSelectors{Busy: s.Busy, Reply: s.Reply, Copy: s.Copy},
		driverconf.Timings(cfg.GUI), j.cal.prompt, io.Discard)
	if err != nil {
		return probe, false, cli.WithHint(fmt.Errorf("the probe failed: %w", err), "check that the chat takes a prompt by hand, then run calibrate again (--probe=false only looks)")
	}
	return probe, true, nil
}

// reportCDP prints each selector's verdict and returns the settings not
// resolved.
func reportCDP(out io.Writer, verdicts map[string]roleVerdict) (unresolved []string) {
	for _, role := range cdpRoles {
		v := verdicts[role]
		shown := v.shown
		if shown == "" {
			shown = "-"
		} else if !strings.HasPrefix(shown, "menu item") {
			shown = fmt.Sprintf("%q", shown)
		}
		state := v.source + ": "
		switch {
		case !v.works:
			state = "NOT RESOLVED: "
			unresolved = append(unresolved, "cdp."+role)
		case v.source == "none":
			state = ""
		}
		fmt.Fprintf(out, "  %-9s %s (%s%s)\n", role, shown, state, v.why)
		if v.note != "" {
			fmt.Fprintf(out, "            %s\n", v.note)
		}
	}
	return unresolved
}

// proveCDP takes a turn of the driver itself with the settings written.
func proveCDP(ctx context.Context, out io.Writer, cfg config.Config, agent string, seat config.CDP, prompt string) error {
	d, err := cursor.NewCDP(driverconf.CDP(seat), driverconf.Timings(cfg.GUI), cursor.Options{Agent: agent})
	if err != nil {
		return fmt.Errorf("cannot prove the calibration: %w", err)
	}
	got, err := d.Run(ctx, cursor.Turn{Prompt: prompt})
	if err != nil {
		return cli.WithHint(fmt.Errorf("calibrate %s: the round trip with the settings written failed: %w", agent, err),
			"where it names a selector, set that one in the cdp block of agentctl.yaml; where the page offered the probe's reply again, give --proof-prompt a prompt the model answers differently; then run calibrate again")
	}
	how := "the page's copy action"
	if seat.Resolved().Read == config.ReadRendered {
		how = "the page's rendering (cdp.read: rendered)"
	}
	fmt.Fprintf(out, "proved: the driver sent %q and read a %d-byte reply through %s: %q\n", prompt, len(got), how, firstLineOf(got))
	return nil
}

// recogniseProfile names the known app whose chat the page shows: the one
// profile whose composer matches exactly one visible element. A profile
// written in agentctl.yaml is kept if it still fits.
func recogniseProfile(out io.Writer, written string, look cursor.CalibrationLook) string {
	var fits []string
	for _, name := range config.CDPProfileNames() {
		if look.Counts[name+".composer.visible"] == 1 {
			fits = append(fits, name)
		}
	}
	for _, name := range fits {
		if name == written || len(fits) == 1 {
			if written != "" && written != name {
				fmt.Fprintf(out, "note: profile %s, written before, does not fit the page\n", written)
			}
			fmt.Fprintf(out, "profile %s: the page is %s's chat\n", name, map[string]string{config.ProfileCursor: "Cursor", config.ProfileVSCode: "VS Code"}[name])
			return name
		}
	}
	if written != "" {
		fmt.Fprintf(out, "note: profile %s, written before, does not fit the page\n", written)
	}
	fmt.Fprintf(out, "profile: none of %s fits the page (their composers match no single element); selectors are written out\n",
		strings.Join(config.CDPProfileNames(), ", "))
	return ""
}

func unresolvedHint(roles []string) string {
	h := "set " + strings.Join(roles, ", ") + " in the agent's cdp block of agentctl.yaml (see docs/drivers.md: finding a page's selectors) or give them as flags, then run calibrate again"
	for _, r := range roles {
		switch r {
		case "cdp.copy":
			h += "; a page with no copy action can be read as it renders with cdp.read: rendered (Markdown is lost)"
		case "cdp.busy":
			h += "; a page that shows nothing while the model works takes cdp.busy: none with cdp.quiet set to its longest pause"
		}
	}
	return h
}

func cdpSelectors(c config.CDP) map[string]string {
	return map[string]string{"composer": c.Composer, "submit": c.Submit, "busy": c.Busy, "reply": c.Reply, "copy": c.Copy, "new_chat": c.NewChat}
}

func setCDPSelector(c *config.CDP, role, s string) {
	switch role {
	case "composer":
		c.Composer = s
	case "submit":
		c.Submit = s
	case "busy":
		c.Busy = s
	case "reply":
		c.Reply = s
	case "copy":
		c.Copy = s
	case "new_chat":
		c.NewChat = s
	}
}

func firstLineOf(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i] + " ..."
	}
	return s
}
