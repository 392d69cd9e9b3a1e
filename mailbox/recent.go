package mailbox

import (
	"fmt"
	"os"
	"sort"
	"strings"
)

// RecentDone reads the n most recently archived messages with their
// receipts, newest first. It reads only the newest days of the archive and
// only the n files it returns, so its cost does not grow with the archive:
// views that refresh on every file event use it where List would read
// every message ever archived.
func (m *Mailbox) RecentDone(n int) ([]Entry, error) {
	days, err := os.ReadDir(m.path(ArchiveDir))
	if err != nil {
		return nil, fmt.Errorf("cannot list the archive of %s: %w", m.Agent, err)
	}
	type file struct {
		dir, name string
		mod       int64
	}
	var out []Entry
	for i := len(days) - 1; i >= 0 && len(out) < n; i-- { // day folders sort by name
		if !days[i].IsDir() {
			continue
		}
		dir := ArchiveDir + "/" + days[i].Name()
		entries, err := os.ReadDir(m.path(dir))
		if err != nil {
			return nil, fmt.Errorf("cannot list %s of %s: %w", dir, m.Agent, err)
		}
		var files []file
		for _, e := range entries {
			if !strings.HasSuffix(e.Name(), ReceiptSuffix) {
				continue
			}
			fi, err := e.Info()
			if err != nil {
				continue // archived and moved on meanwhile
			}
			files = append(files, file{dir, strings.TrimSuffix(e.Name(), ReceiptSuffix) + ".json", fi.ModTime().UnixNano()})
		}
		sort.Slice(files, func(a, b int) bool { return files[a].mod > files[b].mod })
		for _, f := range files {
			if len(out) == n {
				break
			}
			ent := m.readEntry(StateDone, f.dir, f.name)
			if r, err := readReceipt(m.path(strings.TrimSuffix(ent.File, ".json") + ReceiptSuffix)); err == nil {
				ent.Receipt = &r
			}
			out = append(out, ent)
		}
	}
	return out, nil
}
