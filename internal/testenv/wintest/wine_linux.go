package wintest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/agentctl/agentctl/internal/testenv"
	"github.com/agentctl/agentctl/internal/testenv/poll"
	"github.com/agentctl/agentctl/internal/testenv/xvfb"
)

// Wine is a Wine prefix that runs agentctl's Windows build, with a private
// display for its windows.
type Wine struct {
	// Prefix is the WINEPREFIX folder.
	Prefix string
	// Bin holds agentctl.exe, agentctl-full.exe beside it, and winchat.exe.
	Bin string
	// Repo is the repository's root.
	Repo    string
	display *xvfb.Display
	temp    string // removed by Close
}

var (
	once    sync.Once
	shared  *Wine
	needErr error
)

// Need returns the test binary's Wine, preparing it on first use, or skips
// the test where Wine is not installed (fails, with AGENTCTL_REQUIRE_WINE).
// Call Close from TestMain once the tests are done.
func Need(t testing.TB) *Wine {
	t.Helper()
	if _, err := exec.LookPath("wine"); err != nil {
		if os.Getenv("AGENTCTL_REQUIRE_WINE") != "" {
			t.Fatal("Wine is not installed, and AGENTCTL_REQUIRE_WINE is set; run scripts/setup")
		}
		t.Skip("Wine is not installed (scripts/setup installs it)")
	}
	once.Do(func() {
		// The display outlives t; ctx bounds only its start.
		ctx, cancel := poll.Context(t)
		defer cancel()
		shared, needErr = prepare(ctx)
	})
	if needErr != nil {
		t.Fatalf("cannot prepare Wine: %v", needErr)
	}
	return shared
}

// Close stops the display and removes the temp folders, with the prefix
// when it is a temp one. It does nothing when Need was never called.
func Close() {
	if shared == nil {
		return
	}
	w := shared
	if w.Prefix == filepath.Join(w.temp, "prefix") {
		// A prefix of its own: end whatever of it still runs. A shared one
		// ($AGENTCTL_WINEPREFIX) may serve other tests at the same time;
		// the tests here end the processes they start.
		cmd := exec.Command("wineserver", "-k")
		cmd.Env = append(os.Environ(), "WINEPREFIX="+w.Prefix)
		cmd.Run()
	}
	w.display.Stop()
	if w.temp != "" {
		os.RemoveAll(w.temp)
	}
}

func prepare(ctx context.Context) (*Wine, error) {
	repo, err := testenv.RepoRoot()
	if err != nil {
		return nil, err
	}
	temp, err := os.MkdirTemp("", "agentctl-wine-")
	if err != nil {
		return nil, err
	}
	w := &Wine{Repo: repo, Bin: filepath.Join(temp, "bin"), temp: temp}
	w.Prefix = os.Getenv("AGENTCTL_WINEPREFIX")
	if w.Prefix == "" {
		w.Prefix = filepath.Join(temp, "prefix")
	}
	fail := func(err error) (*Wine, error) {
		os.RemoveAll(temp)
		return nil, err
	}
	if out, err := exec.Command(filepath.Join(repo, "scripts", "wineprefix"), w.Prefix).CombinedOutput(); err != nil {
		return fail(fmt.Errorf("scripts/wineprefix: %v: %s", err, out))
	}
	for exe, pkg := range map[string]string{"agentctl.exe": "./cmd/agentctl", "agentctl-full.exe": "./cmd/agentctl-full", "winchat.exe": "./fixtures/winchat"} {
		build := exec.Command("go", "build", "-o", filepath.Join(w.Bin, exe), pkg)
		build.Dir = repo
		build.Env = append(os.Environ(), "GOOS=windows", "GOARCH=amd64", "CGO_ENABLED=0")
		if out, err := build.CombinedOutput(); err != nil {
			return fail(fmt.Errorf("cannot build %s: %v: %s", exe, err, out))
		}
	}
	if w.display, err = xvfb.Start(ctx, xvfb.Options{}); err != nil {
		return fail(err)
	}
	return w, nil
}

// Env is the environment of a Windows program in the prefix, on the
// private display.
func (w *Wine) Env() []string {
	var env []string
	for _, e := range os.Environ() {
		if !strings.HasPrefix(e, "DISPLAY=") && !strings.HasPrefix(e, "XAUTHORITY=") &&
			!strings.HasPrefix(e, "WINEPREFIX=") && !strings.HasPrefix(e, "WINEDEBUG=") {
			env = append(env, e)
		}
	}
	return append(env, append(w.display.Env(), "WINEPREFIX="+w.Prefix, "WINEDEBUG=-all")...)
}

// Command runs the Windows program exe (a path on this machine) with args.
func (w *Wine) Command(exe string, args ...string) *exec.Cmd {
	cmd := exec.Command("wine", append([]string{exe}, args...)...)
	cmd.Env = w.Env()
	return cmd
}

// Agentctl is a command running agentctl.exe with args, in a process
// group of its own, as a console of its own would hold it (CtrlC).
func (w *Wine) Agentctl(args ...string) *exec.Cmd {
	cmd := w.Command(filepath.Join(w.Bin, "agentctl.exe"), args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	return cmd
}

// CtrlC presses Ctrl+C in the console of a started Agentctl: every
// process in it hears it, agentctl and the agentctl-full it handed the
// command to alike (Wine turns SIGINT into CTRL_C_EVENT in each).
func CtrlC(cmd *exec.Cmd) error {
	return syscall.Kill(-cmd.Process.Pid, syscall.SIGINT)
}

// Result is what a finished command printed and how it exited.
type Result struct {
	Stdout, Stderr string
	Code           int
}

// Run runs agentctl.exe with args to the end.
func (w *Wine) Run(t testing.TB, args ...string) Result {
	t.Helper()
	return RunCmd(t, w.Agentctl(args...))
}

// RunCmd runs cmd to the end.
func RunCmd(t testing.TB, cmd *exec.Cmd) Result {
	t.Helper()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	r := Result{Stdout: stdout.String(), Stderr: stderr.String()}
	switch {
	case errors.As(err, &exit):
		r.Code = exit.ExitCode()
	case err != nil:
		t.Fatalf("cannot run %s: %v", cmd, err)
	}
	return r
}

// MustRun runs agentctl.exe with args and fails the test unless it exits 0.
func (w *Wine) MustRun(t testing.TB, args ...string) Result {
	t.Helper()
	r := w.Run(t, args...)
	if r.Code != 0 {
		t.Fatalf("agentctl %s: exit %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), r.Code, r.Stdout, r.Stderr)
	}
	return r
}

// Drive maps the Windows drive letter (such as "D") to dir, so that Windows
// programs see dir as D:\.
func (w *Wine) Drive(t testing.TB, letter, dir string) {
	t.Helper()
	link := filepath.Join(w.Prefix, "dosdevices", strings.ToLower(letter)+":")
	os.Remove(link)
	if err := os.Symlink(dir, link); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Remove(link) })
}

// WinPath is how a Windows program in the prefix names path: Wine's Z:
// drive is this machine's root.
func WinPath(path string) string {
	return `Z:` + strings.ReplaceAll(path, "/", `\`)
}
