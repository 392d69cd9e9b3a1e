//go:build linux && !nogui

package desktopname

// Desktop names the desktop control this build has, for `agentctl version`.
const Desktop = "X11 (pure Go: XTEST and EWMH over the X protocol; no cgo)"
