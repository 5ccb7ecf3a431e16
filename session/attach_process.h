/* attach_process.h - a session taking and letting go of a live process,
 * the same for every front end: the prompt's attach/detach and each
 * request of memprof serve. */
#ifndef MEMPROF_ATTACH_PROCESS_H
#define MEMPROF_ATTACH_PROCESS_H

#include <stdbool.h>
#include <sys/types.h>

#include "lib/base/error.h"
#include "session/session.h"

/* Open process pid for a session attached to none (allocator_open with
 * the session's --exe and --debug-dir), forget what an earlier process
 * left in the session, and look for a sampler a dead memprof left in it.
 * 0, or -1 with err saying why (err->kind tells a process that is gone,
 * busy with another memprof, or not permitted). */
int session_attach_process(struct session *s, pid_t pid, struct mp_error *err);

/* Let the process go: a run still going ends (why: "detach", ...), the
 * sampler comes out, what the session changed is put back when failed or
 * reported when not (control_session_end), and the target is closed. */
void session_detach_process(struct session *s, const char *why, bool failed);

#endif
