# What memprof tells an operator about profiling a process without a
# profiler of its own is true for that process: on a glibc process every
# refusal and the agent's error body name 'prof on' / the sampler (no
# restart); a restart only where the sampler cannot go in (a static
# program, where LD_PRELOAD cannot reach its calls either), saying why.
# A sampler dump that holds nothing says why and what to do, at the
# prompt and in the agent's profile (a pprof comment).
. "$SRCDIR/tests/integration/lib.sh"

CONF= start_target glibc_live
GL=$PID
GL_OUT=$TARGET_OUT

# --- advice on a glibc process: prof on, no restart ---
mp -p "$GL" -e 'mallctl prof.active'
check "glibc: mallctl is refused" mp_failed
check "glibc: the refusal names 'prof on' and memprof's sampler, no restart" \
    err_has "To profile it, 'prof on' puts memprof's heap sampler in \(no restart\)"
check "glibc: the refusal says no LD_PRELOAD, no MALLOC_CONF, no restart of it" \
    err_lacks "LD_PRELOAD|MALLOC_CONF|[Rr]estart it|Start it"
for cmd in decay recent jemalloc; do
    mp -p "$GL" -e "$cmd"
    check "glibc: '$cmd' refused naming 'prof on', no restart" \
        sh -c "[ $RC != 0 ] && grep -q \"'prof on' puts\" '$WORK/mp.stderr' && ! grep -Eq 'LD_PRELOAD|Start it' '$WORK/mp.stderr'"
done
mp -p "$GL" -e info
check "glibc: attach says 'prof on' (no restart)" err_has "'prof on' puts memprof's heap sampler in \(no restart\)"

# a shared jemalloc started without prof:true: jemalloc's own profiler
# needs a restart, memprof's sampler does not; the refusal says both
CONF= start_target plain
mp -p "$PID" -e 'mallctl prof.active true'
check "jemalloc without prof: mallctl prof.active true is refused" mp_failed
check "it names 'prof on' (no restart) first, then jemalloc's own restart" \
    err_has "To profile it, 'prof on' puts memprof's heap sampler in \(no restart\), then 'dump' takes a profile; for jemalloc's own profiler, restart it with MALLOC_CONF=prof:true,prof_active:false"

# --- where the sampler cannot go: a restart, and why ---
CONF= start_target static_glibc
ST=$PID
mp -p "$ST" -e 'mallctl prof.active'
check "static: the refusal says why the sampler cannot go in" \
    err_has "memprof's heap sampler cannot go in \(process $ST has its allocator linked into the executable"
check "static: and that LD_PRELOAD cannot reach it: a rebuild" \
    err_has "rebuild it with a profiling allocator .*LD_PRELOAD cannot reach calls linked into the executable"
check "static: it does not offer 'prof on'" err_lacks "'prof on' puts"
mp -p "$ST" -e 'prof on'
check "static: prof on names the rebuild, not LD_PRELOAD=" \
    sh -c "[ $RC != 0 ] && grep -q 'To profile it, rebuild it' '$WORK/mp.stderr' && ! grep -q 'LD_PRELOAD=' '$WORK/mp.stderr'"

# --- the agent's error bodies ---
start_serve --allow-control
http GET "/debug/pprof/heap?pid=$GL"
check "serve, glibc: GET is 409 naming the sampler's POST" \
    sh -c "[ $STATUS = 409 ] && grep -Eq 'POST /debug/pprof/heap' '$WORK/body'"
check "serve, glibc: no restart, no LD_PRELOAD in its body" \
    sh -c "! grep -Eqi 'restart|LD_PRELOAD' '$WORK/body'"
http GET "/debug/pprof/heap?pid=$ST"
check "serve, static: 422 (a POST would not help), saying why and the rebuild" \
    sh -c "[ $STATUS = 422 ] && grep -q 'linked into the executable' '$WORK/body' && grep -q 'rebuild it' '$WORK/body' && ! grep -q 'POST' '$WORK/body'"

http GET "/processes"
why_not_of() {
    python3 -c '
import json, sys
doc = json.load(open(sys.argv[1]))
procs = doc if isinstance(doc, list) else doc.get("processes", [])
print(next((p["profiling"].get("why_not") or "" for p in procs if p["pid"] == int(sys.argv[2])), ""))' \
        "$WORK/body" "$1"
}
check "serve /processes: the static program's why_not says why and the rebuild" \
    sh -c "why=\$1; case \"\$why\" in *'linked into the executable'*'to profile it, rebuild it'*) exit 0;; esac; exit 1" _ "$(why_not_of "$ST")"

# --- an empty sampler dump: the heap was all allocated before prof on ---
kill -USR1 "$GL"
wait_until 20 "glibc_live's round" grep -q '^round 1 done' "$GL_OUT"
mp -p "$GL" -e 'prof on' -e 'sleep 0.5' -e dump
check "idle after prof on: the dump holds 0 stacks" out_has '^dump1: 0 stacks, 0 B in use'
check "it says it holds no sample: the sampler took none" \
    err_has "note: dump1 holds no sample: memprof's sampler has taken none since it went in"
check "why: the heap was allocated before the sampler went in" \
    err_has "heap it holds was allocated before the sampler went in, and the sampler sees only allocations made after"
check "what to do: a dump later and diff, or a run" \
    err_has "another 'dump' after it has worked a while and 'diff' the two, or a run \('profile start"

# trend --watch takes its dumps from the sampler too (it once asked
# jemalloc's profiler, refused as "'profile' drives jemalloc")
mp -q -p "$GL" -e 'prof on' -e 'trend --watch 1 --count 2'
check "trend --watch with the sampler in: runs and ends" mp_ok
check "trend --watch: no jemalloc refusal" err_lacks "drives jemalloc"

# every sample freed since: said with the count
in_sampler() { [ "$(got_into_sampler "$GL" 2>/dev/null)" -gt 0 ] 2>/dev/null; }
PID=$GL open_session freed
echo 'prof sample 12' >&3
echo 'prof on' >&3
wait_until 20 "the sampler to be in glibc_live" in_sampler
kill -USR1 "$GL"
wait_until 20 "glibc_live's second round" grep -q '^round 2 done' "$GL_OUT"
kill -USR2 "$GL"
wait_until 20 "glibc_live to free its rounds" grep -q '^freed' "$GL_OUT"
echo dump >&3
close_session
ERR=$(cat "$WORK/freed.out")
check "allocated and freed after prof on: the note counts the samples, all freed" \
    err_has "note: dump1 holds no sample: memprof's sampler took [0-9]+ samples since it went in at .* and every one was freed since"

# the agent: a sampler run over an idle process carries the note
http POST "/debug/pprof/heap?pid=$GL&seconds=1"
check "serve: the sampler run over an idle process is a profile" \
    sh -c "[ $STATUS = 200 ] && gzip -t '$WORK/body'"
comment() {
    zcat "$WORK/body" | protoc --proto_path="$SRCDIR/lib/profile" \
        --decode=perftools.profiles.Profile "$SRCDIR/lib/profile/pprof.proto" >"$WORK/empty.txt" &&
        idx=$(awk '/^comment:/ {print $2}' "$WORK/empty.txt") && [ -n "$idx" ] &&
        grep '^string_table:' "$WORK/empty.txt" | sed -n "$((idx + 1))p" |
        grep -q "this profile holds no sample: memprof.*s sampler has taken none.*POST again with more seconds"
}
check "serve: its pprof comment says it holds no sample, why and what to do" comment
both_fine() { alive "$GL" && alive "$ST" && untraced "$GL" && untraced "$ST"; }
check "the targets are alive and untraced" both_fine
