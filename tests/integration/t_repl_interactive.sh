# The interactive prompt on a real terminal (tmux): the memprof> prompt,
# completion, history, Ctrl-C clearing the line without ending the
# session, and Ctrl-D leaving cleanly.
. "$SRCDIR/tests/integration/lib.sh"
sock="$WORK/tmux.sock"
tm() { tmux -S "$sock" "$@"; }
screen() { tm capture-pane -p -t mp; }
wait_screen() {
    local i
    for i in $(seq 50); do screen | grep -Eq -- "$1" && return 0; sleep 0.1; done
    screen >&2
    die "screen never showed /$1/"
}
export HOME="$WORK"   # history goes to $WORK/.memprof_history
tm new-session -d -s mp -x 120 -y 40 "$MEMPROF; echo EXITED \$?; sleep 30"
wait_screen '^memprof>'

# completion: "hel<TAB> pr<TAB>" completes to "help prof"
tm send-keys -t mp 'hel' Tab ' pr' Tab Enter
wait_screen '^usage: prof on\|off'

# Ctrl-C clears a half-typed line and the session goes on
tm send-keys -t mp 'this is not a command' C-c
sleep 0.3
tm send-keys -t mp 'help sleep' Enter
wait_screen '^usage: sleep SECONDS'
screen | grep -q "unknown command 'this" && die "Ctrl-C ran the half-typed line"

# history: Up brings back the last command
tm send-keys -t mp Up Enter
for i in $(seq 50); do
    [ "$(screen | grep -c '^usage: sleep SECONDS')" -ge 2 ] && break
    sleep 0.1
done
[ "$(screen | grep -c '^usage: sleep SECONDS')" -ge 2 ] || die "Up did not recall 'help sleep'"

# Ctrl-D leaves with status 0 and the history is saved
tm send-keys -t mp C-d
wait_screen '^EXITED 0'
grep -q '^help sleep$' "$WORK/.memprof_history" || die "history was not saved"
tm kill-server
echo "interactive ok"
