//go:build linux && !nogui

package cursor

// Desktop names the desktop control this build has, for `agentctl version`.
const Desktop = "X11 (pure Go: robotgo's XTEST backend and EWMH; no cgo)"
