package cursor

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"time"

	"github.com/agentctl/agentctl/config"
)

// Run takes one turn. See Driver.
//
// A reply is returned only when the driver knows both that the model
// finished (its busy indicator is back at rest, or without one, the reply
// region outlasted gui.max_pause unchanged) and that what the copy action
// gives is new: not empty, not the prompt, not what it gave before the
// prompt was sent. Until both hold the turn waits, and its timeout names
// what was missing.
func (g *GUI) Run(ctx context.Context, t Turn) (string, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	ctx, cancel := context.WithTimeout(ctx, g.turn)
	defer cancel()
	if g.d == nil {
		d, err := openDesktop()
		if err != nil {
			return "", err
		}
		g.d = d
	}
	var w windowID
	var st turnState
	var err error
	if t.Resume {
		if w, err = g.find(); err != nil {
			return "", err
		}
		st = decodeState(t.ResumeState)
		if !st.PrevKnown && g.checkKeys == nil {
			g.logf("resuming without a record of the chat before the prompt: only an empty copy or the prompt itself is refused")
		}
	} else {
		if w, st, err = g.send(ctx, t); err != nil {
			return "", err
		}
		if t.OnResumeState != nil {
			if err := t.OnResumeState(st.encode()); err != nil {
				return "", fmt.Errorf("turn stopped while waiting for the reply: %w", err)
			}
		}
	}
	reply, err := g.await(ctx, w, t.Prompt, st)
	if err != nil {
		return "", err
	}
	if err := t.stage(StageReplied); err != nil {
		return "", err
	}
	return reply, nil
}

// await waits until the model has finished and the copy action gives a new
// reply, and returns that reply.
func (g *GUI) await(ctx context.Context, w windowID, prompt string, st turnState) (string, error) {
	pasted, _ := composedPrompt(g.win.Composer, prompt)
	refused := 0
	watch := g.watcher(w, false)
	rule := &finishRule{idle: st.Idle, settle: g.quiet}
	if g.win.Busy == nil || st.Idle == "" {
		rule.idle, rule.settle = "", g.maxPause
	}
	if rule.idle != "" {
		g.logf("waiting for the busy indicator to rest, then %s unchanged", rule.settle)
	} else {
		g.logf("waiting for the reply region to stay unchanged for %s (no busy indicator)", rule.settle)
	}
	for {
		if _, err := watch.finished(ctx, rule); err != nil {
			return "", g.watchError(ctx, err)
		}
		got, transcript, copyErr := g.copyReply(ctx, w, func(got string) bool { return st.stale(prompt, got) == "" })
		if copyErr != nil && !isNothingCopied(copyErr) {
			return "", copyErr
		}
		why := st.stale(prompt, got)
		if why == "" && g.checkKeys != nil {
			if err := checkAgainstTranscript(got, transcript, pasted); err != nil {
				// The model has finished, so a second look rarely
				// differs; a few are taken for a chat still catching up,
				// then the copy is refused rather than passed on.
				if refused++; refused == maxRefusals {
					return "", fmt.Errorf("%w: the copy (%d bytes) was refused %d times: %w", ErrNoReply, len(got), refused, err)
				}
				g.logf("the copy (%d bytes) is refused: %v; looking again", len(got), err)
				rule = &finishRule{idle: rule.idle, settle: rule.settle}
				continue
			}
		}
		if why == "" {
			g.logf("reply copied (%d bytes)", len(got))
			return got, nil
		}
		if g.win.CopyFromInput {
			// A keys route finds the last reply afresh each time, and the
			// app can list a finished reply a moment after its stop button
			// went: look again soon rather than wait for the chat to move.
			g.logf("the copy gave %s; copying again in %s", why, recopyWait)
			if err := realSleep(ctx, recopyWait); err != nil {
				return "", g.watchError(ctx, fmt.Errorf("%w: the turn timed out while the copy action gave %s", ErrNoReply, why))
			}
			rule = &finishRule{idle: rule.idle, settle: rule.settle}
			continue
		}
		g.logf("the copy gave %s; waiting for the chat to change", why)
		after, err := watch.frame()
		if err != nil {
			return "", g.watchError(ctx, err)
		}
		if err := watch.changedFrom(ctx, after, "a new reply: the copy action gave "+why); err != nil {
			if copyErr != nil {
				err = fmt.Errorf("%w (%w)", err, copyErr)
			}
			return "", g.watchError(ctx, err)
		}
		rule = &finishRule{idle: rule.idle, settle: rule.settle}
	}
}

