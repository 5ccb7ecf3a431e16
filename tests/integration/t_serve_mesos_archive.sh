# A Mesos run carried to another machine (issue 33): serve's
# /memory-profiler/download/archive gives the latest finished run saved
# as 'profile save' saves it (the dump, its build-ids, the objects its
# frames are named from, a manifest) in a tar.gz of one directory.  The
# run's raw download stays Mesos' byte for byte (the archive's dump is
# the same bytes).  The archive is unpacked in another directory after
# the process has ended and its program was replaced by another build at
# the same path, so that nothing of this host can name its frames: 'memprof
# DIR -e top' must name main, with the 64 MiB it grew, from the archive
# alone.
. "$SRCDIR/tests/integration/lib.sh"

mkdir "$WORK/bin"
cp "$TARGETS/grow_on_signal" "$WORK/bin/grow"
# every 64 KiB from the start: each 1 MiB block is sampled
CONF=prof:true,prof_active:false,lg_prof_sample:16 TARGETS=$WORK/bin start_target grow
GR=$PID
start_serve --allow-control
json_get() { python3 -c 'import json,sys; print(eval(sys.argv[2], {"d": json.load(open(sys.argv[1]))}))' "$WORK/body" "$1" 2>/dev/null; }

http POST "/memory-profiler/start?pid=$GR&duration=1hrs"
check "start: 200" status_is 200
RUN=$(json_get "d['id']")
kill -USR1 "$GR"
wait_until 30 "the program to grow" grep -q '^grown 64' "$TARGET_OUT"
http POST "/memory-profiler/stop?pid=$GR"
check "stop: the archive's URL beside Mesos' three" \
    [ "$(json_get "d['url_archive']")" = "/memory-profiler/download/archive?pid=$GR&id=$RUN" ]
http GET "/memory-profiler/download/raw?pid=$GR&id=$RUN"
check "download/raw: Mesos' heap_v2 dump" sh -c "head -c 8 '$WORK/body' | grep -q '^heap_v2/'"
cp "$WORK/body" "$WORK/raw.heap"
http GET "/memory-profiler/download/archive?pid=$GR&id=$RUN"
check "download/archive: 200, application/gzip" \
    sh -c "[ $STATUS = 200 ] && grep -qi '^Content-Type: application/gzip' '$WORK/headers'"
cp "$WORK/body" "$WORK/run.tar.gz"
TOP=memprof-run-$GR-$RUN
tar tzf "$WORK/run.tar.gz" >"$WORK/list" 2>"$WORK/tar.err"
check "tar reads the archive" [ ! -s "$WORK/tar.err" ]
check "one directory, $TOP, holds every member" \
    bash -c '! grep -v "^$1/" "$2"' _ "$TOP" "$WORK/list"
DUMP=$(sed -n "s|^$TOP/\(mesos$RUN\.[0-9]*\.heap\)\$|\1|p" "$WORK/list")
check "with the manifest, the run's dump ($DUMP) and its build-ids" \
    bash -c 'grep -qx "$1/manifest.json" "$2" && [ -n "$3" ] && grep -qx "$1/$3.buildids" "$2"' \
    _ "$TOP" "$WORK/list" "$DUMP"
GROW_ID=$(build_id "$WORK/bin/grow")
check "and the program's object by its build-id ($GROW_ID)" \
    grep -q "^$TOP/\.build-id/${GROW_ID:0:2}/${GROW_ID:2}" "$WORK/list"
mkdir "$WORK/unpacked"
tar xzf "$WORK/run.tar.gz" -C "$WORK/unpacked"
check "Mesos' raw download is the archive's dump, byte for byte" \
    cmp "$WORK/raw.heap" "$WORK/unpacked/$TOP/$DUMP"

# Elsewhere: the process gone, another build at its program's path.
kill -9 "$GR"
wait_until 10 "the program to end" ended "$GR"
cp "$TARGETS/plain" "$WORK/bin/grow"
check "the path now holds another build" [ "$(build_id "$WORK/bin/grow")" != "$GROW_ID" ]
mkdir "$WORK/laptop"
mv "$WORK/unpacked/$TOP" "$WORK/laptop/"
mp "$WORK/laptop/$TOP" -e 'top 5'
check "memprof DIR reads the unpacked run" mp_ok
check "top names main with the 64 MiB it grew, from the archive's copy" \
    out_has '^ +64\.0 MiB .* main$'
check "no frame left unnamed for want of its object" err_lacks 'cannot symbolize'
