package supervise

import (
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
)

// fingerprint sums what a person's edit changes in paths: each file's
// size and modification time, and those of the files directly inside a
// folder (a credentials folder whose key is replaced). A path that does
// not exist counts too, so creating it is a change.
func fingerprint(paths []string) uint64 {
	h := fnv.New64a()
	note := func(p string, fi os.FileInfo, err error) {
		if err != nil {
			fmt.Fprintf(h, "%s:absent\n", p)
			return
		}
		fmt.Fprintf(h, "%s:%d:%d\n", p, fi.Size(), fi.ModTime().UnixNano())
	}
	for _, p := range paths {
		fi, err := os.Stat(p)
		note(p, fi, err)
		if err != nil || !fi.IsDir() {
			continue
		}
		entries, _ := os.ReadDir(p)
		for _, e := range entries {
			fi, err := e.Info()
			note(filepath.Join(p, e.Name()), fi, err)
		}
	}
	return h.Sum64()
}
