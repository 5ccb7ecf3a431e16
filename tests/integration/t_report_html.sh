#!/usr/bin/env bash
# report FILE.html on a real process (report_grow: grow_steadily keeps
# 32 KiB more every 100 ms, a thread churns, a function named with HTML
# markup holds 1 MiB), 4 dumps 2 s apart, opened in headless chromium
# (browser.py, DevTools over a pipe): it loads with no exception, console
# or browser error and no request but its own; the chart has the total's
# line (one point per dump) and grow_steadily's; the growth table ranks
# grow_steadily first; the top table has rows; the flame graph's inline
# script zooms on a click and takes Ctrl-F only over the graph; the call graph is Graphviz's SVG; the markup
# name is text (no element injected, no script run); the screenshot shows
# the chart's colours.  Offline from the saved files in any order (put in
# time order); one dump: a page that says the over-time parts need 2 or
# more dumps; no dot: the page says so; a directory, a symbolic link, an
# unknown series and a missing directory are refused; a second report
# replaces the first and leaves no temporary file.
. "$SRCDIR/tests/integration/lib.sh"

MARKUP='<img src=x onerror=window.mpInjected=1><b id=mp-injected>evil</b>'
CONF="prof:true,prof_active:true,lg_prof_sample:14" start_target report_grow

mp -p "$PID" -e "dump $WORK/d1.heap" -e 'sleep 2' -e "dump $WORK/d2.heap" -e 'sleep 2' \
   -e "dump $WORK/d3.heap" -e 'sleep 2' -e "dump $WORK/d4.heap" -e "report $WORK/live.html"
assert_ok
check "live: says the report of 4 dumps was written" \
    grep -q "^report of 4 dumps written to $WORK/live.html (" <<<"$OUT"
assert_untouched "$PID"
kill "$PID"

# offline, the files given newest first: the page puts them in time order
mp "$WORK/d4.heap" "$WORK/d3.heap" "$WORK/d2.heap" "$WORK/d1.heap" -e "report $WORK/offline.html"
check "offline: succeeds" [ "$RC" -eq 0 ]
mp "$WORK/d1.heap" -e "report $WORK/one.html"
check "one dump: succeeds" [ "$RC" -eq 0 ]
OUT=$(PATH=/nonexistent "$MEMPROF" "$WORK/d1.heap" "$WORK/d4.heap" -e "report $WORK/nodot.html" \
      2>"$WORK/nodot.err"); RC=$?
check "without dot: succeeds" [ "$RC" -eq 0 ]
check "without dot: warns that the page has no call graph" \
    grep -q "warning: report: the page has no call graph: .*'dot' program is not installed" "$WORK/nodot.err"

# ---- refusals ----
refused() {   # NAME EXPECTED-STDERR-RE ARGS...
    local name=$1 re=$2; shift 2
    mp "$WORK/d1.heap" "$WORK/d2.heap" -e "$*"
    check "$name: fails" [ "$RC" -ne 0 ]
    check "$name: says /$re/" grep -Eq -- "$re" <<<"$ERR"
}
mkdir -p "$WORK/adir"
refused "a directory" "$WORK/adir is a directory: give the name of a file in it" report "$WORK/adir"
echo precious >"$WORK/precious"
ln -s "$WORK/precious" "$WORK/link.html"
refused "a symbolic link" "link.html exists and is not a regular file" report "$WORK/link.html"
check "a symbolic link: what it points to is untouched" [ "$(cat "$WORK/precious")" = precious ]
refused "a missing directory" "cannot create a file in $WORK/nodir: No such file or directory; choose a directory" \
    report "$WORK/nodir/r.html"
refused "an unknown series" "no series named 'nosuch'" report "$WORK/r.html" nosuch
check "refusals: no file written" bash -c '[ ! -e "$1" ] && [ ! -e "$2" ]' _ "$WORK/r.html" "$WORK/nodir"

