/* session.h - what one memprof session holds: the attached process (if
 * any), the heap profiles loaded or dumped so far, and output settings. */
#ifndef MEMPROF_SESSION_H
#define MEMPROF_SESSION_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
#include <time.h>

#include "allocator/allocator.h"
#include "allocator/jemalloc/jemalloc.h"
#include "allocator/jemalloc/version.h"
#include "allocator/sampler/sampler.h"
#include "lib/base/own_dir.h"
#include "lib/profile/profile.h"
#include "lib/symbolize/symbolize.h"

/* What a dump's listing, its time and the run's peak choice need, kept
 * for every dump while its parsed profile may not be (session_dump_profile). */
struct session_dump_info {
    size_t nstacks;
    struct profile_values total;
    uint64_t period;
    bool has_alloc, truncated;
    int64_t taken_at;          /* as the profile's taken_at */
};

struct session_dump_objects;   /* session/dump_store.c */

struct session_dump {
    char name[64];             /* "dump1", or the user's NAME, or file's base name */
    char *source;              /* where it came from (file path, or "pid 123") */
    char *saved_path;          /* local file it was saved to, or NULL */
    struct session_dump_info info;
    bool inputs_checked;       /* session_check_inputs has warned about it */
    /* The series (a profiling run, a live view, a loaded run directory)
     * the dump belongs to, "" for none; its place in it (1, 2, ...); and
     * whether jemalloc wrote it at a new high-water mark (prof.gdump)
     * rather than on a timer or by request. */
    char series[64];
    unsigned series_seq;
    bool peak;
    /* Where the dump lives (session/dump_store.c): the parsed profile only
     * while it is among the few used last (NULL otherwise: use
     * session_dump_profile), and the file it is parsed from again. */
    struct profile *parsed;
    uint64_t last_use;         /* s->use_clock when last used */
    char *spool_path;          /* the bytes jemalloc wrote, deflated, in the
                                * session's spool directory; NULL when not
                                * kept (a file read, or the spool failed) */
    size_t raw_len;            /* their length inflated */
    char *reload_path;         /* a file read: the file, to parse again */
    struct session_file_id {
        unsigned long long dev, ino, size;
        long long mtime_s, mtime_ns;
    } file_id;                 /* reload_path as it was read */
    struct session_dump_objects *objects;  /* the build-ids memprof recorded */
    struct map_list *maps;     /* the mappings memprof read from the process
                                * when the dump had none, or NULL */
};

/* The attached process's profiling settings fixed at its start (config.*
 * and opt.* never change), read at attach. */
struct session_prof_conf {
    bool known;
    bool config_prof, opt_prof, opt_prof_active;
    struct jemalloc_version version;    /* the `version` mallctl, parsed */
    /* jemalloc's own 'prof on' would sample nothing from the threads that
     * ran while it was off (jemalloc_inactive_threads_stop_sampling):
     * memprof's sampler serves 'prof' and 'dump' instead (sampling.c). */
    bool own_profiler_blind;
};

/* One profiling setting this session changed in the attached process,
 * with its value before the first change, so that an error exit can put it
 * back and a normal end can say what stays. */
struct session_setting {
    bool changed;              /* changed and not changed back */
    uint64_t before, now;
};

/* A decay time (arena.N.dirty_decay_ms, arenas.muzzy_decay_ms, ...) this
 * session wrote, by 'decay' or 'mallctl': each name once, with its value
 * before the session's first write. */
struct session_decay_time {
    char name[48];
    int64_t before, now;
};

struct session_changes {
    struct session_setting active;   /* prof.active */
    struct session_setting rate;     /* prof.lg_sample, set by prof.reset */
    struct session_setting gdump;    /* prof.gdump */
    struct session_setting recent;   /* experimental.prof_recent.alloc_max (a
                                      * signed size, kept as its bits) */
    struct session_decay_time *decay;   /* ndecay of them (malloc'd) */
    size_t ndecay;
};

/* Profiling this session turned on: since when, for info and the first
 * dump's note (the profile holds only what was sampled since then). */
struct session_prof_on {
    time_t since;              /* 0: not turned on by this session */
    bool dumped;               /* a dump since then said so */
    time_t off_since;          /* when this session turned it off, 0: it did not */
};

/* A profiling run's record (its behaviour: session/profile_run.c): the
 * session keeps its latest run, after it ends too, for 'profile state'. */
enum run_state {
    RUN_RUNNING,
    RUN_COMPLETED,         /* its duration ran out */
    RUN_STOPPED,           /* profile stop, Ctrl-C, end of the session */
    RUN_PROCESS_ENDED,     /* the process exited or exec'd */
    RUN_FAILED,            /* dumps kept failing */
};

