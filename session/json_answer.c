/* json_answer.c - the envelope and the shared pieces of the session
 * commands' --json answers (see session/json_answer.h). */
#include "session/json_answer.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>

#include "lib/analysis/analysis.h"
#include "session/control.h"
#include "session/say.h"

json_object *json_answer_new(void)
{
    json_object *o = json_object_new_object();
    json_object_object_add(o, "schema", json_object_new_int(MEMPROF_JSON_SCHEMA));
    return o;
}

int json_answer_emit(struct session *s, json_object *answer)
{
    const char *text = json_object_to_json_string_ext(
        answer, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
                JSON_C_TO_STRING_NOSLASHESCAPE);
    int rc = 0;
    if (!text || fprintf(s->out, "%s\n", text) < 0) {
        say_error("could not write the JSON answer");
        rc = -1;
    }
    json_object_put(answer);
    return rc;
}

json_object *json_mallctl_value(enum mallctl_type t, const void *v, const char *str)
{
    switch (t) {
    case MALLCTL_BOOL:
        return json_object_new_boolean(*(const bool *)v);
    case MALLCTL_UNSIGNED:
    case MALLCTL_U32:
        return json_object_new_uint64(*(const uint32_t *)v);
    case MALLCTL_SIZE:
    case MALLCTL_U64:
    case MALLCTL_POINTER:
        return json_object_new_uint64(*(const uint64_t *)v);
    case MALLCTL_SSIZE:
    case MALLCTL_I64:
        return json_object_new_int64(*(const int64_t *)v);
    case MALLCTL_STRING:
        return str ? json_object_new_string(str) : NULL;
    case MALLCTL_VOID:
        break;
    }
    return NULL;
}

json_object *json_dump(const struct session_dump *d)
{
    const struct session_dump_info *p = &d->info;
    json_object *o = json_object_new_object();
    json_object_object_add(o, "name", json_object_new_string(d->name));
    json_object_object_add(o, "source", json_object_new_string(d->source));
    json_object_object_add(o, "stacks", json_object_new_uint64(p->nstacks));
    /* unsampled values are estimates: whole bytes and objects, as pprof rounds them */
    json_object_object_add(o, "total_bytes", json_object_new_int64(llround(p->total.inuse_bytes)));
    json_object_object_add(o, "total_objects", json_object_new_int64(llround(p->total.inuse_objects)));
    json_object_object_add(o, "has_alloc", json_object_new_boolean(p->has_alloc));
    json_object_object_add(o, "period", json_object_new_uint64(p->period));
    json_object_object_add(o, "truncated", json_object_new_boolean(p->truncated));
    if (d->saved_path)
        json_object_object_add(o, "saved_to", json_object_new_string(d->saved_path));
    json_object_object_add(o, "series", d->series[0] ? json_object_new_string(d->series) : NULL);
    json_object_object_add(o, "peak", json_object_new_boolean(d->peak));
    json_object_object_add(o, "taken_at", p->taken_at ? json_object_new_int64(p->taken_at) : NULL);
    return o;
}
