/* control.h - the rules of a session with a live process (control.c),
 * which every front end applies the same way. */
#ifndef MEMPROF_CONTROL_H
#define MEMPROF_CONTROL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "allocator/jemalloc/mallctl.h"
#include "session/session.h"

/* One value to read from the target, typed by the mallctl table. */
struct query {
    const char *name;
    int ret;                 /* mallctl's answer; -1 when not run */
    union {
        bool b;
        unsigned u32;
        uint64_t u64;
        int64_t i64;
    } v;
    char str[256];           /* for string values, read back from the target */
};

const struct jemalloc_copy *control_selected_copy(struct session *s);
void control_conf_var(struct session *s, char *buf, size_t len);
int control_mallctl_failed(struct session *s, const char *name, int ret, bool writing);
int control_run_calls(struct session *s, struct mallctl_call *calls, size_t n);
struct query *control_query_find(struct query *q, size_t n, const char *name);
const char *control_query_text(const struct query *q, char *buf, size_t len);
void control_prof_on_note(struct session *s, bool was, bool now);
void control_since_text(time_t since, char *buf, size_t len);
int control_run_owns_profiling(struct session *s, const char *cmd);
void control_note_change(struct session_setting *st, uint64_t before, uint64_t now);
/* A decay time the session wrote (name, its value before, the new one). */
void control_note_decay(struct session *s, const char *name, int64_t before, int64_t now);
void control_note_counting(struct session *s, bool counting);
/* stats.allocated read in the stop that turned profiling on or reset the
 * counters (ret: that call's answer), for the note on empty dumps. */
void control_note_allocated(struct session *s, int ret, size_t allocated);

/* experimental.prof_recent.alloc_max, which jemalloc(3) does not list. */
extern const struct mallctl_info control_recent_info;

/* The profiling state that decides what memprof may do and must warn
 * about (version, config.prof, opt.prof, opt.prof_active, prof.active,
 * the rate, opt.lg_prof_interval, opt.prof_prefix, prof.gdump), read in
 * one stop into q[CONTROL_NSTATE]; what is fixed at the process's start
 * is kept in s->prof_conf.  0, or -1 after saying why. */
#define CONTROL_NSTATE 9
int control_state_read(struct session *s, struct query *q);

/* The profiling settings fixed at the process's start (s->prof_conf),
 * read once: 0, or -1 after saying why. */
int control_prof_conf_read(struct session *s);

/* Why a dump holds no sample (a note, once). */
void control_explain_empty_dump(struct session *s, const struct session_dump *d);

/* At the end of a session with a process (exit, detach): when failed (a
 * batch stopped at an error, a stop signal), put back what the session
 * changed (prof.active, the rate, prof.gdump, recent's record, decay
 * times) and say so;
 * otherwise say on stderr what stays changed and the command that undoes it.
 * (control.c) */
void control_session_end(struct session *s, bool failed);

/* arenas.narenas of the attached process, read once (one short stop) and
 * kept for the session; 0 when not attached or unreadable.  (control.c) */
unsigned control_narenas(struct session *s);

/* Run mallctl calls in one stop, each checked first (mallctl_check_call);
 * on a failure say so and return -1.  A call's own refusal is left in its
 * ret: control_mallctl_failed says why and returns -1.  (control.c) */
int control_run_calls(struct session *s, struct mallctl_call *calls, size_t n);
/* Say that calls into the process failed (err); when a thread was left
 * inside a call, say memprof exits and end the session.  Returns -1. */
int control_call_failed(struct session *s, const struct mp_error *err);
/* The same, names the table lacks checked against unknown. */
struct mallctl_info;
int control_run_calls_as(struct session *s, struct mallctl_call *calls, size_t n,
                         const struct mallctl_info *unknown);
/* Only the check, for calls attach/ makes inside another operation
 * (unknown: the entry for a name the table lacks, or NULL). */
struct mallctl_info;
int control_check_calls(struct mallctl_call *calls, size_t n,
                        const struct mallctl_info *unknown);
int control_mallctl_failed(struct session *s, const char *name, int ret, bool writing);

/* Take a heap profile from the attached process and add it to the session
 * (NULL name: dump1, dump2...; file: also save its bytes there, with the
 * build-ids beside it).  Returns the new dump (a pointer into s->dumps,
 * valid until the next dump is added), or NULL after saying what went
 * wrong.  (control.c) */
struct session_dump *control_dump_take(struct session *s, const char *name,
                                       const char *file);
/* The same for bytes the process wrote some other way (prof.gdump files):
 * parsed, with the process's build-ids, added.  (control.c) */
struct session_dump *control_dump_add(struct session *s, const char *data, size_t len,
                                      const char *name, const char *file);
/* The same without the note on what a heap dump covers since 'prof on':
 * for a profile that is not the heap's (session/faults.c).  (control.c) */
struct session_dump *control_dump_store(struct session *s, const char *data, size_t len,
                                        const char *name, const char *file);
/* Whether sampling every 2^lg bytes is affordable for the process: refuses
 * a rate that would double its small-object memory (or sample everything)
 * unless force, warns from 10 %.  0, or -1 after saying why.  (One stop.) */
int control_sample_check(struct session *s, size_t lg, bool force);
/* The MALLOC_CONF rule: 0 when memprof may change prof.active, the rate or
 * the counters (what: "turn profiling off", for the refusal); -1 after
 * saying the owner turned profiling on at start and --force is needed. */
int control_owner_allows(struct session *s, const char *what, bool force);
/* 0 when the process can profile at all (config.prof and opt.prof); -1
 * after saying why not and what to do. */
int control_profiling_possible(struct session *s);
/* 0 when jemalloc's own 'prof on' would sample the process; -1 after
 * saying that this jemalloc 5.2 would not (s->prof_conf.own_profiler_blind,
 * where memprof's sampler cannot stand in: a copy linked into the program)
 * and what to do. */
int control_own_profiler_sees(struct session *s, const char *cmd);
/* Why memprof's sampler cannot stand in for the selected jemalloc copy,
 * where sampling_applies says it does not (a copy linked in). */
const char *control_no_sampler_for_copy(struct session *s);
/* The commands that work for a process with allocator k:
 * "'info', 'stats', 'memory' and 'purge'" or "'info' and 'memory'". */
const char *control_what_works(enum allocator_kind k);

#endif
