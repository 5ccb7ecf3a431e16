# 200 rounds of prof on / prof off / dump against eight threads that
# allocate, free and verify every byte they wrote: nothing corrupts, every
# worker keeps working through the session and after it, nothing is left
# stopped, traced or on disk.
. "$SRCDIR/tests/integration/lib.sh"

start_target stress8
toggles 200
# Each worker's own count of verified blocks, read live from its memory
# (the array `checked` of stress8.c), so a single stalled worker shows.
worker_counts() { words_at "$PID" checked 8; }
workers_beyond() { all_grew "$1" "$(worker_counts)"; }
before=$(worker_counts)
mp -p "$PID" -x "$WORK/toggles"
check "memprof ran 200 rounds" mp_ok
during=$(worker_counts)
echo "verified blocks per worker: before $before; after the session $during"
check "every worker verified blocks during the session" all_grew "$before" "$during"
check "every worker goes on verifying after the session" within 5 workers_beyond "$during"
reports=$(grep -c '^checked' "$TARGET_OUT")
check "the main thread goes on reporting" within 5 count_above "$TARGET_OUT" '^checked' "$reports"
check "no block found corrupt" file_lacks "$TARGET_OUT" CORRUPT
check "the process is left running, untraced" untouched "$PID"
check "no dump directory left" no_dump_dirs
