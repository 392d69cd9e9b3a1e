// Package umasktest runs a test's checks under several umasks. The umask is
// process-wide, so each umask gets its own child process: the test binary
// runs itself again, with only that test selected. It is for tests only and
// never touches anything but the child's umask.
package umasktest
