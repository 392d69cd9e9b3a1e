package xvfb

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// lockedThread runs functions on one OS thread that lives as long as the
// display. Pdeathsig fires when the thread that started a child exits, not
// the process, and the Go runtime may end idle threads: children started
// from an ordinary goroutine can be killed at random.
type lockedThread chan func()

func newLockedThread() lockedThread {
	t := make(lockedThread)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
		for f := range t {
			f()
		}
	}()
	return t
}

// startOn starts cmd on the thread.
func (t lockedThread) startOn(cmd *exec.Cmd) error {
	done := make(chan error)
	t <- func() { done <- cmd.Start() }
	return <-done
}

// start tries a few random display numbers: one may be taken by a server
// that is not ours, which makes Xvfb exit at once.
func start(ctx context.Context, d *Display, opts Options) error {
	var err error
	for attempt := 0; attempt < 5; attempt++ {
		number := 100 + mrand.IntN(800)
		if _, serr := os.Stat(fmt.Sprintf("/tmp/.X%d-lock", number)); serr == nil {
			continue
		}
		if err = startOn(ctx, d, opts, number); err == nil || ctx.Err() != nil {
			return err
		}
	}
	return err
}

func startOn(ctx context.Context, d *Display, opts Options, number int) error {
	thread := newLockedThread()
	stopped := false
	defer func() {
		if !stopped {
			close(thread)
		}
	}()
	r, w, err := os.Pipe()
	if err != nil {
		return fmt.Errorf("cannot start Xvfb: %w", err)
	}
	defer r.Close()
	// -displayfd makes Xvfb write the display number to fd 3 once it
	// accepts connections. The number is ours to pick: left to itself,
	// Xvfb takes the lowest free one, and servers started and stopped in
	// quick succession by parallel tests then hand the same number from one
	// to the next while clients still reach the old one.
	server := exec.Command("Xvfb", fmt.Sprintf(":%d", number), "-displayfd", "3", "-auth", d.Authority, "-nolisten", "tcp",
		"-screen", "0", fmt.Sprintf("%dx%dx24", opts.Width, opts.Height))
	server.ExtraFiles = []*os.File{w}
	server.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
	var serverLog strings.Builder
	server.Stderr = &limitedWriter{b: &serverLog, n: 4096}
	if err := thread.startOn(server); err != nil {
		w.Close()
		return withHint(fmt.Errorf("cannot start Xvfb: %w", err))
	}
	w.Close()
	serverDone := make(chan error, 1)
	go func() { serverDone <- server.Wait() }()

	reported := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(r).ReadString('\n')
		reported <- strings.TrimSpace(line)
	}()
	select {
	case n := <-reported:
		if _, err := strconv.Atoi(n); err != nil {
			stopServer(server, serverDone, number)
			return fmt.Errorf("cannot start Xvfb: it reported no display number: %s", strings.TrimSpace(serverLog.String()))
		}
		d.Name = ":" + n
	case <-ctx.Done():
		stopServer(server, serverDone, number)
		return fmt.Errorf("cannot start Xvfb: %w", ctx.Err())
	}

	// Under heavy load the window manager has been seen to give up at
	// once ("can't open display") on a server that had just reported
	// itself ready; a second start then works.
	var err2 error
	for attempt := 1; attempt <= wmStarts; attempt++ {
		wm, wmDone, wmLog, err := startWM(thread, d, opts)
		if err != nil {
			stopServer(server, serverDone, number)
			return err
		}
		err2 = waitForWM(ctx, d, wmDone)
		if err2 == nil {
			stopped = true
			d.stop = func() error {
				defer close(thread)
				wmErr := error(nil)
				if terminate(wm, wmDone) {
					wmErr = fmt.Errorf("xvfb: the window manager ignored SIGTERM for %s and was killed", stopGrace)
				}
				return errors.Join(wmErr, stopServer(server, serverDone, number))
			}
			return nil
		}
		terminate(wm, wmDone)
		if msg := strings.TrimSpace(wmLog.String()); msg != "" {
			err2 = fmt.Errorf("%w: %s", err2, msg)
		}
		if ctx.Err() != nil {
			break
		}
	}
	stopServer(server, serverDone, number)
	return err2
}

// wmStarts is how many times the window manager is started before Start
// gives up.
const wmStarts = 3

func startWM(thread lockedThread, d *Display, opts Options) (*exec.Cmd, chan error, *strings.Builder, error) {
	wm := exec.Command("matchbox-window-manager", "-use_titlebar", "no", "-use_dialog_mode", "free", "-use_cursor", "no")
	if opts.WindowManager == Openbox {
		wm = exec.Command("openbox", "--sm-disable")
	}
	wm.Env = append(os.Environ(), d.Env()...)
	wm.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
	wmLog := &strings.Builder{}
	wm.Stderr = &limitedWriter{b: wmLog, n: 4096}
	if err := thread.startOn(wm); err != nil {
		return nil, nil, nil, withHint(fmt.Errorf("cannot start the window manager: %w", err))
	}
	wmDone := make(chan error, 1)
	go func() { wmDone <- wm.Wait() }()
	return wm, wmDone, wmLog, nil
}

// waitForWM polls the root window until the window manager has set
// _NET_SUPPORTING_WM_CHECK: before that, new windows are unmanaged and EWMH
// queries fail.
func waitForWM(ctx context.Context, d *Display, wmDone chan error) error {
	for {
		ok, err := wmRunning(d)
		if err == nil && ok {
			return nil
		}
		select {
		case err := <-wmDone:
			wmDone <- err
			return fmt.Errorf("the window manager exited at start: %v", err)
		case <-ctx.Done():
			if err == nil {
				err = errors.New("it never announced itself")
			}
			return fmt.Errorf("window manager not ready: %v: %w", err, ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// stopGrace is how long Xvfb or a window manager may take to honour
// SIGTERM: on a loaded machine they take their time, and one killed while
// only slow leaves Xvfb's socket and lock files behind. One that takes
// longer is wedged, and would hang the test's cleanup until the binary's
// -timeout.
const stopGrace = time.Minute

// terminate sends SIGTERM and waits for the process to end, and kills it
// after stopGrace; killed reports that it had to.
func terminate(cmd *exec.Cmd, done chan error) (killed bool) {
	cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-done:
		return false
	case <-time.After(stopGrace):
		cmd.Process.Kill()
		<-done
		return true
	}
}

// stopServer ends Xvfb on display number and, if it had to be killed,
// removes the lock and socket files it could not.
func stopServer(server *exec.Cmd, done chan error, number int) error {
	if !terminate(server, done) {
		return nil
	}
	os.Remove(fmt.Sprintf("/tmp/.X%d-lock", number))
	os.Remove(fmt.Sprintf("/tmp/.X11-unix/X%d", number))
	return fmt.Errorf("xvfb: Xvfb ignored SIGTERM for %s and was killed", stopGrace)
}

func withHint(err error) error {
	if errors.Is(err, exec.ErrNotFound) {
		return fmt.Errorf("%w (install the Debian packages xvfb, matchbox-window-manager and openbox)", err)
	}
	return err
}

type limitedWriter struct {
	b *strings.Builder
	n int
}

func (w *limitedWriter) Write(p []byte) (int, error) {
	if room := w.n - w.b.Len(); room > 0 {
		if len(p) < room {
			room = len(p)
		}
		w.b.Write(p[:room])
	}
	return len(p), nil
}
