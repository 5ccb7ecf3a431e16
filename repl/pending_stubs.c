/* pending_stubs.c - TEMPORARY weak stand-ins for pieces being written in
 * parallel (attach/, lib/symbolize.c, lib/analysis), so ./memprof links
 * meanwhile.  Real definitions override these.  Deleted once all land. */
#include <stdlib.h>
#include "repl/commands.h"

#define PENDING(what) do { command_error("%s is not built yet", what); return -1; } while (0)
#define W __attribute__((weak))

W struct target *target_open(pid_t pid, struct mp_error *err) { (void)pid; mp_error_set(err, "attaching is not built yet"); return NULL; }
W void target_close(struct target *t) { (void)t; }
W pid_t target_pid(const struct target *t) { (void)t; return 0; }
W const char *target_exe(const struct target *t) { (void)t; return ""; }
W int target_thread_count(const struct target *t) { (void)t; return 0; }
W size_t target_jemalloc_count(const struct target *t) { (void)t; return 0; }
W const struct jemalloc_copy *target_jemalloc(const struct target *t, size_t i) { (void)t; (void)i; return NULL; }
W int target_jemalloc_select(struct target *t, size_t i, struct mp_error *err) { (void)t; (void)i; return mp_error_set(err, "not built"); }
W size_t target_jemalloc_selected(const struct target *t) { (void)t; return 0; }
W int target_mallctl(struct target *t, struct mallctl_call *c, size_t n, struct mp_error *err) { (void)t; (void)c; (void)n; return mp_error_set(err, "not built"); }
W int target_read_string(struct target *t, uint64_t a, char *b, size_t l, struct mp_error *err) { (void)t; (void)a; (void)b; (void)l; return mp_error_set(err, "not built"); }
W const struct target_pause_stats *target_pauses(const struct target *t) { (void)t; return NULL; }
W int target_dump_dir(struct target *t, const char **p, struct mp_error *err) { (void)t; (void)p; return mp_error_set(err, "not built"); }
W int target_fetch_dump(struct target *t, const char *p, char **d, size_t *l, struct mp_error *err) { (void)t; (void)p; (void)d; (void)l; return mp_error_set(err, "not built"); }
W struct symbolizer *symbolizer_new(const struct symbolizer_options *o) { (void)o; return NULL; }
W void symbolizer_free(struct symbolizer *s) { (void)s; }
W int cmd_top(struct session *s, int c, char **v) { (void)s; (void)c; (void)v; PENDING("top"); }
W int cmd_traces(struct session *s, int c, char **v) { (void)s; (void)c; (void)v; PENDING("traces"); }
W int cmd_peek(struct session *s, int c, char **v) { (void)s; (void)c; (void)v; PENDING("peek"); }
W int cmd_tree(struct session *s, int c, char **v) { (void)s; (void)c; (void)v; PENDING("tree"); }
W int cmd_list(struct session *s, int c, char **v) { (void)s; (void)c; (void)v; PENDING("list"); }
W int cmd_diff(struct session *s, int c, char **v) { (void)s; (void)c; (void)v; PENDING("diff"); }
W int cmd_dumps(struct session *s, int c, char **v) { (void)s; (void)c; (void)v; PENDING("dumps"); }
W int cmd_load(struct session *s, int c, char **v) { (void)s; (void)c; (void)v; PENDING("load"); }