struct profile_run_options {
    double duration;       /* seconds; 0: until 'profile stop' */
    double every;          /* seconds between dumps */
    bool has_sample;
    unsigned sample;       /* lg_sample to run at */
    bool peak, force;
    const char *name;      /* NULL: run1, run2... */
    const char *save_dir;  /* write the series there when the run ends */
    bool faults;           /* dumps of page faults (session/faults.c), not of
                            * the heap: each covers the faults since the last */
};

struct faults_sampler;

struct profile_run {
    char name[48];
    enum run_state state;
    char why[160];             /* how it ended */
    int pid;
    struct profile_run_options o;
    char *save_dir;
    double t_start, t_end, next_dump;   /* CLOCK_MONOTONIC seconds */
    double t_stopped;          /* when it ended (CLOCK_MONOTONIC) */
    bool finished;             /* profile_run_finish has run */
    time_t wall_start, wall_end;
    bool sampled;              /* with memprof's sampler (session/sampling.c):
                                * active_before and lg_before are its */
    bool active_before;
    size_t lg_before;
    bool gdump_before;
    char prefix_before[1024];  /* opt.prof_prefix, put back into prof.prefix */
    bool peak_armed;           /* prof.gdump/prof.prefix are set by the run */
    unsigned ndumps, npeaks, failures;
    char latest[64];           /* the latest dump's name */
    char pending_peak[64];     /* the peak dump kept since the last periodic
                                * one: a higher one replaces it */
    struct faults_sampler *faults; /* a --faults run's events, until it ends */
};

struct session;

struct session {
    struct target *target;     /* NULL when offline / detached */
    struct allocator_id alloc; /* who serves its memory (with target) */
    struct session_prof_conf prof_conf;
    struct session_changes changes;
    struct session_prof_on prof_on;
    struct sampler *sampler;   /* memprof's heap sampler for this process
                                * (session/sampling.c), NULL when not attached */
    struct sampler_dump_info sampler_dumped; /* the counters the last sampler
                                * dump read (sampling_dump), for its notes */
    /* Set by the front end: while a run's dump calls into the process, its
     * interrupt (the prompt's Ctrl-C) is held off and taken after; NULL:
     * nothing to hold. */
    void (*hold_interrupt)(void);
    void (*release_interrupt)(void);
    unsigned narenas;          /* arenas.narenas, read once for completion (0: not yet) */
    struct session_dump *dumps;
    size_t ndumps, dumps_cap;
    struct own_dir spool;      /* where the dumps memprof takes are kept
                                * (session/dump_store.c), made at the first */
    unsigned spool_seq;        /* for the spool's file names */
    uint64_t use_clock;        /* session_dump_profile's uses, counted */
    unsigned dump_seq;         /* for automatic names */
    struct profile_run *run;   /* the latest profiling run (session/profile_run.c),
                                * kept after it ends for 'profile state' */
    double counting_since;     /* CLOCK_MONOTONIC seconds when this session
                                * turned profiling on or reset its counters;
                                * 0 when it did neither (or turned it off) */
    bool counting_allocated_known;     /* stats.allocated read then */
    uint64_t counting_allocated;       /* its value (jemalloc's held bytes) */

    struct symbolizer *symbolizer;   /* created lazily */
    char *sysroot;             /* --sysroot */
    char *exe;                 /* --exe */
    char *dump_dir;            /* --dump-dir: as the process sees it, or NULL */
    char *debug_dir;           /* --debug-dir, or NULL */

    bool interactive;          /* readline on a terminal */
    bool quit;                 /* set by quit */
    int exit_status;           /* a failing command's own exit status for a
                                * batch (trend --fail-over: MEMPROF_EXIT_GROWTH);
                                * 0: the usual 1.  Reset before each command. */
    bool quiet;                /* -q: no status lines on stderr */
    bool no_pager;             /* --no-pager, 'set pager off' */
    FILE *out;                 /* stdout */
};

/* Add a profile under a name (NULL: automatic); takes ownership. */
struct session_dump *session_add_dump(struct session *s, struct profile *p,
                                      const char *name, const char *source);
/* ---- where dumps live (session/dump_store.c) ----
 *
 * A dump's parsed profile is kept only for the SESSION_PROFILES_KEPT
 * dumps used last; the others are parsed again from their file when a view
 * needs them: a dump memprof took from the copy of its bytes in the
 * session's private spool directory, a file read from that file (if it
 * has not changed since).  A dump that has no such file stays parsed. */
#define SESSION_PROFILES_KEPT 2

/* Keep the bytes dump d was parsed from (as the process wrote them) in the
 * session's spool directory, and what a reading again needs besides (its
 * build-ids, the mappings memprof added).  0, or -1 with err saying why
 * (the dump then stays parsed, and 'profile save' cannot write it). */