# ---- replacing ----
cp "$WORK/one.html" "$WORK/again.html"
mp "$WORK/d1.heap" "$WORK/d2.heap" -e "report $WORK/again.html"
check "an existing report is replaced" grep -q 'id="mp-chart"' "$WORK/again.html"
check "no temporary file left" [ -z "$(find "$WORK" -maxdepth 1 -name '.*.html.*')" ]

python3 - "$WORK" "$MARKUP" <<'PY'
import os, sys
sys.path.insert(0, os.environ["SRCDIR"] + "/tests/integration")
from browser import Browser, pixels

work, markup = sys.argv[1], sys.argv[2]
failed = 0
def check(name, ok, detail=""):
    global failed
    print(("pass: " if ok else "FAIL: ") + name + ("" if ok else "  [%s]" % detail))
    failed += not ok

COUNT = "document.querySelectorAll(%r).length"
def count(b, sel):
    return b.eval(COUNT % sel)
def texts(b, sel):
    return b.eval("Array.from(document.querySelectorAll(%r)).map(e => e.textContent)" % sel)

pages = set()
def common(b, name, url):
    pages.add(url)
    check(name + ": loads with no exception or error", b.problems() == [], b.problems())
    check(name + ": no request but the page itself",
          [u for u in b.requests() if u not in pages] == [], b.requests())
    check(name + ": no resource fetched",
          b.eval("performance.getEntriesByType('resource').length") == 0)
    check(name + ": top table has rows", count(b, "#mp-top-table tbody tr") >= 3)
    check(name + ": the markup name is shown as text in the top table",
          markup in texts(b, "#mp-top-table td.mp-name"), texts(b, "#mp-top-table td.mp-name"))
    check(name + ": no element injected, no script of the target run",
          b.eval("document.getElementById('mp-injected') === null && "
                 "document.querySelectorAll('img, b, iframe').length === 0 && "
                 "window.mpInjected === undefined"))
    check(name + ": flame graph present", count(b, "#mp-flame svg g.f") >= 4)

