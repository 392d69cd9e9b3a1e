package config

import (
	"reflect"
	"strings"
	"testing"
)

func TestVSCodeWindowProfile(t *testing.T) {
	cfg, err := Parse("agentctl.yaml", []byte(`agents:
  - name: Agent-1
    window:
      title: 'Agent-1 .*VS Code'
      profile: vscode
      input: [870, 717]
      reply: [760, 76, 225, 576]
`))
	if err != nil {
		t.Fatal(err)
	}
	w := cfg.Agents[0].Window
	r := w.WithProfile() // that it is then calibrated: driverconf's TestWindowGetsItsProfile

	if !reflect.DeepEqual(r.CopyKeys, VSCodeWindow().CopyKeys) || !r.CopyFromInput || len(r.CheckKeys) == 0 || r.Composer != ComposerMonaco {
		t.Fatalf("resolved window %+v", r)
	}
	// A copy button set by hand wins over the profile's keys; the check
	// and the composer still come from it.
	w.Copy = &Point{X: 1, Y: 2}
	if r := w.WithProfile(); r.CopyKeys != nil || r.CopyFromInput || r.CheckKeys == nil || r.Composer != ComposerMonaco {
		t.Fatalf("with a copy button: %+v", r)
	}
	for _, bad := range []struct{ yaml, says string }{
		{"profile: emacs", "not a known app"},
		{"composer: word", "neither plain nor monaco"},
		{"copy_keys: [ctrl+up]\n      check_keys: [ctrl+up, hyper+x]", "not a key chord"},
	} {
		_, err := Parse("agentctl.yaml", []byte("agents:\n  - name: Agent-1\n    window:\n      "+bad.yaml+"\n"))
		if err == nil || !strings.Contains(err.Error(), bad.says) {
			t.Errorf("%s: %v, want %q", bad.yaml, err, bad.says)
		}
	}
}
