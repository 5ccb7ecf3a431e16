#!/bin/sh
# build.sh OUT_DIR [WORK_DIR] - builds the Rust test target (tests/targets/rust) with
# Debian's rustc and cargo, offline against Debian's crate registry
# (.cargo/config.toml), into OUT_DIR:
#   OUT_DIR/rustprof      legacy symbol mangling (_ZN...17h<hash>E)
#   OUT_DIR/rustprof_v0   -C symbol-mangling-version=v0 (_R...) for the
#                         program's own crate (std stays as Debian built it)
#   OUT_DIR/rustprof_O0   the program's crate unoptimised, as in a debug
#                         build: the GlobalAlloc impl, alloc::alloc::* and
#                         alloc::raw_vec::* are frames of their own
#   OUT_DIR/rustprof_g    -C debuginfo=2 (full debug info, as `debug = 2`
#                         or `-g`): inlined functions in the DWARF
#   OUT_DIR/rustprof_noprof  jemalloc-sys without its `profiling` feature
#                         (config.prof false), the crate's default
# Everything cargo writes (the jemalloc-sys build, its registry cache) stays
# under WORK_DIR (default OUT_DIR/rust-cargo): the plain and the sanitizer
# builds share one, so jemalloc-sys is compiled once.  /usr/bin/rustc and /usr/bin/cargo on purpose:
# a rustup toolchain elsewhere on PATH is not what CI machines have.
set -eu
out=$(cd "$1" && pwd)
src=$(cd "$(dirname "$0")" && pwd)
work=${2:-$out/rust-cargo}
mkdir -p "$work"
work=$(cd "$work" && pwd)
cd "$src"    # cargo finds .cargo/config.toml from here
export CARGO_HOME="$work/home" CARGO_TARGET_DIR="$work/target" RUSTC=/usr/bin/rustc
unset RUSTFLAGS CARGO_BUILD_RUSTFLAGS RUSTC_WRAPPER
/usr/bin/cargo build --release --offline --quiet
cp "$CARGO_TARGET_DIR/release/rustprof" "$out/rustprof.tmp"
mv "$out/rustprof.tmp" "$out/rustprof"
variant() {    # variant NAME RUSTC-FLAGS...: the program's crate again
    name=$1; shift
    /usr/bin/cargo rustc --release --offline --quiet -- "$@"
    cp "$CARGO_TARGET_DIR/release/rustprof" "$out/$name.tmp"
    mv "$out/$name.tmp" "$out/$name"
}
variant rustprof_v0 -C symbol-mangling-version=v0
variant rustprof_O0 -C opt-level=0
variant rustprof_g -C debuginfo=2
# A second jemalloc-sys build (features are part of its identity, so both
# stay in the cargo work dir and neither is rebuilt on the next run).
/usr/bin/cargo build --release --offline --quiet --no-default-features
cp "$CARGO_TARGET_DIR/release/rustprof" "$out/rustprof_noprof.tmp"
mv "$out/rustprof_noprof.tmp" "$out/rustprof_noprof"
