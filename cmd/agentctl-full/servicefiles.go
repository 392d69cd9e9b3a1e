package main

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"html"
	"io"
	"strings"
	"time"
	"unicode/utf16"

	"github.com/agentctl/agentctl/agents/supervise"
)

// serviceSpec is everything a service file says, gathered once by the
// service command; the renderers below only format it.
type serviceSpec struct {
	Name        string   // "up" for every agent, else the agent's name
	Description string   // one line
	Args        []string // the program and its arguments
	WorkDir     string
	Env         []envVar // set in the service's environment, in order
	GUI         bool     // some agent needs the desktop: tie to the graphical session
	Log         string   // where launchd writes the service's output
	StopTimeout time.Duration
	User        string // Windows: DOMAIN\user whose logon starts the task
}

type envVar struct{ Key, Value string }

// systemdUnitName, launchdLabel and taskName are the names the service
// goes by on each platform.
func systemdUnitName(name string) string { return "agentctl-" + name + ".service" }
func launchdLabel(name string) string    { return "com.github.agentctl." + name }
func taskName(name string) string        { return `\agentctl\` + name }

// namesRoot says whether text, a service file as rendered for goos (or as
// Task Scheduler gives it back), runs the runtime at root: each renderer
// writes "--root" and the root as two arguments of its own.
func namesRoot(goos, text, root string) bool {
	switch goos {
	case "darwin":
		return strings.Contains(text, "<string>--root</string>\n\t\t<string>"+xmlText(root)+"</string>\n")
	case "windows":
		// Task Scheduler gives the task back in its own XML, escaped its
		// own way: the arguments are compared as text, and paths as
		// Windows compares them, whatever their case.
		args, ok := taskArguments(text)
		return ok && strings.Contains(strings.ToLower(" "+args+" "), strings.ToLower(" --root "+windowsQuote(root)+" "))
	}
	return strings.Contains(text, systemdQuote("--root")+" "+systemdQuote(root)+" ")
}

// taskArguments is the text of a task's <Arguments>, from its XML as
// agentctl writes it or as schtasks /Query /XML prints it (UTF-16 or not).
func taskArguments(text string) (string, bool) {
	if b := []byte(text); len(b) >= 2 && b[0] == 0xFF && b[1] == 0xFE {
		units := make([]uint16, (len(b)-2)/2)
		for i := range units {
			units[i] = uint16(b[2+2*i]) | uint16(b[3+2*i])<<8
		}
		text = string(utf16.Decode(units))
	}
	d := xml.NewDecoder(strings.NewReader(text))
	d.CharsetReader = func(_ string, r io.Reader) (io.Reader, error) { return r, nil } // decoded above
	in := false
	var args strings.Builder
	for {
		tok, err := d.Token()
		if err != nil {
			// Text before the arguments the decoder cannot take (a name in
			// a code page no decoding knew): cut them out of the raw text.
			_, rest, ok := strings.Cut(text, "<Arguments>")
			raw, _, closed := strings.Cut(rest, "</Arguments>")
			return html.UnescapeString(raw), ok && closed
		}
		switch t := tok.(type) {
		case xml.StartElement:
			in = t.Name.Local == "Arguments"
		case xml.EndElement:
			if t.Name.Local == "Arguments" {
				return args.String(), true
			}
			in = false
		case xml.CharData:
			if in {
				args.Write(t)
			}
		}
	}
}

// systemdUnit renders a systemd user unit. A unit that drives windows is
// part of the graphical session: started with it, stopped with it, and
// given the display and X authority it needs.
func systemdUnit(s serviceSpec) string {
	var b strings.Builder
	target := "default.target"
	fmt.Fprintf(&b, "# Written by 'agentctl service install'; 'agentctl service uninstall' removes it.\n")
	fmt.Fprintf(&b, "[Unit]\nDescription=%s\nDocumentation=https://github.com/agentctl/agentctl#readme\n", systemdText(s.Description))
	if s.GUI {
		target = "graphical-session.target"
		fmt.Fprintf(&b, "PartOf=graphical-session.target\nAfter=graphical-session.target\n")
	}
	fmt.Fprintf(&b, "\n[Service]\nType=exec\n")
	quoted := make([]string, len(s.Args))
	for i, a := range s.Args {
		quoted[i] = systemdQuote(a)
	}
	fmt.Fprintf(&b, "ExecStart=%s\n", strings.Join(quoted, " "))
	fmt.Fprintf(&b, "WorkingDirectory=%s\n", systemdText(s.WorkDir)) // a path setting: no quotes, no $
	for _, e := range s.Env {
		fmt.Fprintf(&b, "Environment=%s\n", systemdQuote(e.Key+"="+e.Value))
	}
	// SIGTERM to agentctl alone: it stops its runners in order, each
	// finishing its step; whatever is left when the timeout ends is killed.
	// A runner that stopped for what only a person can mend (refused
	// credentials) is not restarted into the same refusal every 5s.
	fmt.Fprintf(&b, "KillMode=mixed\nTimeoutStopSec=%d\nRestart=on-failure\nRestartSec=5\nRestartPreventExitStatus=%d\n", int(s.StopTimeout.Seconds()), supervise.ExitNeedsPerson)
	fmt.Fprintf(&b, "\n[Install]\nWantedBy=%s\n", target)
	return b.String()
}

// systemdQuote quotes one word for a unit file: double quotes with C
// escapes, and % and $ doubled so that systemd expands neither.
func systemdQuote(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`, "\t", `\t`)
	return `"` + strings.ReplaceAll(systemdText(r.Replace(s)), "$", "$$") + `"`
}

