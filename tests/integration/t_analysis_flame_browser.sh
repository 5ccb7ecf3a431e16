#!/usr/bin/env bash
# The flame graph SVG in a real headless browser (Debian's chromium, driven
# over the DevTools protocol on a pipe by browser.py): its inline script
# runs from the file alone; a click on main zooms it to the full width and
# scales what stands on it, fades its callers and hides the rest; Search
# (answering the prompt) highlights the matching frames and prints the
# share they cover, equal to top's numbers (nested recursion counted
# once, through ?s= in the URL); Reset search and Reset zoom put every
# frame back; a --base graph colours shrinkage blue and growth red.  The
# screenshots are kept as $WORK/*.png and must show the highlight.
. "$SRCDIR/tests/integration/lib.sh"

MALLOC_CONF=prof:true,prof_active:true,lg_prof_sample:10 "$TARGETS/alloc_sites" "$WORK" \
    >/dev/null || die "alloc_sites failed"

mp "$WORK/a.heap" "$WORK/b.heap" -e "flame $WORK/flame.svg b.heap" \
    -e "flame $WORK/diff.svg a.heap --base b.heap" -e 'top 10 --json b.heap'
assert_ok
TOP=$(sed -n '/^{/,$p' <<<"$OUT")

python3 - "$WORK" "$TOP" <<'PY'
import json, os, sys
sys.path.insert(0, os.environ["SRCDIR"] + "/tests/integration")
from browser import Browser, pixels

work, top = sys.argv[1], json.loads(sys.argv[2])
failed = 0
def check(name, ok, detail=""):
    global failed
    print(("pass: " if ok else "FAIL: ") + name + ("" if ok else "  [%s]" % detail))
    failed += not ok

cum = {r["function"]: r["cum_bytes"] for r in top["rows"]}
total = top["total_bytes"]

# JavaScript that reads the frames, by the name before ": " in their title
FRAMES = """(function () {
  return Array.from(document.querySelectorAll('g.f')).map(function (g) {
    var t = g.querySelector('title').textContent, r = g.querySelector('rect'),
        b = r.getBoundingClientRect(), label = g.querySelector('text');
    return {name: t.slice(0, t.lastIndexOf(': ')), cls: g.getAttribute('class'),
            width: r.getAttribute('width'), fill: r.getAttribute('fill'),
            cx: b.x + b.width / 2, cy: b.y + b.height / 2,
            label: label && label.getAttribute('display') !== 'none' ? label.textContent : null};
  });
})()"""
def frames(b):
    out = {}
    for f in b.eval(FRAMES):
        out.setdefault(f["name"], f)
    return out
def centre(b, id):
    return b.eval("(function () { var r = document.getElementById('%s')"
                  ".getBoundingClientRect(); return [r.x + r.width / 2, r.y + r.height / 2]; })()" % id)
def text(b, id):
    return b.eval("document.getElementById('%s').textContent" % id)
def magenta(png):
    w, h, rows = pixels(png)
    return sum(1 for row in rows for p in row if p[:3] == (230, 0, 230))

