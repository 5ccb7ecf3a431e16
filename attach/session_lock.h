/* session_lock.h - one memprof session per process at a time.
 *
 * Every stop writes the call trampoline at the process's entry point and
 * puts the file's bytes back when it lets its thread go: a second memprof
 * would pull the trampoline from under the first one's thread.  So a
 * session holds a lock on its target from target_open to target_close,
 * which the kernel drops when memprof dies, even by SIGKILL, and which
 * names its holder to the memprof it refuses. */
#ifndef MEMPROF_SESSION_LOCK_H
#define MEMPROF_SESSION_LOCK_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "lib/base/error.h"

/* The lock's name for a process: its pid in its own pid namespace, that
 * namespace's inode and its start time (clock ticks since boot), so that
 * neither a reused pid nor the pid one memprof sees from another namespace
 * makes two processes share a lock, or one process have two. */
void session_lock_name(uint64_t pidns_inode, pid_t nspid, unsigned long long start_time,
                       char *buf, size_t len);

/* Take the lock on process pid, whose /proc entries are read through
 * proc_dir.  Returns a descriptor (close-on-exec) to pass to
 * session_lock_release; SESSION_LOCK_HELD with err naming the memprof (pid,
 * user) that holds it; SESSION_LOCK_FAILED when it could not be taken
 * (the process's identity unreadable: gone, or not ours to read). */
#define SESSION_LOCK_HELD (-1)
#define SESSION_LOCK_FAILED (-2)
int session_lock_take(pid_t pid, const char *proc_dir, struct mp_error *err);

/* Drop the connections refused memprofs left queued on the lock, so that
 * however many are refused, the next one still learns who holds it. */
void session_lock_drain(int fd);

void session_lock_release(int fd);

#endif
