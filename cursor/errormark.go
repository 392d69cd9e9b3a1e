package cursor

import (
	"image"
	"image/color"
)

// VS Code ends a reply that failed or was cancelled with a notification
// inside it whose icon is a red ring with a cross in it (its "error"
// codicon, drawn in the theme's error colour: #F85149 in the Modern
// themes, #F14C4C or #F48771 in the older dark ones, #E51400 in light
// ones), and neither of its copies ("Copy", "Copy All") says so: they give
// what was streamed before the end. So a GUI seat on such an app looks for
// the icon at the reply's end before it passes a reply on.
//
// findErrorMark is that look: a compact cluster of saturated red pixels,
// about the icon's size, in img. Red text (a string literal in a code
// block) forms clusters as wide as its words and as low as a line, and
// Markdown has no red of its own, so a cluster must be roughly square and
// the icon's size. It returns where the cluster lies in img.
func findErrorMark(img *image.RGBA) (image.Rectangle, bool) {
	b := img.Bounds()
	seen := make([]bool, b.Dx()*b.Dy())
	at := func(p image.Point) int { return (p.Y-b.Min.Y)*b.Dx() + p.X - b.Min.X }
	red := func(p image.Point) bool { return p.In(b) && errorRed(img.RGBAAt(p.X, p.Y)) }
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			p := image.Pt(x, y)
			if seen[at(p)] || !red(p) {
				continue
			}
			box, n := cluster(p, red, func(q image.Point) bool {
				if seen[at(q)] {
					return false
				}
				seen[at(q)] = true
				return true
			})
			if markShaped(box, n) {
				return box, true
			}
		}
	}
	return image.Rectangle{}, false
}

// cluster gathers the red pixels reachable from p with gaps of up to
// markGap pixels (an anti-aliased ring breaks up at small sizes) and
// returns their bounding box and count. first marks a pixel taken and
// says whether it was new.
func cluster(p image.Point, red func(image.Point) bool, first func(image.Point) bool) (image.Rectangle, int) {
	first(p)
	queue := []image.Point{p}
	box := image.Rectangle{Min: p, Max: p.Add(image.Pt(1, 1))}
	n := 0
	for len(queue) > 0 {
		c := queue[0]
		queue = queue[1:]
		n++
		box = box.Union(image.Rectangle{Min: c, Max: c.Add(image.Pt(1, 1))})
		for dy := -markGap; dy <= markGap; dy++ {
			for dx := -markGap; dx <= markGap; dx++ {
				q := c.Add(image.Pt(dx, dy))
				if red(q) && first(q) {
					queue = append(queue, q)
				}
			}
		}
	}
	return box, n
}

// The icon is 16 pixels square at 100% zoom; these bounds take zooms
// from about 70% to 125%. Measured on VS Code 1.100: a 14×14 box of 46
// red pixels.
const (
	markGap     = 2
	markMinSide = 10
	markMaxSide = 22
	markMinFill = 25 // pixels: a ring, not a dot
)

func markShaped(box image.Rectangle, n int) bool {
	w, h := box.Dx(), box.Dy()
	return w >= markMinSide && h >= markMinSide && w <= markMaxSide && h <= markMaxSide &&
		n >= markMinFill && abs(w-h) <= 3
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// errorRed says whether c is a bright, saturated red, as error colours
// are, and code's string colours (#A31515, #CE9178) are not: brightest in
// red, at least 190 of 255, saturation of at least 45%, hue within
// -20°..+25° of red.
func errorRed(c color.RGBA) bool {
	r, g, b := int(c.R), int(c.G), int(c.B)
	hi, lo := r, min(g, b)
	if g > hi || b > hi || hi < 190 {
		return false
	}
	if (hi-lo)*100 < 45*hi {
		return false
	}
	hue := 60 * float64(g-b) / float64(hi-lo)
	return hue > -20 && hue < 25
}
