# A dump taken from a live process, exported with `pprof`, decodes with
# protoc against lib/profile/pprof.proto, and holds what the format requires:
# string_table[0] empty, the sample types, period, and the keep_block
# allocation site named with its source file.
. "$SRCDIR/tests/integration/lib.sh"
start_target session_idle
mp -p "$PID" -e 'prof sample 12 --force' -e 'prof on' -e 'sleep 1' -e 'dump --name d' \
   -e 'prof off' -e "pprof $WORK/d.pb.gz d"
check "export session: succeeds" mp_ok
check "export session: shows written to ...d.pb.gz" out_has 'written to .*d.pb.gz'
check "the export is gzip" gzip -t "$WORK/d.pb.gz"
decode() {
    zcat "$WORK/d.pb.gz" | protoc --proto_path="$SRCDIR/lib/profile" \
        --decode=perftools.profiles.Profile "$SRCDIR/lib/profile/pprof.proto" >"$WORK/d.txt"
}
check "protoc decodes the export" decode
check "string_table[0] is empty" [ "$(grep -m1 '^string_table:' "$WORK/d.txt")" = 'string_table: ""' ]
check "an inuse_space sample type" grep -q '^string_table: "inuse_space"$' "$WORK/d.txt"
check "period is 2^12" grep -q '^period: 4096$' "$WORK/d.txt"
check "keep_block named" grep -q '^string_table: "keep_block"$' "$WORK/d.txt"
check "its source file named" grep -q '^string_table: ".*session_idle.c"$' "$WORK/d.txt"
check "samples" grep -q '^sample {' "$WORK/d.txt"
# bad destination: a clear error, exit 1
mp -p "$PID" -e 'dump' -e "pprof /nonexistent-dir/x.pb.gz"
check "dump; pprof /nonexistent-dir/x.pb.gz: fails" mp_failed
check "dump; pprof /nonexistent-dir/x.pb.gz: says cannot create /nonexistent-dir/x.pb.gz" err_has 'cannot create /nonexistent-dir/x.pb.gz'
check "the process is still alive" alive "$PID"
