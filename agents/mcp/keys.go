package mcp

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/agentctl/agentctl/internal/atomicfile"
	"github.com/agentctl/agentctl/internal/clock"
	"github.com/agentctl/agentctl/internal/layout"
	"github.com/agentctl/agentctl/internal/lockfile"
)

// KeyLifetime is how long a send's idempotency key is remembered: a week,
// so that a client retrying after a crash, a resumed session or a
// weekend still delivers once, while the folder holds no more than a
// week of sends. A key used again after that is a new send.
const KeyLifetime = 7 * 24 * time.Hour

// keyRecord is one idempotency key of a sender, as kept on disk.
type keyRecord struct {
	Key string `json:"key"`
	// Request fingerprints what was asked, so the same key for another
	// message is refused rather than answered with the first one's ids.
	Request string `json:"request"`
	// Nonce names the messages of this key (idFor): a repeat that finds
	// the record before the first call delivered delivers the same ids,
	// which the mailbox takes once.
	Nonce     string    `json:"nonce"`
	CreatedAt time.Time `json:"created_at"`
	// IDs are the messages delivered, once the delivery is complete.
	IDs []string `json:"ids,omitempty"`
}

// idFor is the id of the key's message to recipient.
func (r keyRecord) idFor(recipient string) string {
	sum := sha256.Sum256([]byte("send\x00" + r.Nonce + "\x00" + recipient))
	return "msg_" + hex.EncodeToString(sum[:])[:24]
}

// keyStore keeps one sender's idempotency keys, one file per key, each
// replaced by rename. Readers and writers of the records take the
// sender's keys lock, so concurrent calls, in this process or others,
// agree on one record: the lock is held while a record is read and
// written, never while a message is delivered.
type keyStore struct {
	dir, lock string
	lifetime  time.Duration
	// Clock ages the keys and times the wait for the keys lock;
	// clock.System when nil.
	Clock clock.Clock

	mu       sync.Mutex
	prunedAt time.Time
}

func (k *keyStore) path(key string) string {
	sum := sha256.Sum256([]byte(key))
	return filepath.Join(k.dir, hex.EncodeToString(sum[:16])+layout.RecordSuffix)
}

// locked runs f holding the keys lock.
func (k *keyStore) locked(ctx context.Context, f func() error) error {
	if err := atomicfile.MkdirAll(filepath.Dir(k.lock)); err != nil {
		return err
	}
	l, _, err := lockfile.Acquire(ctx, k.lock, lockfile.Wait{For: lockWait, Clock: k.Clock})
	if err != nil {
		return fmt.Errorf("cannot read the idempotency keys: %w", err)
	}
	defer l.Unlock()
	return f()
}

// lockWait bounds the wait for the keys lock, which is held for the
// milliseconds of a file's read and write.
const lockWait = 30 * time.Second

// claim returns the record of key, made now when the key is new or its
// record expired; request must match the one it was made for.
func (k *keyStore) claim(ctx context.Context, key, request string) (keyRecord, error) {
	now := clock.Or(k.Clock).Now().UTC()
	var r keyRecord
	err := k.locked(ctx, func() error {
		k.prune(now)
		path := k.path(key)
		old, err := readKey(path)
		switch {
		case err == nil && now.Sub(old.CreatedAt) < k.lifetime:
			if old.Key != key || old.Request != request {
				return fmt.Errorf("idempotency key %q was used for another message (sent at %s); a key names one send", key, old.CreatedAt.Format(time.RFC3339))
			}
			r = old
			return nil
		case err != nil && !errors.Is(err, fs.ErrNotExist):
			return err
		}
		// New, or expired: the key is free again.
		nonce := make([]byte, 16)
		rand.Read(nonce)
		r = keyRecord{Key: key, Request: request, Nonce: hex.EncodeToString(nonce), CreatedAt: now}
		return k.write(r)
	})
	return r, err
}

func (k *keyStore) write(r keyRecord) error {
	data, err := json.Marshal(r)
	if err != nil {
		return err
	}
	if err := atomicfile.MkdirAll(k.dir); err != nil {
		return fmt.Errorf("cannot keep idempotency key %q: %w", r.Key, err)
	}
	if err := atomicfile.WriteFile(k.path(r.Key), append(data, '\n')); err != nil {
		return fmt.Errorf("cannot keep idempotency key %q: %w", r.Key, err)
	}
	return nil
}

// delivered records the ids the key's send delivered, unless the record
// changed meanwhile (it expired and the key was used again).
func (k *keyStore) delivered(ctx context.Context, r keyRecord, ids []string) error {
	return k.locked(ctx, func() error {
		if cur, err := readKey(k.path(r.Key)); err != nil || cur.Nonce != r.Nonce {
			return nil
		}
		r.IDs = ids
		return k.write(r)
	})
}

func readKey(path string) (keyRecord, error) {
	var r keyRecord
	data, err := os.ReadFile(path)
	if err != nil {
		return r, err
	}
	if err := json.Unmarshal(data, &r); err != nil {
		return r, fmt.Errorf("cannot read idempotency key record %s: %w", path, err)
	}
	return r, nil
}

// prune removes the records older than the lifetime, at most once an
// hour: they are looked at by name, so old ones only take room. Its
// caller holds the keys lock.
func (k *keyStore) prune(now time.Time) {
	k.mu.Lock()
	due := now.Sub(k.prunedAt) >= time.Hour
	if due {
		k.prunedAt = now
	}
	k.mu.Unlock()
	if !due {
		return
	}
	entries, _ := os.ReadDir(k.dir)
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), layout.RecordSuffix) || atomicfile.IsTemp(e.Name()) {
			continue
		}
		path := filepath.Join(k.dir, e.Name())
		if r, err := readKey(path); err == nil && now.Sub(r.CreatedAt) >= k.lifetime {
			os.Remove(path)
		}
	}
}
