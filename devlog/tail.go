package devlog

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"sort"
)

// Last returns the text of the last n entries among the first size bytes of
// the file at path, reading backwards so a devlog of any length costs only
// what is shown. Text before the first entry is included when fewer than n
// entries exist. A missing file reads as empty.
func Last(path string, n int, size int64) ([]byte, error) {
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("cannot read devlog: %w", err)
	}
	defer f.Close()
	if size < 0 {
		st, err := f.Stat()
		if err != nil {
			return nil, fmt.Errorf("cannot read devlog: %w", err)
		}
		size = st.Size()
	}
	const chunk = 64 * 1024
	var buf []byte
	pos := size
	for {
		start := max(pos-chunk, 0)
		part := make([]byte, pos-start)
		if _, err := f.ReadAt(part, start); err != nil && err != io.EOF {
			return nil, fmt.Errorf("cannot read devlog: %w", err)
		}
		buf = append(part, buf...)
		pos = start
		starts := headerStarts(buf, pos == 0)
		if len(starts) >= n && n > 0 {
			return buf[starts[len(starts)-n]:], nil
		}
		if pos == 0 {
			if n <= 0 {
				return nil, nil
			}
			return buf, nil
		}
	}
}

// headerStarts lists the offsets of complete header lines in buf; the first
// line counts only when buf starts at the beginning of the file.
func headerStarts(buf []byte, atFileStart bool) []int {
	var starts []int
	for off := 0; off < len(buf); {
		end := bytes.IndexByte(buf[off:], '\n')
		if end < 0 {
			end = len(buf) - off
		}
		if (off > 0 || atFileStart) && IsHeader(buf[off:off+end]) {
			starts = append(starts, off)
		}
		off += end + 1
	}
	return starts
}

// Merge interleaves the entries of several devlogs by time (then agent, so
// the order is stable) and keeps the last n; n <= 0 keeps all.
func Merge(n int, logs ...[]Entry) []Entry {
	var all []Entry
	for _, l := range logs {
		all = append(all, l...)
	}
	sort.SliceStable(all, func(i, j int) bool {
		if !all[i].Time.Equal(all[j].Time) {
			return all[i].Time.Before(all[j].Time)
		}
		return all[i].Agent < all[j].Agent
	})
	if n > 0 && len(all) > n {
		all = all[len(all)-n:]
	}
	return all
}
