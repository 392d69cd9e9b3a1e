// Package driverconf turns an agent's settings, as agentctl.yaml writes
// them, into the plain settings the drivers of package cursor take. It is
// the one place where the file's profiles, presets and duration wrappers
// meet the drivers, so that package cursor knows nothing of the file.
// It owns that mapping only: it reads no file (package config loads
// agentctl.yaml) and starts no driver.
package driverconf

import (
	"github.com/agentctl/agentctl/config"
	"github.com/agentctl/agentctl/cursor"
)

// Settings returns what cursor.New needs to build the agent's driver, with
// the turn timings shared by every agent.
func Settings(a config.Agent, g config.GUI) cursor.Settings {
	return cursor.Settings{
		Name:              a.Name,
		Driver:            cursor.DriverKind(a.EffectiveDriver()),
		Exec:              Program(Exec(a.Exec), a),
		CDP:               CDP(a.CDP),
		ACP:               ACP(a),
		Window:            Window(a.Window),
		Timings:           Timings(g),
		NewChat:           cursor.NewChatPolicy{PerThread: a.NewChat.PerThread, Every: a.NewChat.Every},
		KeepsConversation: a.KeepsConversation(),
		NoNewChat:         a.NewChatError(),
	}
}

// Timings returns the GUI and CDP turns' waits; those the file leaves
// unset stay zero, for the driver's defaults.
func Timings(g config.GUI) cursor.Timings {
	return cursor.Timings{
		Quiet: g.Quiet.D(), MaxPause: g.MaxPause.D(), Submit: g.Submit.D(),
		TurnTimeout: g.TurnTimeout.D(), LockWait: g.LockWait.D(),
	}
}

// Exec returns the exec driver's settings with its preset applied.
func Exec(e config.Exec) cursor.ExecSettings {
	r := e.Resolved()
	return cursor.ExecSettings{
		Preset: r.Preset, Command: r.Command, Resume: r.Resume,
		ReplyField: r.ReplyField, SessionField: r.SessionField, Timeout: r.Timeout.D(),
	}
}

// Program adds the seat's working folder, environment and model to its
// exec settings. A working folder that cannot be expanded is left as
// written, for the driver's start to name.
func Program(e cursor.ExecSettings, a config.Agent) cursor.ExecSettings {
	e.Dir = a.Cwd
	if dir, err := a.ProgramDir(); err == nil {
		e.Dir = dir
	}
	e.Env = a.EnvList()
	e.ModelArgs = a.Exec.Resolved().ModelArgs(a.Model)
	e.PermissionArgs = a.Exec.PermissionArgs()
	e.ForksSession = a.Exec.ForksSession()
	return e
}

// ACP returns an acp seat's settings: its preset's command, its working
// folder, environment and model.
func ACP(a config.Agent) cursor.ACPSettings {
	r := a.ACP.Resolved()
	s := cursor.ACPSettings{Preset: r.Preset, Command: r.Command, Dir: a.Cwd, Env: a.EnvList(), Model: a.Model, Timeout: r.Timeout.D()}
	if dir, err := a.ProgramDir(); err == nil {
		s.Dir = dir
	}
	return s
}

// CDP returns a seat's settings with its profile applied. Quiet stays as
// the file writes it: the driver refuses a seat that shows nothing busy
// and names no quiet period, which the profile's default would hide.
func CDP(c config.CDP) cursor.CDPSettings {
	r := c.Resolved()
	return cursor.CDPSettings{
		Endpoint: r.Endpoint, Target: r.Target, Profile: cursor.Profile(r.Profile),
		Composer: r.Composer, Submit: r.Submit, Busy: r.Busy, Reply: r.Reply,
		Copy: r.Copy, CopyMenu: r.CopyMenu, Body: r.Body, Error: r.Error, NewChat: r.NewChat,
		Read: cursor.ReadMode(r.Read), Clipboard: cursor.ClipboardMode(r.Clipboard),
		Quiet: c.Quiet.D(),
	}
}

// Window returns a chat window's settings with its profile applied.
func Window(w config.Window) cursor.WindowSettings {
	w = w.WithProfile()
	return cursor.WindowSettings{
		Title: w.Title, PID: w.PID, Absolute: w.Absolute,
		Input: point(w.Input), Copy: point(w.Copy), Busy: point(w.Busy), Reply: rect(w.Reply),
		CopyKeys: w.CopyKeys, CopyFromInput: w.CopyFromInput, CheckKeys: w.CheckKeys,
		Composer: cursor.ComposerKind(w.Composer), SubmitKey: w.SubmitKey, NewChatKey: w.NewChatKey,
		ErrorMark: w.ErrorMark,
	}
}

// Calibrated reports what a window, as agentctl.yaml sets it with its
// profile, still lacks before a turn can run: the GUI driver's own check.
func Calibrated(w config.Window) error { return Window(w).Calibrated() }

func point(p *config.Point) *cursor.Point {
	if p == nil {
		return nil
	}
	return &cursor.Point{X: p.X, Y: p.Y}
}

func rect(r *config.Rect) *cursor.Rect {
	if r == nil {
		return nil
	}
	return &cursor.Rect{X: r.X, Y: r.Y, W: r.W, H: r.H}
}
