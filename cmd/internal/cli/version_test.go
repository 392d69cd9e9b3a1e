package cli

import (
	"runtime/debug"
	"testing"
)

func TestVersionTextSaysWhatWasBuilt(t *testing.T) {
	info := &debug.BuildInfo{
		GoVersion: "go1.25.0",
		Main:      debug.Module{Path: "github.com/agentctl/agentctl", Version: "v1.2.3"},
		Settings: []debug.BuildSetting{
			{Key: "CGO_ENABLED", Value: "0"}, {Key: "vcs.revision", Value: "abc123"},
			{Key: "vcs.time", Value: "2026-01-02T03:04:05Z"}, {Key: "vcs.modified", Value: "true"},
		},
	}
	want := "agentctl v1.2.3 (github.com/agentctl/agentctl)\n" +
		"commit:     abc123 2026-01-02T03:04:05Z (modified)\n" +
		"built with: go1.25.0 for linux/arm64, cgo off\n" +
		"gui driver: X11\n"
	if got := versionText(info, "linux", "arm64", "X11"); got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
	info.Settings = nil
	want = "agentctl v1.2.3 (github.com/agentctl/agentctl)\n" +
		"built with: go1.25.0 for darwin/arm64, cgo off\n" +
		"gui driver: not in this build (exec driver only)\n"
	if got := versionText(info, "darwin", "arm64", ""); got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
}
