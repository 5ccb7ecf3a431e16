/* unwind_check.h - is a stopped thread safe to call into?  Not when any
 * frame of its stack is inside the allocator (the code ranges its finder
 * gave), the loader, the unwinder,
 * libc's malloc/free/fork, or a signal handler: their locks are not
 * recursive and the call would deadlock the process. */
#ifndef MEMPROF_UNWIND_CHECK_H
#define MEMPROF_UNWIND_CHECK_H

#include <stddef.h>
#include <sys/types.h>

#include "attach/arch/arch.h"
#include "attach/code_range.h"
#include "attach/mapped_object.h"
#include "lib/proc/maps.h"
#include "lib/base/error.h"

struct unwind_checker;

/* objs must outlive the checker; the unsafe ranges are copied. */
struct unwind_checker *unwind_checker_new(pid_t pid, const struct mapped_objects *objs,
                                          const struct code_ranges *unsafe,
                                          struct mp_error *err);
void unwind_checker_free(struct unwind_checker *u);

/* Before a session's stops: when the process's code mappings changed since
 * the last walk (dlclose, dlopen), forget every page and every piece of
 * unwind information kept from before, so no walk reads stale code. */
void unwind_checker_recheck(struct unwind_checker *u);

/* The process's map as the last recheck read it (before this session's
 * stops). */
const struct map_list *unwind_checker_maps(const struct unwind_checker *u);

/* Unwind ptrace-stopped thread tid whose registers are regs.  Returns 0
 * when safe, 1 when unsafe or when its stack cannot be walked (why says
 * where it is). */
int unwind_check_thread(struct unwind_checker *u, pid_t tid, const struct arch_regs *regs,
                        char *why, size_t whylen);

/* Is a libc function name one whose locks a call must not meet? */
int unwind_libc_name_unsafe(const char *name);

#endif