with Browser(work, width=1200, height=1000) as b:
    b.watch()
    url = "file://%s/live.html" % work
    b.open(url)
    common(b, "live", url)
    check("live: the summary names the pid", "pid " in b.eval("document.getElementById('mp-summary').textContent"))
    check("live: chart present, total's line has a point per dump",
          b.eval("(document.querySelector('#mp-chart polyline[data-series=total]') || "
                 "{getAttribute: () => ''}).getAttribute('points').split(' ').length") == 4)
    check("live: chart has grow_steadily's line first",
          texts(b, "#mp-chart polyline[data-series=fn1] title") == ["grow_steadily"],
          texts(b, "#mp-chart polyline title"))
    check("live: legend names the total and grow_steadily",
          "total in use" in b.eval("document.getElementById('mp-legend').textContent") and
          "grow_steadily" in b.eval("document.getElementById('mp-legend').textContent"))
    rows = texts(b, "#mp-growth-table tbody tr td.mp-name")
    check("live: growth table ranks grow_steadily first", rows[:1] == ["grow_steadily"], rows)
    check("live: growth table's first rate is positive per hour",
          b.eval("document.querySelector('#mp-growth-table tbody tr td:nth-child(2)')"
                 ".textContent").startswith("+"))
    check("live: the markup name is escaped in the growth table", markup in rows, rows)
    check("live: call graph is Graphviz's SVG", count(b, "#mp-graph svg g.node") >= 3)
    check("live: call graph names grow_steadily",
          "grow_steadily" in b.eval("document.querySelector('#mp-graph svg').textContent"))

    # the screenshot: the chart is drawn in its colours
    png = b.screenshot()
    open(work + "/live.png", "wb").write(png)
    w, h, px = pixels(png)
    def near(c, tol=3):
        return sum(1 for row in px for p in row if all(abs(p[i] - c[i]) <= tol for i in range(3)))
    colours = len({p[:3] for row in px for p in row})
    check("screenshot: not blank (%d colours)" % colours, colours > 200, colours)
    check("screenshot: the total's line (#222222)", near((0x22, 0x22, 0x22)) > 300, near((0x22, 0x22, 0x22)))
    check("screenshot: grow_steadily's line (#d62728)", near((0xd6, 0x27, 0x28)) > 150,
          near((0xd6, 0x27, 0x28)))

    # the flame graph's inline script works inside the page: a click on
    # grow_steadily zooms it to the whole width
    b.eval("document.getElementById('mp-flame').scrollIntoView()")
    check("flame: its script ran (Search is live)",
          b.eval("document.getElementById('search').textContent") == "Search")
    xy = b.eval("""(function () {
      var g = Array.from(document.querySelectorAll('#mp-flame g.f')).find(
          g => g.querySelector('title').textContent.startsWith('grow_steadily: '));
      var r = g.querySelector('rect').getBoundingClientRect();
      return [r.x + r.width / 2, r.y + r.height / 2]; })()""")
    b.click(*xy)
    check("flame: a click zooms grow_steadily to the full width", b.eval("""
      Array.from(document.querySelectorAll('#mp-flame g.f')).find(
          g => g.querySelector('title').textContent.startsWith('grow_steadily: '))
        .querySelector('rect').getAttribute('width')""") == "1180.00")
    check("flame: no error from the click", b.problems() == [], b.problems())
    # Ctrl-F is the page's (find text) unless the pointer is over the graph
    b.eval("window.prompt = function () { window.asked = (window.asked || 0) + 1; return null; }")
    CTRL_F = "window.dispatchEvent(new KeyboardEvent('keydown', {key: 'f', ctrlKey: true}))"
    b.eval("document.querySelector('#mp-flame svg').dispatchEvent(new MouseEvent('mouseleave'))")
    b.eval(CTRL_F)
    check("flame: Ctrl-F elsewhere in the page is left to the browser",
          b.eval("window.asked === undefined"))
    b.eval("document.querySelector('#mp-flame svg').dispatchEvent(new MouseEvent('mouseenter'))")
    b.eval(CTRL_F)
    check("flame: Ctrl-F over the graph opens its search", b.eval("window.asked") == 1,
          b.eval("window.asked"))

    url = "file://%s/offline.html" % work
    b.open(url)
    common(b, "offline", url)
    check("offline: dumps in time order", texts(b, "#mp-dumps td.mp-name") ==
          ["d1.heap", "d2.heap", "d3.heap", "d4.heap"], texts(b, "#mp-dumps td.mp-name"))
    check("offline: not attached, says so",
          "not attached" in b.eval("document.getElementById('mp-summary').textContent"))
    rows = texts(b, "#mp-growth-table tbody tr td.mp-name")
    check("offline: growth table ranks grow_steadily first", rows[:1] == ["grow_steadily"], rows)
    check("offline: chart's total line has 4 points", b.eval(
        "document.querySelector('#mp-chart polyline[data-series=total]').getAttribute('points')"
        ".split(' ').length") == 4)

    url = "file://%s/one.html" % work
    b.open(url)
    common(b, "one dump", url)
    note = b.eval("(document.getElementById('mp-no-trend') || {}).textContent") or ""
    check("one dump: says the over-time parts need 2 or more dumps", "need 2 or more dumps" in note, note)
    check("one dump: no chart, no growth table",
          count(b, "#mp-chart") == 0 and count(b, "#mp-growth-table") == 0)

    url = "file://%s/nodot.html" % work
    b.open(url)
    note = b.eval("(document.getElementById('mp-no-graph') || {}).textContent") or ""
    check("without dot: the page says dot is not installed",
          "'dot' program is not installed" in note and count(b, "#mp-graph svg") == 0, note)
    check("without dot: the rest is there", count(b, "#mp-chart polyline") >= 2)
sys.exit(1 if failed else 0)
PY
[ $? -eq 0 ] || die "browser checks failed"
