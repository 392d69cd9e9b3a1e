package config

import (
	"bytes"
	"fmt"
	"sync"
	"text/template"
)

// initialTemplate is the agentctl.yaml that `agentctl init` writes: every
// setting at its default, with a comment saying what it does, so users can
// learn the file by reading it. Parsed when first used: only init writes
// it, and every other command would pay for the parse at start-up.
var initialTemplate = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("agentctl.yaml").Parse(initialText))
})

const initialText = `# agentctl configuration. Written by 'agentctl init'; edit freely.
# Durations are written like 500ms, 30s, 5m or 1h.

# The agents of this swarm. Messages to a name not listed here are refused,
# so a typo never creates a mailbox. Names are letters, digits, '-' and '_'.
agents:
{{- range .Agents}}
  - name: {{.}}
{{- end}}
# Each agent's turns go to a Cursor chat window ("driver: gui", the default)
# or to a headless command ("driver: exec"). 'agentctl calibrate' fills in
# the window section; by hand it looks like this:
#
#  - name: Agent-3
#    driver: gui
#    window:
#      title: 'Agent-3 .* Cursor'  # regular expression; exactly one window must match
#      pid: 0                      # optional: the window must belong to this process
#      absolute: false             # true: screen coordinates, not offsets in the window
#      input: [420, 610]           # the chat input box
#      copy: [760, 380]            # the reply's copy button ...
#      # copy_keys: [ctrl+a, ctrl+c]  # ... or the keys that copy it
#      # copy_from_input: true      # click the input box before the copy and check keys
#      # check_keys: [...]          # optional: keys that copy the whole chat, to check each copy against
#      # composer: monaco           # plain (default) or monaco: CRLF pasted as LF, noted in the receipt
#      # profile: vscode            # VS Code's chat: all four above, no copy button needed (see docs/drivers.md)
#      reply: [20, 60, 760, 500]   # x, y, width, height of the reply; no caret or spinner in it
#      submit_key: enter           # or ctrl+enter
#      new_chat_key: ctrl+n        # optional; "mod" means Cmd on macOS, Ctrl elsewhere
#
#  - name: Agent-4
#    driver: exec
#    exec:
#      command: [claude, -p, "{prompt}"]  # without {prompt} the prompt goes to stdin
#      timeout: 10m                       # then the whole process group is killed
#    board:
#      take: true          # when idle, take the next todo task (its own, or unowned) whose depends_on are done
#      labels: [backend]   # unowned tasks only with one of these labels (or role); empty: any
#
# With an exec preset the reply is read from the JSON the command prints and
# the agent's session is kept in sessions/<agent>.json, so every turn, and the
# next runner, continue the same conversation ('agentctl run --new-session'
# starts afresh). Presets: claude (claude -p --output-format stream-json
# --verbose), codex (codex exec --json), gemini (gemini --output-format
# stream-json), each with the prompt on stdin, where other accounts cannot
# read it as they can a command line; cursor-agent (cursor-agent -p
# --output-format json "{prompt}", found as cursor-agent or agent), generic
# (your command, printing one JSON object). A
# command given here replaces the preset's. Claude Code and Codex fork the
# session each turn continues, so a retried prompt is never in it twice.
#
#  - name: Agent-5
#    driver: exec
#    exec:
#      preset: claude
#      # command: [claude, -p, --output-format, json]
#      # resume: [--resume, "{session}"]       # arguments that continue a session
#      # reply_field: result                   # where the reply and the session id are
#      # session_field: session_id
#      # permissions: ask                     # ask (refuse what needs approval), auto (edit in cwd), bypass (anything)
#    new_chat:                 # when to leave the conversation for a fresh one
#      per_thread: false       # true: a message of another thread starts one
#      every: 0                # a fresh one after this many turns; 0: never
#
# new_chat works for chat windows too, with window.new_chat_key set.
#
# Dream.OS writers left running keep writing where they always did; list
# those places per agent (folders, files, globs; relative to this folder)
# and the runner picks their messages up ('agentctl migrate' writes these).
# It only reads them, remembering what it delivered; with take: true it
# empties the place as an old reader did:
#
#  - name: Agent-1
#    watch:
#      - dreamos/agent_workspaces/Agent-1/inbox             # one file per message
#      - dreamos/runtime/agent_comms/agent_mailboxes/Agent-1/*.json
#      - dreamos/inboxes/Agent-1.txt                        # messages appended one after another
#      - {path: tools/mailbox/Agent-1/inbox.json, take: true}
#
# A chat page driven through the DevTools port of the app showing it
# ('agentctl cursor launch Agent-6' starts Cursor so; 'agentctl calibrate
# Agent-6 --cdp http://127.0.0.1:9222' fills this in). No mouse, keyboard or
# clipboard is used, so such seats work at the same time. Selectors left out
# follow the built-in profile of the app's chat (cursor, or vscode for VS
# Code's chat view), which depends on the app's version: 'agentctl doctor'
# checks them on the live page. The reply is read as the app's own copy of
# it (its Markdown source); Cursor's profile names no copy action, so set
# copy or copy_menu (calibrate finds them), or read: rendered.
#
#  - name: Agent-6
#    driver: cdp
#    cdp:
#      endpoint: http://127.0.0.1:9222  # the app's --remote-debugging-port, on loopback only
#      target: 'Agent-6.*Cursor'        # regular expression on page titles; exactly one must match
#      # profile: cursor                # cursor or vscode: the app whose selectors fill those left out
#      # composer: '<css selector>'     # where the prompt goes (contenteditable, textarea or a Monaco editor's textarea)
#      # submit: '<css selector>'       # clicked to send; empty: Enter in the composer
#      # busy: '<css selector>'         # visible while the model works (a reply loading, the stop button); none: nothing is, and quiet must be set
#      # reply: '<css selector>'        # the replies; the last match is the reply
#      # body: '<css selector>'         # optional: the parts of the reply that show its text (not names, progress)
#      # error: '<css selector>'        # optional: the app's error message inside the reply
#      # copy: '<css selector>'         # the reply's copy button (looked for inside the last reply first)
#      # copy_menu: Copy                # or: the label of the reply's context-menu item that copies it
#      # read: copy                     # copy (the app's own copy, checked against the page) or rendered (loses Markdown; noted in receipts)
#      # clipboard: page                # page (the copy caught inside the page) or system (an app that copies from outside it, such as Electron's main process)
#      # new_chat: '<css selector>'     # optional: starts a fresh chat
#      # quiet: 20ms                    # stillness after busy is gone before the reply is read

# People: mailboxes without a runner. Receipts, notices and agents' questions
# to them wait there; read them with 'agentctl inbox human' and answer with
# 'agentctl reply ID TEXT'. Same rules for names as agents.
people:
{{- range .People}}
  - {{.}}
{{- end}}

mailbox:
  # How new messages are noticed: "events" (file system events, instant) or
  # "poll" (for network or synced folders where events never arrive).
  watch: {{.M.Watch}}
  # How often the poll mode looks at the folders.
  poll_interval: {{.M.PollInterval}}
  # A full rescan runs this often even with events on, in case one was lost.
  rescan_interval: {{.M.RescanInterval}}
  # A dropped file that is not complete JSON yet (a Markdown message, a copy
  # still running) is read once it has not changed for this long.
  settle: {{.M.Settle}}
  # Tries before a message goes to deadletter/ with its reason.
  max_attempts: {{.M.MaxAttempts}}
  # Wait before the first retry; it doubles with each further retry, up to an hour.
  backoff: {{.M.Backoff}}
  # A Dream.OS inbox.json larger than this many bytes goes to deadletter/ unread.
  max_inbox_json_bytes: {{.M.MaxInboxJSONBytes}}
  # Folders where old Dream.OS writers put every agent's messages: each goes
  # to the runner of the agent it is addressed to (by its content, else by
  # its file name).
  # shared: [dreamos/runtime/agent_comms/inbox]

# Timings of GUI turns, for every agent on this desktop.
gui:
  # With a busy indicator calibrated (window.busy, such as Cursor's stop
  # button), the reply is finished when the indicator is back at rest and the
  # chat has then not changed for this long (its last drawing).
  quiet: {{.G.Quiet}}
  # Without a busy indicator, the reply is finished only when its region has
  # not changed for this long: it must outlast the longest pause a model makes
  # mid-reply (a tool run), or replies are cut short. Calibrate window.busy.
  max_pause: {{.G.MaxPause}}
  # How long the chat may take to show a submitted prompt; the submit key is
  # pressed once more, then the turn fails as "pasted but not submitted".
  submit: {{.G.Submit}}
  # Upper bound for a whole turn.
  turn_timeout: {{.G.TurnTimeout}}
  # How long a turn waits for the desktop input lock (one mouse, keyboard and
  # clipboard shared by every agent on this display).
  lock_wait: {{.G.LockWait}}

# The runner, 'agentctl run AGENT': one long-lived process per agent.
run:
  # status.json is rewritten this often even when nothing happens (every
  # change of state is written at once); keep it under recovery.stale_after.
  heartbeat: {{.R.Heartbeat}}
  # A self-prompt longer than this is dead-lettered with the reason, never cut.
  max_prompt_bytes: {{.R.MaxPromptBytes}}
  # On Ctrl+C or SIGTERM a running turn may finish for this long; after that it
  # is left in processing/ for the next runner to resume (on a seat of a hub,
  # in the seat's journal).
  shutdown_grace: {{.R.ShutdownGrace}}
  # May a turn cut off after its prompt was submitted send the prompt again?
  # auto: yes for exec agents (their command just runs again), never for chat
  # windows, which already have it. Or: never, always.
  resend: {{.R.Resend}}
  # <type>.tmpl files in this folder (under the runtime root) replace the
  # built-in prompt template of that message type; default.tmpl replaces all.
  templates: {{.R.Templates}}
  # Loop guards. A thread whose agents have answered each other this many
  # times goes to a person instead; one reply sends at most this many messages.
  max_hops: {{.R.MaxHops}}
  max_sends_per_reply: {{.R.MaxSendsPerReply}}
  # A reply without the agentctl block its prompt asked for is archived "done
  # without block": nothing it meant was done. After this many such turns of
  # one agent in a row, the person in the loop is told once (check
  # 'agentctl doctor' and the seat's copy button). 0: never.
  no_block_notice: {{.R.NoBlockNotice}}

# Prompts per agent, so that a flood of messages cannot burn the model quota.
# 0 means no limit. Messages wait in the inbox until the limit allows them.
rate_limit:
  per_minute: {{.L.PerMinute}}
  per_hour: {{.L.PerHour}}

# Recovery checks. Every runner runs them on these schedules; 'agentctl
# reconcile' runs them all once (for a system cron when no runner is up).
recovery:
  # A claim left in processing/ by a runner that is gone is put back in the
  # inbox after this long (unless its prompt was already submitted).
  lease: {{.V.Lease}}
  # A heartbeat older than this means the runner is stalled or gone.
  stale_after: {{.V.StaleAfter}}
  # A turn running longer than this while messages wait means a stalled agent.
  stall_after: {{.V.StallAfter}}
  # Cron specs: five fields, an optional leading seconds field, or @every 30s.
  cron:
    requeue: "{{.V.Cron.Requeue}}"
    expire: "{{.V.Cron.Expire}}"
    stall: "{{.V.Cron.Stall}}"
    rescan: "{{.V.Cron.Rescan}}"

# Who hears about stalled agents.
supervisor:
  # This agent gets a recovery notice for every stall (empty: devlog only).
  agent: "{{.S.Agent}}"
  # If set, a stalled agent is sent this text as an urgent "resume" message.
  nudge: "{{.S.Nudge}}"

# What the runner does without a model turn.
coordination:
  # Per message type: turn (a prompt), runner (no turn: status-request and
  # ping are answered, board-update applies its agentctl block, any other
  # type is acknowledged) or digest (folded into the next turn's prompt).
  # Types not listed take a turn.
  policy:
{{- range .C.PolicyTypes}}
    {{.}}: {{index $.C.Policy .}}
{{- end}}
    # notice: digest
  # A digest note waits at most this long for a turn to carry it; then it
  # gets a turn of its own.
  digest_wait: {{.C.DigestWait}}
  # How often an idle runner looks at the boards: for work to take (agents
  # with board.take) and for dependency notices to send.
  board_look: {{.C.BoardLook}}
  # When the day's lore (lore/YYYY-MM-DD.md) is written again.
  lore:
    on_task_done: {{.C.Lore.OnTaskDone}}   # whenever a task becomes done
    every_messages: {{.C.Lore.EveryMessages}}    # after every N messages a runner settles; 0: never
    # narrate: [claude, -p, "Retell this chronicle in two paragraphs."]  # the lore on stdin
    narrate_timeout: {{.C.Lore.NarrateTimeout}}

# What a reply may do. Per kind of effect: allow (applied), confirm (held as
# an approval request in the person's mailbox: agentctl approve ID, agentctl
# deny ID) or deny (refused and recorded). Everything is in audit/*.jsonl.
guardrails:
  broadcast: {{.U.Broadcast}}          # a send to all
  others_task: {{.U.OthersTask}}        # changing a task another agent owns
  close_unowned: {{.U.CloseUnowned}}      # marking done a task the agent does not own
  many_sends: {{.U.ManySends}}         # a reply's sends past the first many_sends_over
  many_sends_over: {{.U.ManySendsOver}}

# Telling people a message landed in their mailbox: 'agentctl up' looks at
# the people's inboxes and tells of each new message every way set here.
#
# notify:
#   desktop: true                  # D-Bus, osascript or a Windows toast
#   webhook: https://ntfy.sh/my-topic   # POST, ntfy's shape; credentials in the URL or in webhook_headers
#   webhook_headers: {Authorization: Bearer tk_...}
#   command: [page-me]             # AGENTCTL_NOTIFY_SUBJECT, _BODY... and the message as JSON on stdin
#   poll: 2s

# Seats on several machines ('agentctl hub'). One machine, the hub, keeps
# this folder; an agent whose "machine:" is another one takes its turns
# there with 'agentctl run AGENT --hub URL', run with a copy of this file.
# Off loopback the hub needs credentials (user and password_file, or
# nkey_seed_file), and TLS is wise. Paths are relative to this folder.
#
# hub:
#   machine: desk-1                # this folder's machine (agents without one run here)
#   listen: {{.H.Listen}}         # the embedded NATS server
#   url: nats://desk-1:4222        # how the other machines reach it
#   user: swarm                    # with password_file: the password alone, mode 600
#   password_file: hub/password
#   # nkey_seed_file: hub/seed.nk  # instead of user and password: the nkey seed (SU...) every machine signs with, mode 600
#   # nkey: U...                   # or only the public key the hub accepts, on a hub without the seed
#   # creds_file: hub/swarm.creds  # an external cluster's .creds file (accounts and JWTs)
#   tls: {cert: hub/tls/desk-1.pem, key: hub/tls/desk-1-key.pem, ca: hub/tls/ca.pem}
#   store: {{.H.Store}}           # the embedded server's JetStream folder
#   replicas: {{.H.Replicas}}                    # servers keeping each stream, 1 to 5
#   # nats: nats://nats-1:4222,nats://nats-2:4222   # an external cluster instead
#   # cluster: {name: swarm, listen: 0.0.0.0:6222, routes: [nats://desk-2:6222]}
#
# and, under agents:
#
#  - name: Agent-5
#    machine: laptop-2
`

// Initial returns the commented agentctl.yaml for a new runtime with the
// given agents.
func Initial(agents []string) []byte {
	var buf bytes.Buffer
	data := struct {
		Agents []string
		People []string
		M      Mailbox
		G      GUI
		R      Run
		L      RateLimit
		V      Recovery
		S      Supervisor
		C      Coordination
		U      Guardrails
		H      Hub
	}{agents, DefaultPeople, Default().Mailbox, Default().GUI, Default().Run, Default().RateLimit, Default().Recovery, Default().Supervisor, Default().Coordination, Default().Guardrails, Default().Hub}
	if err := initialTemplate().Execute(&buf, data); err != nil {
		panic(fmt.Sprintf("config template: %v", err))
	}
	return buf.Bytes()
}
