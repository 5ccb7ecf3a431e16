/* glibc_events.c - glibc malloc only: a process that does, on request,
 * what a sampler put in while it runs must live through (t_sampler_fork_exec).
 * Commands, one per line on stdin; each answer is a line on stdout:
 *
 *   at start   keep_before() allocates 500 x 4 KiB and keeps them; "ready"
 *   fork       a child runs child_keep() (2000 x 4 KiB kept, checked,
 *              freed, 5 times over) and exits 0 if all was well;
 *              the parent waits: "fork ok" or "fork BAD STATUS"
 *   spawn      a child that lives on: "spawned PID"; on each SIGUSR1 it runs
 *              child_round() (100 x 4 KiB kept): "child round ok"; it
 *              dies with the parent
 *   threads N  N threads run thread_keep() (100 x 8 KiB each, kept) and
 *              end; "threads N ok" once all are joined
 *   dlopen LIB dlopen()s LIB and calls its plugin_keep(); "dlopen ok BYTES"
 *   plugin     calls plugin_keep() again; "plugin ok BYTES"
 *   free_before  frees keep_before()'s blocks: "freed_before 500"
 *   round      keep_after() allocates 100 x 4 KiB and keeps them: "round ok"
 *   exec       execs itself with the argument "execd" (which says
 *              "ready execd" instead of "ready")
 *   hold       a thread calls malloc_stats() with stderr a full pipe: it
 *              blocks in write() holding the main arena's lock; then this
 *              thread's malloc(5000) waits for that lock inside the
 *              allocator (and inside the sampler, if it is in): "holding
 *              FD" first (the pipe's read end: reading 64 KiB from it
 *              lets both go on), "held ok" once the malloc returned
 */
#include <fcntl.h>
#include <malloc.h>
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <sys/prctl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void *before[500];
static void *kept[100000];
static size_t nkept;
static void *(*plugin)(void);
static size_t (*plugin_keep)(void);

static void keep(void *p, size_t n)
{
    if (!p || nkept == sizeof kept / sizeof kept[0])
        abort();
    memset(p, 7, n);
    kept[nkept++] = p;
}

__attribute__((noinline)) static void keep_before(void)
{
    for (int i = 0; i < 500; i++) {
        before[i] = malloc(4096);
        if (!before[i])
            abort();
        memset(before[i], 3, 4096);
    }
}

__attribute__((noinline)) static int child_keep(void)
{
    static void *mine[2000];
    for (int r = 0; r < 5; r++) {
        for (int i = 0; i < 2000; i++) {
            mine[i] = malloc(4096);
            if (!mine[i])
                return 1;
            memset(mine[i], i & 0xff, 4096);
        }
        for (int i = 0; i < 2000; i++) {
            if (((unsigned char *)mine[i])[4095] != (i & 0xff))
                return 2;
            free(mine[i]);
        }
    }
    return 0;
}

static void *child_kept[100000];

__attribute__((noinline)) static void child_round(void)
{
    static size_t n;
    for (int i = 0; i < 100 && n < 100000; i++)
        child_kept[n++] = malloc(4096);
}

static void child_lives_on(void)
{
    sigset_t usr1;
    sigemptyset(&usr1);
    sigaddset(&usr1, SIGUSR1);
    sigprocmask(SIG_BLOCK, &usr1, NULL);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    for (;;) {
        int sig;
        if (sigwait(&usr1, &sig) == 0) {
            child_round();
            printf("child round ok %p\n", child_kept[0]);
        }
    }
}

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

__attribute__((noinline)) static void thread_keep(void)
{
    for (int i = 0; i < 100; i++) {
        void *p = malloc(8192);
        pthread_mutex_lock(&lock);
        keep(p, 8192);
        pthread_mutex_unlock(&lock);
    }
}

static void *thread_main(void *arg)
{
    (void)arg;
    thread_keep();
    return NULL;
}

__attribute__((noinline)) static void keep_after(void)
{
    for (int i = 0; i < 100; i++)
        keep(malloc(4096), 4096);
}

/* hold: the thread blocked in malloc_stats()'s write, holding the main
 * arena's lock (its wchan names a pipe write once it waits there). */
