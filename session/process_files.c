/* process_files.c - the attached process's /proc files (process_files.h). */
#include "session/process_files.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/base/file_read.h"
#include "lib/proc/procmem.h"

/* smaps of a large process runs to tens of MB. */
#define PROC_FILE_MAX (256u << 20)

char *process_file(struct session *s, const char *name, size_t *len)
{
    char dir[96], path[160];
    target_proc_dir(s->target, dir, sizeof dir);
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return file_read_path(path, PROC_FILE_MAX, len);
}

bool process_file_value(struct session *s, const char *file, const char *key, uint64_t *v)
{
    size_t len;
    char *text = process_file(s, file, &len);
    bool ok = text && procmem_field(text, len, key, v);
    free(text);
    return ok;
}

int process_cgroup_memory(struct session *s, struct cgroup_memory *c, char *why,
                          size_t whylen)
{
    size_t len;
    char *text = process_file(s, "cgroup", &len);
    if (!text) {
        memset(c, 0, sizeof *c);
        snprintf(why, whylen, "cannot read /proc/%d/cgroup: is the process gone?",
                 (int)target_pid(s->target));
        return -1;
    }
    int rc = cgroup_memory_read(text, len, c, why, whylen);
    free(text);
    return rc;
}
