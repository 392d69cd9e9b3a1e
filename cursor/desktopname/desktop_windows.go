//go:build windows && !nogui

package desktopname

// Desktop names the desktop control this build has, for `agentctl version`.
const Desktop = "Windows (robotgo's win32 backend; no cgo)"
