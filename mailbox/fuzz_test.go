package mailbox

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// FuzzDecode feeds the decoder arbitrary bytes, seeded with every Dream.OS
// sample. Decoding must never panic, and whatever it accepts must survive a
// round trip through the canonical form unchanged.
func FuzzDecode(f *testing.F) {
	samples, _ := filepath.Glob(filepath.Join(samplesDir, "*"))
	for _, s := range samples {
		data, err := os.ReadFile(s)
		if err == nil && len(data) < 64<<10 {
			f.Add(data, filepath.Ext(s) == ".md")
		}
	}
	f.Add([]byte(`{"id":"x","body":"y","priority":0.75,"ts":1755248908}`), false)
	f.Add([]byte("**From**: a\n**To**: b\n---\nbody"), true)
	f.Add([]byte(`{"body":"y","created_at":"10000-01-01T00:00:00Z","ts":99999999999999}`), false) // once made Encode panic
	f.Fuzz(func(t *testing.T, data []byte, markdown bool) {
		name := "m.json"
		if markdown {
			name = "m.md"
		}
		src := Source{Name: name, ModTime: time.Unix(1700000000, 0), Owner: "Agent-1"}
		m, err := Decode(data, src)
		if err != nil {
			return
		}
		if m.ID == "" || m.To == "" || m.Priority == "" || m.CreatedAt.IsZero() && !src.ModTime.IsZero() {
			t.Fatalf("accepted message lacks required fields: %+v", m)
		}
		canonical := m.Encode()
		again, err := Decode(canonical, Source{Name: Stem(m.ID) + ".json", Owner: "Agent-1"})
		if err != nil {
			t.Fatalf("canonical form of an accepted message does not decode: %v\n%s", err, canonical)
		}
		if string(again.Encode()) != string(canonical) {
			t.Fatalf("round trip changed the message:\n%s\n---\n%s", canonical, again.Encode())
		}
	})
}
