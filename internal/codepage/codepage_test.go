package codepage

import "testing"

func TestConsoleKeepsUTF8AndUTF16(t *testing.T) {
	for _, in := range []string{"", "plain", "C:\\Users\\José\\rt", "\xff\xfe<\x00?\x00"} {
		if got := Console([]byte(in)); got != in {
			t.Errorf("Console(%q) = %q, want it as it was", in, got)
		}
	}
}
