package cursor

import (
	"context"
	"errors"
	"fmt"
	"image"
)

// session is one stretch of a turn during which this process owns the
// mouse, keyboard and clipboard: the input lock is held, the user's clipboard
// is saved, and the agent's window is active.
type session struct {
	g    *GUI
	w    windowID
	clip savedClipboard
	// clicked says a click went out that the app may not have taken yet:
	// a key must wait for it (settle).
	clicked bool
	// lateCopy says a copy action gave nothing in time, and may still
	// write the clipboard (see lateguard.go).
	lateCopy bool
	// lateKeys says that action was keys, whose menu item can run after
	// the wait: where the clipboard cannot tell who takes it over, the
	// user's text is put back blindly for a while, holding the lock.
	lateKeys bool
}

// begin takes the lock, saves the clipboard, and finds, activates and
// confirms the window. On error nothing is held.
func (g *GUI) begin(ctx context.Context) (*session, error) {
	if err := g.lock.Acquire(ctx); err != nil {
		return nil, err
	}
	// A guard still holding the user's text from the last turn gives it
	// to this one, which puts it back at its end and guards it again; a
	// copy of the chat's found instead came as the guard ended (it yields
	// to a turn holding the lock).
	text, late := g.stopLateGuard(false)
	s := &session{g: g, clip: saveClipboard(), lateCopy: late}
	if late && s.clip.text != text && g.said.holds(s.clip.text) {
		s.clip = savedClipboard{text: text, ok: true}
	}
	if u := g.unsure; u != nil && (!s.clip.ok || s.clip.text != u.copy) {
		g.unsure = nil // the clipboard moved on: the person's doing
	}
	w, err := g.find()
	if err == nil {
		s.w = w
		err = s.activate(ctx)
	}
	if err != nil {
		s.end(ctx, &err)
		return nil, err
	}
	return s, nil
}

// end restores the clipboard and releases the lock, adding any failure to
// *err.
func (s *session) end(ctx context.Context, err *error) {
	// Restore even when the turn's context has ended: the user's clipboard
	// matters more than the deadline.
	ctx = context.WithoutCancel(ctx)
	if u := s.g.unsure; u != nil && s.clip.ok && s.clip.text == u.copy && s.g.said.holds(u.copy) {
		// A copy of this turn gave the text that ended the last guard:
		// that was the chat's late copy, not the person's.
		s.g.logf("the copy that ended the guard was the chat's late one; the user's text is put back")
		s.clip, s.g.unsure = savedClipboard{text: u.person, ok: true}, nil
	}
	var rerr error
	if !s.lateCopy {
		rerr = s.clip.restore(ctx)
	} else if guarded, err := s.g.guardLateCopy(s.clip.text, s.w); guarded {
		rerr = err
	} else if s.lateKeys {
		rerr = s.clip.restoreGuarded(ctx, copyWait)
	} else {
		rerr = s.clip.restore(ctx)
	}
	lerr := s.g.lock.Release()
	*err = errors.Join(*err, rerr, lerr)
}

func (s *session) activate(ctx context.Context) error {
	actx, cancel := context.WithTimeout(ctx, activateWait)
	defer cancel()
	if err := s.g.d.activate(actx, s.w); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("%w: it did not take the keyboard focus within %s: %v", ErrWindowNotConfirmed, activateWait, err)
	}
	s.g.logf("window %#x active and focused", s.w)
	return nil
}

// confirm is asked before every keystroke and click.
func (s *session) confirm() error {
	ok, err := s.g.d.focused(s.w)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrWindowNotConfirmed, err)
	}
	if !ok {
		exists, _ := s.g.d.exists(s.w)
		if !exists {
			return fmt.Errorf("%w: the window was closed during the turn", ErrWindowNotFound)
		}
		return fmt.Errorf("%w: another window took the focus; no key was sent", ErrWindowNotConfirmed)
	}
	return nil
}

func (s *session) key(c chord) error { return s.keyAfter(c, nil) }

// keyAfter presses c, calling before (if set) once the window is confirmed
// and right before the key goes: a record that must precede a key that may
// send the prompt is then written only when the key is sure to be pressed.
func (s *session) keyAfter(c chord, before func() error) error {
	if s.clicked {
		if err := s.settle(); err != nil {
			return err
		}
	}
	if err := s.confirm(); err != nil {
		return err
	}
	if before != nil {
		if err := before(); err != nil {
			return err
		}
	}
	if err := s.g.d.key(c); err != nil {
		return fmt.Errorf("cannot press %s: %w", c, err)
	}
	return nil
}

// keys presses the chords named, in turn.
func (s *session) keys(names ...string) error {
	for _, n := range names {
		if err := s.key(mustChord(n)); err != nil {
			return err
		}
	}
	return nil
}

// clickAt clicks a configured position, which must lie inside the window.
func (s *session) clickAt(x, y int, what string) error {
	origin, err := s.g.origin(s.w)
	if err != nil {
		return err
	}
	p := origin.Add(image.Pt(x, y))
	if b, err := s.g.d.bounds(s.w); err == nil && !p.In(b) {
		return fmt.Errorf("%w: the %s at %d,%d is outside the window (%v); recalibrate", ErrWindowNotConfirmed, what, p.X, p.Y, b)
	}
	if err := s.confirm(); err != nil {
		return err
	}
	if err := s.g.d.click(p); err != nil {
		return fmt.Errorf("cannot click the %s: %w", what, err)
	}
	s.clicked = true
	return nil
}

// corner is the window's top-left corner, where the pointer is kept out
// of the way of what keys open: a menu under the pointer gives the item
// under it the keyboard's place.
func (s *session) corner() (image.Point, error) {
	origin, err := s.g.origin(s.w)
	if err != nil {
		return image.Point{}, err
	}
	if b, err := s.g.d.bounds(s.w); err == nil {
		origin = b.Min
	}
	return origin.Add(image.Pt(1, 1)), nil
}

// settle waits until the app took the last click (see desktop.settle).
func (s *session) settle() error {
	p, err := s.corner()
	if err != nil {
		return err
	}
	if err := s.g.d.settle(p); err != nil {
		return fmt.Errorf("cannot move the pointer off the chat: %w", err)
	}
	s.clicked = false
	return nil
}

// park moves the pointer to the window's corner, once the app took the
// last click.
func (s *session) park() error {
	if s.clicked {
		if err := s.settle(); err != nil {
			return err
		}
	}
	p, err := s.corner()
	if err != nil {
		return err
	}
	if err := s.g.d.move(p); err != nil {
		return fmt.Errorf("cannot move the pointer off the chat: %w", err)
	}
	return nil
}
