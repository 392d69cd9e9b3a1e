package cursor

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"
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
	g.said.addPrompt(t.Prompt)
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
	} else if w, st, err = g.send(ctx, t); err != nil {
		return "", err
	}
	reply, err := g.await(ctx, w, t, st)
	if err != nil {
		return "", err
	}
	if err := g.refuseErrorMark(w, t, len(reply)); err != nil {
		return "", err
	}
	if err := t.stage(StageReplied); err != nil {
		return "", err
	}
	return reply, nil
}

// await waits until the model has finished and the copy action gives a new
// reply, and returns that reply.
func (g *GUI) await(ctx context.Context, w windowID, t Turn, st turnState) (string, error) {
	prompt := t.Prompt
	pasted, _ := composedPrompt(g.win.Composer, prompt)
	refused := 0
	watch := g.watcher(w, false)
	rule := &finishRule{idle: st.Idle, settle: g.quiet}
	if g.win.Busy == nil || st.Idle == "" {
		rule.idle, rule.settle = "", g.maxPause
	}
	// With a busy indicator and a copy checked against the transcript,
	// the quiet period runs while the reply is copied: the copy is taken
	// as soon as the indicator rests after the model worked, and kept only
	// if the indicator is still at rest once the period is over. What the
	// chat draws meanwhile does not matter, since the transcript check
	// proves the copy is the whole of the chat's last reply as the app
	// holds it. Once a copy is refused or gives nothing, the chat is let
	// settle before the next as without check keys: VS Code, busy drawing
	// a long reply, listed the next one late.
	early := rule.idle != "" && g.checkKeys != nil
	var busy *watcher
	switch {
	case early:
		busy = g.busyWatcher(w)
		g.logf("waiting for the busy indicator to rest; the reply is copied then and kept if it rests %s", rule.settle)
	case rule.idle != "":
		g.logf("waiting for the busy indicator to rest, then %s unchanged", rule.settle)
	default:
		g.logf("waiting for the reply region to stay unchanged for %s (no busy indicator)", rule.settle)
	}
	// stillOnly says why the reply's end is known by stillness alone, for
	// the receipt: a model that paused longer would have had it cut.
	stillOnly := ""
	switch {
	case g.win.Busy == nil:
		stillOnly = "no busy indicator is calibrated (window.busy)"
	case st.Idle == "":
		stillOnly = "the turn was resumed without a record of the busy indicator at rest"
	}
	started := false // the model was seen working, or the chat settled without it
	for {
		var rested time.Time
		if early {
			var seen bool
			var err error
			if rested, seen, err = g.awaitRest(ctx, watch, busy, rule, started); err != nil {
				return "", g.watchError(ctx, err)
			}
			if !started && !seen {
				stillOnly = neverBusy
			}
			started = true
		} else if _, err := watch.finished(ctx, rule); err != nil {
			return "", g.watchError(ctx, err)
		}
		got, transcript, copyErr := g.copyReply(ctx, w, func(got string) bool { return st.stale(prompt, got) == "" })
		if copyErr != nil && !isNothingCopied(copyErr) {
			return "", copyErr
		}
		if early {
			held, err := busy.restHeld(ctx, rule.idle, rested.Add(rule.settle))
			if err != nil {
				return "", g.watchError(ctx, err)
			}
			if !held {
				g.logf("the busy indicator left its rest within %s; the copy is dropped", rule.settle)
				if stillOnly == neverBusy {
					stillOnly = "" // it showed the model at work after all
				}
				continue
			}
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
				rule, early = &finishRule{idle: rule.idle, settle: rule.settle}, false
				continue
			}
		}
		if why == "" {
			g.logf("reply copied (%d bytes)", len(got))
			if stillOnly != "" {
				t.note("the reply's end was known only by the chat keeping still for %s: %s, and a longer pause of the model would have cut the reply", g.maxPause, stillOnly)
			}
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
			rule, early = &finishRule{idle: rule.idle, settle: rule.settle}, false
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

// neverBusy is why a reply's end was known by stillness alone when the
// busy indicator never showed the model at work.
const neverBusy = "the busy indicator never showed the model at work"

// awaitRest waits for the busy indicator to rest once the model worked,
// and returns since when it rests, and whether it was seen busy: whole
// looks at the chat until the
// indicator is seen busy, then looks at the indicator alone until it
// rests. A model too quick to be seen working ends the whole looks too,
// once the indicator is at rest and the chat unchanged for gui.max_pause:
// a copy is never taken while the app may still be starting the reply
// (VS Code once took 0.4 s from emptying its input box to showing its
// stop button), when the copy keys could land elsewhere. Once started
// (a copy was taken after such a wait), only the indicator is watched.
func (g *GUI) awaitRest(ctx context.Context, watch, busy *watcher, rule *finishRule, started bool) (time.Time, bool, error) {
	if !started {
		seen := false
		r := &finishRule{idle: rule.idle, settle: g.maxPause}
		if _, err := watch.until(ctx, func(now time.Time, l look) (bool, string) {
			if fingerprint(l.busy) != rule.idle {
				seen = true
				return true, ""
			}
			return r.observe(now, l)
		}); err != nil {
			return time.Time{}, false, err
		}
		if !seen {
			return r.since, false, nil
		}
	}
	if _, err := busy.finished(ctx, &finishRule{idle: rule.idle}); err != nil {
		return time.Time{}, false, err
	}
	return busy.now(), true, nil
}

// send is steps 1–5 of the turn: under the input lock, note what the copy
// action gives now (where no transcript tells the reply new), paste the
// prompt into the confirmed window and prove it was submitted.
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
	// The input box as the paste finds it, the click taken.
	base, err := watch.frame()
	if err != nil {
		return w, st, g.watchError(ctx, err)
	}
	if err := s.key(mustChord("mod+v")); err != nil {
		return w, st, err
	}
	if err := t.stage(StageInjected); err != nil {
		return w, st, err
	}
	pasted, err := g.awaitPaste(ctx, s, watch, empty, base, text)
	if err != nil {
		return w, st, err
	}
	if g.win.Composer != ComposerMonaco {
		// A copy of the app's that landed late (the reply's, asked for
		// before the prompt, on a starved desktop) takes the clipboard
		// from the prompt, and the paste may have been of it. Where the
		// clipboard tells, such a paste is never submitted; the next
		// attempt pastes over it. A clipboard manager that took the
		// clipboard over with the prompt itself, to keep it, did no harm.
		// (A Monaco composer's own copy proved what it holds.)
		clip := systemClipboard()
		if replaced, known := clip.replaced(); known && replaced {
			if now, err := clip.read(ctx); err != nil || now != text {
				return w, st, fmt.Errorf("%w: another copy took the clipboard from the prompt around the paste (the chat's own copy, landing late?), so what was pasted is not known to be the prompt", ErrNotSubmitted)
			}
		}
	}
	before, err := watch.frame()
	if err != nil {
		return w, st, g.watchError(ctx, err)
	}
	// What a resume needs is on record before the key that may send the
	// prompt, and so is the press itself: a runner that dies between the
	// press and its proof resumes the turn rather than paste again.
	if t.OnResumeState != nil {
		if err := t.OnResumeState(st.encode()); err != nil {
			return w, st, fmt.Errorf("turn stopped before the prompt was sent: %w", err)
		}
	}
	pressed := func() error { return t.stage(StagePressed) }
	for attempt := 1; ; attempt++ {
		if err := s.keyAfter(g.submit, pressed); err != nil {
			return w, st, err
		}
		pressed = nil
		// After the second press the chat gets longer to show it: an app
		// starved of CPU may have taken the first and be slow to draw it,
		// and a third press could send what the input box holds by then.
		wait := g.submitWait
		if attempt == 2 {
			wait = submitSlowWaits * g.submitWait
		}
		var signal, left string
		ok, err := watch.within(ctx, wait, func(l look) bool {
			// A copy route from the input box focuses the last reply,
			// which the click into the input box then unfocuses: the
			// transcript moves by the driver's own doing.
			signal = submissionSignal(before, l, empty.input, pasted, g.win.CopyFromInput)
			return signal != ""
		})
		if err != nil {
			return w, st, g.watchError(ctx, err)
		}
		if !ok && pasted {
			// A reply that comes and goes between two looks shows
			// nothing to see, but the composer knows whether it still
			// holds the prompt; pressing again blind could send it twice.
			if left, err = s.promptLeft(ctx, text); err != nil {
				return w, st, err
			}
			if ok = left == composerEmptied; ok {
				signal = "the input box's copy no longer holds the prompt"
			}
		}
		if ok {
			g.logf("submitted (%s after %s, attempt %d)", signal, g.submit, attempt)
			break
		}
		if attempt == 2 {
			return w, st, notSubmitted(left, g.submitWait, g.submit, wait)
		}
		g.logf("nothing changed within %s; pressing %s once more", g.submitWait, g.submit)
	}
	if err := t.stage(StageSubmitted); err != nil {
		return w, st, err
	}
	return w, st, nil
}

// notSubmitted is the error of a prompt whose submit key was pressed twice
// with no sign of it taken: the prompt was not sent only if the input
// box's own copy (left, a composerVerdict) still holds it.
func notSubmitted(left string, wait time.Duration, key chord, again time.Duration) error {
	if left == composerHolds {
		return fmt.Errorf("%w: the input box still holds the prompt after pressing %s twice, and neither the busy indicator nor the transcript changed", ErrNotSubmitted, key)
	}
	return fmt.Errorf("%w: neither the input box, the busy indicator nor the transcript changed within %s of pressing %s, nor within %s of pressing it again", ErrSubmitUnknown, wait, key, again)
}

// submitSlowWaits is how many gui.submit periods the chat has to show the
// second press of the submit key, as the cdp driver gives a page that took
// the first (submitTakenWaits).
const submitSlowWaits = submitTakenWaits

// awaitPaste waits for the paste to show before the submit key is pressed,
// and says whether it was seen: the input box emptying proves a submission
// only once the paste was seen in it, and a chat that shows no other sign
// (no echo, no busy indicator, a model thinking) would otherwise look as
// if the key was lost, and get it pressed again. base is how the input box
// looked right before the paste keys.
//
// A Monaco composer takes a paste only once its paste handlers have run
// (VS Code reads the clipboard twice for one paste, and applies what the
// second read gave), which can be a while after the paste drew something
// around the input box, and a submit key pressed before finds it empty (VS
// Code drops it: "Rejected empty message"). Where the clipboard tells when
// apps read it and when they replace it, the composer's own copy of its
// text proves it holds the prompt; elsewhere the input box must hold still
// for a moment.
func (g *GUI) awaitPaste(ctx context.Context, s *session, watch *watcher, empty, base look, text string) (bool, error) {
	if g.win.Composer == ComposerMonaco {
		clip := systemClipboard()
		if read, known := clip.pasted(ctx, s.g.pasteReadWait(), pasteReadSettle); known {
			if !read {
				return false, fmt.Errorf("%w: the chat did not read the prompt from the clipboard within %s of the paste keys", ErrNotSubmitted, s.g.pasteReadWait())
			}
			return true, s.proveComposer(ctx, g.inputWatcher(s.w), clip, base, text)
		}
	}
	pasted, err := watch.within(ctx, pasteWait, func(l look) bool { return !bytes.Equal(l.input, empty.input) })
	if err != nil {
		return false, g.watchError(ctx, err)
	}
	if !pasted {
		g.logf("the paste did not show around the input box within %s; relying on other signs of submission", pasteWait)
		return false, nil
	}
	if g.win.Composer == ComposerMonaco {
		var last []byte
		var since time.Time
		if _, err := watch.within(ctx, pasteWait, func(l look) bool {
			if !bytes.Equal(l.input, last) {
				last, since = l.input, watch.now()
				return false
			}
			return watch.now().Sub(since) >= monacoPasteSettle
		}); err != nil {
			return false, g.watchError(ctx, err)
		}
	}
	return true, nil
}

// proveComposer copies the composer's text (select all, copy) until the
// copy is text: the composer then holds the prompt exactly, whatever it
// draws. Each copy waits for the input box to look other than base (the
// composer drew the paste) or pasteWait. The prompt stays on the clipboard
// until then, since the paste reads it more than once; a copy that was not
// the prompt took its place there, so the prompt is pasted again, over
// whatever the composer holds.
func (s *session) proveComposer(ctx context.Context, watch *watcher, clip clipboardBackend, base look, text string) error {
	deadline := watch.now().Add(s.g.composerProofWait())
	for attempt := 1; ; attempt++ {
		if _, err := watch.within(ctx, pasteWait, func(l look) bool { return !bytes.Equal(l.input, base.input) }); err != nil {
			return s.g.watchError(ctx, err)
		}
		if err := s.keys("mod+a", "mod+c"); err != nil {
			return err
		}
		got, copied, _ := clip.taken(ctx, composerCopyWait)
		if copied && got == text {
			s.g.logf("the input box holds the prompt (its copy, attempt %d)", attempt)
			return nil
		}
		if !watch.now().Before(deadline) {
			what := "nothing"
			if copied {
				what = fmt.Sprintf("%d bytes, not the %d of the prompt", len(got), len(text))
			}
			return fmt.Errorf("%w: the input box's copy still gave %s %s after the paste", ErrNotSubmitted, what, s.g.composerProofWait())
		}
		if !copied {
			// The prompt is still on the clipboard: copy again shortly.
			if err := watch.sleep(ctx, composerRecopy); err != nil {
				return s.g.watchError(ctx, err)
			}
			continue
		}
		s.g.logf("the input box's copy gave %d bytes, not the prompt; pasting it again", len(got))
		if err := setClipboard(ctx, text); err != nil {
			return fmt.Errorf("cannot put the prompt on the clipboard: %w", err)
		}
		if err := s.keys("mod+a"); err != nil {
			return err
		}
		var err error
		if base, err = watch.frame(); err != nil {
			return s.g.watchError(ctx, err)
		}
		if err := s.keys("mod+v"); err != nil {
			return err
		}
		if read, _ := clip.pasted(ctx, s.g.pasteReadWait(), pasteReadSettle); !read {
			return fmt.Errorf("%w: the chat did not read the prompt from the clipboard within %s of the paste keys", ErrNotSubmitted, s.g.pasteReadWait())
		}
	}
}

// promptLeft copies the composer's text (select all, copy) where the
// clipboard tells when an app replaces it, and returns its
// composerVerdict: the app's own word on what its input box holds, which
// no redraw missed under load can hide. Where the copy gave nothing (keys
// lost, or a composer that copies nothing when empty) pressing the submit
// key again is the only way on.
func (s *session) promptLeft(ctx context.Context, text string) (string, error) {
	clip := systemClipboard()
	if err := setClipboard(ctx, newSentinel()); err != nil {
		return "", fmt.Errorf("cannot prepare the clipboard to copy the input box: %w", err)
	}
	if err := s.keys("mod+a", "mod+c"); err != nil {
		return "", err
	}
	got, copied, known := clip.taken(ctx, copyWait)
	verdict := composerVerdict(text, got, copied && known)
	s.g.logf("the input box's copy: %s", verdict)
	return verdict, nil
}

// composerVerdict says what a copy of the composer taken after the
// submit key tells of the prompt.
func composerVerdict(prompt, copied string, ok bool) string {
	switch {
	case !ok:
		return composerUnknown
	case copied == prompt:
		return composerHolds
	}
	return composerEmptied
}

const (
	composerUnknown = "gave nothing"
	composerHolds   = "still the prompt"
	composerEmptied = "no longer the prompt"
)

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
	} else if err := s.pressRoute(keys, what == "copy"); err != nil {
		return "", err
	}
	got, ok := awaitClipboardChange(ctx, sentinel, copyWait)
	if !ok {
		// The app may yet take the click or the keys, or run a menu's
		// item, and its copy land on the user's text.
		s.lateCopy = true
		s.lateKeys = s.lateKeys || s.g.win.Copy == nil || what != "copy"
		return "", fmt.Errorf("%w: the clipboard did not change within %s of the %s keys", ErrNothingCopied, copyWait, what)
	}
	s.g.said.addCopy(got)
	return got, nil
}

