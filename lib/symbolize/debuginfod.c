/* debuginfod.c - the debuginfod client (see lib/symbolize/debuginfod.h): bounded
 * in time, quiet (libdebuginfod prints nothing unless DEBUGINFOD_PROGRESS
 * or DEBUGINFOD_VERBOSE asks it to), and every failure told in words.
 *
 * libdebuginfod is loaded (dlopen) the first time a debug file is fetched,
 * not linked: it brings some 30 libraries (libcurl and what that needs)
 * whose loading and relocation cost every memprof run about 12M
 * instructions, most of a small profile's analysis, for a lookup that
 * happens only when a debug file is missing and DEBUGINFOD_URLS is set. */
#include "lib/symbolize/debuginfod.h"

#include <dlfcn.h>
#include <elfutils/debuginfod.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "lib/base/mono_clock.h"

/* Set once a server failed to answer in time or at all: the next object
 * would wait just as long for nothing. */
static bool servers_unusable;

int sym_debuginfod_enabled(void)
{
    const char *urls = getenv(DEBUGINFOD_URLS_ENV_VAR);
    return urls && urls[strspn(urls, " \t")] != '\0';
}

#define CLIENT_LIBRARY "libdebuginfod.so.1"

/* The functions of libdebuginfod memprof calls, typed as its header says. */
struct client_api {
    __typeof__(debuginfod_begin) *begin;
    __typeof__(debuginfod_end) *end;
    __typeof__(debuginfod_find_debuginfo) *find_debuginfo;
    __typeof__(debuginfod_find_executable) *find_executable;
    __typeof__(debuginfod_set_user_data) *set_user_data;
    __typeof__(debuginfod_get_user_data) *get_user_data;
    __typeof__(debuginfod_set_progressfn) *set_progressfn;
};

static struct client_api api;

/* Load libdebuginfod once; NULL with *why set when it cannot be. */
static const struct client_api *client_api(char **why)
{
    static bool loaded;
    if (loaded)
        return &api;
    void *lib = dlopen(CLIENT_LIBRARY, RTLD_NOW | RTLD_LOCAL);
    if (lib) {
        api.begin = (__typeof__(api.begin))dlsym(lib, "debuginfod_begin");
        api.end = (__typeof__(api.end))dlsym(lib, "debuginfod_end");
        api.find_debuginfo = (__typeof__(api.find_debuginfo))dlsym(lib, "debuginfod_find_debuginfo");
        api.find_executable = (__typeof__(api.find_executable))dlsym(lib, "debuginfod_find_executable");
        api.set_user_data = (__typeof__(api.set_user_data))dlsym(lib, "debuginfod_set_user_data");
        api.get_user_data = (__typeof__(api.get_user_data))dlsym(lib, "debuginfod_get_user_data");
        api.set_progressfn = (__typeof__(api.set_progressfn))dlsym(lib, "debuginfod_set_progressfn");
        loaded = api.begin && api.end && api.find_debuginfo && api.find_executable &&
                 api.set_user_data &&
                 api.get_user_data && api.set_progressfn;
        if (loaded)
            return &api;
    }
    const char *e = dlerror();
    if (asprintf(why, "debuginfod client library %s cannot be loaded (%s): install it "
                 "(apt-get install libdebuginfod1)", CLIENT_LIBRARY, e ? e : "a function is missing") < 0)
        *why = NULL;
    if (lib)
        dlclose(lib);
    return NULL;
}

struct lookup {
    double deadline;
    bool cancelled;
};

/* libdebuginfod calls this about once a second while a transfer runs; a
 * non-zero return cancels it (and the lookup then reports ENOENT, as if
 * the server had nothing: hence `cancelled`). */
static int past_deadline(debuginfod_client *c, long done, long total)
{
    (void)done;
    (void)total;
    struct lookup *l = api.get_user_data(c);
    if (mono_clock_s() > l->deadline)
        l->cancelled = true;
    return l->cancelled;
}

char *sym_debuginfod_fetch(const uint8_t *build_id, size_t len,
                           enum sym_debuginfod_kind kind, char **why)
{
    const char *what = kind == SYM_DEBUGINFOD_EXECUTABLE ? "object file" : "debug file";
    *why = NULL;
    const char *urls = getenv(DEBUGINFOD_URLS_ENV_VAR);
    if (!urls)
        urls = "";
    if (servers_unusable) {
        if (asprintf(why, "debuginfod (%s) was not asked again after it failed on "
                     "an earlier object", urls) < 0)
            *why = NULL;
        return NULL;
    }
    if (!client_api(why))
        return NULL;
    debuginfod_client *c = api.begin();
    if (!c) {
        if (asprintf(why, "debuginfod client could not start: %s", strerror(errno)) < 0)
            *why = NULL;
        return NULL;
    }
    struct lookup l = {mono_clock_s() + SYM_DEBUGINFOD_LIMIT_S, false};
    api.set_user_data(c, &l);
    api.set_progressfn(c, past_deadline);
    char *path = NULL;
    int fd = kind == SYM_DEBUGINFOD_EXECUTABLE
             ? api.find_executable(c, build_id, (int)len, &path)
             : api.find_debuginfo(c, build_id, (int)len, &path);
    api.end(c);
    if (fd >= 0) {
        close(fd);  /* the caller opens and checks the file itself */
        return path;
    }
    free(path);
    path = NULL;
    int e = -fd;
    char hex[2 * 64 + 1];
    size_t n = len < 64 ? len : 64;
    for (size_t i = 0; i < n; i++)
        snprintf(hex + 2 * i, 3, "%02x", build_id[i]);
    hex[2 * n] = '\0';
    int rc;
    if (e == ENOENT && !l.cancelled) {
        rc = asprintf(why, "debuginfod (%s) has no %s for build-id %s", urls, what, hex);
    } else {
        servers_unusable = true;
        if (l.cancelled)
            rc = asprintf(why, "debuginfod (%s) did not deliver build-id %s (its %s: "
                          "memprof gave up after %d s)", urls, hex, what, SYM_DEBUGINFOD_LIMIT_S);
        else
            rc = asprintf(why, "debuginfod (%s) did not deliver build-id %s (its %s: %s)",
                          urls, hex, what, strerror(e));
    }
    if (rc < 0)
        *why = NULL;
    return NULL;
}
