package mailbox

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/agentctl/agentctl/internal/agentname"
	"github.com/agentctl/agentctl/internal/atomicfile"
)

// Ignored reports names that are never messages: dot-files (our temp
// files, editors' swap files) and the temp names of editors and downloads.
func Ignored(name string) bool {
	if atomicfile.IsTemp(name) {
		return true
	}
	for _, suffix := range []string{"~", ".tmp", ".swp", ".part", ".crdownload", ".partial"} {
		if strings.HasSuffix(name, suffix) {
			return true
		}
	}
	return strings.HasPrefix(name, "#") || strings.HasSuffix(name, ReasonSuffix)
}

// ingestFile looks at one name in inbox/ and leaves it indexed, normalised
// into a canonical message, settling, or dead-lettered.
func (c *Consumer) ingestFile(name string, now time.Time) error {
	if Ignored(name) || strings.ContainsAny(name, `/\`) {
		return nil
	}
	path := c.mb.path(InboxDir, name)
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		c.q.remove(strings.TrimSuffix(name, MessageSuffix))
		c.settling.Forget(name)
		return nil
	}
	if err != nil {
		return fmt.Errorf("cannot read %s: %w", path, err)
	}
	stem, isStem := strings.CutSuffix(name, MessageSuffix)
	if isStem && c.q.has(stem) {
		return nil // indexed already; canonical files never change in place
	}
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		return c.deadletterFile(name, "", "it is a symbolic link; agentctl reads only regular files, so a link cannot make it read another file", now)
	case !fi.Mode().IsRegular():
		return c.deadletterFile(name, "", "it is not a regular file", now)
	case fi.Size() > c.opts.MaxMessageBytes:
		return c.deadletterFile(name, "", fmt.Sprintf("it is %d bytes, over the %d-byte limit for one message", fi.Size(), c.opts.MaxMessageBytes), now)
	}
	ext := strings.ToLower(filepath.Ext(name))
	if !MessageExt(ext) {
		if c.settling.Settled(name, fi, now) {
			return c.deadletterFile(name, "", "only *.json, *.msg, *.md and *.txt files are messages", now)
		}
		return nil
	}
	data, err := ReadRegular(path, fi)
	if errors.Is(err, ErrChanged) || errors.Is(err, fs.ErrNotExist) {
		return nil // replaced or removed meanwhile; its own event follows
	}
	if err != nil {
		return fmt.Errorf("cannot read %s: %w", path, err)
	}
	// Complete JSON can be read at once: a file still being written is
	// never valid JSON. Anything else waits until it stops changing.
	if ext != MessageSuffix || !IsCompleteJSON(data) {
		if !c.settling.Settled(name, fi, now) {
			return nil
		}
	}
	c.settling.Forget(name)

	msg, err := Decode(data, Source{Name: name, ModTime: fi.ModTime(), Owner: c.mb.Agent})
	if err == nil {
		err = c.CheckRecipient(&msg)
	}
	if err != nil {
		return c.deadletterFile(name, msg.ID, err.Error(), now)
	}
	if Stem(msg.ID)+MessageSuffix == name {
		// Already where and what a delivered message is. Its .seen marker
		// is not ours to write: the delivering process may be about to, and
		// would then take ours for an earlier delivery. Claim writes it.
		c.index(msg)
		return nil
	}
	// A dropped file: deliver it under its canonical name, then remove the
	// original. A crash in between leaves both, and the next look finds the
	// original to be a duplicate of its own delivery.
	if err := c.DeliverFound(msg, name); err != nil {
		return err
	}
	if _, err := RemoveRead(path, fi, data); err != nil {
		return fmt.Errorf("cannot remove ingested %s: %w", path, err)
	}
	return nil
}

// DeliverFound delivers a message found in a file (dropped into inbox/,
// taken from inbox.json or from a place outside the mailbox) and indexes
// it, so it is claimable at once. A duplicate is no error: it is the same
// message again, or our own delivery from before a crash; from names the
// file in the events that say which.
func (c *Consumer) DeliverFound(msg Message, from string) error {
	err := c.mb.Deliver(msg)
	switch {
	case errors.Is(err, ErrDuplicate):
		c.emit("duplicate", msg.ID, from, "already delivered")
	case err != nil:
		return err
	default:
		c.index(msg)
		c.emit("ingested", msg.ID, from, "")
	}
	return nil
}

// CheckRecipient makes sure a message found for this mailbox, in it or by
// the intake, is for this agent, and spells the recipient the configured
// way.
func (c *Consumer) CheckRecipient(msg *Message) error {
	to, err := agentname.Resolve(c.opts.Known, msg.To)
	if err != nil {
		return fmt.Errorf("recipient %q is not an agent of this runtime", msg.To)
	}
	if to != c.mb.Agent {
		return fmt.Errorf("it is addressed to %s, not %s", to, c.mb.Agent)
	}
	msg.To = to
	return nil
}

func (c *Consumer) index(msg Message) {
	p := &pending{stem: Stem(msg.ID), rank: msg.Priority.Rank(), createdAt: msg.CreatedAt}
	if msg.DeliverAfter != nil {
		p.notBefore = *msg.DeliverAfter
	}
	c.q.add(p)
}

// MessageExt reports the extensions Dream.OS gave message files: JSON
// as .json or .msg, Markdown as .md or .txt (its content decides how each
// is read).
func MessageExt(ext string) bool {
	switch ext {
	case ".json", ".msg", ".md", ".txt":
		return true
	}
	return false
}

// RemoveRead removes the file at path once data, what was read of it (the
// file read described), is delivered or set aside, unless it holds more
// than that now: a writer that put a new file under the same name
// meanwhile, or wrote other text into it, keeps what it wrote, for the
// next look to take. A file that only gained white space (a newline
// written after the JSON) is the message read, and goes. kept reports
// what stayed.
func RemoveRead(path string, read fs.FileInfo, data []byte) (kept bool, err error) {
	now, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if !os.SameFile(read, now) {
		return true, nil
	}
	if now.Size() != read.Size() || !now.ModTime().Equal(read.ModTime()) {
		again, err := ReadRegular(path, now)
		if err != nil || !bytes.Equal(bytes.TrimSpace(again), bytes.TrimSpace(data)) {
			return true, nil
		}
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return false, err
	}
	return false, nil
}

// ErrChanged is ReadRegular's answer for a file replaced since it was
// described.
var ErrChanged = errors.New("file changed while being read")

// ReadRegular reads the file that Lstat described, refusing to follow a
// symlink swapped in since; the intake reads outside files the same way.
func ReadRegular(path string, want fs.FileInfo) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	got, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !os.SameFile(want, got) {
		return nil, ErrChanged
	}
	return io.ReadAll(io.LimitReader(f, want.Size()+1))
}
