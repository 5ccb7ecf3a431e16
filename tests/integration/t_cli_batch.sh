# The command line as scripts meet it (issue 11, items 5-7): stdout of a
# batch holds only answers (status lines go to stderr, -q drops them), a
# bad -p is a usage error (exit 2), a failing line of -x FILE or -e is
# named by its place, and --json answers carry a schema version.
# stdout, stderr and the exit status are checked separately.
. "$SRCDIR/tests/integration/lib.sh"

start_target plain

# --- item 5: clean stdout -----------------------------------------------------
run() {   # run memprof: stdout in $WORK/out, stderr in $WORK/err, status in $RC
    "$MEMPROF" "$@" >"$WORK/out" 2>"$WORK/err"; RC=$?
    printf '$ memprof %s\n%s\n%s\n(exit %d)\n' "$*" "$(cat "$WORK/out")" "$(cat "$WORK/err")" "$RC" >&2
}
run -p "$PID" -e 'mallctl opt.prof'
check "mallctl batch succeeds" [ "$RC" -eq 0 ]
check "stdout is only the answer" [ "$(cat "$WORK/out")" = "opt.prof: true" ]
check "the first line of stdout is the answer" [ "$(head -1 "$WORK/out")" = "opt.prof: true" ]
check "the attach line is on stderr" grep -q "^attached to process $PID " "$WORK/err"
check "the profiling state is said on attach" \
    grep -Eq '^profiling is off in process [0-9]+ \(prof\.active false\); sampling every 2\^19 bytes' "$WORK/err"

run -q -p "$PID" -e 'mallctl opt.prof'
check "-q: same answer" [ "$(cat "$WORK/out")" = "opt.prof: true" ]
check "-q: nothing on stderr" [ ! -s "$WORK/err" ]

# --- item 9: since when this session's profiling runs -------------------------
run -p "$PID" -e 'prof on' -e info -e dump -e dump -e 'prof off'
check "prof on / info / dump batch succeeds" [ "$RC" -eq 0 ]
check "info says this session turned profiling on, and when" \
    grep -Eq '^prof\.active +true \(turned on by this session at [0-9:]{8} \([0-9]+ s ago\)\)$' "$WORK/out"
check "the first dump after prof on says what it covers" \
    grep -q '^note: dump1 covers only the allocations sampled since this session turned profiling on at' "$WORK/err"
check "only the first dump says so" bash -c "! grep -q '^note: dump2 covers' '$WORK/err'"

# --- item 7: exit codes and the place of a failing line ----------------------
run -p abc -e info
check "-p abc exits 2" [ "$RC" -eq 2 ]
check "-p abc says why" grep -q "'abc' is not a process id" "$WORK/err"
check "-p abc prints nothing on stdout" [ ! -s "$WORK/out" ]
run -p 0 -e info
check "-p 0 exits 2" [ "$RC" -eq 2 ]
run -p 99999999999999999999 -e info
check "-p out of range exits 2" [ "$RC" -eq 2 ]

printf 'mallctl opt.prof\n# a comment\n\nmallctl no.such.name\nmallctl opt.lg_prof_sample\n' \
    >"$WORK/steps.mp"
run -p "$PID" -x "$WORK/steps.mp"
check "failing script exits 1" [ "$RC" -eq 1 ]
check "failing script line named FILE:LINE" \
    grep -q "^memprof: $WORK/steps.mp:4: memprof does not know the type of 'no.such.name'" "$WORK/err"
check "lines before the failure answered" grep -q '^opt.prof: true$' "$WORK/out"
check "no line after the failure ran" bash -c "! grep -q lg_prof_sample '$WORK/out'"

run -e 'help quit' -e 'sleep 0' -e 'nonesuch' -e 'help dump'
check "failing -e exits 1" [ "$RC" -eq 1 ]
check "failing -e named by position" grep -q "^memprof: -e #3: unknown command 'nonesuch'" "$WORK/err"

printf 'help quit\nbogus\n' | { "$MEMPROF" >"$WORK/out" 2>"$WORK/err"; echo $? >"$WORK/rc"; }
check "stdin batch exits 1" [ "$(cat "$WORK/rc")" -eq 1 ]
check "failing stdin line named stdin:LINE" grep -q "^memprof: stdin:2: unknown command 'bogus'" "$WORK/err"

# --- item 6: --json answers with a schema version ----------------------------
run -q -p "$PID" -e 'info --json' -e 'mallctl opt.lg_prof_sample --json' \
    -e 'mallctl opt.prof_prefix --json' -e 'prof on --json' -e 'dump --json' \
    -e 'dumps --json' -e 'top 3 --json' -e 'prof off --json' -e 'mallctl --json'
check "json batch succeeds" [ "$RC" -eq 0 ]
json_checks() {
    python3 - "$WORK/out" "$PID" <<'PY'
import json, sys
text = open(sys.argv[1]).read()
dec, docs, i = json.JSONDecoder(), [], 0
while i < len(text):
    if text[i].isspace():
        i += 1
        continue
    d, i = dec.raw_decode(text, i)
    docs.append(d)
assert len(docs) == 9, len(docs)
for d in docs:
    assert d["schema"] == 1, d
info, lg, prefix, on, dump, dumps, top, off, names = docs
assert info["pid"] == int(sys.argv[2]), info
assert info["mallctl"]["opt.prof"] is True and info["mallctl"]["prof.active"] is False, info
assert isinstance(info["threads"], int) and isinstance(info["pauses"]["stops"], int), info
assert lg == {"schema": 1, "name": "opt.lg_prof_sample", "type": "size_t", "value": 19}, lg
assert prefix["value"] == "jeprof", prefix
assert on["prof_active"] is True and on["was"] is False, on
assert dump["dump"]["name"] == "dump1" and isinstance(dump["dump"]["total_objects"], int), dump
assert [x["name"] for x in dumps["dumps"]] == ["dump1"], dumps
assert isinstance(top["total_objects"], int), top
for r in top["rows"]:
    assert isinstance(r["flat_objects"], int) and isinstance(r["cum_bytes"], int), r
assert off["prof_active"] is False and off["was"] is True, off
assert any(n["name"] == "prof.active" and n["access"] == "rw" for n in names["names"]), names
PY
}
check "every --json answer parses, has schema 1 and the documented keys" json_checks

assert_untouched "$PID"

# --- item 10: unique prefixes run, ambiguous and unknown words are answered ---
run -e 'hel sle'
check "a unique prefix runs the command (help sleep)" grep -q '^usage: sleep SECONDS' "$WORK/out"
run -e 'du'
check "an ambiguous prefix names the candidates" \
    grep -q "^memprof: -e #1: 'du' is ambiguous: dump, dumps" "$WORK/err"
check "an ambiguous prefix fails" [ "$RC" -eq 1 ]
run -e 'dmup'
check "a typo is answered with the nearest command" \
    grep -q "^memprof: -e #1: unknown command 'dmup': did you mean 'dump'?" "$WORK/err"
