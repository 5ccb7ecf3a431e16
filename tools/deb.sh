#!/usr/bin/env bash
# tools/deb.sh - builds memprof's Debian package (debian/) from a copy of
# this tree, so the tree itself stays clean: the files git knows (tracked,
# and new ones not ignored), or the whole tree outside git.  The package's
# version is debian/changelog's, which must be configure.ac's AC_INIT
# version; the git commit built is given to the build (memprof --version,
# memprof_build_info).
#
#   tools/deb.sh [OUTDIR]     memprof_VERSION_ARCH.deb into OUTDIR (default
#                             build/deb), its path on stdout
set -eu
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
OUT=$(mkdir -p "${1:-$REPO/build/deb}" && cd "${1:-$REPO/build/deb}" && pwd)
die() { printf 'deb: %s\n' "$*" >&2; exit 1; }

for t in dpkg-buildpackage dh dpkg-parsechangelog; do
    command -v "$t" >/dev/null || die "$t is missing: bash tools/deps.sh installs it (dpkg-dev, debhelper)"
done
version=$(sed -n 's/^AC_INIT(\[memprof\], \[\([^]]*\)\].*/\1/p' "$REPO/configure.ac")
changelog=$(dpkg-parsechangelog -l "$REPO/debian/changelog" -S Version)
[ -n "$version" ] || die "no version in configure.ac's AC_INIT([memprof], [VERSION], ...)"
[ "$version" = "$changelog" ] ||
    die "debian/changelog's version is $changelog, configure.ac's is $version: add a changelog entry (dch -v $version)"

scratch=$(mktemp -d "${TMPDIR:-/tmp}/memprof-deb.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
mkdir "$scratch/memprof-$version"
if git -C "$REPO" rev-parse --is-inside-work-tree >/dev/null 2>&1 &&
   [ "$(git -C "$REPO" rev-parse --show-toplevel)" = "$REPO" ]; then
    export MEMPROF_REVISION=${MEMPROF_REVISION:-$(git -C "$REPO" rev-parse --short=12 HEAD)}
    (cd "$REPO" && git ls-files -z --cached --others --exclude-standard |
        while IFS= read -r -d '' f; do [ -e "$f" ] && printf '%s\0' "$f"; done |
        tar --null -T - -cf -) | tar -C "$scratch/memprof-$version" -xf -
else
    tar -C "$REPO" --exclude=./build --exclude=./build-san --exclude=./.git -cf - . |
        tar -C "$scratch/memprof-$version" -xf -
fi
# The package builds as a clean tree would, whatever make runs this
# (make check SANITIZE=1 passes SANITIZE down through MAKEFLAGS, and the
# package's make would then build and install the sanitizer build).
( cd "$scratch/memprof-$version" &&
  unset MAKEFLAGS MFLAGS MAKELEVEL MAKEOVERRIDES SANITIZE BUILD &&
  DEB_BUILD_OPTIONS="${DEB_BUILD_OPTIONS:-parallel=$(nproc) noddebs}" \
      dpkg-buildpackage -us -uc -b >"$scratch/build.log" 2>&1 ) ||
    die "dpkg-buildpackage failed: $(tail -5 "$scratch/build.log")"
deb=$(ls "$scratch"/memprof_"$version"_*.deb)
cp "$deb" "$scratch/build.log" "$OUT/"
mv "$OUT/build.log" "$OUT/memprof_${version}.build.log"
echo "$OUT/$(basename "$deb")"
