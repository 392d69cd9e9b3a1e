package cursor

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// cdpSettledLooks is how many looks in a row must find the page settled,
// with nothing changed between them, before the reply is read: the
// driver's own count on top of the page's probe (see jsLook), so that
// neither a starved page nor a starved driver can fake stillness alone.
const cdpSettledLooks = 2

// cdpReadGrace is how long a page that says the model is done may offer
// no readable new reply before the turn fails saying why: long enough for
// a page that draws its reply a moment after it drops its busy state, far
// shorter than a turn.
const cdpReadGrace = 3 * time.Second

// await waits until the model is done and returns the reply once it is
// proven finished and new: the busy element seen and gone, and the reply
// and the busy state then still for cdp.quiet, as the page's probe and
// cdpSettledLooks looks in a row agree; or, if the page never showed the
// model busy, still for gui.max_pause (cdp.quiet for a seat with
// cdp.busy none). The text must be neither the prompt nor the reply from
// before it (see judgeReply). A page that says the model is done but
// offers no readable new reply fails within cdpReadGrace.
func (s *cdpTurn) await(ctx context.Context, state turnState) (string, error) {
	s.wait(ErrNoReply, "the page to show the model busy or a reply")
	noBusy := s.c.busySelector() == ""
	pauseNeed := s.c.maxPause
	if noBusy {
		pauseNeed = s.c.cfg.Quiet
	}
	extra := map[string]any{"quiet": millis(s.c.cfg.Quiet), "pause": millis(pauseNeed)}
	settled, lastChanges := 0, -1
	var unreadable time.Time // when a finished page first offered nothing readable
	for {
		// A look after a settled one reads the reply too, should it find
		// the page still settled and unchanged: the read it would ask for.
		var l pageLook
		var pre *cdpReading
		var err error
		if settled+1 >= cdpSettledLooks {
			l, pre, err = s.lookThenRead(ctx, extra, lastChanges)
		} else {
			l, err = s.lookFor(ctx, extra)
		}
		if err != nil {
			return "", err
		}
		need := s.c.cfg.Quiet
		if !l.BusySeen {
			need = pauseNeed
		}
		if l.Changes != lastChanges || l.Busy || !l.Settled {
			settled = 0
		}
		if l.Busy {
			// Busy again: the grace starts over once it is done. Other
			// changes do not restart it: a copy button that redraws
			// itself when clicked would hold it off for ever.
			unreadable = time.Time{}
		}
		lastChanges = l.Changes
		poll := cdpPoll
		switch {
		case l.Busy:
			s.wait(ErrNoReply, "the model to finish: the page still shows it busy (cdp.busy %q)", s.c.cfg.Busy)
		case !l.Settled:
			s.wait(ErrNoReply, "the reply to stay unchanged for %s (%s)", need, stillWhy(l.BusySeen, noBusy))
		case settled+1 < cdpSettledLooks:
			settled++
		default:
			var r cdpReading
			if pre != nil {
				r = *pre
			} else if r, err = s.read(ctx); err != nil {
				return "", err
			}
			if r.Error != "" && (r.Element.Fresh || !r.Element.MarksLeft) {
				return "", replyFailed(r)
			}
			why, calibrate := judgeReply(state, s.t.Prompt, s.stored, s.c.cfg, r)
			if why == "" {
				s.accepted(l, need, noBusy, r)
				return r.Text, nil
			}
			s.wait(ErrNoReply, "a new reply, but %s", why)
			if l.BusySeen {
				if unreadable.IsZero() {
					unreadable = time.Now()
				} else if time.Since(unreadable) >= cdpReadGrace {
					kind := ErrNoReply
					if calibrate {
						kind = ErrNotCalibrated
					}
					return "", fmt.Errorf("%w: the model is done (cdp.busy %q came and went), but for %s %s",
						kind, s.c.cfg.Busy, cdpReadGrace, why)
				}
			}
			poll = cdpPoll * 10 // a read may click the copy button: not at every look
		}
		if err := realSleep(ctx, poll); err != nil {
			return "", err
		}
	}
}

