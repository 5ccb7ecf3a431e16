# The interactive prompt on a real terminal (tmux): the memprof> prompt,
# completion, history, Ctrl-C clearing the line without ending the
# session, and Ctrl-D leaving cleanly.
. "$SRCDIR/tests/integration/lib.sh"
sock="$WORK/tmux.sock"
tm() { tmux -S "$sock" "$@"; }
# a test that dies leaves no tmux server (and the memprof in it) behind
stop_tmux() { tm kill-server 2>/dev/null || true; }
CLEANUP_HOOKS+=(stop_tmux)
# the pane and its scrollback: a long help text scrolls earlier prompts off
# the visible rows, and they still count
screen() { tm capture-pane -p -S - -t mp; }
on_screen() { screen | grep -Eq -- "$1"; }
off_screen() { ! on_screen "$1"; }
# on_screen_times N RE: at least N lines of the screen match RE
on_screen_times() { [ "$(screen | grep -Ec -- "$2")" -ge "$1" ]; }
wait_screen() {
    holds wait_until 5 "the screen to show /$1/" on_screen "$1" && return 0
    screen >&2
    die "screen never showed /$1/"
}
export HOME="$WORK"   # history goes to $WORK/.memprof_history
tm new-session -d -s mp -x 120 -y 40 "$MEMPROF; echo EXITED \$?; sleep 30"
wait_screen '^memprof>'

# completion: "hel<TAB> pr<TAB>" completes to "help prof"
tm send-keys -t mp 'hel' Tab ' pr' Tab Enter
check "completion: hel<TAB> pr<TAB> runs help prof" within 5 on_screen '^usage: prof on\|off'

# Ctrl-C clears a half-typed line and the session goes on (at a new prompt)
prompts=$(screen | grep -c '^memprof>')
tm send-keys -t mp 'this is not a command' C-c
wait_screen_prompts() { on_screen_times $((prompts + 1)) '^memprof>'; }
wait_until 5 "a new prompt after Ctrl-C" wait_screen_prompts
tm send-keys -t mp 'help sleep' Enter
check "Ctrl-C: the session goes on" within 5 on_screen '^usage: sleep SECONDS'
check "Ctrl-C: the half-typed line was not run" off_screen "unknown command .this"

# history: Up brings back the last command
tm send-keys -t mp Up Enter
check "Up recalls 'help sleep'" within 5 on_screen_times 2 '^usage: sleep SECONDS'

# Ctrl-D leaves with status 0 and the history is saved
tm send-keys -t mp C-d
check "Ctrl-D leaves with status 0" within 5 on_screen '^EXITED 0'
check "the history is saved" grep -q '^help sleep$' "$WORK/.memprof_history"
tm kill-server
