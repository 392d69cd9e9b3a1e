package codepage

import "testing"

// Runs under Wine in scripts/test (a test named Windows).
func TestWindowsDecodesConsoleCodePages(t *testing.T) {
	for _, c := range []struct {
		cp   uint32
		in   []byte
		want string
	}{
		{850, []byte("C:\\Users\\Jos\x82\\rt"), `C:\Users\José\rt`},
		{1252, []byte("C:\\Users\\Jos\xe9\\rt"), `C:\Users\José\rt`},
		{932, []byte("C:\\\x93\xfa\x96\x7b\\rt"), `C:\日本\rt`},
	} {
		got, err := decode(c.in, c.cp)
		if err != nil || got != c.want {
			t.Errorf("code page %d: got %q, %v; want %q", c.cp, got, err, c.want)
		}
	}
	if got := Console([]byte("C:\\Users\\José")); got != `C:\Users\José` {
		t.Errorf("UTF-8 output was decoded again: %q", got)
	}
	if got := Console(nil); got != "" {
		t.Errorf("no output gave %q", got)
	}
}
