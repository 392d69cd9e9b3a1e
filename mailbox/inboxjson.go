package mailbox

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"

	"github.com/gofrs/flock"

	"agentctl/internal/atomicfile"
	"agentctl/internal/lockfile"
)

// lockInboxJSON takes the flock Dream.OS writers take (py-filelock is flock
// on inbox.json.lock). The lock file is never removed: removing it while
// someone waits on it would let two holders in.
func (m *Mailbox) lockInboxJSON(wait time.Duration) (*flock.Flock, error) {
	lock := lockfile.New(m.path(InboxJSONLock))
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	ok, err := lock.TryLockContext(ctx, 5*time.Millisecond)
	if err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return nil, fmt.Errorf("cannot lock %s: %w", m.path(InboxJSONLock), err)
	}
	if !ok {
		holder := lockfile.Describe(m.path(InboxJSONLock))
		if holder == "" {
			holder = "another process"
		}
		return nil, fmt.Errorf("cannot lock %s: still held by %s after %s", m.path(InboxJSONLock), holder, wait)
	}
	return lock, nil
}

// decodeArrayPrefix reads inbox.json: a JSON array of messages or one
// message object. tail is the offset of anything after that first value
// (the stale end of a longer file rewritten in place), or 0.
func decodeArrayPrefix(data []byte) (entries []json.RawMessage, tail int, err error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	var first json.RawMessage
	if err := dec.Decode(&first); err != nil {
		return nil, 0, fmt.Errorf("not valid JSON: %s", describeJSONError(data, err))
	}
	switch bytes.TrimSpace(first)[0] {
	case '[':
		if err := json.Unmarshal(first, &entries); err != nil {
			return nil, 0, fmt.Errorf("not valid JSON: %v", err)
		}
	case '{':
		entries = []json.RawMessage{first}
	default:
		return nil, 0, errors.New("neither a JSON array of messages nor one message object")
	}
	end := int(dec.InputOffset())
	if len(bytes.TrimSpace(data[end:])) > 0 {
		tail = end
	}
	return entries, tail, nil
}

// ingestInboxJSON moves every message of inbox.json into inbox/ and leaves
// inbox.json as "[]", all under the writers' lock. Messages without an id
// get one written back into inbox.json before anything is delivered, so that
// a crash between delivering and emptying cannot deliver them twice.
func (c *Consumer) ingestInboxJSON(now time.Time) error {
	path := c.mb.path(InboxJSON)
	if isEmptyInboxJSON(path) {
		return nil // nothing to do, without taking the writers' lock
	}
	lock, err := c.mb.lockInboxJSON(c.opts.LockWait)
	if err != nil {
		return err
	}
	defer lock.Unlock()

	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("cannot read %s: %w", path, err)
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil
	}
	entries, tail, err := decodeArrayPrefix(data)
	if err != nil {
		// Never read as "[]": the file goes to deadletter/ whole.
		dst := c.mb.freeDeadletterName(now.UTC().Format("20060102T150405Z") + "-" + InboxJSON)
		reason := reasonText(c.mb.Agent, InboxJSON, "", err.Error(), now)
		if err := c.mb.moveToDeadletter(path, dst, reason); err != nil {
			return err
		}
		c.emit("deadlettered", "", InboxJSON, err.Error())
		return atomicfile.WriteFile(path, []byte("[]\n"))
	}
	if len(entries) == 0 && tail == 0 {
		return nil
	}
	if entries, err = c.giveIDs(path, entries, data, tail, now); err != nil {
		return err
	}
	if tail > 0 {
		reason := fmt.Sprintf("data after the end of the JSON array at byte %d, left by an interrupted rewrite; the %d messages before it were delivered", tail, len(entries))
		if err := c.mb.deadletterData(InboxJSON+"-tail", data[tail:], InboxJSON, reason, now); err != nil {
			return err
		}
		c.emit("deadlettered", "", InboxJSON, reason)
	}
	for i, raw := range entries {
		name := fmt.Sprintf("%s[%d]", InboxJSON, i)
		msg, err := Decode(raw, Source{Name: name, ModTime: now, Owner: c.mb.Agent})
		if err == nil {
			err = c.checkRecipient(&msg)
		}
		if err != nil {
			if err := c.mb.deadletterData(fmt.Sprintf("%s-%d.json", InboxJSON, i), raw, name, err.Error(), now); err != nil {
				return err
			}
			c.emit("deadlettered", "", name, err.Error())
			continue
		}
		if err := c.deliverFound(msg, name); err != nil {
			return err
		}
	}
	return atomicfile.WriteFile(path, []byte("[]\n"))
}

// giveIDs writes an id into every entry of inbox.json that has none, and
// returns the entries as written.
func (c *Consumer) giveIDs(path string, entries []json.RawMessage, data []byte, tail int, now time.Time) ([]json.RawMessage, error) {
	changed := false
	for i, raw := range entries {
		var obj map[string]any
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		if dec.Decode(&obj) != nil || hasID(obj) {
			continue
		}
		obj["id"] = NewID(now)
		fixed, err := json.Marshal(obj)
		if err != nil {
			continue
		}
		entries[i] = fixed
		changed = true
	}
	if !changed {
		return entries, nil
	}
	out, err := json.MarshalIndent(entries, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("cannot rewrite %s: %w", path, err)
	}
	out = append(out, '\n')
	if tail > 0 {
		out = append(out, data[tail:]...) // keep the tail for the dead letter
	}
	if err := atomicfile.WriteFile(path, out); err != nil {
		return nil, err
	}
	return entries, nil
}

func hasID(obj map[string]any) bool {
	for _, k := range []string{"id", "message_id", "msg_id", "uuid"} {
		if s, ok := obj[k].(string); ok && s != "" {
			return true
		}
	}
	if inner, ok := obj["message"].(map[string]any); ok {
		if q, ok := obj["queue_id"].(string); ok && q != "" {
			return true
		}
		return hasID(inner)
	}
	return false
}

// isEmptyInboxJSON is the lock-free check that keeps an idle mailbox from
// contending with the Dream.OS writers for their lock.
func isEmptyInboxJSON(path string) bool {
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return true
	}
	if err != nil || fi.Size() > 16 {
		return false
	}
	data, err := os.ReadFile(path)
	return err == nil && string(bytes.TrimSpace(data)) == "[]"
}
