package execguard

import (
	"encoding/binary"
	"fmt"
)

// HostArg is the hidden subcommand by which agentctl, re-executed, hosts
// one seat's exec turns: the guard of every turn of that seat, started
// once instead of once a turn (Host).
const HostArg = "__exec-host"

// HostSocket is the host's descriptor of its socket to the runner.
const HostSocket = 3

// A Request is what the runner asks of its host: to start a turn's
// command (Start, with its stdin, stdout and stderr passed beside the
// request), or to end the command of that pid and everything below the
// host (Sweep). A sweep that comes after its command ended is nothing: it
// never touches the next turn's.
type Request struct {
	Start *Start `json:"start,omitempty"`
	Sweep int    `json:"sweep,omitempty"`
}

// Start is a command to start: its program's path, its arguments (its
// name first), its whole environment and its working folder (empty for
// the host's own). They are bytes, as the system takes them: a name that
// is no UTF-8 arrives as it was.
type Start struct {
	Path []byte   `json:"path"`
	Argv [][]byte `json:"argv"`
	Env  [][]byte `json:"env"`
	Dir  []byte   `json:"dir,omitempty"`
}

// A Reply is what the host tells its runner: the pid of the command it
// started (Started) and when it started (StartTime, process.StartTime's
// token, read before the host can have reaped it: 0 when unknown), why it
// could not (Error), and once the command has ended and everything it
// left is gone, how it ended (Exited, a wait status as the kernel gives
// it).
type Reply struct {
	Started   int     `json:"started,omitempty"`
	StartTime uint64  `json:"start_time,omitempty"`
	Error     string  `json:"error,omitempty"`
	Exited    *Exited `json:"exited,omitempty"`
}

// Exited is how a command ended.
type Exited struct {
	Pid    int    `json:"pid"`
	Status uint32 `json:"status"`
}

// maxFrame bounds one frame: a command's arguments and environment stay
// far under it (the kernel's own limit on both together is 2 MiB or a
// quarter of the stack limit).
const maxFrame = 64 << 20

// FrameHeader is the length of the frame's body, in front of it: the
// stream carries requests and replies of any size, and the descriptors of
// a start ride on its header.
func FrameHeader(n int) []byte { return binary.BigEndian.AppendUint32(nil, uint32(n)) }

// FrameLength reads a frame's header.
func FrameLength(h []byte) (int, error) {
	n := int(binary.BigEndian.Uint32(h))
	if n > maxFrame {
		return 0, fmt.Errorf("a frame of %d bytes is over the %d the host takes", n, maxFrame)
	}
	return n, nil
}
