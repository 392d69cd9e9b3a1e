package main

import (
	"context"
	"fmt"
	"regexp"
	"strings"

	"github.com/agentctl/agentctl/config"
	"github.com/agentctl/agentctl/cursor"
)

// cdpCandidates are selectors tried, in order, for the roles that can be
// checked on a page at rest: the built-in profile first, then shapes that
// chat pages commonly have.
var cdpCandidates = map[string][]string{
	"composer": {config.CursorProfile().Composer, `[contenteditable="true"][role="textbox"]`, `[contenteditable="true"]`, `textarea`},
	"reply":    {config.CursorProfile().Reply, `[data-message-role="assistant"]`, `[data-role="assistant"]`, `.assistant-message`, `.markdown-body`},
}

// calibrateCDP makes agent a cdp seat: it finds the agent's page at
// endpoint, keeps the selectors given, and proposes the first candidate
// that resolves for the others. It only looks at the page.
func calibrateCDP(ctx context.Context, env *Env, agent config.Agent, endpoint, target string, given map[string]string) error {
	seat := agent.CDP
	seat.Endpoint = endpoint
	if err := config.CheckLoopbackEndpoint(endpoint); err != nil {
		return withHint(err, "start the app with --remote-debugging-port=PORT (loopback is its default) and give --cdp http://127.0.0.1:PORT")
	}
	pages, err := cursor.ListPages(ctx, endpoint)
	if err != nil {
		return withHint(err, "start the app with its DevTools port: agentctl cursor launch "+agent.Name)
	}
	if target == "" {
		target = seat.Target
	}
	if target == "" {
		target = regexp.QuoteMeta(agent.Name)
	}
	re, err := regexp.Compile(target)
	if err != nil {
		return usageError{msg: fmt.Sprintf("calibrate: --target %q is not a regular expression: %v", target, err)}
	}
	var titles, matched []string
	for _, p := range pages {
		titles = append(titles, fmt.Sprintf("%q", p.Title))
		if re.MatchString(p.Title) {
			matched = append(matched, p.Title)
		}
	}
	if len(matched) != 1 {
		return withHint(fmt.Errorf("%d pages at %s have a title matching %q (pages: %s)", len(matched), endpoint, target, strings.Join(titles, ", ")),
			"give --target PATTERN matching exactly one of them (open the agent's window with its name in the title)")
	}
	seat.Target = target
	fmt.Fprintf(env.Stdout, "page %q at %s\n", matched[0], endpoint)

	// Count every candidate at once, and the selectors given.
	sels := map[string]string{}
	for role, list := range cdpCandidates {
		for i, s := range list {
			sels[fmt.Sprintf("%s#%d", role, i)] = s
		}
	}
	for role, s := range given {
		sels[role] = s
	}
	r, err := cursor.InspectPage(ctx, seat, sels)
	if err != nil {
		return withHint(err, "run 'agentctl doctor'")
	}
	for _, role := range []string{"composer", "submit", "busy", "reply", "copy", "new_chat"} {
		if s, ok := given[role]; ok {
			switch n := r.Counts[role]; {
			case n < 0:
				return usageError{msg: fmt.Sprintf("calibrate: --%s %q is not a valid CSS selector", strings.ReplaceAll(role, "_", "-"), s)}
			case n == 0 && role != "busy" && role != "reply":
				fmt.Fprintf(env.Stdout, "note: %s %q matches nothing on the page now\n", role, s)
			}
			setCDPSelector(&seat, role, s)
			fmt.Fprintf(env.Stdout, "  %-9s %q (given, %d on the page)\n", role, s, r.Counts[role])
			continue
		}
		list, ok := cdpCandidates[role]
		if !ok {
			continue
		}
		found := false
		for i, s := range list {
			if r.Counts[fmt.Sprintf("%s#%d", role, i)] > 0 {
				if i > 0 { // the profile's own is kept by leaving the setting empty
					setCDPSelector(&seat, role, s)
				}
				fmt.Fprintf(env.Stdout, "  %-9s %q (proposed, %d on the page)\n", role, s, r.Counts[fmt.Sprintf("%s#%d", role, i)])
				found = true
				break
			}
		}
		if !found {
			fmt.Fprintf(env.Stdout, "  %-9s none of the usual selectors matches: set cdp.%s (see README: finding a page's selectors)\n", role, role)
		}
	}
	if err := config.SetCDP(env.Root, agent.Name, seat); err != nil {
		return fmt.Errorf("cannot calibrate %s: %w", agent.Name, err)
	}
	fmt.Fprintf(env.Stdout, "calibrated %s as a cdp seat in %s\n", agent.Name, config.Path(env.Root))
	fmt.Fprintf(env.Stdout, "next: 'agentctl doctor' while the model works checks cdp.busy (%q); then 'agentctl prompt %s -v \"Reply with the word ready.\"'\n",
		seat.Resolved().Busy, agent.Name)
	return nil
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
