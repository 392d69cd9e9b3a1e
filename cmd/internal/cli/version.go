package cli

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"

	"github.com/agentctl/agentctl/cursor/desktopname"
)

const versionUsage = `
Usage: agentctl version

Prints what this agentctl is, from what the Go toolchain recorded when it
was built: the module version (a tag when installed with go install
...@v1.2.3), the commit and whether the tree was modified, the Go version,
the platform, and whether the GUI driver is built in or only the exec
driver is. 'agentctl --version' prints the same.

Examples:
  agentctl version
  agentctl --version
`

func runVersion(ctx context.Context, env *Env, args []string) error {
	fs := NewFlagSet(env, "version", versionUsage)
	rest, err := ParseArgs(fs, args)
	if err != nil {
		return err
	}
	if err := WantArgs(fs, rest, 0, 0, "no arguments"); err != nil {
		return err
	}
	printVersion(env.Stdout)
	return nil
}

// releaseVersion is set by scripts/release (-ldflags -X), whose go build
// in a checkout records no module version of its own.
var releaseVersion string

// Version is the version of this build, as 'agentctl version' prints it
// (the release's, else the module's), for those who ask by protocol (an
// MCP client).
func Version() string {
	if releaseVersion != "" {
		return releaseVersion
	}
	if info, ok := debug.ReadBuildInfo(); ok && info.Main.Version != "" {
		return info.Main.Version
	}
	return "(devel)"
}

func printVersion(w io.Writer) {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		info = &debug.BuildInfo{GoVersion: runtime.Version()}
	}
	if releaseVersion != "" && (info.Main.Version == "" || info.Main.Version == "(devel)") {
		info.Main.Version = releaseVersion
	}
	fmt.Fprint(w, versionText(info, runtime.GOOS, runtime.GOARCH, desktopname.Desktop))
}

// versionText is what version prints, from the build info alone.
func versionText(info *debug.BuildInfo, goos, goarch, desktop string) string {
	version, path := info.Main.Version, info.Main.Path
	if version == "" {
		version = "(unknown version)"
	}
	s := "agentctl " + version
	if path != "" {
		s += " (" + path + ")"
	}
	s += "\n"
	set := map[string]string{}
	for _, kv := range info.Settings {
		set[kv.Key] = kv.Value
	}
	if rev := set["vcs.revision"]; rev != "" {
		s += "commit:     " + rev
		if t := set["vcs.time"]; t != "" {
			s += " " + t
		}
		if set["vcs.modified"] == "true" {
			s += " (modified)"
		}
		s += "\n"
	}
	cgo := "cgo off"
	if set["CGO_ENABLED"] == "1" {
		cgo = "cgo on"
	}
	s += fmt.Sprintf("built with: %s for %s/%s, %s", info.GoVersion, goos, goarch, cgo)
	if tags := set["-tags"]; tags != "" {
		s += ", tags " + tags
	}
	s += "\n"
	if desktop == "" {
		s += "gui driver: not in this build (exec driver only)\n"
	} else {
		s += "gui driver: " + desktop + "\n"
	}
	return s
}