// systemdText is s in a setting that expands specifiers (%) but not
// variables, such as Description= and WorkingDirectory=.
func systemdText(s string) string {
	return strings.NewReplacer("%", "%%", "\n", " ").Replace(s)
}

// launchdPlist renders a launchd agent: started at login in the user's
// Aqua session, where the desktop is, and kept alive if it fails.
func launchdPlist(s serviceSpec) string {
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<!-- Written by 'agentctl service install'; 'agentctl service uninstall' removes it. -->
<plist version="1.0">
<dict>
`)
	kv := func(key, value string) {
		fmt.Fprintf(&b, "\t<key>%s</key>\n\t<string>%s</string>\n", key, xmlText(value))
	}
	kv("Label", launchdLabel(s.Name))
	b.WriteString("\t<key>ProgramArguments</key>\n\t<array>\n")
	for _, a := range s.Args {
		fmt.Fprintf(&b, "\t\t<string>%s</string>\n", xmlText(a))
	}
	b.WriteString("\t</array>\n")
	kv("WorkingDirectory", s.WorkDir)
	if len(s.Env) > 0 {
		b.WriteString("\t<key>EnvironmentVariables</key>\n\t<dict>\n")
		for _, e := range s.Env {
			fmt.Fprintf(&b, "\t\t<key>%s</key>\n\t\t<string>%s</string>\n", xmlText(e.Key), xmlText(e.Value))
		}
		b.WriteString("\t</dict>\n")
	}
	b.WriteString("\t<key>RunAtLoad</key>\n\t<true/>\n")
	b.WriteString("\t<key>KeepAlive</key>\n\t<dict>\n\t\t<key>SuccessfulExit</key>\n\t\t<false/>\n\t</dict>\n")
	kv("LimitLoadToSessionType", "Aqua")
	kv("ProcessType", "Interactive")
	fmt.Fprintf(&b, "\t<key>ExitTimeOut</key>\n\t<integer>%d</integer>\n", int(s.StopTimeout.Seconds()))
	kv("StandardOutPath", s.Log)
	kv("StandardErrorPath", s.Log)
	b.WriteString("</dict>\n</plist>\n")
	return b.String()
}

// taskXML renders a Task Scheduler task that starts at the user's logon,
// in their interactive session (the desktop), and restarts on failure.
// It is shown as UTF-8; schtasks gets it as UTF-16 (utf16File).
func taskXML(s serviceSpec) string {
	args := make([]string, len(s.Args)-1)
	for i, a := range s.Args[1:] {
		args[i] = windowsQuote(a)
	}
	var b strings.Builder
	fmt.Fprintf(&b, `<?xml version="1.0" encoding="UTF-16"?>
<!-- Written by 'agentctl service install'; 'agentctl service uninstall' removes it. -->
<Task version="1.2" xmlns="http://schemas.microsoft.com/windows/2004/02/mit/task">
  <RegistrationInfo>
    <Description>%s</Description>
    <URI>%s</URI>
  </RegistrationInfo>
  <Triggers>
    <LogonTrigger>
      <Enabled>true</Enabled>
      <UserId>%s</UserId>
    </LogonTrigger>
  </Triggers>
  <Principals>
    <Principal id="Author">
      <UserId>%s</UserId>
      <LogonType>InteractiveToken</LogonType>
      <RunLevel>LeastPrivilege</RunLevel>
    </Principal>
  </Principals>
  <Settings>
    <MultipleInstancesPolicy>IgnoreNew</MultipleInstancesPolicy>
    <DisallowStartIfOnBatteries>false</DisallowStartIfOnBatteries>
    <StopIfGoingOnBatteries>false</StopIfGoingOnBatteries>
    <ExecutionTimeLimit>PT0S</ExecutionTimeLimit>
    <RestartOnFailure>
      <Interval>PT1M</Interval>
      <Count>999</Count>
    </RestartOnFailure>
    <Enabled>true</Enabled>
  </Settings>
  <Actions Context="Author">
    <Exec>
      <Command>%s</Command>
      <Arguments>%s</Arguments>
      <WorkingDirectory>%s</WorkingDirectory>
    </Exec>
  </Actions>
</Task>
`, xmlText(s.Description), xmlText(taskName(s.Name)), xmlText(s.User), xmlText(s.User),
		xmlText(s.Args[0]), xmlText(strings.Join(args, " ")), xmlText(s.WorkDir))
	return b.String()
}

// windowsQuote quotes one argument the way Windows programs split their
// command line (the rules of CommandLineToArgvW).
func windowsQuote(s string) string {
	if s != "" && !strings.ContainsAny(s, " \t\"") {
		return s
	}
	var b strings.Builder
	b.WriteByte('"')
	slashes := 0
	for _, c := range s {
		switch c {
		case '\\':
			slashes++
			continue
		case '"':
			b.WriteString(strings.Repeat(`\`, 2*slashes+1))
		default:
			b.WriteString(strings.Repeat(`\`, slashes))
		}
		slashes = 0
		b.WriteRune(c)
	}
	b.WriteString(strings.Repeat(`\`, 2*slashes))
	b.WriteByte('"')
	return b.String()
}

func xmlText(s string) string {
	var b bytes.Buffer
	xml.EscapeText(&b, []byte(s))
	return b.String()
}

// utf16File is text as schtasks reads it reliably: UTF-16LE with a BOM.
func utf16File(s string) []byte {
	units := utf16.Encode([]rune(s))
	out := make([]byte, 2, 2+2*len(units))
	out[0], out[1] = 0xFF, 0xFE
	for _, u := range units {
		out = append(out, byte(u), byte(u>>8))
	}
	return out
}
