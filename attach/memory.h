/* memory.h - a live process's memory read and written without stopping
 * any of its threads.  Reached through a live thread once the main thread
 * has exited (pthread_exit). */
#ifndef MEMPROF_MEMORY_H
#define MEMPROF_MEMORY_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "lib/base/error.h"

int remote_read(pid_t pid, uint64_t addr, void *buf, size_t len, struct mp_error *err);
int remote_write(pid_t pid, uint64_t addr, const void *buf, size_t len,
                 struct mp_error *err);

#endif
