package main

import (
	"fmt"

	"github.com/agentctl/agentctl/config"
	"github.com/agentctl/agentctl/cursor"
)

// roleVerdict is how one selector setting was settled.
type roleVerdict struct {
	value  string // written to agentctl.yaml; "" leaves it to the profile
	shown  string // the selector in effect, for the report
	source string // given, kept, proposed, profile, none
	works  bool
	why    string // what proved it, or why it is not resolved
	note   string // a kept selector's proposal not taken
}

// cdpJudge decides what each selector of a cdp seat becomes, from what
// calibrate saw of the page at rest and of the probe's reply. It only
// decides: calibrateCDP looks, probes and writes.
type cdpJudge struct {
	cal     cdpCalibration
	written config.CDP // the seat as agentctl.yaml has it
	// profile is the known app the page was recognised as ("" for none);
	// base its settings, empty when none fits, so that every selector is
	// then written out.
	profile string
	base    config.CDP
	look    cursor.CalibrationLook
}

func newCDPJudge(cal cdpCalibration, written config.CDP, profile string, look cursor.CalibrationLook) cdpJudge {
	j := cdpJudge{cal: cal, written: written, profile: profile, look: look}
	if profile != "" {
		j.base, _ = config.CDPProfile(profile)
	}
	return j
}

// pick settles role between what was given, written, the profile's and
// the proposal (see settle).
func (j cdpJudge) pick(role, proposal, why string, works bool) roleVerdict {
	return settle(j.cal.given[role], cdpSelectors(j.written)[role], cdpSelectors(j.base)[role], proposal, why, works, j.cal.force)
}

// visible is how many visible elements the selector v settled on matches.
func (j cdpJudge) visible(v roleVerdict, role string) int {
	if v.source == "profile" {
		return j.look.Counts[j.profile+"."+role+".visible"]
	}
	return j.look.Counts["seat."+role+".visible"]
}

func (j cdpJudge) composer() roleVerdict {
	const why = "the one visible editable element that is the chat's input"
	proposal := first(j.look.Composers)
	v := j.pick("composer", proposal, why, proposal != "")
	switch {
	case v.shown == "":
		v.why = j.look.Why
	case v.source != "proposed":
		n := j.visible(v, "composer")
		v.works, v.why = n == 1, "matches exactly one visible element"
		if n != 1 {
			v.why = fmt.Sprintf("matches %d visible elements, not exactly one", n)
		}
	}
	return overProfile(v, proposal, why)
}

func (j cdpJudge) submit() roleVerdict {
	v := j.pick("submit", "", "", false)
	if v.shown == "" {
		v.source, v.works, v.why = "none", true, "Enter in the composer sends"
		return v
	}
	n := j.visible(v, "submit")
	v.works, v.why = n >= 1, fmt.Sprintf("%d visible on the page", n)
	return v
}

func (j cdpJudge) newChat() roleVerdict {
	v := j.pick("new_chat", "", "", false)
	n := j.visible(v, "new_chat")
	if v.shown == "" && j.profile == "" {
		// Unset, it comes from the default profile: say what that gives.
		v = roleVerdict{shown: config.CursorProfile().NewChat, source: "default profile"}
		n = j.look.Counts[config.ProfileCursor+".new_chat.visible"]
	}
	switch {
	case v.shown == "":
		v.source, v.works, v.why = "none", true, "not set: turns continue the chat"
	case n == 0:
		v.works, v.why = true, "matches nothing visible now: a turn that asks for a new chat would fail (set cdp.new_chat if your agents start new chats)"
	default:
		v.works, v.why = true, fmt.Sprintf("%d visible on the page (clicked only when a turn asks for a new chat)", n)
	}
	return v
}

func (j cdpJudge) busy(p cursor.ProbeResult) roleVerdict {
	const why = "showed during the reply only"
	proposal := first(p.Busy)
	v := j.pick("busy", proposal, why, proposal != "")
	switch {
	case v.shown == config.CDPNoBusy:
		v.works, v.why = j.written.Quiet > 0, "the page shows nothing while the model works: a reply is done once still for cdp.quiet"
		if !v.works {
			v.why = "cdp.busy none needs cdp.quiet, the longest pause the model makes"
		}
	case v.source != "proposed" && v.shown != "":
		v.works, v.why = p.BusyProved, "showed during the probe's reply only"
		if !v.works {
			v.why = "did not show during the probe's reply (or showed before or after it)"
		}
	}
	if v.shown == "" {
		v.why = "nothing showed only while the model answered"
	}
	return overProfile(v, proposal, why)
}

// copyAction settles cdp.copy: a button, or the profile's context-menu
// item. A profile's own copy action is proven by the round trip; a
// button found on the page is proposed only where the profile names none.
func (j cdpJudge) copyAction(p cursor.ProbeResult) roleVerdict {
	proposal := p.Copy
	if j.base.Copy != "" || j.base.CopyMenu != "" {
		proposal = ""
	}
	v := j.pick("copy", proposal, "its click gave the reply", proposal != "")
	switch v.source {
	case "given", "kept":
		v.works, v.why = p.CopyProved, fmt.Sprintf("its click gave the reply (%d bytes)", len(p.Copied))
		if !p.CopyProved {
			v.why = "its click gave no reply"
		}
	case "proposed":
		v.why = fmt.Sprintf("its click gave the reply (%d bytes)", len(p.Copied))
	}
	if v.shown != "" {
		return v
	}
	menu := j.written.CopyMenu
	if menu == "" && j.cal.given["copy"] == "" && j.written.Copy == "" {
		menu = j.base.CopyMenu
	}
	switch {
	case menu != "":
		source := "profile"
		if j.written.CopyMenu != "" {
			source = "kept" // cdp.copy_menu as written
		}
		return roleVerdict{source: source, shown: "menu item " + menu, works: true, why: "the reply's context-menu item; proven by the round trip"}
	case j.written.Read == config.ReadRendered:
		return roleVerdict{source: "none", works: true, why: "cdp.read: rendered reads the reply as the page shows it"}
	}
	v.why = "no button whose click gives the reply"
	return v
}

func (j cdpJudge) reply(p cursor.ProbeResult) roleVerdict {
	const why = "its last match is the element showing the copied reply, and it names no echo of the prompt"
	proposal := first(p.Replies)
	v := j.pick("reply", proposal, why, proposal != "")
	if v.source != "proposed" && v.shown != "" {
		v.works, v.why = p.ReplyProved, "its last match is an element the probe's reply brought"
		if !v.works {
			v.why = "its last match is not an element the probe's reply brought"
		}
	}
	if v.shown == "" {
		v.why = p.ReplyWhy
	}
	return overProfile(v, proposal, why)
}

// unproven marks what only the probe proves, when there was none: a
// selector in effect is taken as it is, one missing cannot be found.
func unproven(verdicts map[string]roleVerdict) {
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

// settle decides one selector: given on the command line wins; one
// already written is kept over a different proposal unless force; else
// the proposal, or nothing when the profile's own does.
func settle(given, written, profile, proposal, why string, works, force bool) roleVerdict {
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

// first is the best of proposals, best first; "" when there is none.
func first(proposals []string) string {
	if len(proposals) == 0 {
		return ""
	}
	return proposals[0]
}
