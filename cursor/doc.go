// Package cursor takes a prompt to an agent and brings its reply back,
// exactly: one Turn per call of Driver.Run.
//
// Four drivers implement Driver. The GUI driver works a chat window (Cursor,
// or the stand-ins in fixtures/chatpage and fixtures/chatwindow) through the
// desktop the way a careful human would:
//
//  1. take the desktop input lock, shared by every agentctl process on the
//     same display, because they all share one mouse, keyboard and clipboard;
//  2. save the user's clipboard;
//  3. find the agent's window by title (and pid), activate it, and confirm it
//     holds the keyboard focus before every single keystroke or click: text
//     with a newline pasted into a terminal runs as a command;
//  4. press the copy button once, to learn what it gives before this turn
//     (the previous reply), unless check keys (below) tell a reply new by
//     the transcript; and note how the busy indicator looks at rest;
//  5. click the input box, paste the prompt (after confirming the clipboard
//     holds it), wait for the paste to show, press the submit key, and prove
//     the submission by any sign the chat shows (the input box emptying, the
//     busy indicator changing, the transcript changing), pressing the key
//     once more if there is none. A Monaco composer (VS Code's) takes a
//     paste only once its handlers ran: there the driver copies the
//     composer's own text (select all, copy) until it is the prompt, pasting
//     again if not, before the submit key;
//  6. restore the clipboard and release the lock while the model works,
//     watching the busy indicator and the reply region with screenshots
//     until the model has finished: the indicator back at rest and the chat
//     unchanged for gui.quiet, or without an indicator, the reply region
//     unchanged for gui.max_pause;
//  7. take the lock again, put a sentinel on the clipboard, press the copy
//     button or keys, and read the reply. A copy that gives nothing, the
//     prompt, or what step 4 got is not this turn's reply: the driver waits
//     for the chat to change and goes back to step 6. Keys that start from
//     the input box (window.copy_from_input, as VS Code's profile has:
//     Ctrl+Up to the last reply, its context menu, "Copy") find the last
//     reply whatever its height, and simply copy again a moment later.
//     With window.check_keys the driver also copies the whole chat (VS
//     Code's "Copy All", from where the copy keys left the keyboard) and
//     refuses a copy lacking words of the chat's answer to the prompt, or
//     that is not exactly how the transcript ends right after the prompt
//     (checkTranscript, checkLatest): a code block's copy, a cut reply or
//     the reply before is never passed on. Such a copy is taken as soon as
//     the busy indicator rests once the model was seen working, and kept
//     only if the indicator stayed at rest for gui.quiet: the quiet period
//     runs during the copy. After a refused copy the chat is let settle
//     first, as in step 6.
//
// On X11 the driver owns the clipboard while it uses it (ICCCM, on a
// connection of its own), so the server tells it when an app read the
// prompt and when an app's copy replaced what it put there, and it hands
// the person's text back to the clipboard tool, which outlives it. A key
// pressed right after a click waits until the app took the click (it shows
// its own cursor where the pointer went): Chromium delivers a click at its
// next frame, after keys pressed meanwhile.
//
// A turn never returns a reply it has not proven finished and new; where it
// cannot tell, it waits, and its timeout names the missing sign.
//
// The CDP driver works a chat page through the DevTools protocol of the
// app showing it (Cursor started with --remote-debugging-port, on loopback
// only, or VS Code's chat view in code-server): it finds the one page
// whose title matches, puts the prompt into the page's composer
// (textarea, contenteditable or Monaco editor) as text input and proves
// the composer holds it exactly (Monaco: by the editor's own copy of its
// text), sends it (a click, or Enter as a key event of the page), proves
// the submission by the page (its busy element, or the composer emptied
// and the transcript grown), and reads the reply once the busy element is
// gone and the page has settled for cdp.quiet (still, and work queued in
// the page has run: a starved page cannot fake it). The reply is the
// app's own copy of it (a copy button, or a context-menu item, with the
// page's clipboard writes caught in the page), accepted only if it holds
// every word the page renders for the reply; reading the rendering
// instead must be asked for and is noted. A reply is new when its element
// (or its numbered row) appeared after the prompt was sent; the prompt and
// the reply from before are refused, and a reply the app ended with an
// error fails the turn. A reload or another title on the page ends the
// turn. It touches no mouse, keyboard or clipboard of the
// desktop, so it takes no desktop input lock: turns of different agents
// run at once. It needs no build tag and no display. For calibration,
// LookForCalibration proposes a page's composer at rest and ProbeCDP sends
// one prompt to find what shows the model busy, which button copies the
// reply and which element shows it, each selector checked by what it
// matches.
//
// The exec driver runs a command per turn for headless agents (cursor-agent
// -p, claude -p, any script): the prompt on stdin or in an argument, the
// reply is stdout, and a timeout or cancellation kills the whole process
// group. The command dies with the process that started it (on Linux, by a
// parent-death signal; on Windows, by the kill-on-close job it runs in) and
// is reported through Turn.OnStart, so that what a killed process leaves at
// work can be ended by the next one with EndChild before it runs the prompt
// again. On Windows a batch file runs in cmd.exe and a .ps1 script in
// PowerShell.
//
// With a preset (claude, codex, cursor-agent, gemini, generic) the exec
// driver reads the JSON the command prints line by line as it runs (Claude
// Code's stream-json or json, Codex's exec --json events, Gemini CLI's
// stream-json or json): the reply, the session, the usage (Turn.OnUsage),
// and the tool's own report of a failure, a failed model API told apart
// (ErrModelAPI). A line holding the turn's result ends the turn: a command
// still running a moment after printing it is ended. It continues the
// session that Turn.Session names with the preset's resume arguments,
// placed with the model's and the permissions' where the program's options
// go; Claude Code and Codex fork that session, so that a failed attempt
// never stays in the one recorded. Remember ties an agent's
// turns into one conversation: it keeps the session id, the last thread and
// the turns so far in sessions/<agent>.json, and starts a fresh
// conversation (a new session, or the chat window's new-chat key) when the
// agent's new-chat policy or --new-session says so. What a command printed
// in a turn that gave no reply is kept in sessions/<agent>.raw/.
//
// The ACP driver speaks the Agent Client Protocol (JSON-RPC on a child's
// stdio, through github.com/coder/acp-go-sdk) with an agent such as
// claude-agent-acp, codex-acp, gemini --experimental-acp or Cursor's agent
// acp. The seat starts the agent once, in a process group of its own that
// dies with the runner, and keeps it for every turn: initialize, then one
// session per agent (session/new in the seat's folder, its id kept by
// Remember, and session/load after a restart where the agent offers it,
// so that the agent remembers). A turn is one session/prompt; the reply is
// the text of the agent's message chunks for it, exactly, once the agent
// ends the turn (end_turn; refusal, max_tokens and errors fail it). What
// the agent does meanwhile goes to Turn.OnProgress; a tool it asks to run
// is judged by Turn.OnPermission, the runner's guardrails, which may wait
// for a person. Cancelling the turn's context sends session/cancel and
// waits for the agent to stop. An agent that died is started again for
// the next turn, and one that took a cancel too (Claude's adapter then
// answers the next prompt at once with nothing). The agent may read and
// write text files inside the seat's folder only; terminals are not
// offered. A turn cut off by a crash is not resumed: the protocol cannot
// read a reply back (ErrReplyLost), and sending the prompt again would put
// it into the session twice.
//
// Failures are told apart with errors.Is against the Err* values, so the
// per-agent runner can decide between retrying and dead-lettering. A runner
// that must survive crashes passes Turn.OnStage to record when the prompt was
// injected and when its submission was confirmed, and Turn.OnResumeState to
// keep what step 4 learned; after a crash it resumes with Turn.Resume, which
// never pastes again and still refuses the previous reply.
//
// The package never reads configuration files: it takes Settings of its own,
// plain values with every profile and preset applied (config/driverconf
// makes them from agentctl.yaml), and it never
// touches mailboxes, writes only under the sessions and locks folders it is
// given (the desktop input lock and the record of its holder), and
// never sends a key or click to a window or page it has not just confirmed
// as the agent's own.
//
// Desktop access is built in on Linux (X11, pure Go: robotgo's x11 package
// and EWMH, no cgo) and on Windows (robotgo's win package, no cgo) unless
// the nogui tag opts out. macOS gets none: robotgo drives macOS only
// through cgo and Cocoa, and this package cannot confirm the active window
// there, so the exec driver is all a macOS build has. Without desktop
// access the package still builds and the exec and CDP drivers work, but a GUI
// turn fails with ErrGUIUnavailable.
package cursor