with Browser(work) as b:
    b.open("file://%s/flame.svg" % work)
    before = frames(b)
    check("the script ran (Search is live)", text(b, "search") == "Search", text(b, "search"))
    check("Reset zoom hidden at first", "hide" in b.eval(
        "document.getElementById('unzoom').getAttribute('class')"))
    check("no magenta before a search", magenta(b.screenshot()) == 0)

    # ---- click main: zoom ----
    main = before["main"]
    b.click(main["cx"], main["cy"])
    after = frames(b)
    check("zoom: main fills the width", after["main"]["width"] == "1180.00", after["main"]["width"])
    want = float(before["leak_big"]["width"]) * 1180 / float(main["width"])
    check("zoom: leak_big scales with main", abs(float(after["leak_big"]["width"]) - want) < 0.05,
          (after["leak_big"]["width"], want))
    check("zoom: leak_big keeps its label", after["leak_big"]["label"] == "leak_big",
          after["leak_big"]["label"])
    check("zoom: callers span the width, faded",
          "caller" in after["_start"]["cls"] and after["_start"]["width"] == "1180.00",
          after["_start"])
    check("zoom: thread_alloc (not under main) hidden", "hide" in after["thread_alloc"]["cls"])
    check("zoom: the browser draws leak_big where the DOM says",
          b.eval("document.elementFromPoint(%f, %f).closest('g.f').querySelector('title')"
                 ".textContent.startsWith('leak_big: ')" % (after["leak_big"]["cx"],
                                                            after["leak_big"]["cy"])))
    check("zoom: Reset zoom shown", b.eval(
        "document.getElementById('unzoom').getAttribute('class')") == "btn")

    # ---- Search, answering its prompt ----
    b.click(*centre(b, "search"), "^leak_")
    found = frames(b)
    matches = [n for n, f in found.items() if "match" in f["cls"]]
    check("search: the two leak_ frames highlighted", sorted(matches) == ["leak_big", "leak_small"],
          matches)
    check("search: highlighted in magenta", found["leak_big"]["fill"] == "rgb(230,0,230)")
    pct = 100 * (cum["leak_big"] + cum["leak_small"]) / total
    shown = text(b, "matched")
    check("search: the matched share is top's (%.1f%%)" % pct,
          shown.startswith("Matched: ") and abs(float(shown.split()[1].rstrip("%")) - pct) <= 0.15
          and shown.endswith("(2 frames)"), shown)
    check("search: the button offers to reset", text(b, "search") == "Reset search")
    png = b.screenshot()
    open(work + "/flame-zoom-search.png", "wb").write(png)
    check("search: the screenshot shows the highlight", magenta(png) > 10000, magenta(png))

    # ---- Reset search, Reset zoom ----
    b.click(*centre(b, "search"))
    reset = frames(b)
    check("reset search: nothing highlighted",
          not any("match" in f["cls"] for f in reset.values()) and text(b, "matched") == "")
    check("reset search: colours back", all(reset[n]["fill"] == before[n]["fill"] for n in before))
    b.click(*centre(b, "unzoom"))
    back = frames(b)
    check("reset zoom: every frame back in place",
          all(back[n]["width"] == before[n]["width"] and back[n]["cls"] == "f" for n in before),
          [(n, back[n]["width"], before[n]["width"]) for n in before if back[n] != before[n]])
    check("reset zoom: no magenta left", magenta(b.screenshot()) == 0)

    # ---- search from the URL: nested recursion counts once ----
    b.open("file://%s/flame.svg?s=recurse_alloc" % work)
    shown = text(b, "matched")
    pct = 100 * cum["recurse_alloc"] / total
    check("?s=: six recursion levels matched, their share once (%.1f%%)" % pct,
          shown.endswith("(6 frames)") and abs(float(shown.split()[1].rstrip("%")) - pct) <= 0.15,
          shown)

    # ---- differential: a.heap drawn against b.heap ----
    b.open("file://%s/diff.svg" % work)
    d = frames(b)
    def rgb(f):
        return tuple(int(c) for c in f["fill"][4:-1].split(","))
    check("diff: leak_big (64 -> 16 MiB) blue", rgb(d["leak_big"])[2] == 255 and
          rgb(d["leak_big"])[0] < 100, d["leak_big"]["fill"])
    check("diff: temp_buffers (gone by b) red", rgb(d["temp_buffers"])[0] == 255 and
          rgb(d["temp_buffers"])[1] < 210, d["temp_buffers"]["fill"])
    check("diff: leak_small (unchanged) white", d["leak_small"]["fill"] == "rgb(255,255,255)",
          d["leak_small"]["fill"])
    b.click(*centre(b, "search"), "leak_big")
    b.click(*centre(b, "search"))
    check("diff: its colours survive a search", frames(b)["leak_big"]["fill"] == d["leak_big"]["fill"])
    png = b.screenshot()
    open(work + "/diff.png", "wb").write(png)
    w, h, rows = pixels(png)
    blue = sum(1 for row in rows for p in row if p[2] == 255 and p[0] < 100)
    check("diff: the screenshot shows blue", blue > 1000, blue)
sys.exit(1 if failed else 0)
PY
[ $? -eq 0 ] || die "browser checks failed"
