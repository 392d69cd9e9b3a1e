// Package atomicfile is the one way agentctl writes files that other
// processes read: every replace is atomic and durable, and every create can
// refuse to clobber.
//
// A reader never sees a half-written file: data goes to a dot-prefixed temp
// file in the destination folder (so watchers skip it and the final rename
// never crosses a file system), is fsynced, and is then renamed or linked into
// place, after which the folder itself is fsynced so the new name survives a
// power cut. On Windows, which refuses to replace a file another process
// holds open, the rename is retried for a bounded time, then fails with the
// old file intact.
//
// The package owns only the mechanics of writing. It never decides names,
// formats or locking; callers do.
package atomicfile

import (
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
)

// FilePerm and DirPerm are the permissions agentctl asks for when it
// creates a file or a folder under the runtime root. The user's umask
// applies, so a umask of 022 gives 0644 and 0755, 002 gives 0664 and 0775,
// 077 gives 0600 and 0700. Others never get write permission, whatever the
// umask: a world-writable runtime would let any local user queue prompts.
// Nothing is chmod'ed afterwards, so the umask is the last word, and a file
// replaced keeps the permissions it had, so a person's chmod lasts; only a
// secret (WriteSecret) is 0600 whatever it was before.
const (
	FilePerm fs.FileMode = 0o664
	DirPerm  fs.FileMode = 0o775
)

// TempPrefix starts the name of every temp file this package creates.
// Watchers and listings skip names that start with a dot.
const TempPrefix = "."

// WriteFile atomically replaces path with data.
func WriteFile(path string, data []byte) error {
	if err := replace(path, data, FilePerm, false); err != nil {
		return fmt.Errorf("cannot write %s: %w", path, err)
	}
	return SyncDir(filepath.Dir(path))
}

// WriteSecret atomically replaces path with data that only its owner may
// read or write (0600 whatever the umask), for a secret such as a token.
func WriteSecret(path string, data []byte) error {
	if err := replace(path, data, 0o600, true); err != nil {
		return fmt.Errorf("cannot write %s: %w", path, err)
	}
	return SyncDir(filepath.Dir(path))
}

// WriteFileNoSync atomically replaces path with data without waiting for
// the disk. Readers still never see a torn file, but after a power cut the
// previous version may come back. It is for files that are rewritten often
// and whose loss costs nothing: a heartbeat, a record that recovery can
// rebuild.
func WriteFileNoSync(path string, data []byte) error {
	tmp, err := writeTempNoSync(filepath.Dir(path), filepath.Base(path), data)
	if err != nil {
		return fmt.Errorf("cannot write %s: %w", path, err)
	}
	if err := rename(tmp, path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("cannot write %s: %w", path, err)
	}
	return nil
}

// Create writes data to path only if nothing exists there yet. It returns an
// error wrapping fs.ErrExist when the name is taken, so concurrent writers of
// the same name (the same message id, say) end with exactly one file.
func Create(path string, data []byte) error {
	tmp, err := writeTemp(filepath.Dir(path), filepath.Base(path), data)
	if err != nil {
		return fmt.Errorf("cannot write %s: %w", path, err)
	}
	defer os.Remove(tmp)
	if err := os.Link(tmp, path); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("cannot create %s: %w", path, fs.ErrExist)
		}
		return fmt.Errorf("cannot create %s: %w", path, err)
	}
	return SyncDir(filepath.Dir(path))
}

// writeTemp writes data to a new, fsynced temp file in dir and returns its path.
func writeTemp(dir, base string, data []byte) (string, error) {
	return writeTempFile(dir, base, data, true)
}

func writeTempNoSync(dir, base string, data []byte) (string, error) {
	return writeTempFile(dir, base, data, false)
}

func writeTempFile(dir, base string, data []byte, sync bool) (string, error) {
	f, err := createTemp(dir, TempPrefix+base+".tmp")
	if err != nil {
		return "", err
	}
	name := f.Name()
	_, err = f.Write(data)
	if err == nil && sync {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(name)
		return "", err
	}
	return name, nil
}

// createTemp creates a new file named prefix and a random number in dir.
// Unlike os.CreateTemp (always 0600) it asks for FilePerm, so the file ends
// up as the umask says without a chmod.
func createTemp(dir, prefix string) (*os.File, error) {
	for try := 0; ; try++ {
		name := filepath.Join(dir, prefix+strconv.FormatUint(uint64(rand.Uint32()), 10))
		f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, FilePerm)
		if errors.Is(err, fs.ErrExist) && try < 100 {
			continue
		}
		return f, err
	}
}

// tempPattern matches the temp files writeTemp makes.
var tempPattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\..+\.tmp[0-9]+$`) })

// IsLeftover reports whether name is a temp file of ours, which only a
// writer that died before renaming or linking it leaves behind.
func IsLeftover(name string) bool {
	return tempPattern().MatchString(filepath.Base(name))
}

// IsTemp reports whether a file name is one of our temp files, or any other
// dot-file, which readers must never consume.
func IsTemp(name string) bool {
	return strings.HasPrefix(filepath.Base(name), TempPrefix)
}

// RootPerm is what a runtime folder asks for when agentctl creates it:
// nothing for other accounts, to whom a prompt, a message or agentctl.yaml
// read is a leak; what is inside then needs no care of its own. The umask
// applies (022 gives 0750).
const RootPerm fs.FileMode = 0o770

// MkdirRoot creates the runtime folder dir, closed to other accounts
// (RootPerm), and the folders above it as MkdirAll does. A folder that
// exists is left as it is: it may be the person's own.
func MkdirRoot(dir string) error {
	if err := MkdirAll(filepath.Dir(dir)); err != nil {
		return err
	}
	if err := os.Mkdir(dir, RootPerm); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("cannot create folder: %w", err)
	}
	return nil
}

// MkdirAll creates dir and its parents with DirPerm.
func MkdirAll(dir string) error {
	if err := os.MkdirAll(dir, DirPerm); err != nil {
		return fmt.Errorf("cannot create folder: %w", err)
	}
	return nil
}