int session_dump_keep_raw(struct session *s, struct session_dump *d, const char *data,
                          size_t len, struct mp_error *err);
/* Remember that d was read from file path, to read it again later. */
void session_dump_keep_file(struct session_dump *d, const char *path);
/* Those bytes again (malloc'd, NUL-terminated), or NULL with err saying
 * which dump, which file and what to do. */
char *session_dump_raw(const struct session_dump *d, size_t *len, struct mp_error *err);
/* Whether d's bytes are kept (session_dump_keep_raw succeeded). */
bool session_dump_has_raw(const struct session_dump *d);
/* d's parsed profile, parsed again from its file when it is not in
 * memory; NULL after saying (say_error) which dump, which file and what
 * to do.  The profile stays valid until session_profiles_trim. */
struct profile *session_dump_profile(struct session *s, struct session_dump *d);
/* Free the parsed profiles of all but the SESSION_PROFILES_KEPT dumps used
 * last (those that can be parsed again).  Only where no analysis context
 * holds a view of a session profile: between commands, or after a view's
 * analysis_forget. */
void session_profiles_trim(struct session *s);
/* How many dumps have their profile parsed in memory now. */
size_t session_profiles_parsed(const struct session *s);
/* Keep a copy of d's mappings, which memprof read from the process (the
 * dump had none), for the readings again. */
void session_dump_store_keep_maps(struct session_dump *d);
/* For session.c: what dump d keeps on disk and beside it, released (its
 * spool file removed); the spool directory removed. */
void session_dump_store_release(struct session_dump *d);
void session_spool_remove(struct session *s);
/* The build-ids memprof recorded when it took d: how many, the i-th
 * (its path; *build_id set), and written beside a copy of the dump as
 * profile_save_object_ids does (0, or -1 with err set). */
size_t session_dump_nobjects(const struct session_dump *d);
const char *session_dump_object(const struct session_dump *d, size_t i, const char **build_id);
int session_dump_save_object_ids(const struct session_dump *d, const char *dump_path,
                                 struct mp_error *err);

/* Find a dump by name; NULL name means the latest.  A name that is no
 * dump's but a series' means that series' latest dump.  NULL when none. */
struct session_dump *session_find_dump(struct session *s, const char *name);
/* Remove dump i (its profile freed, its spool file removed): for a live view that keeps only the
 * dumps it needs.  The dumps after it move down one place (indices and
 * pointers into s->dumps change); a caller's analysis context must
 * analysis_forget the profile first. */
void session_remove_dump(struct session *s, size_t i);
/* Put dump d in series (its next place).  series must be a valid series
 * name (session_series_name_ok). */
void session_series_add(struct session *s, struct session_dump *d, const char *series);
/* The dumps of a series in the order they were taken, as indices into
 * s->dumps (indices stay valid when dumps are added; pointers do not).
 * name NULL: the series of the latest dump that has one, or, when no
 * dump is in a series, every dump of the session.  Returns how many
 * (0: no such series, or no dump at all) and sets *idx (malloc'd, NULL
 * when 0), or -1 out of memory. */
long session_series(struct session *s, const char *name, size_t **idx);
/* The same without the dumps taken at peaks (profile start --peak): those
 * come at the process's high-water marks, not at regular times, and would
 * read as growth then fall in a trend.  For trend and report. */
long session_series_regular(struct session *s, const char *name, size_t **idx);
/* Whether name can name a series: 1-40 of [A-Za-z0-9_-], not starting
 * with '-' and not all digits (a row count). */
bool session_series_name_ok(const char *name);
/* The symbolizer for the session's profiles (root = /proc/PID/root when
 * attached, --sysroot otherwise). */
struct symbolizer *session_symbolizer(struct session *s);
/* Warn, once per dump, about inputs that would name its frames wrong
 * (analysis_check_inputs): call before symbolizing it, after
 * session_dump_profile (a dump not parsed is not checked). */
void session_check_inputs(struct session *s, struct session_dump *d);
/* Forget what the session changed (after putting it back, or with a
 * process that went or that another copy of jemalloc serves). */
void session_changes_clear(struct session_changes *c);

/* Forget the symbolizer (its root changes on attach/detach). */
void session_drop_symbolizer(struct session *s);
/* Whether the session's latest run is still running. */
bool profile_run_running(const struct session *s);
void profile_run_free(struct profile_run *r);
const char *profile_run_state_name(enum run_state st);

void session_hold_interrupt(struct session *s);
void session_release_interrupt(struct session *s);
/* Detach and free everything. */
void session_free(struct session *s);

#endif
