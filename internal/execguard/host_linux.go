package execguard

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"syscall"

	"github.com/agentctl/agentctl/internal/process"
)

// Host is the guard of every exec turn of one seat, started once and
// kept while turns come: args are the runner's pid. The runner asks on
// HostSocket (a stream socket: frames of a length and a JSON Request) and
// hears back Replies. Each command starts in its own process group, one at
// a time, below the host, which is the child subreaper of all of it. When
// the command ends, or the runner asks (Sweep), the host kills everything
// below it before it says how the command ended; when the runner dies
// (its socket ends, or the parent-death signal the runner set comes), it
// kills everything below it and ends.
func Host(args []string) int {
	if len(args) != 1 {
		fmt.Fprintln(os.Stderr, "agentctl: the exec host is started by agentctl itself")
		return 2
	}
	// The commands' parent-death signal comes when the thread that
	// started them ends: this goroutine starts them all, on this thread
	// alone, and never lets it go.
	runtime.LockOSThread()
	sigs := make(chan os.Signal, 16)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGCHLD)
	runner, ok := takeOver(args[0], "host")
	if !ok {
		return 1
	}
	// The commands must not inherit the socket: one that did would keep
	// it open after the host died, and its runner would never hear that.
	syscall.CloseOnExec(HostSocket)
	requests := make(chan request)
	go readRequests(HostSocket, requests)
	h := &host{sock: HostSocket}
	for {
		select {
		case r, ok := <-requests:
			if !ok {
				killDescendants(nil)
				return 0
			}
			if !h.serve(r) {
				killDescendants(nil)
				return 0
			}
		case s := <-sigs:
			switch {
			case s == syscall.SIGCHLD:
				if !h.reap() {
					killDescendants(nil)
					return 0
				}
			case os.Getppid() != runner:
				// The kernel reparents before it sends the parent-death
				// signal.
				killDescendants(nil)
				return 0
			case h.cmd != 0:
				// Someone else asked: the command decides.
				syscall.Kill(h.cmd, s.(syscall.Signal))
			}
		}
	}
}

// host is the state of a host: its socket and the command under way.
type host struct {
	sock int
	// cmd is the command under way, 0 when none; once it is reaped, ended
	// holds how it ended until the host has said so.
	cmd   int
	ended *Exited
}

// request is a Request with the descriptors that came with it.
type request struct {
	Request
	fds []int
}

// serve does what r asks, and reports false when the runner can no longer
// be told (its socket is gone).
func (h *host) serve(r request) bool {
	defer func() {
		for _, fd := range r.fds {
			syscall.Close(fd)
		}
	}()
	switch {
	case r.Start != nil:
		if h.cmd != 0 {
			return h.say(Reply{Error: "a command is still under way"})
		}
		if len(r.fds) != 3 {
			return h.say(Reply{Error: fmt.Sprintf("a start needs stdin, stdout and stderr; %d descriptors came", len(r.fds))})
		}
		s := r.Start
		path := string(s.Path)
		pid, err := syscall.ForkExec(path, strs(s.Argv), &syscall.ProcAttr{
			Dir: string(s.Dir), Env: strs(s.Env),
			Files: []uintptr{uintptr(r.fds[0]), uintptr(r.fds[1]), uintptr(r.fds[2])},
			// Killed itself, the host can end nothing: the command goes
			// with it, when the thread that started it ends (Host keeps
			// that one thread for its whole life).
			Sys: &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL},
		})
		if err != nil {
			return h.say(Reply{Error: fmt.Sprintf("fork/exec %s: %v", path, err)})
		}
		h.cmd = pid
		// Not reaped before this loop comes round again, so the pid is
		// still the command's.
		start, _ := process.StartTime(pid)
		return h.say(Reply{Started: pid, StartTime: start})
	case r.Sweep != 0 && r.Sweep == h.cmd:
		killDescendants(h.reaped)
		return h.finish()
	}
	return true
}

// strs turns bytes back into the strings the system takes.
func strs(b [][]byte) []string {
	s := make([]string, len(b))
	for i, v := range b {
		s[i] = string(v)
	}
	return s
}

// reaped notes the command's end when pid is the command.
func (h *host) reaped(pid int, ws syscall.WaitStatus) {
	if pid == h.cmd && h.ended == nil {
		h.ended = &Exited{Pid: pid, Status: uint32(ws)}
	}
}

// reap reaps what has ended; once the command has, it ends what the
// command left and says how it ended.
func (h *host) reap() bool {
	hasChildren(h.reaped)
	return h.finish()
}

// finish says how the command ended, once it has, after everything below
// the host is gone.
func (h *host) finish() bool {
	if h.ended == nil {
		return true
	}
	killDescendants(h.reaped)
	ended := h.ended
	h.cmd, h.ended = 0, nil
	return h.say(Reply{Exited: ended})
}

// say writes one reply; false when the runner can no longer hear it.
func (h *host) say(r Reply) bool {
	body, err := json.Marshal(r)
	if err != nil {
		return false
	}
	return writeAll(h.sock, append(FrameHeader(len(body)), body...)) == nil
}

func writeAll(fd int, b []byte) error {
	for len(b) > 0 {
		n, err := syscall.Write(fd, b)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil {
			return err
		}
		b = b[n:]
	}
	return nil
}

// readRequests passes on the runner's requests until its socket ends or
// says what is no request, then closes requests.
func readRequests(fd int, requests chan<- request) {
	defer close(requests)
	sock := os.NewFile(uintptr(fd), "runner")
	for {
		header := make([]byte, 4)
		oob := make([]byte, syscall.CmsgSpace(3*4))
		n, oobn, err := recvmsg(fd, header, oob)
		if err != nil || n == 0 {
			return
		}
		fds, err := descriptors(oob[:oobn])
		r := request{fds: fds}
		if err == nil {
			err = readFull(sock, header[n:])
		}
		var size int
		if err == nil {
			size, err = FrameLength(header)
		}
		body := make([]byte, size)
		if err == nil {
			err = readFull(sock, body)
		}
		if err == nil {
			err = json.Unmarshal(body, &r.Request)
		}
		if err != nil {
			for _, fd := range fds {
				syscall.Close(fd)
			}
			fmt.Fprintf(os.Stderr, "agentctl: exec host: %v\n", err)
			return
		}
		requests <- r
	}
}

func recvmsg(fd int, p, oob []byte) (n, oobn int, err error) {
	for {
		n, oobn, _, _, err = syscall.Recvmsg(fd, p, oob, syscall.MSG_CMSG_CLOEXEC)
		if !errors.Is(err, syscall.EINTR) {
			return n, oobn, err
		}
	}
}

// descriptors are the descriptors passed in a message's control data.
func descriptors(oob []byte) ([]int, error) {
	msgs, err := syscall.ParseSocketControlMessage(oob)
	if err != nil {
		return nil, err
	}
	var fds []int
	for _, m := range msgs {
		got, err := syscall.ParseUnixRights(&m)
		if err != nil {
			return fds, err
		}
		fds = append(fds, got...)
	}
	return fds, nil
}

// readFull is io.ReadFull that says an end of stream inside a frame.
func readFull(r io.Reader, b []byte) error {
	_, err := io.ReadFull(r, b)
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("the stream ended inside a frame: %w", err)
	}
	return err
}
