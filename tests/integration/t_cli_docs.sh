# The documentation as an operator meets it (issue 11, item 11): the man
# page names every command of 'help' and every option of --help, has the
# FILES, ENVIRONMENT and JSON OUTPUT sections, renders without warnings,
# and 'make install' puts the program, the man page and the guides under
# DESTDIR/PREFIX.
. "$SRCDIR/tests/integration/lib.sh"
MAN="$SRCDIR/docs/memprof.1"

mp -e help
assert_ok
missing=""
for c in $(awk '/^  [a-z]/ {print $1}' <<<"$OUT"); do
    grep -Eq "^\.(B|BI|BR) \"?$c[ \"\\\\]|^\.(B|BI|BR) \"?$c\$" "$MAN" || missing="$missing $c"
done
check "every command of 'help' has an entry in the man page (missing:$missing)" [ -z "$missing" ]

"$MEMPROF" --help >"$WORK/usage"
missing=""
for o in $(grep -Eo -- '--[a-z][a-z-]+' "$WORK/usage" | sort -u); do
    grep -q -- "$(sed 's/-/\\\\-/g' <<<"$o")" "$MAN" || missing="$missing $o"
done
check "every option of --help is in the man page (missing:$missing)" [ -z "$missing" ]
for section in FILES ENVIRONMENT "JSON OUTPUT" "EXIT STATUS" "THE PROMPT"; do
    check "man page has $section" grep -q "^\.SH \"\?$section" "$MAN"
done
check "FILES names the history file" grep -q 'memprof_history' "$MAN"
check "ENVIRONMENT names PAGER" grep -q '^\.B PAGER' "$MAN"
check "the man page renders without warnings" \
    bash -c "[ -z \"\$(MANWIDTH=80 man --warnings -l '$MAN' 2>&1 >/dev/null)\" ]"

make -s -C "$SRCDIR" install DESTDIR="$WORK/root" PREFIX=/opt/mp >"$WORK/install.log" 2>&1
check "make install succeeds" [ $? -eq 0 ]
check "installs the program" [ -x "$WORK/root/opt/mp/bin/memprof" ]
check "installs memprof-serve beside it" [ -x "$WORK/root/opt/mp/bin/memprof-serve" ]
check "installs the man page" cmp -s "$MAN" "$WORK/root/opt/mp/share/man/man1/memprof.1"
for g in "$SRCDIR"/docs/*.md; do
    check "installs the guide $(basename "$g")" cmp -s "$g" "$WORK/root/opt/mp/share/doc/memprof/$(basename "$g")"
done
