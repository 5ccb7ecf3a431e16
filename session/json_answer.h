/* json_answer.h - the --json answers of the session commands (info,
 * mallctl, prof, dump, dumps): one JSON document per command on stdout,
 * each an object whose "schema" key is MEMPROF_JSON_SCHEMA, like the
 * analysis commands' documents (docs/memprof.1, JSON OUTPUT). */
#ifndef MEMPROF_JSON_ANSWER_H
#define MEMPROF_JSON_ANSWER_H

#include <json-c/json.h>

#include "allocator/jemalloc/mallctl.h"
#include "session/session.h"

/* A new answer: {"schema": MEMPROF_JSON_SCHEMA}. */
json_object *json_answer_new(void);

/* Print the answer on s->out and free it.  Returns 0, or -1 after saying
 * that the output could not be written. */
int json_answer_emit(struct session *s, json_object *answer);

/* A mallctl value of type t read from v (as mallctl wrote it) as JSON:
 * true/false, an integer, or for strings str (the string read back). */
json_object *json_mallctl_value(enum mallctl_type t, const void *v, const char *str);

/* One of the session's profiles: name, source, stacks, total_bytes,
 * total_objects (unsampled, rounded), has_alloc, period, truncated,
 * saved_to (when saved). */
json_object *json_dump(const struct session_dump *d);

#endif
