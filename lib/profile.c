/* profile.c - STUB: being written (heap profile parser). */
#include "lib/profile.h"
#include <stdlib.h>
void profile_unsample(double *n, double *s, uint64_t period) { (void)n; (void)s; (void)period; }
struct profile *profile_parse(const char *data, size_t len, const char *name, struct mp_error *err)
{ (void)data; (void)len; mp_error_set(err, "%s: profile reading is not implemented yet", name); return NULL; }
struct profile *profile_load_file(const char *path, struct mp_error *err)
{ mp_error_set(err, "%s: profile reading is not implemented yet", path); return NULL; }
void profile_free(struct profile *p) { free(p); }
