# A thread spinning with known values in ymm0-14 (upper halves included),
# in general registers and in its red zone is stopped mid-loop many times:
# it must never notice.
. "$SRCDIR/tests/integration/lib.sh"

start_target avx_redzone
toggles 100
mp -p "$PID" -x "$WORK/toggles"
check "memprof ran 100 rounds" mp_ok
# The round under way at the last stop checks every iteration after it:
# wait for it to end.
rounds=$(grep -c '^rounds' "$TARGET_OUT")
check "the spinning thread finishes its round" within 20 count_above "$TARGET_OUT" '^rounds' "$rounds"
check "no register or red-zone corruption" file_lacks "$TARGET_OUT" CORRUPT
check "the process is left running, untraced" untouched "$PID"
check "the spinning target is running" [ "$(state_of "$PID")" = R ]
check "no dump directory left" no_dump_dirs
