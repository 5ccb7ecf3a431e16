/* profile_delta.h - the difference of two heap profiles of one process,
 * as a profile: what Go's net/http/pprof answers to heap?seconds=N (a
 * profile taken, another N seconds later, the first subtracted from the
 * second).  Stacks are matched by their return addresses, which is exact
 * within one process; every value of a stack (in use and allocated,
 * objects and bytes) is after's less before's, negative where it shrank;
 * a stack only in before is there negated, and a stack whose four
 * differences are all zero is left out, as Go's profile.Merge leaves them. */
#ifndef MEMPROF_PROFILE_DELTA_H
#define MEMPROF_PROFILE_DELTA_H

#include "lib/base/error.h"
#include "lib/profile/profile.h"

/* A new profile (profile_free), with after's mappings, build-ids, sampling
 * period and time; or NULL with err (out of memory). */
struct profile *profile_delta(const struct profile *before, const struct profile *after,
                              struct mp_error *err);

#endif
