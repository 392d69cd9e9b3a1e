# Shell functions for a private desktop: a virtual X display that only the
# calling script holds the cookie for, a window manager, and stand-in Cursor
# chat windows calibrated with 'agentctl calibrate'. Sourced by scripts/demo
# and scripts/standin; they never touch the user's own display.
#
# The caller sets:
#   ctl      the agentctl binary
#   logs     a folder for the processes' logs
#   pids     an array; every process started here is appended to it
#   xdir     set here: a temp folder the caller removes when done

# desktop_start starts Xvfb and matchbox and exports DISPLAY and XAUTHORITY.
desktop_start() {
  xdir=$(mktemp -d)
  export XAUTHORITY=$xdir/Xauthority
  local display="" n
  for n in $(seq 90 140); do
    [ -e "/tmp/.X$n-lock" ] || [ -e "/tmp/.X11-unix/X$n" ] || { display=":$n"; break; }
  done
  [ -n "$display" ] || { echo "no free X display number" >&2; return 1; }
  : >"$XAUTHORITY"  # xauth warns about a missing file otherwise
  xauth -q -f "$XAUTHORITY" add "$display" . "$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')"
  Xvfb "$display" -screen 0 1280x800x24 -auth "$XAUTHORITY" -nolisten tcp >"$logs/Xvfb.log" 2>&1 &
  pids+=($!)
  export DISPLAY=$display
  for _ in $(seq 100); do xdpyinfo >/dev/null 2>&1 && break; sleep 0.1; done
  xdpyinfo >/dev/null 2>&1 || { echo "Xvfb did not start (see $logs/Xvfb.log)" >&2; return 1; }
  matchbox-window-manager -use_titlebar no -use_dialog_mode free >"$logs/wm.log" 2>&1 &
  pids+=($!)
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
  # The layout holds what a person would point at when calibrating.
  local args
  args=$(python3 -c '
import json, re, sys
l = json.load(open(sys.argv[1]))
csv = lambda v: ",".join(str(n) for n in v)
meta = lambda s: re.sub(r"([.^$*+?()\[\]{}|\\])", r"\\\1", s)
print("^" + meta(l["title"]) + "$", l["pid"], csv(l["input"]), csv(l["copy"]), csv(l["reply"]), sep="\t")
' "$layout")
  local title pid input copy reply
  IFS=$'\t' read -r title pid input copy reply <<<"$args"
  "$ctl" calibrate "$agent" --title "$title" --pid "$pid" --input "$input" --copy "$copy" --reply "$reply" >/dev/null
}