// pressRoute presses keys, from the input box when the window says so and
// first is set: the check keys follow the copy keys from where they left
// the keyboard (VS Code: on the reply, its menu closed). The pointer then
// waits in the window's corner (see park).
func (s *session) pressRoute(keys []chord, first bool) error {
	if s.g.win.CopyFromInput && first {
		if err := s.clickAt(s.g.win.Input.X, s.g.win.Input.Y, "input box"); err != nil {
			return err
		}
		if err := s.park(); err != nil {
			return err
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
// after a paste shows in it before the submit key is pressed, where the
// clipboard cannot tell when the app read the prompt.
const monacoPasteSettle = 100 * time.Millisecond

// Timings of proving a Monaco composer holds the prompt: how long the app
// may take to read the prompt from the clipboard after the paste keys, at
// least (gui.submit, the app's time to react, where longer), how long
// after a read no app may ask for it before the composer is copied (VS
// Code reads it twice for one paste, 10 ms apart, and applies what the
// second gave), how long each copy of the composer's text may take, the
// pause before another where a copy gave nothing, and how long it may
// take in all, at least (a second more than gui.submit, where longer).
const (
	minPasteReadWait     = 2 * time.Second
	pasteReadSettle      = 20 * time.Millisecond
	composerCopyWait     = 200 * time.Millisecond
	composerRecopy       = 10 * time.Millisecond
	minComposerProofWait = 3 * time.Second
)

func (g *GUI) pasteReadWait() time.Duration { return max(minPasteReadWait, g.submitWait) }

func (g *GUI) composerProofWait() time.Duration {
	return max(minComposerProofWait, g.submitWait+time.Second)
}

// copyWait bounds waiting for a copy action to reach the clipboard. A copy
// that does nothing (no reply yet) is normal before a turn, so this is
// short, but generous to a loaded desktop: a measured copy took about
// 45 ms, and a copy that lands after this is taken for nothing.
const copyWait = time.Second

func isNothingCopied(err error) bool { return errors.Is(err, ErrNothingCopied) }
