# The target is left exactly as it was (FIELD-NOTES 3, rule 9): after a
# session of calls, every executable mapping of the program and of
# libjemalloc holds the same bytes as its file, trampoline bytes included;
# and the session left no mapping behind.
. "$SRCDIR/tests/integration/lib.sh"
start_target session_idle
cp "/proc/$PID/maps" "$WORK/maps.before"
mp -p "$PID" -e info -e 'prof on' -e dump -e 'prof sample 18' -e 'prof off' -e info
check "the session ran" mp_ok
check "the process is left running, untraced" untouched "$PID"

check "its code holds its files' bytes" text_intact "$PID" session_idle
# no file mapping added, removed or re-protected by the session (anonymous
# ones are jemalloc's own business: it maps memory as the process allocates)
files() { awk '$6 ~ /^\// {print $1, $2, $6}' "$1"; }
same_file_mappings() { diff <(files "$WORK/maps.before") <(files "/proc/$PID/maps") >&2; }
check "its file mappings are as before the session" same_file_mappings