// send is steps 1–5 of the turn: under the input lock, note what the copy
// action gives now, paste the prompt into the confirmed window and prove it
// was submitted.
func (g *GUI) send(ctx context.Context, t Turn) (w windowID, st turnState, err error) {
	s, err := g.begin(ctx)
	if err != nil {
		return 0, st, err
	}
	defer s.end(ctx, &err)
	w = s.w
	watch := g.watcher(w, true)
	if t.NewChat && g.newChat != nil {
		if err := s.key(*g.newChat); err != nil {
			return w, st, err
		}
		if _, err := watch.finished(ctx, &finishRule{settle: settleWait}); err != nil {
			return w, st, g.watchError(ctx, err)
		}
	}
	if g.checkKeys == nil {
		// Without the chat's transcript, only a copy of the reply before
		// tells the new one from it.
		prev, err := s.copyBy(ctx, g.copyKeys, "copy")
		if err != nil && !isNothingCopied(err) {
			return w, st, err
		}
		st.Prev, st.PrevKnown = fingerprintText(prev), true
		g.logf("before the prompt, the copy action gives %d bytes", len(prev))
	}

	text, notes := composedPrompt(g.win.Composer, t.Prompt)
	for _, n := range notes {
		t.note("%s", n)
	}
	if err := setClipboard(ctx, text); err != nil {
		return w, st, fmt.Errorf("cannot put the prompt on the clipboard: %w", err)
	}
	g.logf("clipboard holds the prompt (%d bytes)", len(text))
	// Select all before pasting, so whatever an earlier failed attempt
	// left in the input box is replaced rather than sent along.
	if err := s.clickAt(g.win.Input.X, g.win.Input.Y, "input box"); err != nil {
		return w, st, err
	}
	// The chat at rest with an empty input box: how it looks again once
	// the prompt is sent and the model has finished (a composer that grows
	// with its text can move the send button).
	empty, err := watch.frame()
	if err != nil {
		return w, st, g.watchError(ctx, err)
	}
	if g.win.Busy != nil {
		st.Idle = fingerprint(empty.busy)
	}
	if err := s.key(mustChord("mod+a")); err != nil {
		return w, st, err
	}
	if err := s.key(mustChord("mod+v")); err != nil {
		return w, st, err
	}
	if err := t.stage(StageInjected); err != nil {
		return w, st, err
	}
	// Wait for the paste to show before pressing the submit key: the
	// input box emptying proves a submission only once the paste was seen
	// in it, and a chat that shows no other sign (no echo, no busy
	// indicator, a model thinking) would otherwise look as if the key was
	// lost, and get it pressed again.
	pasted, err := watch.within(ctx, pasteWait, func(l look) bool { return !bytes.Equal(l.input, empty.input) })
	if err != nil {
		return w, st, g.watchError(ctx, err)
	}
	if !pasted {
		g.logf("the paste did not show around the input box within %s; relying on other signs of submission", pasteWait)
	}
	if pasted && g.win.Composer == config.ComposerMonaco {
		// A Monaco editor draws a paste over several frames and drops a
		// submit key pressed while it still lays the text out: wait
		// for the input box to hold still first.
		var last []byte
		var since time.Time
		if _, err := watch.within(ctx, pasteWait, func(l look) bool {
			if !bytes.Equal(l.input, last) {
				last, since = l.input, time.Now()
				return false
			}
			return time.Since(since) >= monacoPasteSettle
		}); err != nil {
			return w, st, g.watchError(ctx, err)
		}
	}
	before, err := watch.frame()
	if err != nil {
		return w, st, g.watchError(ctx, err)
	}
	for attempt := 1; ; attempt++ {
		if err := s.key(g.submit); err != nil {
			return w, st, err
		}
		var signal string
		ok, err := watch.within(ctx, g.submitWait, func(l look) bool {
			// A copy route from the input box focuses the last reply,
			// which the click into the input box then unfocuses: the
			// transcript moves by the driver's own doing.
			signal = submissionSignal(before, l, empty.input, pasted, g.win.CopyFromInput)
			return signal != ""
		})
		if err != nil {
			return w, st, g.watchError(ctx, err)
		}
		if ok {
			g.logf("submitted (%s after %s, attempt %d)", signal, g.submit, attempt)
			break
		}
		if attempt == 2 {
			return w, st, fmt.Errorf("%w: neither the input box, the busy indicator nor the transcript changed within %s of pressing %s, twice", ErrNotSubmitted, g.submitWait, g.submit)
		}
		g.logf("nothing changed within %s; pressing %s once more", g.submitWait, g.submit)
	}
	if err := t.stage(StageSubmitted); err != nil {
		return w, st, err
	}
	return w, st, nil
}

