package agents

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

func TestClassifyFault(t *testing.T) {
	root := filepath.Join(string(filepath.Separator)+"srv", "runtime")
	in := filepath.Join(root, "agent_mailboxes", "Agent-1", "status.json")
	out := filepath.Join(string(filepath.Separator)+"etc", "agentctl", "templates")
	for _, c := range []struct {
		name     string
		err      error
		rootGone bool
		want     faultKind
	}{
		{"nothing", nil, false, faultNone},
		{"full", fmt.Errorf("cannot write status: %w", &fs.PathError{Op: "write", Path: in, Err: syscall.ENOSPC}), false, faultDiskFull},
		{"quota", &fs.PathError{Op: "write", Path: in, Err: syscall.EDQUOT}, false, faultDiskFull},
		{"read-only", &os.LinkError{Op: "rename", Old: in + ".tmp", New: in, Err: syscall.EROFS}, false, faultReadOnly},
		{"denied in the runtime", &fs.PathError{Op: "open", Path: in, Err: syscall.EACCES}, false, faultReadOnly},
		{"not permitted, no path", fmt.Errorf("cannot lock: %w", syscall.EPERM), false, faultReadOnly},
		{"denied elsewhere", &fs.PathError{Op: "open", Path: out, Err: syscall.EACCES}, false, faultNone},
		{"denied next to the runtime", &fs.PathError{Op: "open", Path: root + "-old/x", Err: syscall.EACCES}, false, faultNone},
		{"any error without the runtime", errors.New("the mailbox watcher stopped"), true, faultRuntimeGone},
		{"a missing file in a runtime that is there", &fs.PathError{Op: "open", Path: in, Err: syscall.ENOENT}, false, faultNone},
		{"a bug", errors.New("m1 was left unsettled"), false, faultNone},
	} {
		if got := classifyFault(c.err, root, c.rootGone); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}
