/* mesos_runs.c - the agent's record of Mesos-style profiling runs
 * (mesos_runs.h).  A slot per process with a run under way or a finished
 * one; a run's worker is taken out of its slot by whoever ends it, so two
 * requests never wait for the same worker, and the mutex is never held
 * across a wait. */
#include "serve/mesos_runs.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "lib/base/mono_clock.h"
#include "lib/base/own_dir.h"

#define MAX_SLOTS 256

struct run_slot {
    pid_t pid;                  /* 0: free */
    unsigned active_id;         /* the run under way, 0: none */
    double t_start, duration;
    struct worker_handle w;     /* pid 0 while starting or being ended */
    bool ending;                /* someone waits for its worker */
    unsigned last_id;           /* the latest finished run, 0: none */
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct run_slot slots[MAX_SLOTS];
static struct own_dir base = {.fd = -1};
static unsigned next_id = 1;

static void run_dir(unsigned id, char *buf, size_t len)
{
    snprintf(buf, len, "%s/run-%u", base.path, id);
}

/* A run's directory and what the agent's workers write in it: its files,
 * and a saved run left half archived by a worker ended at its time limit
 * (run-N/memprof-run-P-N/.build-id/xx/). */
static void remove_run(unsigned id)
{
    char dir[PATH_MAX];
    if (!id)
        return;
    run_dir(id, dir, sizeof dir);
    own_dir_remove_tree(AT_FDCWD, dir, 3);
}

int mesos_runs_init(struct mp_error *err)
{
    return own_dir_make(&base, "memprof-serve", "profiling runs", err);
}

static struct run_slot *find_slot(pid_t pid)
{
    for (size_t i = 0; i < MAX_SLOTS; i++)
        if (slots[i].pid == pid)
            return &slots[i];
    return NULL;
}

/* A slot for a process new to the record: a free one, or else one whose
 * process has gone (its finished run's files go with it). */
static struct run_slot *new_slot(void)
{
    struct run_slot *sl = find_slot(0);
    for (size_t i = 0; !sl && i < MAX_SLOTS; i++)
        if (!slots[i].active_id && kill(slots[i].pid, 0) < 0 && errno == ESRCH) {
            remove_run(slots[i].last_id);
            sl = &slots[i];
            *sl = (struct run_slot){0};
        }
    return sl;
}

/* The run under way in sl has ended: it becomes the latest finished one. */
static void finished(struct run_slot *sl)
{
    if (sl->last_id != sl->active_id)
        remove_run(sl->last_id);
    sl->last_id = sl->active_id;
    sl->active_id = 0;
    sl->ending = false;
}

/* Reap sl's worker if it has ended. */
static void reap(struct run_slot *sl)
{
    int status;
    if (sl->active_id && !sl->ending && sl->w.pid > 0 && worker_ended(&sl->w, &status))
        finished(sl);
}

static unsigned runs_under_way(void)
{
    unsigned n = 0;
    for (size_t i = 0; i < MAX_SLOTS; i++)
        n += slots[i].active_id != 0;
    return n;
}

int mesos_runs_begin(pid_t pid, double duration, unsigned *id, char *dir, size_t len,
                     char *why, size_t why_len)
{
    pthread_mutex_lock(&lock);
    struct run_slot *sl = find_slot(pid);
    if (sl)
        reap(sl);
    int rc = 0;
    if (sl && sl->active_id) {
        snprintf(why, why_len, "run %u is under way in process %d (%.0f s left): one run "
                 "per process; POST /memory-profiler/stop?pid=%d ends it", sl->active_id,
                 (int)pid, sl->duration - (mono_clock_s() - sl->t_start), (int)pid);
        rc = 409;
    } else if (runs_under_way() >= MESOS_MAX_RUNS || (!sl && !(sl = new_slot()))) {
        snprintf(why, why_len, "this agent has %u profiling runs under way, its most: try "
                 "again when one has ended", runs_under_way());
        rc = 503;
    } else {
        *id = next_id++;
        run_dir(*id, dir, len);
        if (mkdir(dir, 0700) < 0) {
            snprintf(why, why_len, "cannot make the run's directory %s: %s", dir,
                     strerror(errno));
            rc = 503;
        } else {
            sl->pid = pid;
            sl->active_id = *id;
            sl->t_start = mono_clock_s();
            sl->duration = duration;
            sl->w = (struct worker_handle){.control_fd = -1};
        }
    }
    pthread_mutex_unlock(&lock);
    return rc;
}

void mesos_runs_started(pid_t pid, unsigned id, struct worker_handle *h)
{
    pthread_mutex_lock(&lock);
    struct run_slot *sl = find_slot(pid);
    if (sl && sl->active_id == id) {
        if (h) {
            sl->w = *h;
        } else {
            remove_run(id);
            sl->active_id = 0;
            if (!sl->last_id)
                sl->pid = 0;
        }
    }
    pthread_mutex_unlock(&lock);
}

/* Take sl's worker out to end it (the caller waits without the lock). */
static bool take_worker(struct run_slot *sl, struct worker_handle *w)
{
    if (!sl->active_id || sl->ending || sl->w.pid <= 0)
        return false;
    *w = sl->w;
    sl->w = (struct worker_handle){.control_fd = -1};
    sl->ending = true;
    return true;
}

static void put_finished(pid_t pid, unsigned id)
{
    pthread_mutex_lock(&lock);
    struct run_slot *sl = find_slot(pid);
    if (sl && sl->active_id == id)
        finished(sl);
    pthread_mutex_unlock(&lock);
}

int mesos_runs_stop(pid_t pid, unsigned timeout_s, unsigned *id)
{
    struct worker_handle w;
    pthread_mutex_lock(&lock);
    struct run_slot *sl = find_slot(pid);
    if (sl)
        reap(sl);
    bool taken = sl && take_worker(sl, &w);
    *id = sl ? sl->active_id : 0;
    pthread_mutex_unlock(&lock);
    if (!taken)     /* none, or one still starting or already ending */
        return *id ? 409 : 0;
    int status = worker_finish(&w, timeout_s);
    put_finished(pid, *id);
    return status;
}

void mesos_runs_state(pid_t pid, struct mesos_run_state *st)
{
    *st = (struct mesos_run_state){0};
    pthread_mutex_lock(&lock);
    struct run_slot *sl = find_slot(pid);
    if (sl) {
        reap(sl);
        st->active_id = sl->active_id;
        if (sl->active_id) {
            double left = sl->duration - (mono_clock_s() - sl->t_start);
            st->remaining_s = left > 0 ? left : 0;
        }
        st->last_id = sl->last_id;
        if (sl->last_id)
            run_dir(sl->last_id, st->last_dir, sizeof st->last_dir);
    }
    pthread_mutex_unlock(&lock);
}

double mesos_runs_remaining(pid_t pid, unsigned *id)
{
    struct mesos_run_state st;
    mesos_runs_state(pid, &st);
    *id = st.active_id;
    return st.active_id ? st.remaining_s : -1;
}

/* End every run whose worker is taken by pick (overdue ones, or all). */
static void end_runs(bool all, unsigned grace_s, unsigned timeout_s)
{
    for (size_t i = 0; i < MAX_SLOTS; i++) {
        struct worker_handle w;
        pthread_mutex_lock(&lock);
        struct run_slot *sl = &slots[i];
        reap(sl);
        bool overdue = sl->active_id &&
                       mono_clock_s() - sl->t_start > sl->duration + (double)grace_s;
        pid_t pid = sl->pid;
        unsigned id = sl->active_id;
        bool taken = (all || overdue) && take_worker(sl, &w);
        pthread_mutex_unlock(&lock);
        if (!taken)
            continue;
        int status = worker_finish(&w, timeout_s);
        if (status != 200)
            fprintf(stderr, "memprof: profiling run %u of process %d ended with status %d%s\n",
                    id, (int)pid, status, overdue ? " (its worker was past its run's end)" : "");
        put_finished(pid, id);
    }
}

void mesos_runs_tick(unsigned grace_s)
{
    end_runs(false, grace_s, grace_s);
}

void mesos_runs_end(unsigned timeout_s)
{
    end_runs(true, 0, timeout_s);
    pthread_mutex_lock(&lock);
    for (size_t i = 0; i < MAX_SLOTS; i++) {
        remove_run(slots[i].last_id);
        remove_run(slots[i].active_id);
        slots[i] = (struct run_slot){0};
    }
    own_dir_remove(&base);
    pthread_mutex_unlock(&lock);
}
