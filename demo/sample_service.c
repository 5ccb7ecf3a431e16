/* sample_service.c - the built-in demo: a small multi-threaded "service"
 * on jemalloc with a slow leak, for memprof to attach to and profile.
 *
 * Worker threads handle fake requests: parse_request() and render_reply()
 * allocate and free short-lived buffers; cache_reply() keeps the last 64
 * replies in a ring (steady memory); remember_session() keeps a little of
 * every request in a list that is never trimmed (the leak); load_config()
 * holds a fixed table from start-up.  Start it with
 * MALLOC_CONF=prof:true,prof_active:false; it prints "ready" when serving. */
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define WORKERS 4

struct session_entry {
    struct session_entry *next;
    char data[200];
};

static struct session_entry *sessions;
static pthread_mutex_t sessions_lock = PTHREAD_MUTEX_INITIALIZER;
static char **config_table;
static volatile sig_atomic_t stopping;

static __attribute__((noinline)) void load_config(void)
{
    config_table = calloc(4096, sizeof *config_table);
    for (int i = 0; i < 4096; i++) {
        config_table[i] = malloc(1024);
        snprintf(config_table[i], 1024, "option-%d", i);
    }
}

static __attribute__((noinline)) char *parse_request(unsigned seq)
{
    char *buf = malloc(4096 + seq % 4096);
    snprintf(buf, 4096, "GET /item/%u HTTP/1.1", seq);
    return buf;
}

static __attribute__((noinline)) char *render_reply(const char *req)
{
    size_t n = 16384 + strlen(req);
    char *out = malloc(n);
    snprintf(out, n, "200 OK for %s", req);
    return out;
}

/* The leak: every request leaves an entry that nothing ever removes. */
static __attribute__((noinline)) void remember_session(const char *req)
{
    struct session_entry *e = malloc(sizeof *e);
    snprintf(e->data, sizeof e->data, "%s", req);
    pthread_mutex_lock(&sessions_lock);
    e->next = sessions;
    sessions = e;
    pthread_mutex_unlock(&sessions_lock);
}

#define CACHE_SLOTS 64
static char *reply_cache[CACHE_SLOTS];
static unsigned cache_next;

/* Steady state: each new reply pushes out the oldest. */
static __attribute__((noinline)) void cache_reply(char *reply)
{
    pthread_mutex_lock(&sessions_lock);
    char *old = reply_cache[cache_next % CACHE_SLOTS];
    reply_cache[cache_next++ % CACHE_SLOTS] = reply;
    pthread_mutex_unlock(&sessions_lock);
    free(old);
}

static void *worker(void *arg)
{
    unsigned seq = (unsigned)(uintptr_t)arg * 1000003u;
    struct timespec pause = {0, 200 * 1000}; /* 0.2 ms between requests */
    while (!stopping) {
        char *req = parse_request(seq++);
        char *reply = render_reply(req);
        remember_session(req);
        if (seq % 8 == 0)
            cache_reply(reply);
        else
            free(reply);
        free(req);
        nanosleep(&pause, NULL);
    }
    return NULL;
}

static void on_term(int sig)
{
    (void)sig;
    stopping = 1;
}

int main(void)
{
    signal(SIGTERM, on_term);
    signal(SIGINT, on_term);
    load_config();
    pthread_t t[WORKERS];
    for (int i = 0; i < WORKERS; i++)
        pthread_create(&t[i], NULL, worker, (void *)(uintptr_t)i);
    printf("ready\n");
    fflush(stdout);
    while (!stopping)
        pause();
    for (int i = 0; i < WORKERS; i++)
        pthread_join(t[i], NULL);
    return 0;
}
