/* web_auth.c - basic-auth users checked with libxcrypt's bcrypt
 * (web_auth.h).  One bcrypt runs at a time: it is CPU work a flood of bad
 * passwords would otherwise multiply over both CPUs (the toolkit
 * serialises it too). */
#include "serve/web_auth.h"

#include <crypt.h>
#include <gnutls/crypto.h>
#include <gnutls/gnutls.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#define DIGEST_LEN 32           /* HMAC-SHA-256 */

struct web_auth {
    const struct web_user *users;
    size_t nusers;
    char decoy[CRYPT_OUTPUT_SIZE];      /* checked for unknown users: same cost */
    pthread_mutex_t bcrypt_lock;
    struct crypt_data scratch;          /* crypt_rn's, under bcrypt_lock */
    pthread_mutex_t cache_lock;
    unsigned char cache_key[32];        /* random, this run's */
    unsigned char cache[WEB_AUTH_CACHE_SLOTS][DIGEST_LEN];
    bool cache_used[WEB_AUTH_CACHE_SLOTS];
    size_t cache_next;                  /* the slot the next success takes */
};

/* Equal, in time that depends on the length only. */
static bool same_bytes(const void *a, const void *b, size_t len)
{
    const volatile unsigned char *x = a, *y = b;
    unsigned char diff = 0;
    for (size_t i = 0; i < len; i++)
        diff |= x[i] ^ y[i];
    return diff == 0;
}

static bool bcrypt_matches(struct web_auth *a, const char *hash, const char *password)
{
    pthread_mutex_lock(&a->bcrypt_lock);
    const char *out = crypt_rn(password, hash, &a->scratch, (int)sizeof a->scratch);
    size_t len = strlen(hash);
    bool ok = out && out[0] != '*' && strlen(out) == len && same_bytes(out, hash, len);
    explicit_bzero(&a->scratch, sizeof a->scratch);
    pthread_mutex_unlock(&a->bcrypt_lock);
    return ok;
}

/* The cache's key for one (user, hash, password): an HMAC under this
 * run's random key, so the cache holds nothing a password can be read or
 * cheaply guessed from. */
static void cache_digest(struct web_auth *a, const char *user, const char *hash,
                         const char *password, unsigned char out[DIGEST_LEN])
{
    size_t ul = strlen(user), hl = strlen(hash), pl = strlen(password);
    size_t len = ul + 1 + hl + 1 + pl;
    unsigned char *msg = malloc(len);
    memset(out, 0, DIGEST_LEN);         /* all zero: never found, never stored */
    if (!msg)
        return;
    /* user NUL hash NUL password: no two triples give the same bytes */
    memcpy(msg, user, ul + 1);
    memcpy(msg + ul + 1, hash, hl + 1);
    memcpy(msg + ul + 1 + hl + 1, password, pl);
    if (gnutls_hmac_fast(GNUTLS_MAC_SHA256, a->cache_key, sizeof a->cache_key, msg, len,
                         out) < 0)
        memset(out, 0, DIGEST_LEN);
    explicit_bzero(msg, len);
    free(msg);
}

static bool digest_is_zero(const unsigned char d[DIGEST_LEN])
{
    static const unsigned char zero[DIGEST_LEN];
    return same_bytes(d, zero, DIGEST_LEN);
}

static bool cache_has(struct web_auth *a, const unsigned char d[DIGEST_LEN])
{
    bool found = false;
    pthread_mutex_lock(&a->cache_lock);
    for (size_t i = 0; i < WEB_AUTH_CACHE_SLOTS; i++)
        found |= a->cache_used[i] && same_bytes(a->cache[i], d, DIGEST_LEN);
    pthread_mutex_unlock(&a->cache_lock);
    return found;
}

static void cache_put(struct web_auth *a, const unsigned char d[DIGEST_LEN])
{
    pthread_mutex_lock(&a->cache_lock);
    memcpy(a->cache[a->cache_next], d, DIGEST_LEN);
    a->cache_used[a->cache_next] = true;
    a->cache_next = (a->cache_next + 1) % WEB_AUTH_CACHE_SLOTS;
    pthread_mutex_unlock(&a->cache_lock);
}

struct web_auth *web_auth_new(const struct web_user *users, size_t nusers,
                              struct mp_error *err)
{
    struct web_auth *a = calloc(1, sizeof *a);
    if (!a) {
        mp_error_set(err, "out of memory");
        return NULL;
    }
    a->users = users;
    a->nusers = nusers;
    pthread_mutex_init(&a->bcrypt_lock, NULL);
    pthread_mutex_init(&a->cache_lock, NULL);
    /* The decoy: a hash of a random password at the highest cost any user
     * has, so that an unknown user costs what a known one does. */
    int cost = 4;
    for (size_t i = 0; i < nusers; i++) {
        int c = (users[i].hash[4] - '0') * 10 + (users[i].hash[5] - '0');
        cost = c > cost ? c : cost;
    }
    unsigned char secret[16];
    char phrase[2 * sizeof secret + 1], setting[CRYPT_GENSALT_OUTPUT_SIZE];
    if (getrandom(a->cache_key, sizeof a->cache_key, 0) != (ssize_t)sizeof a->cache_key ||
        getrandom(secret, sizeof secret, 0) != (ssize_t)sizeof secret) {
        mp_error_set(err, "no random bytes from the kernel (getrandom) for basic auth");
        web_auth_free(a);
        return NULL;
    }
    for (size_t i = 0; i < sizeof secret; i++)
        phrase[2 * i] = "0123456789abcdef"[secret[i] >> 4],
        phrase[2 * i + 1] = "0123456789abcdef"[secret[i] & 15];
    phrase[2 * sizeof secret] = '\0';
    const char *out = NULL;
    if (crypt_gensalt_rn("$2b$", (unsigned long)cost, NULL, 0, setting, sizeof setting))
        out = crypt_rn(phrase, setting, &a->scratch, (int)sizeof a->scratch);
    if (!out || out[0] == '*') {
        mp_error_set(err, "libxcrypt cannot make a bcrypt hash (cost %d) for basic auth", cost);
        web_auth_free(a);
        return NULL;
    }
    snprintf(a->decoy, sizeof a->decoy, "%s", out);
    explicit_bzero(&a->scratch, sizeof a->scratch);
    explicit_bzero(phrase, sizeof phrase);
    return a;
}

enum web_auth_verdict web_auth_check(struct web_auth *a, const char *user,
                                     const char *password)
{
    if (!user || !password)
        return WEB_AUTH_NO_CREDENTIALS;
    const struct web_user *u = NULL;
    for (size_t i = 0; i < a->nusers; i++)
        if (strcmp(a->users[i].name, user) == 0)
            u = &a->users[i];
    const char *hash = u ? u->hash : a->decoy;
    unsigned char d[DIGEST_LEN];
    cache_digest(a, user, hash, password, d);
    if (u && !digest_is_zero(d) && cache_has(a, d))
        return WEB_AUTH_OK;
    bool ok = bcrypt_matches(a, hash, password);
    if (!u)
        return WEB_AUTH_UNKNOWN_USER;
    if (!ok)
        return WEB_AUTH_WRONG_PASSWORD;
    if (!digest_is_zero(d))
        cache_put(a, d);
    return WEB_AUTH_OK;
}

void web_auth_free(struct web_auth *a)
{
    if (!a)
        return;
    pthread_mutex_destroy(&a->bcrypt_lock);
    pthread_mutex_destroy(&a->cache_lock);
    explicit_bzero(a, sizeof *a);
    free(a);
}
