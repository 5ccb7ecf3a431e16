/* proc_fate.h - what became of a process memprof opened: still running
 * the program memprof attached to, exited, or running a new program
 * (exec).  An exec keeps the pid, the start time and often the executable,
 * but replaces the address space; a /proc/PID/mem descriptor opened
 * earlier stays tied to the old one, and reads through it then yield
 * nothing.  So that descriptor also keeps every write of memprof's in the
 * program it attached to. */
#ifndef MEMPROF_PROC_FATE_H
#define MEMPROF_PROC_FATE_H

#include <stdbool.h>
#include <sys/types.h>

#include "lib/base/error.h"

enum proc_fate { PROC_SAME, PROC_EXITED, PROC_EXECED };

/* Field 22 of /proc/PID/stat (clock ticks since boot), 0 when unreadable:
 * with the pid it names one process for its whole life, exec included. */
unsigned long long proc_start_time(pid_t pid);

/* mem_fd: /proc/PID/mem opened while the program ran; start_time as above
 * (0: not compared).  PROC_SAME also when it cannot tell (mem_fd < 0). */
enum proc_fate proc_fate(pid_t pid, int mem_fd, unsigned long long start_time);

/* /proc/PID/mem of a live thread, opened to anchor proc_fate, or -1 when
 * it cannot be opened or the process has no address space any more (a
 * zombie: then there is no program to tell a fate from). */
int proc_fate_anchor(pid_t pid);

/* Is a thread of the process blocked inside execve (waiting for the
 * others to die)?  Its leader may look like a zombie meanwhile. */
bool proc_exec_in_progress(pid_t pid);

/* Is the dynamic loader of the program the process runs still loading its
 * start-up libraries (it was just started or exec'd, and a library it
 * needs, jemalloc perhaps, may not be mapped yet)?  Told by the r_debug
 * the loader keeps for debuggers (the executable's DT_DEBUG): not set up
 * yet in a lone thread, or not RT_CONSISTENT (a dlopen shows so too).
 * false for a static program, or when it cannot tell. */
bool proc_loader_busy(pid_t pid);

/* Does the process run a dynamically linked program (its auxv names a
 * loader)?  false when it cannot tell. */
bool proc_has_loader(pid_t pid);

/* The same after a failure that may be an exec under way (threads killed,
 * the address space not yet replaced): while a thread of the process is
 * inside execve, waits up to max_wait_s for the exec to show (0.1 s at
 * least: a dying thread's exit may come first). */
enum proc_fate proc_fate_settled(pid_t pid, int mem_fd, unsigned long long start_time,
                                 double max_wait_s);

/* Set err to what happened to the process, `when` saying when ("during
 * the call", "while memprof was attaching"); returns -1.  PROC_SAME: a
 * generic "changed" sentence is never wanted, so callers test first. */
int proc_fate_error(pid_t pid, enum proc_fate fate, const char *when, struct mp_error *err);

#endif
