/* multiarch.h - the Debian multiarch directory of the libraries of the CPU
 * memprof is built for (and so of the processes it attaches to), for the
 * paths its advice names: /usr/lib/MEMPROF_MULTIARCH/libjemalloc.so.2. */
#ifndef MEMPROF_MULTIARCH_H
#define MEMPROF_MULTIARCH_H

#if defined(__aarch64__)
#define MEMPROF_MULTIARCH "aarch64-linux-gnu"
/* Debian builds its arm64 libjemalloc2 without --enable-prof (its rules
 * enable it on amd64 and i386 only): advice to preload it says so. */
#define MEMPROF_JEMALLOC_PROF_NOTE " (Debian's arm64 libjemalloc2 has no profiling: " \
    "use a jemalloc built with --enable-prof)"
#else
#define MEMPROF_MULTIARCH "x86_64-linux-gnu"
#define MEMPROF_JEMALLOC_PROF_NOTE ""
#endif

#endif
