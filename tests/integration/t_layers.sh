# The source tree keeps its floors (docs/design.md): lib/ < attach/ <
# allocator/ < session/ < repl/, no file including a higher floor's
# header, no two modules including each other around a circle, the
# architecture's code included by attach/ alone.  tools/check_layers.py
# reads every #include; a planted upward include and a planted circle
# must be caught, or the check proves nothing.
. "$SRCDIR/tests/integration/lib.sh"

check "the tree keeps its floors and has no include circle" \
    python3 "$SRCDIR/tools/check_layers.py" "$SRCDIR"

# A copy of the tree with one violation of each kind planted in it.
for floor in lib attach allocator session repl; do
    cp -r "$SRCDIR/$floor" "$WORK/$floor"
done
printf '#include "repl/commands.h"\n' >>"$WORK/session/say.c"
check "an upward include (session/ including repl/) is caught" \
    sh -c "python3 '$SRCDIR/tools/check_layers.py' '$WORK' | grep -q '^session/say.c includes repl/commands.h, a higher floor'"
sed -i '$d' "$WORK/session/say.c"
printf '#include "attach/target.h"\n' >>"$WORK/attach/memory.h"
check "a circle (memory.h including target.h, which reaches memory) is caught" \
    sh -c "python3 '$SRCDIR/tools/check_layers.py' '$WORK' | grep -q '^include circle: .*attach/memory'"
