//go:build unix

package hub

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/agentctl/agentctl/agents/hub/hubconf"
	"github.com/agentctl/agentctl/internal/testenv/poll"
	"github.com/agentctl/agentctl/internal/testenv/umasktest"
)

// The JetStream folder and all the server writes in it stay private to
// the hub's user whatever the umask: others could plant or alter messages.
func TestStoreDirIsPrivate(t *testing.T) {
	umasktest.Under(t, []int{0o000, 0o022}, func(t *testing.T, umask int) {
		store := filepath.Join(t.TempDir(), "a", "store")
		srv := startTestServer(t, hubconf.Settings{StoreDir: store})
		nc := connectTest(t, ClientSettings{URLs: []string{srv.ClientURL()}})
		js, _ := jetstream.New(nc)
		ctx, cancel := poll.Context(t)
		defer cancel()
		if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "S", Subjects: []string{"s"}}); err != nil {
			t.Fatal(err)
		}
		if _, err := js.Publish(ctx, "s", []byte("x")); err != nil {
			t.Fatal(err)
		}
		srv.Shutdown()
		entries := 0
		err := filepath.WalkDir(store, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			fi, err := d.Info()
			if err != nil {
				return err
			}
			entries++
			if fi.Mode().Perm()&0o022 != 0 {
				t.Errorf("umask %03o: %s is %v, writable by others", umask, path, fi.Mode().Perm())
			}
			if d.IsDir() && fi.Mode().Perm() != 0o700 {
				t.Errorf("umask %03o: folder %s is %v, want 0700", umask, path, fi.Mode().Perm())
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if entries < 3 {
			t.Errorf("the store holds %d entries, want the stream's files", entries)
		}
	})
}

func TestStoreDirWritableByOthersRefused(t *testing.T) {
	store := t.TempDir()
	if err := os.Chmod(store, 0o777); err != nil {
		t.Fatal(err)
	}
	_, err := startServer(hubconf.Settings{Listen: "127.0.0.1:0", StoreDir: store})
	if err == nil || !strings.Contains(err.Error(), "writable by others") {
		t.Errorf("err = %v, want a refusal of the world-writable store", err)
	}
}