// submissionSignal names the sign that the prompt was sent, comparing the
// chat now with how it looked with the prompt pasted, or "" if there is
// none yet. Any of them will do, since chats differ in which they show: the
// input box back to its empty look, the busy indicator changing, or the
// transcript changing, unless transcriptMoves: a chat whose transcript
// changes on its own when the input box takes the focus (VS Code's last
// reply loses its focus outline) shows nothing by it.
func submissionSignal(before, now look, emptyInput []byte, pasteSeen, transcriptMoves bool) string {
	switch {
	case pasteSeen && now.input != nil && bytes.Equal(now.input, emptyInput):
		return "the input box emptied"
	case now.busy != nil && !bytes.Equal(now.busy, before.busy):
		return "the busy indicator changed"
	case !transcriptMoves && !bytes.Equal(now.reply, before.reply):
		return "the transcript changed"
	}
	return ""
}

// copyReply is step 6: under the lock, copy what the chat offers as its
// last reply, and with check keys, when fresh says the copy may be the
// reply, the chat's whole transcript too.
func (g *GUI) copyReply(ctx context.Context, w windowID, fresh func(reply string) bool) (reply, transcript string, err error) {
	s, err := g.begin(ctx)
	if err != nil {
		return "", "", err
	}
	defer s.end(ctx, &err)
	if s.w != w {
		return "", "", fmt.Errorf("%w: the window changed during the turn", ErrWindowNotFound)
	}
	if reply, err = s.copyBy(ctx, g.copyKeys, "copy"); err != nil || g.checkKeys == nil || !fresh(reply) {
		return reply, "", err
	}
	if transcript, err = s.copyBy(ctx, g.checkKeys, "check"); err != nil {
		return "", "", fmt.Errorf("cannot copy the chat's transcript to check the reply: %w", err)
	}
	return reply, transcript, nil
}

// copyBy presses the copy button, or keys, with a sentinel on the
// clipboard, so that a copy that did nothing is noticed, and returns what
// was copied. what names the keys in messages.
func (s *session) copyBy(ctx context.Context, keys []chord, what string) (string, error) {
	sentinel := newSentinel()
	if err := setClipboard(ctx, sentinel); err != nil {
		return "", fmt.Errorf("cannot prepare the clipboard for the reply: %w", err)
	}
	if p := s.g.win.Copy; p != nil && what == "copy" {
		if err := s.clickAt(p.X, p.Y, "copy button"); err != nil {
			return "", err
		}
	} else if err := s.pressRoute(keys); err != nil {
		return "", err
	}
	got, ok := awaitClipboardChange(ctx, sentinel, copyWait)
	if !ok {
		return "", fmt.Errorf("%w: the clipboard did not change within %s of the %s keys", ErrNothingCopied, copyWait, what)
	}
	return got, nil
}

// pressRoute presses keys, from the input box when the window says so.
// The pointer then moves to the window's top-left corner: a menu the keys
// open must not lie under it, since the item under the pointer takes the
// keyboard's place in it.
func (s *session) pressRoute(keys []chord) error {
	if s.g.win.CopyFromInput {
		if err := s.clickAt(s.g.win.Input.X, s.g.win.Input.Y, "input box"); err != nil {
			return err
		}
		origin, err := s.g.origin(s.w)
		if err != nil {
			return err
		}
		if b, err := s.g.d.bounds(s.w); err == nil {
			origin = b.Min
		}
		if err := s.g.d.move(origin.Add(image.Pt(1, 1))); err != nil {
			return fmt.Errorf("cannot move the pointer off the chat: %w", err)
		}
	}
	for _, k := range keys {
		if err := s.key(k); err != nil {
			return err
		}
	}
	return nil
}

// recopyWait is the pause before a keys route copies again after a copy
// that was not yet this turn's reply.
const recopyWait = 250 * time.Millisecond

// maxRefusals is how many copies that fail the check a turn takes before
// it gives up.
const maxRefusals = 3

// monacoPasteSettle is how long a Monaco input box must stay unchanged
// after a paste shows in it before the submit key is pressed.
const monacoPasteSettle = 100 * time.Millisecond

// copyWait bounds waiting for a copy action to reach the clipboard. A copy
// that does nothing (no reply yet) is normal before a turn, so this is
// short, but generous to a loaded desktop: a measured copy took about
// 45 ms, and a copy that lands after this is taken for nothing.
const copyWait = time.Second

func isNothingCopied(err error) bool { return errors.Is(err, ErrNothingCopied) }
