package config

import (
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/agentctl/agentctl/internal/loopback"
)

// DriverCDP drives a chat page through the Chrome DevTools Protocol of the
// app showing it (Cursor started with --remote-debugging-port).
const DriverCDP = "cdp"

// CDP says where an agent's chat page is and which elements of it the
// driver works. Selectors left empty come from the seat's profile.
type CDP struct {
	// Endpoint is the app's DevTools address, http://127.0.0.1:PORT. It
	// must be on loopback: whoever reaches it controls the app.
	Endpoint string `yaml:"endpoint,omitempty"`
	// Target is a regular expression on page titles; exactly one page of
	// the endpoint must match.
	Target string `yaml:"target,omitempty"`
	// Profile names the app whose chat the page shows, whose selectors
	// fill those left empty: cursor (the default) or vscode (VS Code's
	// chat view).
	Profile string `yaml:"profile,omitempty"`
	// Composer is the CSS selector of the box the prompt goes into (a
	// contenteditable element, a textarea, or a Monaco editor's input).
	Composer string `yaml:"composer,omitempty"`
	// Submit is clicked to send the prompt; empty: Enter in the composer.
	Submit string `yaml:"submit,omitempty"`
	// Busy matches a visible element while the model works, such as the
	// stop button or a reply still loading. CDPNoBusy says the page shows
	// no such thing.
	Busy string `yaml:"busy,omitempty"`
	// Reply matches the replies; the last match is the reply.
	Reply string `yaml:"reply,omitempty"`
	// Copy, if set, is the last reply's copy button: clicked inside the
	// page, with the page's clipboard writes caught there (the desktop's
	// clipboard is never touched), it gives the reply's Markdown source,
	// which a rendered reply's text has lost (code fences).
	Copy string `yaml:"copy,omitempty"`
	// CopyMenu, if set, is the label of the item of the last reply's
	// context menu that copies the reply (VS Code: "Copy"), for apps whose
	// whole-reply copy is a menu item rather than a button.
	CopyMenu string `yaml:"copy_menu,omitempty"`
	// Read is how the reply is read: "copy" (the default), the app's own
	// copy of it through Copy or CopyMenu; or "rendered", the reply's text
	// as the page shows it, which loses Markdown (and with it an agentctl
	// block's fence) and is said so in every receipt.
	Read string `yaml:"read,omitempty"`
	// Body, if set, matches the parts of the last reply that show the
	// reply itself (not the participant's name, progress lines or
	// buttons): the words a copy is checked against, and what read:
	// rendered reads. Empty: the whole reply element.
	Body string `yaml:"body,omitempty"`
	// Error, if set, matches the app's error message inside the last
	// reply (a reply that ended in an error, or was cancelled): the turn
	// then fails with that message and passes nothing on as a reply.
	Error string `yaml:"error,omitempty"`
	// Clipboard is where the copy action's text is caught: "page" (the
	// default), inside the page, where navigator.clipboard and the copy
	// command write, the desktop's clipboard never touched; or "system",
	// the desktop's clipboard, for an app that writes it from outside the
	// page (an Electron app's main process), read under the desktop input
	// lock with the person's clipboard given back.
	Clipboard string `yaml:"clipboard,omitempty"`
	// NewChat, if set, is clicked when a turn asks for a fresh chat.
	NewChat string `yaml:"new_chat,omitempty"`
	// Quiet is how long the reply's text must stay unchanged once the busy
	// element is gone before it is read (default 20ms): the page's last
	// drawing after it says it is done. With Busy set to CDPNoBusy it is
	// the only sign that the model is done and must be set: the longest
	// pause the model makes in a reply.
	Quiet Duration `yaml:"quiet,omitempty"`
}

// Where a cdp seat catches the copy (CDP.Clipboard).
const (
	ClipboardPage   = "page"
	ClipboardSystem = "system"
)

// How a cdp seat reads the reply (CDP.Read).
const (
	ReadCopy     = "copy"
	ReadRendered = "rendered"
)

// CDPNoBusy as CDP.Busy says the page shows nothing while the model
// works: a turn then ends once the reply has been still for CDP.Quiet.
// (As a selector it would match only <none> elements, so nothing.)
const CDPNoBusy = "none"

// DefaultCDPQuiet is CDP.Quiet when unset: more than a frame at 60 Hz, so
// a page that draws its last text in the frame after it drops its busy
// state is waited for. The page itself times the stillness, so it needs
// no screenshot frames.
const DefaultCDPQuiet = 20 * time.Millisecond

// Profiles of the chat pages agentctl knows, by CDP.Profile.
const (
	ProfileCursor = "cursor"
	ProfileVSCode = "vscode"
)

// CDPProfile returns the selectors of a known app's chat, and whether the
// name is known.
func CDPProfile(name string) (CDP, bool) {
	switch name {
	case ProfileCursor, "":
		return CursorProfile(), true
	case ProfileVSCode:
		return VSCodeProfile(), true
	}
	return CDP{}, false
}

// CDPProfileNames lists the known profiles.
func CDPProfileNames() []string { return []string{ProfileCursor, ProfileVSCode} }

