package migrate

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentctl/agentctl/lore"
)

// Devlogs and lore come over whole: every file under a devlog or lore
// folder, whatever its form, is copied byte for byte, and Dream.OS's
// translation dictionary becomes the lore's; a second run copies nothing
// again, and a runtime's own dictionary is not replaced.
func TestDevlogsAndLoreComeOverWhole(t *testing.T) {
	tree := buildTree(t)
	root := t.TempDir()
	cfg := fiveAgents(t, root)
	p := run(t, tree, root, cfg)
	kinds := map[Kind]int{}
	for _, f := range p.Files {
		dirs := "/" + filepath.ToSlash(filepath.Dir(f.Path)) + "/"
		want := Kind("")
		switch {
		case strings.Contains(dirs, "/devlogs/") || strings.Contains(dirs, "/devlog/"):
			want = KindDevlog
		case strings.Contains(dirs, "/lore/") || strings.HasSuffix(f.Path, "/dream_translation.yaml"):
			want = KindLore
		default:
			continue
		}
		if f.Kind != want {
			t.Errorf("%s: %s (%s), want %s", f.Path, f.Kind, f.Reason, want)
			continue
		}
		kinds[want]++
		src, _ := os.ReadFile(filepath.Join(tree, filepath.FromSlash(f.Path)))
		if got, err := os.ReadFile(f.To); err != nil || !bytes.Equal(got, src) {
			t.Errorf("%s: not copied whole to %s: %v", f.Path, f.To, err)
		}
	}
	if kinds[KindDevlog] != 4 || kinds[KindLore] != 3 {
		t.Errorf("copied %d devlogs and %d lore files, want the tree's 4 and 3", kinds[KindDevlog], kinds[KindLore])
	}
	data, err := os.ReadFile(filepath.Join(root, "lore", "dictionary.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if d, err := lore.ParseDictionary("dictionary.yaml", data); err != nil || len(d.Components) == 0 {
		t.Errorf("the lore's dictionary does not load: %v", err)
	}

	again := plan(t, tree, root, cfg)
	for _, f := range again.Files {
		if f.Kind == KindDevlog || f.Kind == KindLore {
			t.Errorf("%s: %s again on a second run", f.Path, f.Kind)
		}
	}

	own := t.TempDir()
	cfg = fiveAgents(t, own)
	if err := os.MkdirAll(filepath.Join(own, "lore"), 0o755); err != nil {
		t.Fatal(err)
	}
	mine := []byte("components:\n  agent: wanderer\n")
	if err := os.WriteFile(filepath.Join(own, "lore", "dictionary.yaml"), mine, 0o644); err != nil {
		t.Fatal(err)
	}
	run(t, tree, own, cfg)
	if got, _ := os.ReadFile(filepath.Join(own, "lore", "dictionary.yaml")); !bytes.Equal(got, mine) {
		t.Error("migrate replaced the runtime's own dictionary")
	}
	if _, err := os.Stat(filepath.Join(own, "lore", "dreamos", "victoros__runtime__operational_logs__config__dream_translation.yaml")); err != nil {
		t.Errorf("the old dictionary is not kept beside the lore: %v", err)
	}
}
