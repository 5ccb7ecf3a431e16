# A program names its function "evil ESC]0;pwned BEL ESC[2J ESC[31m" (set
# the terminal's title, clear the screen, turn what follows red), its
# source file "evil ESC[31m_source.c", and runs from a directory whose name
# holds ESC too, with an opt.prof_prefix holding one: nothing memprof
# prints for people (every analysis view, folded stacks, the DOT file,
# info, mallctl values, messages) carries a raw ESC or BEL byte, the
# escaped form \x1b is shown instead, while --json keeps the real name and
# the SVG stays well-formed XML.
. "$SRCDIR/tests/integration/lib.sh"

ESC=$'\x1b' BEL=$'\x07'
EVIL="evil${ESC}]0;pwned${BEL}${ESC}[2J${ESC}[31m"
SHOWN='evil\x1b]0;pwned\x07\x1b[2J\x1b[31m'

bindir="$WORK/bin${ESC}[31m"
mkdir -p "$bindir"
cp "$TARGETS/evil_names" "$bindir/"
CONF="prof:true,prof_active:true,lg_prof_sample:0,lg_prof_interval:40,prof_prefix:$WORK/pfx${ESC}[2J" \
    TARGETS=$bindir start_target evil_names

raw_free() { ! grep -q "[$ESC$BEL]" "$@"; }
# the text memprof printed (stdout and stderr) for one run
printed() { printf '%s\n%s\n' "$OUT" "$ERR" >"$WORK/printed"; }
no_raw() { printed; raw_free "$WORK/printed"; }
shows() { printed; grep -qF -- "$1" "$WORK/printed"; }

mp -p "$PID" -e "dump $WORK/evil.heap" -e info -e 'mallctl opt.prof_prefix' -e jemalloc \
   -e 'top 5'
check "attached session succeeds" [ "$RC" -eq 0 ]
check "attached session: no raw ESC/BEL" no_raw
check "attached top: escaped name" shows "$SHOWN"
check "info: executable path escaped" shows 'bin\x1b[31m/evil_names'
check "info/mallctl/warning: opt.prof_prefix escaped" shows 'pfx\x1b[2J'
# a second dump after evil_alloc ran again, for diff
kill -USR1 "$PID"
wait_until 10 "the target to allocate again" grep -q '^grew' "$TARGET_OUT"
mp -p "$PID" -e "dump $WORK/evil2.heap"
check "second dump" [ "$RC" -eq 0 ]
assert_untouched "$PID"

# every view of the saved dump, one session each so that one failure
# hides nothing
view() {
    local name=$1 expect=$2; shift 2
    mp "$WORK/evil.heap" "$@"
    check "$name: succeeds" [ "$RC" -eq 0 ]
    check "$name: no raw ESC/BEL in what it prints" no_raw
    check "$name: shows the escaped form" shows "$expect"
}
view top "$SHOWN" -e 'top 5'
view "top --lines" 'evil\x1b[31m_source.c' -e 'top 5 --lines'
view "top --files" 'evil\x1b[31m_source.c' -e 'top 5 --files'
view "top --addresses" "$SHOWN" -e 'top 5 --addresses'
view traces "$SHOWN" -e 'traces 3'
view peek "$SHOWN" -e 'peek evil'
view tree "$SHOWN" -e 'tree'
view list "$SHOWN" -e 'list evil'
view "list's unreadable source" 'evil\x1b[31m_source.c is not readable' -e 'list evil'
view "diff" "$SHOWN" -e "load $WORK/evil2.heap" -e "diff evil.heap evil2.heap"
view "flame --folded" "written" -e "flame $WORK/folded.txt --folded"
check "folded stacks: no raw ESC/BEL" raw_free "$WORK/folded.txt"
# (';' separates frames there, so the name's own ';' reads ':')
check "folded stacks: escaped name" grep -qF 'evil\x1b]0:pwned\x07\x1b[2J\x1b[31m' "$WORK/folded.txt"
view graph "written" -e "graph $WORK/graph.dot"
check "DOT file: no raw ESC/BEL" raw_free "$WORK/graph.dot"
check "DOT file: escaped name, DOT-quoted" grep -qF 'evil\\x1b]0' "$WORK/graph.dot"
check "DOT file: Graphviz reads it" dot -Tsvg -o "$WORK/graph.svg" "$WORK/graph.dot"
check "DOT picture shows the escaped name" grep -qF 'evil\x1b]0;pwned' "$WORK/graph.svg"

# JSON keeps the real name, escaped as JSON
mp "$WORK/evil.heap" -e 'top 5 --json'
check "top --json succeeds" [ "$RC" -eq 0 ]
check "top --json: no raw ESC/BEL" no_raw
check "top --json parses and holds the real name" python3 -c '
import json, sys
rows = json.loads(sys.argv[1])["rows"]
sys.exit(0 if any(r["function"] == sys.argv[2] for r in rows) else 1)' "$OUT" "$EVIL"

# the SVG flame graph stays well-formed with the name in it
mp "$WORK/evil.heap" -e "flame $WORK/flame.svg"
check "flame SVG written" [ "$RC" -eq 0 ]
check "flame SVG: no raw ESC/BEL" raw_free "$WORK/flame.svg"
check "flame SVG: well-formed XML naming the function" python3 -c '
import sys, xml.etree.ElementTree as ET
text = "".join(ET.parse(sys.argv[1]).getroot().itertext())
sys.exit(0 if "evil" in text and "pwned" in text else 1)' "$WORK/flame.svg"

# messages quoting the target's paths: the executable gone, the
# symbolizer's warning names it
kill "$PID"
rm "$bindir/evil_names"
view "warning naming a missing object" 'bin\x1b[31m/evil_names' -e 'top 5'
mp "$WORK/evil.heap" -e "load '$bindir/nothing.heap'"
check "error naming a path: no raw ESC/BEL" no_raw
check "error naming a path: escaped" shows 'bin\x1b[31m/nothing.heap'
assert_no_dump_dirs
