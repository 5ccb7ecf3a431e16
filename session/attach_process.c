/* attach_process.c - a session taking and letting go of a live process
 * (attach_process.h): the one place both front ends open and close one. */
#include "session/attach_process.h"

#include <stdio.h>

#include "session/control.h"
#include "session/profile_run.h"
#include "session/sampling.h"

int session_attach_process(struct session *s, pid_t pid, struct mp_error *err)
{
    s->target = allocator_open(pid, &(struct target_options){s->exe, s->debug_dir},
                               &s->alloc, err);
    if (!s->target)
        return -1;
    target_set_notes(s->target, s->quiet ? NULL : stderr);
    s->prof_conf = (struct session_prof_conf){0};
    session_changes_clear(&s->changes);
    s->prof_on = (struct session_prof_on){0};
    s->narenas = 0;
    session_drop_symbolizer(s);
    sampling_attach(s);
    return 0;
}

void session_detach_process(struct session *s, const char *why, bool failed)
{
    if (!s->target)
        return;
    /* a run ends first: its last dump and its settings need the process */
    if (profile_run_running(s))
        profile_run_finish(s, RUN_STOPPED, why, true);
    sampling_session_end(s);
    control_session_end(s, failed);
    target_close(s->target);
    s->target = NULL;
    sampler_free(s->sampler);
    s->sampler = NULL;
    session_drop_symbolizer(s);
}
