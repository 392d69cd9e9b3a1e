//go:build !(linux && x11) && !(windows && win)

package cursor

// Desktop is empty: this build has no desktop control, only the exec
// driver.
const Desktop = ""
