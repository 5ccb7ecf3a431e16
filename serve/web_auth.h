/* web_auth.h - basic auth for memprof serve (--web-config's
 * basic_auth_users): a user and password checked against the user's bcrypt
 * hash, in constant time, with the same cost whether the user exists or
 * not; a success remembered (keyed on a keyed hash of user, hash and
 * password, never the password) so that a scraper asking every 15 s does
 * not pay bcrypt's tens of milliseconds each time.  Failures are never
 * remembered.  Free of the HTTP library: http.c hands over what the
 * client sent. */
#ifndef MEMPROF_SERVE_WEB_AUTH_H
#define MEMPROF_SERVE_WEB_AUTH_H

#include <stddef.h>

#include "lib/base/error.h"
#include "serve/web_config.h"

/* Successes remembered at most; the oldest goes first. */
#define WEB_AUTH_CACHE_SLOTS 64

enum web_auth_verdict {
    WEB_AUTH_OK,
    WEB_AUTH_NO_CREDENTIALS,    /* no Authorization: Basic header */
    WEB_AUTH_UNKNOWN_USER,      /* for the log only: the client hears 401 either way */
    WEB_AUTH_WRONG_PASSWORD,
};

struct web_auth;

/* Over users (kept, not copied: they live as long as the agent).  Makes
 * the decoy hash unknown users are checked against (one bcrypt). */
struct web_auth *web_auth_new(const struct web_user *users, size_t nusers,
                              struct mp_error *err);
/* user and password as the client sent them (NULL: none sent). */
enum web_auth_verdict web_auth_check(struct web_auth *a, const char *user,
                                     const char *password);
void web_auth_free(struct web_auth *a);

#endif
