package devlog

import (
	"fmt"
	"os"

	"github.com/agentctl/agentctl/internal/atomicfile"
	"github.com/agentctl/agentctl/internal/layout"
)

// DevlogsDir is the devlogs folder's name under a runtime root.
const DevlogsDir = layout.DevlogsDir

// MaxText bounds the reply, error or note kept in one entry, so one entry
// stays one modest write; the full reply lives in the message's receipt.
const MaxText = 64 * 1024

// Dir is the devlogs folder of a runtime root.
func Dir(root string) string { return layout.Devlogs(root) }

// Path is an agent's devlog. The name must be a valid agent name.
func Path(root, agent string) (string, error) {
	a, err := layout.For(root, agent)
	if err != nil {
		return "", err
	}
	return a.Devlog(), nil
}

// Append adds e to its agent's devlog in one O_APPEND write.
func Append(root string, e Entry) error {
	path, err := Path(root, e.Agent)
	if err != nil {
		return fmt.Errorf("cannot write devlog: %w", err)
	}
	if e.Time.IsZero() {
		return fmt.Errorf("cannot write devlog of %s: the entry has no time", e.Agent)
	}
	e.Reply, e.Error, e.Note = clip(e.Reply), clip(e.Error), clip(e.Note)
	if err := atomicfile.MkdirAll(Dir(root)); err != nil {
		return fmt.Errorf("cannot write devlog of %s: %w", e.Agent, err)
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_APPEND|os.O_CREATE, atomicfile.FilePerm)
	if err != nil {
		return fmt.Errorf("cannot write devlog of %s: %w", e.Agent, err)
	}
	// One write call: the kernel appends it whole, never interleaved with
	// another process's append. A devlog a person saved without a final
	// line break would take the entry's heading into its last line, and
	// with it the entry: the write starts with one.
	_, err = f.Write(append(lineBreakBefore(f), Format(e)...))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("cannot write devlog of %s: %w", e.Agent, err)
	}
	return nil
}

// lineBreakBefore is "\n" when f does not end in one, nothing otherwise.
func lineBreakBefore(f *os.File) []byte {
	fi, err := f.Stat()
	if err != nil || fi.Size() == 0 {
		return nil
	}
	last := make([]byte, 1)
	if _, err := f.ReadAt(last, fi.Size()-1); err != nil || last[0] == '\n' {
		return nil
	}
	return []byte("\n")
}

func clip(s string) string {
	if len(s) <= MaxText {
		return s
	}
	cut := MaxText
	for cut > 0 && s[cut]&0xC0 == 0x80 { // not inside a UTF-8 sequence
		cut--
	}
	return s[:cut] + fmt.Sprintf("\n[… %d more bytes not kept in the devlog]", len(s)-cut)
}

// ReadAgent reads all entries of an agent's devlog; a missing devlog has none.
func ReadAgent(root, agent string) ([]Entry, error) {
	path, err := Path(root, agent)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("cannot read devlog: %w", err)
	}
	defer f.Close()
	return Read(f)
}
