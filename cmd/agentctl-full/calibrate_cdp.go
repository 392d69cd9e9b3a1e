package main

import (
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

// roleVerdict is how one selector setting was settled.
type roleVerdict struct {
	value  string // written to agentctl.yaml; "" leaves it to the profile
	shown  string // the selector in effect, for the report
	source string // given, kept, proposed, profile, none
	works  bool
	why    string // what proved it, or why it is not resolved
	note   string // a kept selector's proposal not taken
}

// calibrateCDP makes agent a cdp seat: it finds the agent's page,
// recognises a known app's chat (profile), proposes selectors that each
// match exactly their element, proves them with a probe prompt and then a
// turn of the driver itself, and writes what it resolved. It fails naming
// every selector it could not resolve.
func calibrateCDP(ctx context.Context, env *cli.Env, cfg config.Config, agent config.Agent, cal cdpCalibration) error {
	written := agent.CDP
	seat := written
	seat.Endpoint = cal.endpoint
	if err := config.CheckLoopbackEndpoint(cal.endpoint); err != nil {
		return cli.WithHint(err, "start the app with --remote-debugging-port=PORT (loopback is its default) and give --cdp http://127.0.0.1:PORT")
	}
	pages, err := cursor.ListPages(ctx, cal.endpoint)
	if err != nil {
		return cli.WithHint(err, "start the app with its DevTools port: agentctl cursor launch "+agent.Name)
	}
	target := cmpOr(cal.target, seat.Target, regexp.QuoteMeta(agent.Name))
	re, err := regexp.Compile(target)
	if err != nil {
		return cli.UsageError{Msg: fmt.Sprintf("calibrate: --target %q is not a regular expression: %v", target, err)}
	}
	var titles, matched []string
	for _, p := range pages {
		titles = append(titles, fmt.Sprintf("%q", p.Title))
		if re.MatchString(p.Title) {
			matched = append(matched, p.Title)
		}
	}
	if len(matched) != 1 {
		return cli.WithHint(fmt.Errorf("%d pages at %s have a title matching %q (pages: %s)", len(matched), cal.endpoint, target, strings.Join(titles, ", ")),
			"give --target PATTERN matching exactly one of them (open the agent's window with its name in the title)")
	}
	seat.Target = target
	fmt.Fprintf(env.Stdout, "page %q at %s\n", matched[0], cal.endpoint)

	// At rest: which profile's input is on the page, and which element is
	// the chat's input.
	sels := map[string]string{}
	for _, name := range config.CDPProfileNames() {
		p, _ := config.CDPProfile(name)
		for role, s := range cdpSelectors(p) {
			sels[name+"."+role] = s
		}
	}
	for _, role := range cdpRoles {
		if s := cmpOr(cal.given[role], cdpSelectors(written)[role]); s != "" {
			sels["seat."+role] = s
		}
	}
	look, err := cursor.LookForCalibration(ctx, driverconf.CDP(seat), sels)
	if err != nil {
		return cli.WithHint(err, "run 'agentctl doctor'")
	}
	for _, role := range cdpRoles {
		if s, ok := sels["seat."+role]; ok && look.Counts["seat."+role] < 0 {
			return cli.UsageError{Msg: fmt.Sprintf("calibrate: cdp.%s %q is not a valid CSS selector", role, s)}
		}
	}
	profile := recogniseProfile(env.Stdout, written.Profile, look)
	seat.Profile = profile
	base, _ := config.CDPProfile(profile)
	if profile == "" {
		base = config.CDP{}
	}
	// A page no profile fits still resolves empty settings from the
	// default profile; every selector is then written out.
	pick := func(role, proposal, why string, works bool) roleVerdict {
		return settle(role, cal.given[role], cdpSelectors(written)[role], cdpSelectors(base)[role], proposal, why, works, cal.force)
	}

	verdicts := map[string]roleVerdict{}
	composer := ""
	if len(look.Composers) > 0 {
		composer = look.Composers[0]
	}
	v := pick("composer", composer, "the one visible editable element that is the chat's input", composer != "")
	switch {
	case v.shown == "":
		v.why = look.Why
	case v.source != "proposed":
		n := visibleCount(look, v, profile, "composer")
		v.works, v.why = n == 1, "matches exactly one visible element"
		if n != 1 {
			v.why = fmt.Sprintf("matches %d visible elements, not exactly one", n)
		}
	}
	verdicts["composer"] = overProfile(v, composer, "the one visible editable element that is the chat's input")
	v = pick("submit", "", "", false)
	if v.shown == "" {
		v.source, v.works, v.why = "none", true, "Enter in the composer sends"
	} else {
		n := visibleCount(look, v, profile, "submit")
		v.works, v.why = n >= 1, fmt.Sprintf("%d visible on the page", n)
	}
	verdicts["submit"] = v
	v = pick("new_chat", "", "", false)
	newChatCount := visibleCount(look, v, profile, "new_chat")
	if v.shown == "" && profile == "" {
		// Unset, it comes from the default profile: say what that gives.
		v = roleVerdict{shown: config.CursorProfile().NewChat, source: "default profile"}
		newChatCount = look.Counts[config.ProfileCursor+".new_chat.visible"]
	}
	if v.shown != "" {
		v.works, v.why = true, fmt.Sprintf("%d visible on the page (clicked only when a turn asks for a new chat)", newChatCount)
		if newChatCount == 0 {
			v.why = "matches nothing visible now: a turn that asks for a new chat would fail (set cdp.new_chat if your agents start new chats)"
		}
	} else {
		v.source, v.works, v.why = "none", true, "not set: turns continue the chat"
	}
	verdicts["new_chat"] = v
	for _, role := range []string{"composer", "submit"} {
		setCDPSelector(&seat, role, verdicts[role].value)
	}

	// The probe: a prompt whose reply shows what is busy, what copies it,
	// and where it is.
	probeSeat := seat.Resolved()
	probeSeat.Composer, probeSeat.Submit = verdicts["composer"].shown, verdicts["submit"].shown
	for _, role := range []string{"busy", "reply", "copy"} {
		setCDPSelector(&probeSeat, role, cmpOr(cal.given[role], cdpSelectors(written)[role], cdpSelectors(base)[role]))
	}
	var probe cursor.ProbeResult
	probed := false
	switch {
	case !verdicts["composer"].works:
		fmt.Fprintf(env.Stdout, "no probe: the composer is not resolved\n")
	case !cal.probe:
		fmt.Fprintf(env.Stdout, "no probe (--probe=false): busy, reply and copy are not proven\n")
	default:
		fmt.Fprintf(env.Stdout, "probe: sending %q\n", cal.prompt)
		probe, err = cursor.ProbeCDP(ctx, driverconf.CDP(probeSeat),
			cursor.ProbeSelectors{Busy: probeSeat.Busy, Reply: probeSeat.Reply, Copy: probeSeat.Copy},
			driverconf.Timings(cfg.GUI), cal.prompt, io.Discard)
		if err != nil {
			return cli.WithHint(fmt.Errorf("the probe failed: %w", err), "check that the chat takes a prompt by hand, then run calibrate again (--probe=false only looks)")
		}
		probed = true
	}

	// busy
	busy := ""
	if len(probe.Busy) > 0 {
		busy = probe.Busy[0]
	}
	v = pick("busy", busy, "showed during the reply only", busy != "")
	switch {
	case v.shown == config.CDPNoBusy:
		v.works, v.why = written.Quiet > 0, "the page shows nothing while the model works: a reply is done once still for cdp.quiet"
		if !v.works {
			v.why = "cdp.busy none needs cdp.quiet, the longest pause the model makes"
		}
	case v.source != "proposed" && v.shown != "":
		v.works, v.why = probe.BusyProved, "showed during the probe's reply only"
		if !v.works {
			v.why = "did not show during the probe's reply (or showed before or after it)"
		}
	}
	if v.shown == "" {
		v.why = "nothing showed only while the model answered"
	}
	verdicts["busy"] = overProfile(v, busy, "showed during the reply only")

	// copy: a button, or the profile's context-menu item.
	// A profile's own copy action is proven by the round trip; a button
	// found on the page is proposed only where the profile names none.
	copyProposal := probe.Copy
	if base.Copy != "" || base.CopyMenu != "" {
		copyProposal = ""
	}
	copyVerdict := pick("copy", copyProposal, "its click gave the reply", copyProposal != "")
	if copyVerdict.source == "given" || copyVerdict.source == "kept" {
		copyVerdict.works, copyVerdict.why = probe.CopyProved, fmt.Sprintf("its click gave the reply (%d bytes)", len(probe.Copied))
		if !probe.CopyProved {
			copyVerdict.why = "its click gave no reply"
		}
	} else if copyVerdict.source == "proposed" {
		copyVerdict.why = fmt.Sprintf("its click gave the reply (%d bytes)", len(probe.Copied))
	}
	menu := seat.CopyMenu
	if copyVerdict.shown == "" && menu == "" && cal.given["copy"] == "" && written.Copy == "" {
		menu = base.CopyMenu
	}
	switch {
	case copyVerdict.shown == "" && menu != "":
		source := "profile"
		if written.CopyMenu != "" {
			source = "kept" // cdp.copy_menu as written
		}
		copyVerdict = roleVerdict{source: source, shown: "menu item " + menu, works: true, why: "the reply's context-menu item; proven by the round trip"}
	case copyVerdict.shown == "" && written.Read == config.ReadRendered:
		copyVerdict = roleVerdict{source: "none", works: true, why: "cdp.read: rendered reads the reply as the page shows it"}
	case copyVerdict.shown == "":
		copyVerdict.why = "no button whose click gives the reply"
	}
	verdicts["copy"] = copyVerdict

	// reply
	reply := ""
	if len(probe.Replies) > 0 {
		reply = probe.Replies[0]
	}
	v = pick("reply", reply, "its last match is the element showing the copied reply, and it names no echo of the prompt", reply != "")
	if v.source != "proposed" && v.shown != "" {
		v.works, v.why = probe.ReplyProved, "its last match is an element the probe's reply brought"
		if !v.works {
			v.why = "its last match is not an element the probe's reply brought"
		}
	}
	if v.shown == "" {
		v.why = probe.ReplyWhy
	}
	verdicts["reply"] = overProfile(v, reply, "its last match is the element showing the copied reply, and it names no echo of the prompt")
	if !probed {
		for _, role := range []string{"busy", "reply", "copy"} {
			v := verdicts[role]
			switch {
			case v.shown != "":
				v.works, v.why = true, "not proven without a probe"
			case !v.works:
				v.why = "only the probe finds it: give it as a flag, or leave out --probe=false"
			}
			verdicts[role] = v
		}
	}

	var unresolved []string
	for _, role := range cdpRoles {
		v := verdicts[role]
		setCDPSelector(&seat, role, v.value)
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
		fmt.Fprintf(env.Stdout, "  %-9s %s (%s%s)\n", role, shown, state, v.why)
		if v.note != "" {
			fmt.Fprintf(env.Stdout, "            %s\n", v.note)
		}
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

	// The proof: a turn of the driver itself, with the settings written.
	d, err := cursor.NewCDP(driverconf.CDP(seat), driverconf.Timings(cfg.GUI), cursor.Options{Agent: agent.Name})
	if err != nil {
		return fmt.Errorf("cannot prove the calibration: %w", err)
	}
	got, err := d.Run(ctx, cursor.Turn{Prompt: cal.proof})
	if err != nil {
		return cli.WithHint(fmt.Errorf("calibrate %s: the round trip with the settings written failed: %w", agent.Name, err),
			"where it names a selector, set that one in the cdp block of agentctl.yaml; where the page offered the probe's reply again, give --proof-prompt a prompt the model answers differently; then run calibrate again")
	}
	how := "the page's copy action"
	if seat.Resolved().Read == config.ReadRendered {
		how = "the page's rendering (cdp.read: rendered)"
	}
	fmt.Fprintf(env.Stdout, "proved: the driver sent %q and read a %d-byte reply through %s: %q\n", cal.proof, len(got), how, firstLineOf(got))
	fmt.Fprintf(env.Stdout, "calibrated %s as a cdp seat in %s\n", agent.Name, config.Path(env.Root))
	return nil
}

// settle decides one selector: given on the command line wins; one
// already written is kept over a different proposal unless force; else
// the proposal, or nothing when the profile's own does.
func settle(role, given, written, profile, proposal, why string, works, force bool) roleVerdict {
	switch {
	case given != "":
		return roleVerdict{value: given, shown: given, source: "given", works: true}
	case written != "" && (force && proposal != "" && proposal != written):
		return roleVerdict{value: proposal, shown: proposal, source: "proposed", works: works, why: why,
			note: fmt.Sprintf("replaces %q written before (--force)", written)}
	case written != "":
		v := roleVerdict{value: written, shown: written, source: "kept", works: true}
		if proposal != "" && proposal != written {
			v.note = fmt.Sprintf("kept as written in agentctl.yaml; calibrate proposes %q (--force writes it)", proposal)
		}
		return v
	case profile != "":
		return roleVerdict{shown: profile, source: "profile", works: true}
	case proposal != "":
		return roleVerdict{value: proposal, shown: proposal, source: "proposed", works: works, why: why}
	}
	return roleVerdict{source: "none"}
}

// overProfile replaces a profile's selector that does not work on the
// page with the proposal, when there is one, saying so.
func overProfile(v roleVerdict, proposal, why string) roleVerdict {
	if v.source != "profile" || v.works || proposal == "" {
		return v
	}
	return roleVerdict{value: proposal, shown: proposal, source: "proposed", works: true, why: why,
		note: fmt.Sprintf("the profile's %q does not work here (%s)", v.shown, v.why)}
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

func visibleCount(look cursor.CalibrationLook, v roleVerdict, profile, role string) int {
	if v.source == "profile" {
		return look.Counts[profile+"."+role+".visible"]
	}
	return look.Counts["seat."+role+".visible"]
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

func cmpOr(vals ...string) string {
	for _, v := range vals {
		if v != "" {
			return v
		}
	}
	return ""
}

func firstLineOf(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i] + " ..."
	}
	return s
}
