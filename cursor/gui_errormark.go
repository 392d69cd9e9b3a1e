package cursor

import (
	"bytes"
	"fmt"
	"image"
)

// refuseErrorMark, for a window whose app marks a reply it ended in an
// error or a cancel (window.error_mark), looks for that mark in the reply
// region (see findErrorMark) once the reply is copied, and fails with
// ErrNoReply where it shows: the copied bytes are what came before the
// end. It looks only where the chat's end is in view (endInView), as it
// is after a reply shorter than the view: the chat leaves a long reply
// scrolled to its start, and the wheel that would bring its end into
// view is too slow and uncertain in the apps measured, so there the turn
// is noted as unchecked rather than passed on as checked.
func (g *GUI) refuseErrorMark(w windowID, t Turn, copied int) error {
	if !g.win.ErrorMark || g.win.Reply == nil {
		return nil
	}
	origin, err := g.origin(w)
	if err != nil {
		return err
	}
	r := g.win.Reply
	img, err := g.d.shot(rectAt(origin, r.X, r.Y, r.W, r.H))
	if err != nil {
		return fmt.Errorf("cannot look for the chat's error mark: %w", err)
	}
	if !endInView(img) {
		t.note("%s", errorMarkUnseen)
		g.logf("the chat's end is not in view; no look for an error mark")
		return nil
	}
	if box, ok := findErrorMark(img); ok {
		at := box.Min.Sub(img.Bounds().Min)
		return fmt.Errorf("%w: the chat shows its error mark at the end of the reply (at %d,%d in the reply region): the app ended the reply with an error or a cancel, so the %d bytes copied are not a finished reply", ErrNoReply, at.X, at.Y, copied)
	}
	g.logf("no error mark at the end of the reply")
	return nil
}

// errorMarkUnseen is the turn's note where the chat's end is not in view.
const errorMarkUnseen = "the reply ran past the chat's view, so the seat could not see whether the app ended it in an error or a cancel"

// endBand is how many empty rows at the reply region's foot show the
// chat's end in view: VS Code leaves the room below a short last reply
// empty, but for the focused reply's outline, a line of one colour. The
// rows' right-hand endButton pixels are left out: VS Code floats its
// scroll-to-bottom button there, over the empty room too.
const (
	endBand   = 48
	endButton = 48
)

// endInView says whether each of img's last endBand rows, less its
// right-hand endButton pixels, is all one colour: no more of the chat
// lies below.
func endInView(img *image.RGBA) bool {
	b := img.Bounds()
	if b.Dy() < endBand || b.Dx() <= endButton {
		return false
	}
	for y := b.Max.Y - endBand; y < b.Max.Y; y++ {
		row := img.Pix[img.PixOffset(b.Min.X, y):img.PixOffset(b.Max.X-endButton, y)]
		for i := 4; i < len(row); i += 4 {
			if !bytes.Equal(row[i:i+4], row[:4]) {
				return false
			}
		}
	}
	return true
}
