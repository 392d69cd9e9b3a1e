package cursor

import (
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"os"
	"path/filepath"
	"testing"
)

// The screenshots are VS Code 1.100's chat (Light Modern), as a GUI seat's
// reply region saw it: a reply ended by an error with the chat's end in
// view, a 40 KB reply and a Markdown reply with code, tables and emoji,
// both running past the view.
func TestErrorMarkOnRealScreens(t *testing.T) {
	for _, c := range []struct {
		file       string
		inView     bool
		mark       bool
		markAround image.Point
	}{
		{"error-in-view.png", true, true, image.Pt(21, 181)},
		{"long-reply.png", false, false, image.Point{}},
		{"markdown-reply.png", false, false, image.Point{}},
	} {
		t.Run(c.file, func(t *testing.T) {
			img := readRGBA(t, filepath.Join("testdata", "errormark", c.file))
			if got := endInView(img); got != c.inView {
				t.Errorf("endInView = %v, want %v", got, c.inView)
			}
			box, ok := findErrorMark(img)
			if ok != c.mark {
				t.Fatalf("findErrorMark found %v (%v), want %v", ok, box, c.mark)
			}
			if d := box.Min.Sub(c.markAround); ok && d.X*d.X+d.Y*d.Y > 25 {
				t.Errorf("the mark is at %v, want near %v", box.Min, c.markAround)
			}
		})
	}
}

// Error colours of VS Code's themes are red; code's string and keyword
// colours are not.
func TestErrorRed(t *testing.T) {
	for _, c := range []struct {
		rgb  uint32
		want bool
	}{
		{0xF85149, true}, {0xF14C4C, true}, {0xF48771, true}, {0xE51400, true},
		{0xA31515, false}, {0xCE9178, false}, {0xAF00DB, false}, {0x0000FF, false}, {0xF8F8F8, false}, {0xFFA500, false},
	} {
		col := color.RGBA{uint8(c.rgb >> 16), uint8(c.rgb >> 8), uint8(c.rgb), 0xff}
		if got := errorRed(col); got != c.want {
			t.Errorf("errorRed(#%06X) = %v, want %v", c.rgb, got, c.want)
		}
	}
}

// Only a compact ring-sized cluster is a mark: not a line of red text, not
// a dot, not a block.
func TestErrorMarkShape(t *testing.T) {
	red := color.RGBA{0xF8, 0x51, 0x49, 0xff}
	for _, c := range []struct {
		name string
		draw func(img *image.RGBA)
		want bool
	}{
		{"ring", func(img *image.RGBA) {
			for a := 0; a < 14; a++ {
				for _, p := range []image.Point{{20 + a, 20}, {20 + a, 33}, {20, 20 + a}, {33, 20 + a}, {20 + a, 20 + a}, {33 - a, 20 + a}} {
					img.Set(p.X, p.Y, red)
				}
			}
		}, true},
		{"red words", func(img *image.RGBA) {
			draw.Draw(img, image.Rect(10, 20, 140, 32), image.NewUniform(red), image.Point{}, draw.Src)
		}, false},
		{"dot", func(img *image.RGBA) {
			draw.Draw(img, image.Rect(20, 20, 24, 24), image.NewUniform(red), image.Point{}, draw.Src)
		}, false},
		{"block", func(img *image.RGBA) {
			draw.Draw(img, image.Rect(20, 20, 60, 60), image.NewUniform(red), image.Point{}, draw.Src)
		}, false},
	} {
		img := image.NewRGBA(image.Rect(0, 0, 200, 100))
		draw.Draw(img, img.Bounds(), image.NewUniform(color.RGBA{0xF8, 0xF8, 0xF8, 0xff}), image.Point{}, draw.Src)
		c.draw(img)
		if _, got := findErrorMark(img); got != c.want {
			t.Errorf("%s: findErrorMark = %v, want %v", c.name, got, c.want)
		}
	}
}

func readRGBA(t *testing.T, path string) *image.RGBA {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	src, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	img := image.NewRGBA(src.Bounds())
	draw.Draw(img, img.Bounds(), src, src.Bounds().Min, draw.Src)
	return img
}
