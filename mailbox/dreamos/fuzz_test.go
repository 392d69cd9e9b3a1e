package dreamos

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// FuzzDecode feeds the decoder arbitrary bytes, seeded with every Dream.OS
// sample. It must never panic; what it accepts has every field a message
// needs; and every part Split finds lies inside the input, in order.
func FuzzDecode(f *testing.F) {
	samples, _ := filepath.Glob("../../fixtures/dreamos-samples/*")
	for _, s := range samples {
		if data, err := os.ReadFile(s); err == nil && len(data) < 64<<10 {
			f.Add(data)
		}
	}
	f.Add([]byte(appended))
	f.Add([]byte(`{"id":"{{uuid}}","priority":"Agent-7","timestamp":"/tmp/x","instructions":"y"}`))
	f.Add([]byte("\ufeff**From:** a\r\nPriority: X\r\n\r\nbody"))
	f.Fuzz(func(t *testing.T, data []byte) {
		src := Source{Name: "m", ModTime: time.Unix(1700000000, 0), Owner: "Agent-1"}
		m, err := Decode(data, src)
		if err == nil {
			if m.ID == "" || m.To == "" || m.From == "" || m.Priority == "" || m.CreatedAt.IsZero() || m.Meta == nil {
				t.Fatalf("accepted message lacks required fields: %+v", m)
			}
			if _, err := ParsePriority(m.Priority); err != nil {
				t.Fatalf("priority %q is not one of the four", m.Priority)
			}
		}
		end := 0
		for _, p := range Split(data) {
			if p.Start != end || p.End <= p.Start || p.End > len(data) {
				t.Fatalf("part %v after %d in %d bytes", p, end, len(data))
			}
			end = p.End
		}
	})
}
