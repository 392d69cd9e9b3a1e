package main

import (
	"archive/zip"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
)

// TestGoInstallGivesAGUICapableBinary serves the working tree as a module
// version from a local module proxy, installs the commands from it with go
// install (cmd/..., no cgo, no tags, the user's way) into a fresh GOBIN,
// and checks that the installed agentctl knows its version and has the GUI
// driver, and that agentctl-full, which it hands all but the quick
// commands over to, and agentctl-hub, which 'agentctl hub' runs, are
// beside it.
// Dependencies come from this machine's module cache, served as a proxy
// too, so the test needs no network and leaves the cache as it was.
func TestGoInstallGivesAGUICapableBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the whole command from a module zip")
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Fatal(err)
	}
	repo, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	gomod, err := os.ReadFile(filepath.Join(repo, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^module\s+(\S+)\s*$`).FindSubmatch(gomod)
	if m == nil {
		t.Fatal("go.mod names no module")
	}
	module := string(m[1])
	if !strings.Contains(strings.Split(module, "/")[0], ".") {
		t.Fatalf("go.mod's module %q has no dot in its first element; go install refuses such a path", module)
	}
	const version = "v1.99.0"
	proxy := t.TempDir()
	files := moduleFiles(t, repo)
	writeModuleVersion(t, proxy, repo, files, module, version)

	modcache := strings.TrimSpace(goEnv(t, goTool, "GOMODCACHE"))
	gobin := t.TempDir()
	cmd := exec.Command(goTool, "install", module+"/cmd/...@"+version)
	cmd.Dir = t.TempDir()
	cmd.Env = append(os.Environ(),
		"GOBIN="+gobin, "GOMODCACHE="+t.TempDir(), "GOFLAGS=-modcacherw", "GOWORK=off", "GOTOOLCHAIN=local",
		"GOPROXY=file://"+filepath.ToSlash(proxy)+",file://"+filepath.ToSlash(filepath.Join(modcache, "cache", "download")),
		"GOSUMDB=off", "GONOSUMDB=", "GOPRIVATE=", "GONOPROXY=", "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go install: %v\n%s", err, out)
	}
	exe, hubExe := filepath.Join(gobin, "agentctl"), filepath.Join(gobin, hubProgram)
	if runtime.GOOS == "windows" {
		exe, hubExe = exe+".exe", hubExe+".exe"
	}
	if out, err := exec.Command(hubExe, "--help").CombinedOutput(); err != nil || !strings.Contains(string(out), "agentctl hub") {
		t.Errorf("agentctl-hub --help: %v\n%s", err, out)
	}
	if out, err := exec.Command(exe, "doctor", "--help").CombinedOutput(); err != nil || !strings.HasPrefix(string(out), "Usage: agentctl doctor") {
		t.Errorf("agentctl doctor --help, which agentctl-full answers: %v\n%s", err, out)
	}
	out, err := exec.Command(exe, "version").CombinedOutput()
	if err != nil {
		t.Fatalf("agentctl version: %v\n%s", err, out)
	}
	if want := "agentctl " + version + " (" + module + ")\n"; !strings.HasPrefix(string(out), want) {
		t.Errorf("version says:\n%s\nwant it to start %q", out, want)
	}
	if !strings.Contains(string(out), "cgo off") || !strings.Contains(string(out), "gui driver: X11") {
		t.Errorf("the installed agentctl has no GUI driver:\n%s", out)
	}
}

func goEnv(t *testing.T, goTool, key string) string {
	out, err := exec.Command(goTool, "env", key).Output()
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// moduleFiles lists what a tagged version of the module holds: the files
// git tracks or would track, without the ignored ones.
func moduleFiles(t *testing.T, repo string) []string {
	out, err := exec.Command("git", "-C", repo, "ls-files", "--cached", "--others", "--exclude-standard", "-z").Output()
	if err != nil {
		t.Fatalf("git ls-files: %v", err)
	}
	var files []string
	for _, f := range strings.Split(string(out), "\x00") {
		if fi, err := os.Lstat(filepath.Join(repo, f)); f != "" && err == nil && fi.Mode().IsRegular() {
			files = append(files, f)
		}
	}
	return files
}

// writeModuleVersion writes version of the module into a GOPROXY folder:
// list, .info, .mod and the zip, whose files sit under module@version/.
func writeModuleVersion(t *testing.T, proxy, repo string, files []string, module, version string) {
	dir := filepath.Join(proxy, filepath.FromSlash(module), "@v")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, f := range files {
		data, err := os.ReadFile(filepath.Join(repo, f))
		if err != nil {
			t.Fatal(err)
		}
		if f == "go.mod" {
			if err := os.WriteFile(filepath.Join(dir, version+".mod"), data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		w, err := zw.Create(module + "@" + version + "/" + filepath.ToSlash(f))
		if err != nil {
			t.Fatal(err)
		}
		w.Write(data)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{
		version + ".zip":  buf.Bytes(),
		version + ".info": []byte(`{"Version":"` + version + `","Time":"2026-01-01T00:00:00Z"}`),
		"list":            []byte(version + "\n"),
	} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