// accepted logs the reply taken and notes what its receipt must say.
func (s *cdpTurn) accepted(l pageLook, need time.Duration, noBusy bool, r cdpReading) {
	if !l.BusySeen && !noBusy {
		s.t.note("the page never showed the model busy (cdp.busy %q matched nothing during the turn); the reply was taken once it had been still for %s (gui.max_pause), so a longer pause in it would have cut it", s.c.cfg.Busy, need)
		s.c.logf("the page never showed cdp.busy %q; the reply was taken after %s of stillness", s.c.cfg.Busy, need)
	}
	if s.c.cfg.Read == ReadRendered {
		s.t.note("the reply was read from the page's rendering (cdp.read: rendered), not the app's own copy of it: Markdown marks, code fences and line breaks may differ from what the model wrote")
		s.c.logf("reply read from the page's rendering (%d bytes)", len(r.Text))
		return
	}
	s.c.logf("reply read (%d bytes)", len(r.Text))
}

func stillWhy(busySeen, noBusy bool) string {
	switch {
	case noBusy:
		return "cdp.quiet: the seat's page shows nothing while the model works"
	case busySeen:
		return "cdp.quiet, after the busy element went"
	}
	return "gui.max_pause: the page has not shown the model busy"
}

func millis(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// judgeReply says why r cannot be the turn's reply (a clause: "the page
// offered only ..."), or "" when it can, and
// whether the cause is a selector that matches nothing (calibration).
// A reply is new when its element appeared after the prompt was sent, so
// two identical replies in a row are both taken; where the page no longer
// holds any element it had then (it redrew its replies), or the element
// is one it had then (a page that writes each reply into the same
// element), only the text tells, and the text of the reply from before
// is refused. The prompt itself is always refused (a chat's echo of it).
func judgeReply(st turnState, prompt, stored string, cfg CDPSettings, r cdpReading) (why string, calibrate bool) {
	copying := cfg.Read != ReadRendered && (cfg.Copy != "" || cfg.CopyMenu != "")
	switch {
	case copying && !r.CopyFound && cfg.Copy == "" && len(r.Labels) > 0:
		return fmt.Sprintf("the reply's context menu has no item %q (it has %q)", cfg.CopyMenu, r.Labels), true
	case copying && !r.CopyFound:
		return fmt.Sprintf("%s matches nothing on the page", copyAction(cfg)), true
	case !r.Element.Found:
		// A copy is taken only as far as the reply's rendering proves it,
		// and with no reply there is nothing to prove it by: a copy button
		// found elsewhere may be a code block's or the reply before's.
		return fmt.Sprintf("cdp.reply %q matches nothing on the page", cfg.Reply), true
	case r.Text == "" && copying:
		return fmt.Sprintf("the copy action %s gave nothing (a copy through the app's own clipboard cannot be caught: use cdp.read: rendered)", copyAction(cfg)), false
	case r.Text == "":
		return "the page offered only an empty reply", false
	case r.Text == prompt || r.Text == stored || strings.TrimSpace(r.Text) == strings.TrimSpace(stored):
		return "the page offered only the prompt itself (the chat's echo of it)", false
	case r.Element.Numbered && !r.Element.Fresh:
		return "the page offered only the reply from before this prompt was sent (its row was there then)", false
	case st.PrevKnown && fingerprintText(r.Text) == st.Prev && !(r.Element.Fresh && r.Element.MarksLeft):
		return "the page offered only the reply from before this prompt was sent", false
	}
	if copying {
		// A reply of no words (an emoji, a dash) is checked whole.
		if len(words(r.Rendered)) == 0 {
			if shown := strings.TrimSpace(r.Rendered); shown == "" || strings.TrimSpace(r.Text) != shown {
				return "the reply shows nothing to check the copy against (is cdp.body inside it?)", false
			}
		}
		if err := checkCopy(r.Text, r.Rendered); err != nil {
			return "the copy is not what the page shows: " + err.Error(), false
		}
	}
	return "", false
}

// fieldLineEnds is text as a textarea stores it: CRLF and CR as LF.
func fieldLineEnds(text string) string {
	return strings.ReplaceAll(strings.ReplaceAll(text, "\r\n", "\n"), "\r", "\n")
}

// composerDiff says how what the composer holds differs from the prompt:
// their sizes, and the first byte where they part.
func composerDiff(prompt, got string) string {
	i := 0
	for i < len(prompt) && i < len(got) && prompt[i] == got[i] {
		i++
	}
	excerpt := func(s string) string {
		end := min(len(s), i+24)
		return fmt.Sprintf("%q", s[i:end])
	}
	what := fmt.Sprintf("%d bytes where the prompt has %d; they first differ at byte %d (the composer: %s, the prompt: %s)",
		len(got), len(prompt), i, excerpt(got), excerpt(prompt))
	if got == "" {
		what = fmt.Sprintf("nothing of the %d-byte prompt (is cdp.composer the editor itself?)", len(prompt))
	}
	return what
}
