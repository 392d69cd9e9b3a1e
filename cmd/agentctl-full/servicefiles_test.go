package main

import (
	"encoding/xml"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
	"unicode/utf16"
)

var update = flag.Bool("update", false, "rewrite the golden files of the service tests")

// goldenSpec has the characters each format must quote: spaces, quotes,
// backslashes, %, $, & and <.
func goldenSpec(exe, root, wd string) serviceSpec {
	return serviceSpec{
		Name: "up", Description: "agentctl: keep the runners of " + root + " alive",
		Args: []string{exe, "--root", root, "up"}, WorkDir: wd,
		Env: []envVar{{"DISPLAY", ":0"}, {"XAUTHORITY", "/home/ann/.Xauthority"}, {"PATH", "/home/ann/bin:/usr/bin"}},
		GUI: true, Log: root + "/logs/up.log", StopTimeout: 40 * time.Second, User: `DESK\ann`,
	}
}

func TestServiceFilesMatchTheirGoldenFiles(t *testing.T) {
	unix := goldenSpec("/home/ann/go/bin/agentctl", `/home/ann/my "swarm" 100% $HOME & <co>/runtime`, "/home/ann/my swarm")
	win := goldenSpec(`C:\Users\ann\go\bin\agentctl.exe`, `C:\Users\ann\my "swarm" & <co>\runtime\`, `C:\Users\ann\my swarm`)
	win.Env = nil
	for file, got := range map[string]string{
		"agentctl-up.service":          systemdUnit(unix),
		"com.github.agentctl.up.plist": launchdPlist(unix),
		"agentctl-up.task.xml":         taskXML(win),
	} {
		path := filepath.Join("testdata", "service", file)
		if *update {
			if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if got != string(want) {
			t.Errorf("%s differs from its golden file (go test -run Golden -update to rewrite it):\n%s", file, got)
		}
		if strings.HasSuffix(file, ".plist") || strings.HasSuffix(file, ".xml") {
			dec := xml.NewDecoder(strings.NewReader(got))
			dec.Strict = true
			dec.CharsetReader = func(_ string, r io.Reader) (io.Reader, error) { return r, nil }
			for {
				_, err := dec.Token()
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatalf("%s is not well-formed XML: %v", file, err)
				}
			}
		}
	}
}

// The systemd unit's ExecStart, read back the way systemd splits it,
// gives the arguments as they were.
func TestSystemdQuoteRoundTrips(t *testing.T) {
	for _, s := range []string{`plain`, `with space`, `a "quote"`, `back\slash`, `100%`, `$HOME`} {
		q := systemdQuote(s)
		q = strings.NewReplacer("%%", "%", "$$", "$").Replace(q[1 : len(q)-1])
		q = strings.NewReplacer(`\\`, `\`, `\"`, `"`).Replace(q)
		if q != s {
			t.Errorf("%q came back as %q", s, q)
		}
	}
}

func TestWindowsQuoteFollowsCommandLineToArgv(t *testing.T) {
	for in, want := range map[string]string{
		`C:\runtime`:           `C:\runtime`,
		`C:\my runtime\`:       `"C:\my runtime\\"`,
		`say "hi"`:             `"say \"hi\""`,
		``:                     `""`,
		`a\\"b`:                `"a\\\\\"b"`,
		`C:\Program Files\x y`: `"C:\Program Files\x y"`,
	} {
		if got := windowsQuote(in); got != want {
			t.Errorf("windowsQuote(%q) = %s, want %s", in, got, want)
		}
	}
}

func TestTaskFileIsUTF16WithABOM(t *testing.T) {
	data := utf16File("<é>")
	if data[0] != 0xFF || data[1] != 0xFE {
		t.Fatalf("no UTF-16LE BOM: % x", data[:2])
	}
	units := make([]uint16, (len(data)-2)/2)
	for i := range units {
		units[i] = uint16(data[2+2*i]) | uint16(data[3+2*i])<<8
	}
	if got := string(utf16.Decode(units)); got != "<é>" {
		t.Fatalf("decoded %q", got)
	}
}

// A status query answered (a unit stopped, or unknown) is no failure; one
// the service manager could not answer (no session bus) is, where it used
// to exit 0 after printing the tool's complaint.
func TestServiceStatusTellsAnAnswerFromAFailure(t *testing.T) {
	exitWith := func(code int) error { return exec.Command("sh", "-c", fmt.Sprintf("exit %d", code)).Run() }
	for code, want := range map[int]bool{1: runtime.GOOS != "linux", 3: true, 4: true} {
		if got := statusAnswer(exitWith(code)); got != want {
			t.Errorf("exit %d: an answer %v, want %v", code, got, want)
		}
	}
	if statusAnswer(exec.ErrNotFound) {
		t.Error("a tool that did not run answered")
	}
}

// Each system's service file, as rendered, names its own runtime and no
// other, not even one whose path starts with it.
func TestServiceFileNamesItsRuntime(t *testing.T) {
	for _, goos := range []string{"linux", "darwin", "windows"} {
		for _, root := range []string{"/home/u/rt", `C:\my runtime`, "/odd/100% $x \"q\""} {
			s := serviceSpec{Name: "up", Args: []string{"/bin/agentctl", "--root", root, "up"}, WorkDir: "/", Log: "/l"}
			text := renderService(goos, s)
			if !namesRoot(goos, text, root) {
				t.Errorf("%s: the file for %q does not name it:\n%s", goos, root, text)
			}
			if goos == "windows" {
				// As Task Scheduler prints it back: quotes left bare, in
				// UTF-16.
				back := string(utf16File(strings.ReplaceAll(text, "&#34;", `"`)))
				if !namesRoot(goos, back, root) || !namesRoot(goos, back, strings.ToUpper(root)) {
					t.Errorf("the task as schtasks gives it back does not name %q", root)
				}
				// With a user's name in the console's code page (not UTF-8)
				// before the arguments.
				cp := strings.Replace(strings.ReplaceAll(text, "&#34;", `"`), "<Description>", "<Description>Jos\xe9 ", 1)
				if !namesRoot(goos, cp, root) {
					t.Errorf("the task with a name in another code page does not name %q", root)
				}
			}
			for _, other := range []string{root + "2", root[:len(root)-1], "/else"} {
				if namesRoot(goos, text, other) {
					t.Errorf("%s: the file for %q names %q too", goos, root, other)
				}
			}
		}
	}
}
