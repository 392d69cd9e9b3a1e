//go:build linux && !nogui

package cursor

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/jezek/xgb/xproto"
)

// xclip is another app on the display using the clipboard.
func xclip(t *testing.T, stdin string, args ...string) string {
	t.Helper()
	cmd := exec.Command("xclip", append([]string{"-selection", "clipboard"}, args...)...)
	cmd.Stdin = strings.NewReader(stdin)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("xclip %v: %v", args, err)
	}
	return string(out)
}

// xclipCopies has xclip copy text, which it does in the background: it
// stays to serve the text.
func xclipCopies(text string) <-chan error {
	done := make(chan error, 1)
	go func() {
		cmd := exec.Command("xclip", "-selection", "clipboard", "-i")
		cmd.Stdin = strings.NewReader(text)
		done <- cmd.Run()
	}()
	return done
}

// The clipboard agentctl owns on X11: apps read what it wrote, it knows
// when they did and when one replaced it, and the person's text it puts
// back outlives it.
func TestX11Clipboard(t *testing.T) {
	needDisplay(t)
	if _, err := exec.LookPath("xclip"); err != nil {
		t.Fatal("xclip is needed to play the other app")
	}
	k := x11Clip()
	if k == nil {
		t.Fatal("no clipboard connection on the test display")
	}
	ctx := context.Background()
	prompt := "Message-ID: m-1\n\ttab, 日本語 🚀\n"

	if err := k.write(ctx, prompt); err != nil {
		t.Fatal(err)
	}
	if read, known := k.pasted(ctx, 50*time.Millisecond, 10*time.Millisecond); read || !known {
		t.Fatalf("before any app read it: pasted = %v, %v", read, known)
	}
	if got := xclip(t, "", "-o"); got != prompt {
		t.Fatalf("an app read %q, want %q", got, prompt)
	}
	if read, known := k.pasted(ctx, time.Second, 10*time.Millisecond); !read || !known {
		t.Fatalf("after an app read it: pasted = %v, %v", read, known)
	}
	if got, err := k.read(ctx); err != nil || got != prompt {
		t.Fatalf("its own read: %q, %v", got, err)
	}

	// Another app copies the very same text: still a copy.
	copied := xclipCopies(prompt)
	got, ok, known := k.taken(ctx, 2*time.Second)
	if !ok || !known || got != prompt {
		t.Fatalf("taken = %q, %v, %v after an app copied the same text", got, ok, known)
	}

	sentinel := newSentinel()
	if err := k.write(ctx, sentinel); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := k.taken(ctx, 50*time.Millisecond); ok {
		t.Fatal("taken said an app copied while none did")
	}
	if err := <-copied; err != nil {
		t.Fatal(err)
	}
	copied = xclipCopies("the reply")
	if got, ok := k.changed(ctx, sentinel, 2*time.Second); !ok || got != "the reply" {
		t.Fatalf("changed = %q, %v", got, ok)
	}
	if err := <-copied; err != nil {
		t.Fatal(err)
	}

	// The person's text goes back to an owner that outlives agentctl.
	if err := k.keep(ctx, "the user's own text"); err != nil {
		t.Fatal(err)
	}
	owner, err := xproto.GetSelectionOwner(k.c, k.a.clipboard).Reply()
	if err != nil || owner.Owner == k.win || owner.Owner == xproto.WindowNone {
		t.Fatalf("after keep the clipboard's owner is %v (%v); agentctl's window is %v", owner, err, k.win)
	}
	if got := xclip(t, "", "-o"); got != "the user's own text" {
		t.Fatalf("after keep an app reads %q", got)
	}

	// Too big for one property: it goes through the tool, and reads back.
	big := strings.Repeat("0123456789abcdef", k.maxServe/16+1000)
	if err := k.write(ctx, big); err != nil {
		t.Fatal(err)
	}
	if got, err := k.read(ctx); err != nil || got != big {
		t.Fatalf("a %d-byte text read back as %d bytes (%v)", len(big), len(got), err)
	}
	if _, known := k.pasted(ctx, 10*time.Millisecond, time.Millisecond); known {
		t.Fatal("pasted claims to know about a text the tool holds")
	}
}
