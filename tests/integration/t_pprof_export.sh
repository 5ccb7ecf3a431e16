# A dump taken from a live process, exported with `pprof`, decodes with
# protoc against lib/pprof.proto, and holds what the format requires:
# string_table[0] empty, the sample types, period, and the keep_block
# allocation site named with its source file.
. "$SRCDIR/tests/integration/lib.sh"
start_target session_idle
mp -p "$PID" -e 'prof sample 12 --force' -e 'prof on' -e 'sleep 1' -e 'dump --name d' \
   -e 'prof off' -e "pprof $WORK/d.pb.gz d"
assert_ok
assert_out 'written to .*d.pb.gz'
gzip -t "$WORK/d.pb.gz" || die "not gzip"
zcat "$WORK/d.pb.gz" | protoc --proto_path="$SRCDIR/lib" \
    --decode=perftools.profiles.Profile "$SRCDIR/lib/pprof.proto" >"$WORK/d.txt" \
    || die "protoc cannot decode the export"
[ "$(grep -m1 '^string_table:' "$WORK/d.txt")" = 'string_table: ""' ] || die "string_table[0] is not empty"
grep -q '^string_table: "inuse_space"$' "$WORK/d.txt" || die "no inuse_space sample type"
grep -q '^period: 4096$' "$WORK/d.txt" || die "period is not 2^12"
grep -q '^string_table: "keep_block"$' "$WORK/d.txt" || die "keep_block not named"
grep -q '^string_table: ".*session_idle.c"$' "$WORK/d.txt" || die "no source file"
grep -q '^sample {' "$WORK/d.txt" || die "no samples"
# bad destination: a clear error, exit 1
mp -p "$PID" -e 'dump' -e "pprof /nonexistent-dir/x.pb.gz"
assert_fail
assert_err 'cannot create /nonexistent-dir/x.pb.gz'
alive "$PID" || die "target died"
echo "pprof export ok"
