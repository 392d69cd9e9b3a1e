//go:build nogui || !(linux || windows)

package desktopname

// Desktop is empty: this build has no desktop control, only the exec
// driver.
const Desktop = ""
