// Package wintest runs agentctl's Windows build in tests. On Linux it
// prepares what `wine agentctl.exe …` needs (a Wine prefix with the shim
// from fixtures/winshim, agentctl.exe and the stand-in chat window
// fixtures/winchat cross-built, a private X display for their windows) and
// runs Windows programs there; in Windows test binaries, which CI runs under
// Wine through scripts/wine-exec, it gives temp folders Wine can remove.
//
// Tests that need Wine skip where it is not installed, unless
// AGENTCTL_REQUIRE_WINE is set (CI sets it), in which case they fail. The
// package never touches the user's own display or Wine prefix: the display
// is private, and the prefix is $AGENTCTL_WINEPREFIX or a temp folder.
package wintest
