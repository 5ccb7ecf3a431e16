# 'prof on' where jemalloc's own profiling cannot work (issue 14 item 4):
# a shared jemalloc started without opt.prof gets memprof's sampler instead
# (jemalloc 5.1 accepts prof.active=true there and samples nothing:
# prof.active stays as it was); a jemalloc linked into the program, which
# no call table reaches, is refused before any call, and the advice names
# the variable of the copy's prefix (_RJEM_MALLOC_CONF for _rjem_).
. "$SRCDIR/tests/integration/lib.sh"
err_has() { grep -Eq -- "$1" <<<"$ERR"; }
stops() { grep -c '^pause .* calls=[1-9]' <<<"$ERR"; }
mpt() { MEMPROF_TRACE_PAUSES=1 mp "$@"; }

CONF=prof:false start_target session_idle
mpt -p "$PID" -e 'prof on'
check "prof on without opt.prof: memprof's sampler goes in" \
    grep -q "^profiling is now on (was off): memprof's sampler is in process $PID" <<<"$OUT"
check "attach says jemalloc's own profiling is off for good" \
    err_has "off for good \(opt.prof was false at start\): 'prof on' puts memprof's heap sampler in"
check "the end of the batch takes the sampler out" err_has "memprof took its sampler out of process $PID"
mp -p "$PID" -e 'mallctl prof.active'
check "prof.active unchanged" grep -q '^prof.active: false$' <<<"$OUT"

# jemalloc linked in under _rjem_ reads _RJEM_MALLOC_CONF: say that one
CONF= start_target static_rjem
mpt -p "$PID" -e 'prof on'
check "_rjem_: prof on fails" [ "$RC" -eq 1 ]
check "_rjem_: names _RJEM_MALLOC_CONF" err_has '_RJEM_MALLOC_CONF=prof:true'
check "_rjem_: never the unprefixed variable" [ -z "$(grep -E '(^|[^_A-Z])MALLOC_CONF=' <<<"$ERR")" ]
check "_rjem_: no call made after attach" [ "$(stops)" -eq 1 ]
check "the target is untouched" assert_untouched "$PID"
echo "prof unavailable ok"
