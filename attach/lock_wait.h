/* lock_wait.h - what lock a thread left inside a call waits on, and who
 * holds it: a thread blocked in FUTEX_WAIT on a glibc mutex's word (the
 * value 2: locked, with waiters) names the mutex's owner in the word two
 * ints further on.  When that owner is the thread itself, the call can
 * never return (a mutex is released only by its holder): the message
 * then says so, and that the process must be restarted, rather than that
 * the thread will restore itself when the call returns. */
#ifndef MEMPROF_LOCK_WAIT_H
#define MEMPROF_LOCK_WAIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* From /proc/PID/task/TID/syscall's text: true when the thread waits in
 * FUTEX_WAIT for a word holding 2, with *word its address (pure). */
bool lock_wait_parse(const char *syscall_text, uint64_t *word);

/* The owner of the mutex whose word thread tid of pid waits on: its tid
 * (in memprof's pid namespace), 0 when the thread waits on no mutex or the
 * owner cannot be read or is no thread of pid. */
pid_t lock_wait_owner(pid_t pid, pid_t tid, uint64_t *word);

#endif
