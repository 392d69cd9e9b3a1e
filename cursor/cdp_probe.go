package cursor

import (
	"context"
	"fmt"
	"io"
	"regexp"
	"strings"
	"time"
)

// CalibrationLook is what `agentctl calibrate --cdp` sees on a chat page at
// rest, before it sends anything.
type CalibrationLook struct {
	Page PageTarget
	// Counts has, for each selector asked about, how many elements it
	// matches (-1: not valid CSS), and under NAME.visible how many of them
	// show.
	Counts map[string]int
	// Composers are selectors that each match exactly the chat's input and
	// nothing else, best first; Why says why there is none.
	Composers []string
	Why       string
}

// LookForCalibration finds the seat's page (exactly one title must match),
// counts what each of sels matches, and proposes selectors for the chat's
// input: one visible editable element, not a code block's editor nor a
// search or filter box. It never types or clicks.
func LookForCalibration(ctx context.Context, c CDPSettings, sels map[string]string) (CalibrationLook, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	p, target, err := dialSeat(ctx, c)
	if err != nil {
		return CalibrationLook{}, err
	}
	defer p.close()
	var r struct {
		Counts    map[string]int `json:"counts"`
		Composers []string       `json:"composers"`
		Why       string         `json:"why"`
	}
	if err := p.eval(ctx, jsCalLook, map[string]any{"sels": sels}, &r); err != nil {
		return CalibrationLook{}, fmt.Errorf("cannot look at page %q: %w", target.Title, err)
	}
	return CalibrationLook{Page: target, Counts: r.Counts, Composers: r.Composers, Why: r.Why}, nil
}

func dialSeat(ctx context.Context, c CDPSettings) (*page, PageTarget, error) {
	if err := c.ready(); err != nil {
		return nil, PageTarget{}, fmt.Errorf("%w: %v", ErrNotCalibrated, err)
	}
	title, err := regexp.Compile(c.Target)
	if err != nil {
		return nil, PageTarget{}, err
	}
	target, err := findPage(ctx, c.Endpoint, title)
	if err != nil {
		return nil, PageTarget{}, err
	}
	p, err := dialPage(ctx, c.Endpoint, target)
	if err != nil {
		return nil, PageTarget{}, err
	}
	return p, target, nil
}

// ProbeResult is what one prompt sent by ProbeCDP showed.
type ProbeResult struct {
	// BusyShown: something busy-looking showed while the model answered.
	BusyShown bool
	// Busy are selectors of elements that showed during the reply and
	// neither before the prompt nor once it was done, best first.
	Busy []string
	// BusyProved: the seat's cdp.busy, if set, showed during the reply
	// only.
	BusyProved bool
	// Copy is the selector of a copy button whose click gave the reply
	// (Copied): the seat's cdp.copy if it did, else one found on the page.
	Copy   string
	Copied string
	// CopyProved: the seat's cdp.copy, if set, gave the reply.
	CopyProved bool
	// Replies are selectors whose last match is the element showing the
	// copied reply and which match nothing else the prompt brought (its
	// echo); ReplyWhy says why there is none.
	Replies  []string
	ReplyWhy string
	// ReplyProved: the last match of the seat's cdp.reply, if set, is an
	// element the reply brought.
	ReplyProved bool
}

// probeQuiet is how long the page must stay still once the busy-looking
// elements are gone before the probe takes the reply as finished.
const probeQuiet = 500 * time.Millisecond

// ProbeSelectors are the selectors a probe proves or not, each left empty
// where there is none to prove.
type ProbeSelectors struct {
	Busy, Reply, Copy string
}

