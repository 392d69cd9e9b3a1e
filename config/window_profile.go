package config

// What a window's input box does to a pasted prompt (Window.Composer).
const (
	ComposerPlain  = "plain"
	ComposerMonaco = "monaco"
)

// WindowProfile returns the copy route and composer of a chat app that
// agentctl knows, and whether it knows name; "" is no profile.
func WindowProfile(name string) (Window, bool) {
	switch name {
	case "":
		return Window{}, true
	case ProfileVSCode:
		return VSCodeWindow(), true
	}
	return Window{}, false
}

// VSCodeWindow is VS Code's chat view (1.100, also as code-server serves
// it), driven by keys alone, so the copy finds the last reply whatever its
// height and never a code block's copy button: from the composer, Ctrl+Up
// focuses the last reply, the context-menu key opens its menu, whose first
// item "Copy" copies the reply's Markdown source and whose second, "Copy
// All", the whole chat as "name: text" turns. The menu takes the keyboard
// at once (a click on an item counts only 100 ms after it opens). Home does
// not move in that menu, so the driver keeps the mouse pointer off it (an
// item under the pointer takes the keyboard's place). The check keys follow
// the copy's from the reply, where the menu gives the focus back and where
// Ctrl+Up leaves it. A reply ended by an error or a cancel shows only as
// a red mark at its end (see ErrorMark).
func VSCodeWindow() Window {
	return Window{
		Profile:       ProfileVSCode,
		CopyKeys:      []string{"ctrl+up", "menu", "down", "enter"},
		CopyFromInput: true,
		CheckKeys:     []string{"ctrl+up", "menu", "down", "down", "enter"},
		Composer:      ComposerMonaco,
		ErrorMark:     true,
	}
}

// WithProfile fills what w leaves unset from its profile. A copy button
// set by hand keeps the profile's keys out.
func (w Window) WithProfile() Window {
	p, ok := WindowProfile(w.Profile)
	if !ok || w.Profile == "" {
		return w
	}
	if w.Copy == nil && len(w.CopyKeys) == 0 {
		w.CopyKeys, w.CopyFromInput = p.CopyKeys, p.CopyFromInput
	}
	if len(w.CheckKeys) == 0 {
		w.CheckKeys = p.CheckKeys
	}
	if w.Composer == "" {
		w.Composer = p.Composer
	}
	w.ErrorMark = w.ErrorMark || p.ErrorMark
	return w
}
