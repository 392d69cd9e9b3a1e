// Package testenv holds, in its sub-packages, what agentctl's tests start
// and read beside the product: a private X display (xvfb), Chromium with
// a DevTools port (chromium), VS Code's chat served by code-server
// (codeserver), the Windows build under Wine (wintest), the real agent
// command-line tools pointed at fixtures/fakemodel (agentcli), the stand-in
// chats' event logs (standinlog), checks run under several umasks
// (umasktest), a process's log shown when its test fails (syncbuf),
// loopback ports for servers a test restarts (freeport) and the one wait
// for a condition, with no deadline of its own (poll); this package
// itself finds the repository's root (RepoRoot). Nothing in the product
// imports them (only tests and fixtures do), and they import no agentctl
// package outside internal/testenv.
package testenv