// ProbeCDP sends prompt through the seat's composer (and cdp.submit, or
// Enter), watches the page until the model is done, and finds which
// elements showed the model busy, which copy button gives the reply, and
// which element shows it. The selectors in prove are proved or not on the
// way. c.Composer must be set.
func ProbeCDP(ctx context.Context, c CDPSettings, prove ProbeSelectors, t Timings, prompt string, log io.Writer) (ProbeResult, error) {
	if log == nil {
		log = io.Discard
	}
	var res ProbeResult
	t = t.orDefault()
	ctx, cancel := context.WithTimeout(ctx, t.TurnTimeout)
	defer cancel()
	p, target, err := dialSeat(ctx, c)
	if err != nil {
		return res, err
	}
	defer p.close()
	var watch []string
	if prove.Busy != "" {
		watch = append(watch, prove.Busy)
	}
	if err := p.eval(ctx, jsProbeStart, map[string]any{"watch": watch}, nil); err != nil {
		return res, fmt.Errorf("cannot watch page %q: %w", target.Title, err)
	}
	// The driver's own way in: the composer proven to hold the prompt.
	d := &CDP{cfg: c.withDefaults(), log: io.Discard, maxPause: t.MaxPause, submitWait: t.Submit, turn: t.TurnTimeout}
	d.cfg.Busy = prove.Busy
	turn := &cdpTurn{c: d, p: p, t: Turn{Prompt: prompt}, token: newSentinel(), stored: prompt}
	if err := turn.insert(ctx); err != nil {
		return res, err
	}
	if err := turn.press(ctx); err != nil {
		return res, err
	}
	fmt.Fprintf(log, "probe prompt %q sent to page %q\n", prompt, target.Title)

	sent := time.Now()
	checkedSent := false
	for {
		var l struct {
			Lost    bool    `json:"lost"`
			Busy    bool    `json:"busy"`
			Seen    int     `json:"seen"`
			StillMS float64 `json:"still_ms"`
		}
		if err := p.eval(ctx, jsProbeLook, nil, &l); err != nil {
			return res, err
		}
		if l.Lost {
			return res, fmt.Errorf("%w: page %q reloaded during the probe", ErrReplyLost, target.Title)
		}
		res.BusyShown = res.BusyShown || l.Busy || l.Seen > 0
		still := time.Duration(l.StillMS * float64(time.Millisecond))
		waited := time.Since(sent)
		switch {
		case !res.BusyShown && waited > t.Submit && !checkedSent:
			// Once: the composer still holding the prompt means it never went.
			checkedSent = true
			if held, err := turn.composerText(ctx); err == nil && held.text != "" && turn.holdsPrompt(held.text) {
				return res, fmt.Errorf("%w: the page showed no sign of taking the probe's prompt within %s (does it send with a button? give --submit)", ErrNotSubmitted, t.Submit)
			}
			continue
		case res.BusyShown && !l.Busy && still >= probeQuiet:
		case !res.BusyShown && still >= t.MaxPause && waited >= t.MaxPause:
			fmt.Fprintf(log, "nothing busy-looking showed; the reply has been still for %s\n", t.MaxPause)
		default:
			if err := realSleep(ctx, 20*time.Millisecond); err != nil {
				return res, fmt.Errorf("%w: the probe's reply did not finish: %v", ErrNoReply, err)
			}
			continue
		}
		break
	}
	fmt.Fprintf(log, "the model is done\n")

	var check struct {
		Busy  bool `json:"busy"`
		Reply bool `json:"reply"`
	}
	if err := p.eval(ctx, jsProbeCheck, map[string]any{"busy": prove.Busy, "reply": prove.Reply}, &check); err != nil {
		return res, err
	}
	res.BusyProved, res.ReplyProved = check.Busy, check.Reply

	copyOf := func(sel string) (string, error) {
		var r struct {
			Found bool   `json:"found"`
			Text  string `json:"text"`
		}
		// No reply known yet: the copy button is the page's last match.
		err := p.eval(ctx, jsCopy, map[string]any{"reply": cmpReply(prove.Reply), "copy": sel, "token": turn.token}, &r)
		return r.Text, err
	}
	isReply := func(text string) bool {
		return strings.TrimSpace(text) != "" && strings.TrimSpace(text) != strings.TrimSpace(prompt)
	}
	if prove.Copy != "" {
		text, err := copyOf(prove.Copy)
		if err != nil {
			return res, err
		}
		if isReply(text) {
			res.Copy, res.Copied, res.CopyProved = prove.Copy, text, true
		}
	}
	if res.Copy == "" {
		var found []struct {
			Sels []string `json:"sels"`
		}
		if err := p.eval(ctx, jsProbeCopies, nil, &found); err != nil {
			return res, err
		}
		for _, f := range found {
			text, err := copyOf(f.Sels[0])
			if err != nil {
				return res, err
			}
			if isReply(text) {
				res.Copy, res.Copied = f.Sels[0], text
				break
			}
		}
	}
	if res.Copied != "" {
		var r struct {
			Sels []string `json:"sels"`
			Why  string   `json:"why"`
		}
		if err := p.eval(ctx, jsProbeReply, map[string]any{"copied": res.Copied}, &r); err != nil {
			return res, err
		}
		res.Replies, res.ReplyWhy = r.Sels, r.Why
	} else {
		res.ReplyWhy = "without a copy of the reply nothing tells the reply from the rest of what the prompt brought"
	}
	if err := p.eval(ctx, jsProbeFinish, nil, &res.Busy); err != nil {
		return res, err
	}
	return res, nil
}

// cmpReply is a reply selector for the read scripts, which need one: a
// selector matching nothing where none is known.
func cmpReply(reply string) string {
	if reply == "" {
		return ":not(*)"
	}
	return reply
}