static int stats_tid;
static void *stats_thread(void *arg)
{
    (void)arg;
    __atomic_store_n(&stats_tid, (int)gettid(), __ATOMIC_RELEASE);
    malloc_stats();
    return NULL;
}

static int blocked_in_pipe_write(int tid)
{
    /* open and read, not fopen: no malloc while the arena's lock is held */
    char path[64], wchan[64] = "";
    snprintf(path, sizeof path, "/proc/self/task/%d/wchan", tid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    ssize_t n = fd >= 0 ? read(fd, wchan, sizeof wchan - 1) : -1;
    if (fd >= 0)
        close(fd);
    wchan[n > 0 ? n : 0] = 0;
    return strstr(wchan, "pipe_write") != NULL;
}

static void hold(void)
{
    int p[2], saved = dup(2);
    char buf[4096] = {0};
    if (pipe(p) || saved < 0 || fcntl(p[1], F_SETFL, O_NONBLOCK))
        abort();
    while (write(p[1], buf, sizeof buf) > 0 || write(p[1], buf, 1) > 0)
        ;
    if (fcntl(p[1], F_SETFL, 0) || dup2(p[1], 2) != 2)
        abort();
    pthread_t th;
    if (pthread_create(&th, NULL, stats_thread, NULL))
        abort();
    int tid;
    while (!(tid = __atomic_load_n(&stats_tid, __ATOMIC_ACQUIRE)) || !blocked_in_pipe_write(tid))
        usleep(1000);
    printf("holding %d\n", p[0]);
    fflush(stdout);
    void *q = malloc(5000);
    pthread_join(th, NULL);
    dup2(saved, 2);
    close(saved);
    close(p[0]);
    close(p[1]);
    free(q);
    stats_tid = 0;
    printf("held %s\n", q ? "ok" : "BAD");
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    (void)plugin;
    keep_before();
    printf("pid %d\nready%s\n", (int)getpid(), argc > 1 ? " execd" : "");
    char line[4096];
    while (fgets(line, sizeof line, stdin)) {
        line[strcspn(line, "\n")] = 0;
        if (strcmp(line, "fork") == 0) {
            fflush(stdout);
            pid_t c = fork();
            if (c == 0)
                _exit(child_keep());
            int st = -1;
            if (c < 0 || waitpid(c, &st, 0) != c || !WIFEXITED(st) || WEXITSTATUS(st))
                printf("fork BAD %d\n", st);
            else
                printf("fork ok\n");
        } else if (strcmp(line, "spawn") == 0) {
            fflush(stdout);
            pid_t c = fork();
            if (c == 0)
                child_lives_on();
            printf("spawned %d\n", (int)c);
        } else if (strncmp(line, "threads ", 8) == 0) {
            int n = atoi(line + 8);
            pthread_t th[64];
            if (n < 1 || n > 64)
                abort();
            for (int i = 0; i < n; i++)
                if (pthread_create(&th[i], NULL, thread_main, NULL))
                    abort();
            for (int i = 0; i < n; i++)
                pthread_join(th[i], NULL);
            printf("threads %d ok\n", n);
        } else if (strncmp(line, "dlopen ", 7) == 0) {
            void *h = dlopen(line + 7, RTLD_NOW);
            plugin_keep = h ? (size_t (*)(void))dlsym(h, "plugin_keep") : NULL;
            if (!plugin_keep) {
                printf("dlopen BAD %s\n", dlerror());
                continue;
            }
            printf("dlopen ok %zu\n", plugin_keep());
        } else if (strcmp(line, "plugin") == 0) {
            if (!plugin_keep)
                abort();
            printf("plugin ok %zu\n", plugin_keep());
        } else if (strcmp(line, "free_before") == 0) {
            for (int i = 0; i < 500; i++)
                free(before[i]);
            printf("freed_before 500\n");
        } else if (strcmp(line, "round") == 0) {
            keep_after();
            printf("round ok\n");
        } else if (strcmp(line, "hold") == 0) {
            hold();
        } else if (strcmp(line, "exec") == 0) {
            fflush(stdout);
            char *args[] = {argv[0], "execd", NULL};
            execv("/proc/self/exe", args);
            printf("exec BAD\n");
        }
        fflush(stdout);
    }
    return 0;
}
