// Package lockfile owns agentctl's cross-process lock files (the consumer,
// board and desktop input locks under the runtime's locks folder, and the
// Dream.OS inbox.json.lock): how they are created, so that no other user can
// open them, and how a waiting process learns who holds one. The lock file
// of another program, beside a place that is only read, it opens
// read-only and never creates or changes (Open).
//
// Another local user who can open a lock file, even read-only, can flock it
// and stall agentctl, so lock files get no permissions for others at all,
// whatever the umask. A holder may write a Record into its lock file (in
// place: the lock lives on the inode) so that others can name it; a record
// is believed only while its pid still names the same process.
//
// It also owns waiting for a held lock: Take, which Acquire calls with a
// new handle, is agentctl's one loop that does, for a lock taken
// alone or shared (Wait.Shared), timed by the clock the Wait names (the
// system clock when it names none), and its *BusyError says who holds the
// lock (pid, process name, host where known) and how long it waited.
// Holder is the one way agentctl names the holder of a lock it waits for:
// the kernel's list of holders (Holders, Describe), then their Record.
// (The desktop input lock's holder, which status shows, is told by the
// record beside it: package cursor/lockholder.) The
// package never decides what a lock protects, how long to wait for it,
// whether to share it or which holders not to wait for; callers say so in
// a Wait.
package lockfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/gofrs/flock"

	"github.com/agentctl/agentctl/internal/process"
)

// Perm is what a new lock file asks for: read and write for the owner and
// the group, as the umask allows, and nothing for others.
const Perm fs.FileMode = 0o660

// New returns the lock on path; the file is created on first use. A lock
// file an older agentctl created readable by others is tightened if this
// user owns it; one this user cannot change is used as it is.
func New(path string) *flock.Flock {
	if fi, err := os.Stat(path); err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o007 != 0 {
		os.Chmod(path, fi.Mode().Perm()&^0o007) // best effort: see above
	}
	return flock.New(path, flock.SetPermissions(Perm))
}

// Open returns the lock on a lock file another program owns, such as the
// inbox.json.lock beside a watched inbox.json that is only read: opened
// read-only, never created and never changed. Taking its lock fails while
// the file is missing; a reader takes it Shared.
func Open(path string) *flock.Flock {
	return flock.New(path, flock.SetFlag(os.O_RDONLY))
}

// Record says who holds a lock: what its holder wrote into the lock file.
type Record struct {
	PID   int
	Start uint64 // process.StartTime of PID; 0 when unknown
	Role  string // what the holder is, e.g. "runner"; one word
	// Host is the machine the holder runs on, where known: on a runtime
	// folder shared between machines, a pid alone names nobody.
	Host string
}

// Self is the record of this process in role.
func Self(role string) Record {
	start, _ := process.StartTime(os.Getpid())
	return Record{PID: os.Getpid(), Start: start, Role: role, Host: hostname()}
}

// String is the record as written: "PID START ROLE HOST", the host only
// after a role, so that older readers, which stop at the role, still read
// what they know.
func (r Record) String() string {
	if r.Role != "" && r.Host != "" && !strings.ContainsAny(r.Host, " \t\n") {
		return fmt.Sprintf("%d %d %s %s\n", r.PID, r.Start, r.Role, r.Host)
	}
	return fmt.Sprintf("%d %d %s\n", r.PID, r.Start, r.Role)
}

// Write records r in the lock file at path, in place: the file must never
// be replaced while held, since the lock lives on its inode. It goes at
// recordAt, past the bytes a lock covers where locks cover bytes.
func Write(path string, r Record) error {
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return fmt.Errorf("cannot record the holder of %s: %w", path, err)
	}
	text := r.String()
	_, err = f.WriteAt([]byte(text), recordAt)
	if err == nil {
		err = f.Truncate(recordAt + int64(len(text)))
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("cannot record the holder of %s: %w", path, err)
	}
	return nil
}

// maxRecord bounds what Read reads of a lock file: a record is a line.
const maxRecord = 4096

// Read returns the record in the lock file at path. It reads generously:
// a bare pid (what older versions wrote) gives a record without start
// time or role. ok is false when the file holds no pid.
func Read(path string) (r Record, ok bool) {
	f, err := os.Open(path)
	if err != nil {
		return Record{}, false
	}
	defer f.Close()
	data, err := io.ReadAll(io.NewSectionReader(f, recordAt, maxRecord))
	if err != nil {
		return Record{}, false
	}
	fields := strings.Fields(string(data))
	if len(fields) == 0 {
		return Record{}, false
	}
	r.PID, err = strconv.Atoi(fields[0])
	if err != nil || r.PID <= 0 {
		return Record{}, false
	}
	if len(fields) > 1 {
		r.Start, _ = strconv.ParseUint(fields[1], 10, 64)
	}
	if len(fields) > 2 {
		r.Role = fields[2]
	}
	if len(fields) > 3 {
		r.Host = fields[3]
	}
	return r, true
}

// Live reports whether the record still names a live process: its pid
// exists and started when the record says (process.Is). Where start times
// are unknown the pid alone is trusted; where they are known a record
// without one is not, because pids are reused.
func (r Record) Live() bool {
	if r.Start == 0 {
		_, err := process.StartTime(r.PID)
		return errors.Is(err, errors.ErrUnsupported) && process.Is(r.PID, 0)
	}
	return process.Is(r.PID, r.Start)
}

// Describe names the holders of the lock at path for a human, e.g.
// "pid 4242 (flock)"; "" when the kernel does not say.
func Describe(path string) string {
	var names []string
	pids, _ := Holders(path)
	for _, pid := range pids {
		s := "pid " + strconv.Itoa(pid)
		if name := process.Name(pid); name != "" {
			s += " (" + name + ")"
		}
		names = append(names, s)
	}
	return strings.Join(names, ", ")
}

// HeldBy returns the record in the lock file at path when it is believed:
// it names a live process, the same one that wrote it, and the kernel,
// where it says, lists that process among the lock's holders. A record
// left by a holder that let go or died is not believed.
func HeldBy(path string) (Record, bool) {
	r, ok := Read(path)
	if !ok || !r.Live() {
		return Record{}, false
	}
	holders, known := Holders(path)
	if known && !slices.Contains(holders, r.PID) {
		return Record{}, false
	}
	if !known && r.PID == os.Getpid() {
		// Records stay after an unlock, and where the kernel names no
		// holders only this is sure: a process asking who holds a lock
		// does not hold it (a runner back from a fault would otherwise
		// refuse to start, taking its own old record for another runner).
		return Record{}, false
	}
	return r, true
}
