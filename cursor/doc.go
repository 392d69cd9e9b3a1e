// Package cursor takes a prompt to an agent and brings its reply back,
// exactly: one Turn per call of Driver.Run.
//
// Two drivers implement Driver. The GUI driver works a chat window (Cursor,
// or the stand-in in fixtures/chatwindow) through the desktop the way a
// careful human would:
//
//  1. take the desktop input lock, shared by every agentctl process on the
//     same display, because they all share one mouse, keyboard and clipboard;
//  2. save the user's clipboard;
//  3. find the agent's window by title (and pid), activate it, and confirm it
//     holds the keyboard focus before every single keystroke or click: text
//     with a newline pasted into a terminal runs as a command;
//  4. click the input box, paste the prompt (after confirming the clipboard
//     holds it), press the submit key, and prove the submission by seeing the
//     chat change, pressing the key once more if it did not;
//  5. restore the clipboard and release the lock while the model thinks,
//     watching the reply region with screenshots until it has been still for
//     the quiet period;
//  6. take the lock again, put a sentinel on the clipboard, press the copy
//     button or keys, read the reply, and restore the clipboard.
//
// The exec driver runs a command per turn for headless agents (cursor-agent
// -p, claude -p, any script): the prompt on stdin or in an argument, the
// reply is stdout, and a timeout or cancellation kills the whole process
// group. The command dies with the process that started it (on Linux, by a
// parent-death signal) and is reported through Turn.OnStart, so that what
// a killed process leaves at work can be ended by the next one with
// EndChild before it runs the prompt again.
//
// Failures are told apart with errors.Is against the Err* values, so the
// per-agent runner can decide between retrying and dead-lettering. A runner
// that must survive crashes passes Turn.OnStage to record when the prompt was
// injected and when its submission was confirmed, and after a crash resumes
// with Turn.Resume, which never pastes again.
//
// The package never reads configuration files (it gets config values), never
// touches mailboxes, and never sends a key or click to a window it has not
// just confirmed as the agent's own.
//
// Desktop access is built in on Linux (X11, pure Go: robotgo's x11 package
// and EWMH, no cgo) and on Windows (robotgo's win package, no cgo) unless
// the nogui tag opts out. macOS gets none: robotgo drives macOS only
// through cgo and Cocoa, and this package cannot confirm the active window
// there, so the exec driver is all a macOS build has. Without desktop
// access the package still builds and the exec driver works, but a GUI
// turn fails with ErrGUIUnavailable.
package cursor
