/* tar_gz.h - a directory tree written as a gzip'd POSIX tar (ustar)
 * archive, as `tar czf OUT DIR` would, for a saved run carried to another
 * machine (serve's /memory-profiler/download/archive): regular files and
 * directories only (anything else is left out), every member under the
 * one top directory, at most TAR_GZ_DEPTH directories deep, opened by
 * descriptor without following links. */
#ifndef MEMPROF_TAR_GZ_H
#define MEMPROF_TAR_GZ_H

#include <stdint.h>

#include "lib/base/error.h"

/* top's directories below it that are archived (DIR/.build-id/xx/). */
#define TAR_GZ_DEPTH 3

/* Write the directory `top` of dirfd, as "top/...", to outfd (gzip'd
 * tar).  At most max_bytes of files go in.  0, or -1 with err (outfd then
 * holds an unusable archive: the caller removes it). */
int tar_gz_dir(int dirfd, const char *top, int outfd, uint64_t max_bytes,
               struct mp_error *err);

#endif
