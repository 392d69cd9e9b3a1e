package main

import (
	"context"
	"fmt"

	"github.com/agentctl/agentctl/config"
	"github.com/agentctl/agentctl/config/driverconf"
	"github.com/agentctl/agentctl/cursor"
)

// cdpChecks look at a cdp seat's page: found exactly once, and each
// selector resolving. The busy element shows only while the model works,
// so matching nothing is expected of it at rest; the reply, in a fresh
// chat. Nothing is typed or clicked.
func cdpChecks(ctx context.Context, a config.Agent) []check {
	c := check{name: fmt.Sprintf("agent %s: chat page", a.Name)}
	if err := a.CDP.Ready(); err != nil {
		c.err, c.hint = err, "run 'agentctl calibrate "+a.Name+" --cdp http://127.0.0.1:9222'"
		return []check{c}
	}
	r, err := cursor.InspectPage(ctx, driverconf.CDP(a.CDP), nil)
	if err != nil {
		c.err = err
		c.hint = "start the app with its DevTools port ('agentctl cursor launch " + a.Name + "'), and make cdp.target match exactly one page title"
		return []check{c}
	}
	c.note = fmt.Sprintf("%q at %s", r.Page.Title, a.CDP.Endpoint)
	checks := []check{c}
	seat := a.CDP.Resolved()
	if seat.Busy == config.CDPNoBusy {
		checks = append(checks, noBusyCheck(a.Name, seat))
	}
	for _, s := range []struct {
		key, sel string
		must     bool   // a turn cannot start without it
		rest     string // why matching nothing now may be fine
	}{
		{"cdp.composer", seat.Composer, true, ""},
		{"cdp.submit", seat.Submit, true, ""},
		{"cdp.reply", seat.Reply, false, "fine in a fresh chat; otherwise replies cannot be read"},
		{"cdp.busy", seat.Busy, false, "expected while the model rests; run doctor while it works to check it (a turn whose page never shows it ends only after gui.max_pause of stillness, and its receipt says so)"},
		{"cdp.copy", seat.Copy, false, "fine in a fresh chat; otherwise replies cannot be read"},
		{"cdp.body", seat.Body, false, "fine in a fresh chat; otherwise a copy cannot be checked against the reply, and is refused"},
		{"cdp.error", seat.Error, false, "expected: it shows only on a reply the app ended with an error"},
		{"cdp.new_chat", seat.NewChat, a.NewChat.Set(), "only needed to start fresh chats"},
	} {
		if s.sel == "" || (s.key == "cdp.busy" && s.sel == config.CDPNoBusy) {
			continue
		}
		sc := check{name: fmt.Sprintf("agent %s: %s %q", a.Name, s.key, s.sel)}
		n := r.Counts[s.key]
		switch {
		case n < 0:
			sc.err, sc.hint = fmt.Errorf("not a valid CSS selector"), "fix "+s.key+" in agentctl.yaml"
		case n == 0 && s.must:
			sc.err = fmt.Errorf("matches nothing on the page")
			sc.hint = "the built-in selectors follow one Cursor version; run 'agentctl calibrate " + a.Name + " --cdp " + a.CDP.Endpoint + "' or set " + s.key
		case n == 0:
			sc.warn, sc.hint = "matches nothing now", s.rest
		default:
			sc.note = fmt.Sprintf("%d on the page", n)
		}
		checks = append(checks, sc)
	}
	return checks
}

// noBusyCheck warns of a seat whose page shows nothing while the model
// works: its turns end on stillness alone, which a long pause in a reply
// outlasts.
func noBusyCheck(agent string, seat config.CDP) check {
	return check{
		name: fmt.Sprintf("agent %s: cdp.busy %q", agent, seat.Busy),
		warn: fmt.Sprintf("no busy element: a turn ends once the reply has been still for cdp.quiet (%s), so a longer pause in a reply cuts it", seat.Quiet),
		hint: "set cdp.busy to what the page shows while the model works, such as its stop button ('agentctl calibrate " + agent + " --cdp " + seat.Endpoint + "' proposes one)",
	}
}
