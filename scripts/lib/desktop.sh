# Shell functions for a private desktop: a virtual X display that only the
# calling script holds the cookie for, a window manager, and stand-in Cursor
# chats calibrated with 'agentctl calibrate': Chromium pages
# (fixtures/chatpage) where Chromium is installed, Tk windows
# (fixtures/chatwindow) otherwise. Sourced by scripts/demo and
# scripts/standin; they never touch the user's own display.
#
# The caller sets:
#   ctl      the agentctl binary
#   logs     a folder for the processes' logs
#   pids     an array; every process started here is appended to it
#   xdir     set here: a temp folder the caller removes when done

# desktop_start starts Xvfb and a window manager (openbox, which places
# Chromium windows where they ask, or else matchbox) and exports DISPLAY
# and XAUTHORITY.
desktop_start() {
  xdir=$(mktemp -d)
  export XAUTHORITY=$xdir/Xauthority
  local n server=""
  # A number another X server takes between the look and the start (the
  # tests start theirs too) ends this Xvfb: the next number is tried. An
  # Xvfb that runs is waited for however long it takes, on a busy machine.
  for n in $(seq 90 140); do
    [ -e "/tmp/.X$n-lock" ] || [ -e "/tmp/.X11-unix/X$n" ] && continue
    : >"$XAUTHORITY"  # xauth warns about a missing file otherwise
    xauth -q -f "$XAUTHORITY" add ":$n" . "$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')"
    Xvfb ":$n" -screen 0 1280x800x24 -auth "$XAUTHORITY" -nolisten tcp >"$logs/Xvfb.log" 2>&1 &
    server=$!
    pids+=("$server")
    export DISPLAY=:$n
    while kill -0 "$server" 2>/dev/null && ! xdpyinfo >/dev/null 2>&1; do sleep 0.1; done
    kill -0 "$server" 2>/dev/null && break
    server=""
  done
  [ -n "$server" ] || { echo "Xvfb did not start on any free display (see $logs/Xvfb.log)" >&2; return 1; }
  if command -v openbox >/dev/null; then
    openbox --sm-disable >"$logs/wm.log" 2>&1 &
  else
    matchbox-window-manager -use_titlebar no -use_dialog_mode free >"$logs/wm.log" 2>&1 &
  fi
  pids+=($!)
}

# standin_chat AGENT X [--reply-file FILE] [--think S] [--chunks N] [--pause S]
# opens a stand-in chat for AGENT at x offset X: a Chromium page where
# Chromium is installed, a Tk window otherwise.
standin_chat() {
  local agent=$1 x=$2
  shift 2
  if ! command -v chromium >/dev/null; then
    standin_window "$agent" "$x" "$@"
    return
  fi
  local query="" reply=()
  while [ $# -gt 0 ]; do
    case $1 in
      --reply-file) reply=(--reply-file "$2"); query+="&reply_file=1" ;;
      --think|--chunks|--pause) query+="&${1#--}=$2" ;;
      *) echo "standin_chat: unknown option $1" >&2; return 2 ;;
    esac
    shift 2
  done
  local layout=$logs/$agent.layout.json title="$agent - Cursor (stand-in)"
  rm -f "$layout"
  python3 -u fixtures/chatpage/recorder.py --log "$logs/$agent.window.jsonl" --layout "$layout" "${reply[@]}" \
    >"$logs/$agent.recorder.out" 2>"$logs/$agent.recorder.log" &
  pids+=($!)
  local port=""
  for _ in $(seq 100); do
    port=$(sed -n 's/^listening on //p' "$logs/$agent.recorder.out")
    [ -n "$port" ] && break
    sleep 0.1
  done
  [ -n "$port" ] || { echo "the recorder of $agent did not start (see $logs/$agent.recorder.log)" >&2; return 1; }
  local sandbox=()
  [ "$(id -u)" -ne 0 ] || sandbox=(--no-sandbox)  # Chromium refuses to run as root with its sandbox
  local q
  q=$(python3 -c 'import sys, urllib.parse; print(urllib.parse.quote(sys.argv[1]))' "$title")
  chromium "${sandbox[@]}" --test-type --no-first-run --disable-background-networking --disable-component-update \
    --disable-sync --disable-gpu --disable-quic --password-store=basic --user-data-dir="$logs/$agent.profile" \
    --window-position="$x,20" --window-size=420,380 \
    --app="http://127.0.0.1:$port/index.html?title=$q$query" >"$logs/$agent.chromium.log" 2>&1 &
  pids+=($!)
  for _ in $(seq 300); do [ -s "$layout" ] && break; sleep 0.1; done
  [ -s "$layout" ] || { echo "the page of $agent did not show (see $logs/$agent.chromium.log)" >&2; return 1; }
  standin_calibrate "$agent" "$layout"
}

# standin_window AGENT X [chatwindow.py options...] opens a stand-in chat
# window for AGENT at x offset X and records it in agentctl.yaml the way a
# user would, with 'agentctl calibrate'.
standin_window() {
  local agent=$1 x=$2
  shift 2
  local layout=$logs/$agent.layout.json
  rm -f "$layout"
  python3 fixtures/chatwindow/chatwindow.py --title "$agent - Cursor (stand-in)" --geometry "400x360+$x+20" \
    --log "$logs/$agent.window.jsonl" --layout "$layout" "$@" 2>"$logs/$agent.window.log" &
  pids+=($!)
  for _ in $(seq 100); do [ -s "$layout" ] && break; sleep 0.1; done
  [ -s "$layout" ] || { echo "the window of $agent did not show (see $logs/$agent.window.log)" >&2; return 1; }
  standin_calibrate "$agent" "$layout"
}

# standin_calibrate AGENT LAYOUT records a stand-in's layout with
# 'agentctl calibrate': the layout holds what a person would point at.
standin_calibrate() {
  local agent=$1 layout=$2 args
  args=$(python3 -c '
import json, re, sys
l = json.load(open(sys.argv[1]))
csv = lambda v: ",".join(str(n) for n in v)
meta = lambda s: re.sub(r"([.^$*+?()\[\]{}|\\])", r"\\\1", s)
print("^" + meta(l["title"]) + "$", l.get("pid", 0), csv(l["input"]), csv(l["copy"]), csv(l["reply"]), csv(l["busy"]), sep="\t")
' "$layout")
  local title pid input copy reply busy
  IFS=$'\t' read -r title pid input copy reply busy <<<"$args"
  "$ctl" calibrate "$agent" --title "$title" --pid "$pid" --input "$input" --copy "$copy" --reply "$reply" --busy "$busy" >/dev/null
}