// CursorProfile returns the selectors of Cursor's chat panel as of Cursor
// 1.x (2025), guesses never checked against a running Cursor. They depend
// on Cursor's version: `agentctl doctor` checks them against the live
// page and `agentctl calibrate --cdp` proposes others. It names no copy
// action: no whole-reply copy of Cursor's is known well enough to guess,
// so a Cursor seat sets cdp.copy or cdp.copy_menu (calibrate finds them),
// or cdp.read: rendered, before its first turn.
func CursorProfile() CDP {
	return CDP{
		Profile:  ProfileCursor,
		Composer: `.aislash-editor-input[contenteditable="true"]`,
		Busy:     `.composer-bar [data-stop-button], .composer-bar .codicon-debug-stop`,
		Reply:    `[data-message-role="ai"] .markdown-root, .composer-rendered-message .markdown-root`,
		NewChat:  `[aria-label^="New Chat"], .codicon-add-two`,
	}
}

// VSCodeProfile returns the selectors of VS Code's chat view (VS Code
// 1.100, as code-server serves it), checked against the real page. Its
// composer is a Monaco editor; a reply is loading (busy) until its
// progressive rendering ends, which is later than the stop button goes;
// the reply's body is its Markdown parts (not the participant's name or
// the progress lines, which vanish when it ends); its context menu item
// "Copy" gives the Markdown source; an error or a cancel shows as a
// notification with an error icon inside the reply.
func VSCodeProfile() CDP {
	return CDP{
		Profile:  ProfileVSCode,
		Composer: `.interactive-session .interactive-input-part .monaco-editor textarea`,
		Busy:     `.interactive-session .interactive-response.chat-response-loading`,
		Reply:    `.interactive-session .interactive-item-container.interactive-response`,
		Body:     `.value > .rendered-markdown:not(.progress-step)`,
		Error:    `.value > .chat-notification-widget:has(.codicon-error) .rendered-markdown`,
		CopyMenu: "Copy",
		NewChat:  `.action-label.codicon-plus[aria-label^="New Chat"]`,
	}
}

// Resolved returns c with every selector it leaves empty taken from its
// profile (Submit stays empty where the profile sends with Enter), and
// the defaults of Read and Quiet.
func (c CDP) Resolved() CDP {
	p, _ := CDPProfile(c.Profile)
	if c.Profile == "" {
		c.Profile = p.Profile
	}
	for _, f := range []struct {
		v   *string
		def string
	}{
		{&c.Composer, p.Composer}, {&c.Submit, p.Submit}, {&c.Busy, p.Busy}, {&c.Reply, p.Reply},
		{&c.NewChat, p.NewChat}, {&c.Body, p.Body}, {&c.Error, p.Error},
	} {
		if *f.v == "" {
			*f.v = f.def
		}
	}
	// A copy action set by hand replaces the profile's, of either kind.
	if c.Copy == "" && c.CopyMenu == "" {
		c.Copy, c.CopyMenu = p.Copy, p.CopyMenu
	}
	if c.Read == "" {
		c.Read = ReadCopy
	}
	if c.Clipboard == "" {
		c.Clipboard = ClipboardPage
	}
	if c.Quiet <= 0 {
		c.Quiet = Duration(DefaultCDPQuiet)
	}
	return c
}

// validate checks what is set; an agent without an endpoint or target is
// allowed here (a fresh config) and refused when a turn runs.
func (c CDP) validate() error {
	if c.Endpoint != "" {
		if err := CheckLoopbackEndpoint(c.Endpoint); err != nil {
			return fmt.Errorf("cdp.endpoint: %w", err)
		}
	}
	if c.Target != "" {
		if _, err := regexp.Compile(c.Target); err != nil {
			return fmt.Errorf("cdp.target: not a regular expression: %v", err)
		}
	}
	if c.Quiet < 0 {
		return fmt.Errorf("cdp.quiet: must be a positive duration such as 30ms")
	}
	if _, ok := CDPProfile(c.Profile); !ok {
		return fmt.Errorf("cdp.profile: %q is not a known app (%s)", c.Profile, strings.Join(CDPProfileNames(), ", "))
	}
	if c.Read != "" && c.Read != ReadCopy && c.Read != ReadRendered {
		return fmt.Errorf("cdp.read: %q is neither %s nor %s", c.Read, ReadCopy, ReadRendered)
	}
	if c.Clipboard != "" && c.Clipboard != ClipboardPage && c.Clipboard != ClipboardSystem {
		return fmt.Errorf("cdp.clipboard: %q is neither %s nor %s", c.Clipboard, ClipboardPage, ClipboardSystem)
	}
	if c.Busy == CDPNoBusy && c.Quiet == 0 {
		return fmt.Errorf("cdp.quiet: must be set when cdp.busy is %q: with no busy element, the reply counts as done once it has been still that long, so make it longer than any pause the model makes (such as 10s)", CDPNoBusy)
	}
	return nil
}

// Ready reports what a CDP seat still lacks before a turn can run.
func (c CDP) Ready() error {
	if c.Endpoint == "" || c.Target == "" {
		return fmt.Errorf("cdp.endpoint and cdp.target must be set (agentctl calibrate AGENT --cdp finds them)")
	}
	return c.validate()
}

// CheckLoopbackEndpoint accepts http://HOST:PORT where HOST is a loopback
// address: a DevTools port lets whoever reaches it type into the app and
// run code in it, so agentctl never talks to one elsewhere.
func CheckLoopbackEndpoint(endpoint string) error { return loopback.CheckEndpoint(endpoint) }
