/* pprof.c - writes a struct profile as pprof's profile.proto, gzip-
 * compressed, through protobuf-c (messages generated from lib/profile/pprof.proto)
 * and zlib.  Locations are deduplicated per address, functions per (name,
 * file), strings per content, so the output is as small as the input
 * allows and every id is non-zero and unique.
 *
 * The samples are the stacks the analysis views show: inlined calls are
 * Lines of their call site's Location, and the allocator's own frames are
 * dropped from the top of each stack frame by frame, inlined ones
 * included (ld.so's inline calloc wrapper, say).  A call site whose
 * innermost Lines are the allocator's therefore gets a second Location
 * without them, used where it is a stack's leaf; a Location is written
 * only when some sample uses it.  Counts are rounded to integers so that
 * each column's sum is the rounded unsampled total, as `top` shows it. */
#include "lib/report/pprof.h"
#include "lib/base/array.h"

#include <errno.h>
#include <stdbool.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "lib/base/u64map.h"
#include "pprof.pb-c.h"

typedef Perftools__Profiles__Profile PbProfile;
typedef Perftools__Profiles__ValueType PbValueType;
typedef Perftools__Profiles__Sample PbSample;
typedef Perftools__Profiles__Mapping PbMapping;
typedef Perftools__Profiles__Location PbLocation;
typedef Perftools__Profiles__Line PbLine;
typedef Perftools__Profiles__Function PbFunction;
typedef Perftools__Profiles__Label PbLabel;

/* ---- the string table: strings -> index, deduplicated by content ---- */

struct strtab {
    char **v;
    size_t n, cap;
    struct u64map index;     /* hash of content -> last index with that hash */
    uint32_t *next;          /* the index before it with the same hash, or UINT32_MAX */
};

static uint64_t hash_str(const char *s)
{
    uint64_t h = 1469598103934665603ULL;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    return h;
}

/* Index of s in the table, adding it when new; -1 on allocation failure. */
static int64_t strtab_add(struct strtab *t, const char *s)
{
    if (!s)
        s = "";
    uint32_t *head = u64map_slot(&t->index, hash_str(s));
    if (!head)
        return -1;
    bool fresh = *head == U64MAP_NEW;
    for (uint32_t i = fresh ? UINT32_MAX : *head; i != UINT32_MAX; i = t->next[i])
        if (strcmp(t->v[i], s) == 0)
            return i;
    if (t->n == t->cap) {
        /* the strings and their chain links grow together */
        size_t v_cap = t->cap;
        if (array_reserve(&t->v, &v_cap, t->n + 1, sizeof *t->v, 256) ||
            array_reserve(&t->next, &t->cap, v_cap, sizeof *t->next, 256))
            return -1;
    }
    if (t->n >= U64MAP_NEW || !(t->v[t->n] = strdup(s)))
        return -1;
    t->next[t->n] = fresh ? UINT32_MAX : *head;
    *head = (uint32_t)t->n;
    return (int64_t)t->n++;
}

static void strtab_free(struct strtab *t)
{
    for (size_t i = 0; i < t->n; i++)
        free(t->v[i]);
    free(t->v);
    free(t->next);
    u64map_free(&t->index);
}

/* ---- the export ---- */

/* One call site (return address - 1), symbolized once; its Locations are
 * written when a sample first uses them. */
struct site {
    uint64_t pc;
    uint64_t loc_all;          /* Location with every frame, 0 until written */
    uint64_t loc_trimmed;      /* without the leading allocator frames */
    uint8_t nframes;
    uint8_t lead;              /* how many innermost frames are the allocator's */
    struct symbol_frame frames[];   /* innermost first */
};

#define SITE_MAX_FRAMES 16

struct pprof_builder {
    const struct profile *prof;
    struct symbolizer *sym;
    struct strtab strings;
    struct u64map site_by_pc, fn_by_key;
    struct site **sites;
    size_t nsites, capsites;
    struct symbol_frame frames[SITE_MAX_FRAMES];   /* scratch for site_at */
    PbLocation **locs;
    size_t nlocs, caplocs;
    PbFunction **fns;
    size_t nfns, capfns;
    PbMapping **maps;
    size_t nmaps;
    double unrounded[4];       /* per value column: the sum so far */
    int64_t written[4];        /* and what the samples so far hold */
    struct symbol_file_identity identity;   /* scratch for mapping_build_id */
    PbLabel **labels;          /* every sample's, shared by all */
    size_t nlabels;
};

static void *push_ptr(void ***v, size_t *n, size_t *cap, void *item)
{
    if (!item)
        return NULL;
    if (array_reserve(v, cap, *n + 1, sizeof **v, 256))
        return NULL;
    (*v)[(*n)++] = item;
    return item;
}

static uint64_t function_id(struct pprof_builder *b, const struct symbol_frame *f)
{
    int64_t name = strtab_add(&b->strings, f->function);
    int64_t system_name = strtab_add(&b->strings, f->system_name ? f->system_name
                                                                 : f->function);
    int64_t file = strtab_add(&b->strings, f->file ? f->file : "");
    if (name < 0 || system_name < 0 || file < 0)
        return 0;
    uint32_t *slot = u64map_slot(&b->fn_by_key, (uint64_t)name << 32 | (uint64_t)file);
    if (!slot)
        return 0;
    if (*slot != U64MAP_NEW)
        return *slot;
    PbFunction *fn = malloc(sizeof *fn);
    if (!fn)
        return 0;
    perftools__profiles__function__init(fn);
    fn->id = b->nfns + 1;
    fn->name = name;
    fn->system_name = system_name;   /* the mangled symbol, as pprof keeps it */
    fn->filename = file;
    if (!push_ptr((void ***)&b->fns, &b->nfns, &b->capfns, fn)) {
        free(fn);
        return 0;
    }
    *slot = (uint32_t)fn->id;
    return fn->id;
}

static uint64_t mapping_id(struct pprof_builder *b, uint64_t addr)
{
    for (size_t i = 0; i < b->nmaps; i++)
        if (addr >= b->maps[i]->memory_start && addr < b->maps[i]->memory_limit)
            return b->maps[i]->id;
    return 0;
}

/* The call site at pc, symbolized on first sight; NULL when out of memory. */
static struct site *site_at(struct pprof_builder *b, uint64_t pc)
{
    uint32_t *slot = u64map_slot(&b->site_by_pc, pc);
    if (!slot)
        return NULL;
    if (*slot != U64MAP_NEW)
        return b->sites[*slot];
    int n = symbolizer_lookup_profile(b->sym, b->prof, pc, SYMBOLIZE_LINES, b->frames,
                                      SITE_MAX_FRAMES);
    if (n < 0)
        n = 0;
    struct site *st = malloc(sizeof *st + (size_t)n * sizeof *st->frames);
    if (!push_ptr((void ***)&b->sites, &b->nsites, &b->capsites, st)) {
        free(st);
        return NULL;
    }
    *st = (struct site){.pc = pc, .nframes = (uint8_t)n};
    memcpy(st->frames, b->frames, (size_t)n * sizeof *st->frames);
    while (st->lead < st->nframes && st->frames[st->lead].is_allocator)
        st->lead++;
    *slot = (uint32_t)(b->nsites - 1);
    return st;
}

/* Write a Location for frames [from, nframes) of a site; its id, or 0
 * when out of memory. */
static uint64_t write_location(struct pprof_builder *b, const struct site *st, int from)
{
    const struct symbol_frame *fr = st->frames;
    int n = st->nframes - from;
    PbLocation *loc = malloc(sizeof *loc);
    PbLine **lines = calloc(n > 0 ? (size_t)n : 1, sizeof *lines);
    if (!loc || !lines)
        goto fail;
    perftools__profiles__location__init(loc);
    loc->id = b->nlocs + 1;
    loc->address = st->pc;
    loc->mapping_id = mapping_id(b, st->pc);
    loc->line = lines;
    for (int i = 0; i < n; i++) {
        if (!(lines[i] = malloc(sizeof **lines)))
            goto fail;
        loc->n_line++;
        perftools__profiles__line__init(lines[i]);
        lines[i]->line = fr[from + i].line;
        if (!(lines[i]->function_id = function_id(b, &fr[from + i])))
            goto fail;
    }
    if (!push_ptr((void ***)&b->locs, &b->nlocs, &b->caplocs, loc))
        goto fail;
    return loc->id;
fail:
    if (loc)
        for (size_t i = 0; i < loc->n_line; i++)
            free(lines[i]);
    free(lines);
    free(loc);
    return 0;
}

/* The Location of a site with every frame (trimmed: without its leading
 * allocator frames), written on first use. */
static uint64_t location_id(struct pprof_builder *b, struct site *st, bool trimmed)
{
    uint64_t *id = trimmed && st->lead ? &st->loc_trimmed : &st->loc_all;
    if (!*id)
        *id = write_location(b, st, trimmed ? st->lead : 0);
    return *id;
}

/* The build-id memprof recorded when it took the dump, else that of the
 * file symbolization reads; "" when neither is known. */
static const char *mapping_build_id(struct pprof_builder *b, const struct map_entry *e)
{
    const char *recorded = profile_object_id(b->prof, e->path);
    if (recorded)
        return recorded;
    struct mp_error err;
    if (symbolizer_file_identity(b->sym, &b->prof->maps, e, &b->identity, &err))
        return "";
    return b->identity.build_id;
}

static int add_mappings(struct pprof_builder *b)
{
    const struct map_list *m = &b->prof->maps;
    b->maps = calloc(m->n ? m->n : 1, sizeof *b->maps);
    if (!b->maps)
        return -1;
    for (size_t i = 0; i < m->n; i++) {
        const struct map_entry *e = &m->v[i];
        if (!e->x || !map_entry_is_file(e))
            continue;
        PbMapping *pm = malloc(sizeof *pm);
        if (!pm)
            return -1;
        perftools__profiles__mapping__init(pm);
        b->maps[b->nmaps++] = pm;
        pm->id = b->nmaps;
        pm->memory_start = e->start;
        pm->memory_limit = e->end;
        pm->file_offset = e->offset;
        pm->filename = strtab_add(&b->strings, e->path);
        pm->build_id = strtab_add(&b->strings, mapping_build_id(b, e));
        if (pm->build_id < 0)
            return -1;
        pm->has_functions = pm->has_filenames = pm->has_line_numbers =
            pm->has_inline_frames = 1;
        if (pm->filename < 0)
            return -1;
    }
    return 0;
}

/* The value of a column for one sample: the running sum rounded, less
 * what the samples before hold, so the column adds up to the rounded
 * total whatever the number of samples. */
static int64_t rounded_value(struct pprof_builder *b, size_t column, double v)
{
    b->unrounded[column] += v;
    int64_t out = llround(b->unrounded[column]) - b->written[column];
    b->written[column] += out;
    return out;
}

/* One sample per stack, leaf first, leading allocator frames dropped. */
static PbSample *make_sample(struct pprof_builder *b, const struct profile_stack *st,
                             size_t nvalues)
{
    PbSample *s = malloc(sizeof *s);
    uint64_t *ids = malloc((st->nframes ? st->nframes : 1) * sizeof *ids);
    int64_t *vals = malloc(nvalues * sizeof *vals);
    if (!s || !ids || !vals)
        goto fail;
    perftools__profiles__sample__init(s);
    size_t n = 0;
    for (uint32_t i = 0; i < st->nframes; i++) {
        uint64_t ra = profile_frame(b->prof, (size_t)st->frame0 + i);
        struct site *site = site_at(b, ra ? ra - 1 : 0);
        if (!site)
            goto fail;
        /* Drop allocator frames while they lead, but keep the last site
         * of a stack that is nothing else. */
        bool all_allocator = site->lead == site->nframes;
        if (n == 0 && all_allocator && i + 1 < st->nframes)
            continue;
        uint64_t id = location_id(b, site, n == 0 && !all_allocator);
        if (!id)
            goto fail;
        ids[n++] = id;
    }
    /* Go's order (runtime/pprof): alloc_* first when the profile has them. */
    const struct profile_values *v = &st->v;
    double go[4] = {v->alloc_objects, v->alloc_bytes, v->inuse_objects, v->inuse_bytes};
    const double *raw = nvalues == 4 ? go : go + 2;
    for (size_t i = 0; i < nvalues; i++)
        vals[i] = rounded_value(b, i, raw[i]);
    s->location_id = ids;
    s->n_location_id = n;
    s->value = vals;
    s->n_value = nvalues;
    s->label = b->labels;
    s->n_label = b->nlabels;
    return s;
fail:
    free(s);
    free(ids);
    free(vals);
    return NULL;
}

static void free_message_parts(PbProfile *pb, struct pprof_builder *b)
{
    for (size_t i = 0; i < pb->n_sample; i++) {
        free(pb->sample[i]->location_id);
        free(pb->sample[i]->value);
        free(pb->sample[i]);
    }
    free(pb->sample);
    for (size_t i = 0; i < pb->n_sample_type; i++)
        free(pb->sample_type[i]);
    free(pb->sample_type);
    free(pb->period_type);
    free(pb->comment);
    for (size_t i = 0; i < b->nlabels; i++)
        free(b->labels[i]);
    free(b->labels);
    for (size_t i = 0; i < b->nlocs; i++) {
        for (size_t j = 0; j < b->locs[i]->n_line; j++)
            free(b->locs[i]->line[j]);
        free(b->locs[i]->line);
        free(b->locs[i]);
    }
    free(b->locs);
    for (size_t i = 0; i < b->nfns; i++)
        free(b->fns[i]);
    free(b->fns);
    for (size_t i = 0; i < b->nmaps; i++)
        free(b->maps[i]);
    free(b->maps);
    strtab_free(&b->strings);
    for (size_t i = 0; i < b->nsites; i++)
        free(b->sites[i]);
    free(b->sites);
    u64map_free(&b->site_by_pc);
    u64map_free(&b->fn_by_key);
}

static PbValueType *value_type(struct pprof_builder *b, const char *type, const char *unit)
{
    PbValueType *vt = malloc(sizeof *vt);
    if (!vt)
        return NULL;
    perftools__profiles__value_type__init(vt);
    vt->type = strtab_add(&b->strings, type);
    vt->unit = strtab_add(&b->strings, unit);
    return vt;
}

/* The profile's comments (go tool pprof -comments): the labels' and
 * o->comment, in one array that pb owns. */
static int alloc_comments(PbProfile *pb, const struct pprof_options *o)
{
    size_t n = o ? o->nlabels + (o->comment && o->comment[0]) : 0;
    if (n && !(pb->comment = calloc(n, sizeof *pb->comment)))
        return -1;
    return 0;
}

/* The endpoint's labels: one Label each, which every sample points to,
 * and the same as "key=value" comments. */
static int add_labels(struct pprof_builder *b, PbProfile *pb, const struct pprof_options *o)
{
    if (!o || !o->nlabels)
        return 0;
    b->labels = calloc(o->nlabels, sizeof *b->labels);
    if (!b->labels || !pb->comment)
        return -1;
    for (size_t i = 0; i < o->nlabels; i++) {
        PbLabel *l = b->labels[i] = malloc(sizeof *l);
        if (!l)
            return -1;
        b->nlabels++;
        perftools__profiles__label__init(l);
        char *kv = NULL;
        if (asprintf(&kv, "%s=%s", o->labels[i].key, o->labels[i].value) < 0)
            return -1;
        l->key = strtab_add(&b->strings, o->labels[i].key);
        l->str = strtab_add(&b->strings, o->labels[i].value);
        pb->comment[i] = strtab_add(&b->strings, kv);
        free(kv);
        if (l->key < 0 || l->str < 0 || pb->comment[i] < 0)
            return -1;
        pb->n_comment++;
    }
    return 0;
}

static int build(struct pprof_builder *b, PbProfile *pb, const struct pprof_options *o)
{
    /* Go's heap profile: the types in its order, so that tools written for
     * Go's (Parca's and Pyroscope's memory profiles) find them. */
    static const char *const go_types[4][2] = {
        {"alloc_objects", "count"}, {"alloc_space", "bytes"},
        {"inuse_objects", "count"}, {"inuse_space", "bytes"},
    };
    /* A page-fault profile's: what they are, each type its own name (pprof's
     * -sample_index picks a type by name). */
    static const char *const fault_types[2][2] = {
        {"faults", "count"}, {"faulted_space", "bytes"},
    };
    size_t nvalues = b->prof->has_alloc ? 4 : 2;
    const char *const (*types)[2] = b->prof->page_faults ? fault_types
                                    : nvalues == 4 ? go_types : go_types + 2;
    if (strtab_add(&b->strings, "") != 0)   /* string_table[0] == "" */
        return -1;
    pb->sample_type = calloc(nvalues, sizeof *pb->sample_type);
    if (!pb->sample_type)
        return -1;
    for (size_t i = 0; i < nvalues; i++, pb->n_sample_type++)
        if (!(pb->sample_type[i] = value_type(b, types[i][0], types[i][1])))
            return -1;
    if (!(pb->period_type = b->prof->page_faults ? value_type(b, "faults", "count")
                                                 : value_type(b, "space", "bytes")))
        return -1;
    pb->period = (int64_t)b->prof->period;
    bool allocs = o && o->allocs_first && nvalues == 4;
    pb->default_sample_type = pb->sample_type[allocs ? 1 : nvalues - 1]->type;
    if (o) {
        pb->time_nanos = o->time_nanos;
        pb->duration_nanos = o->duration_nanos;
    }
    if (alloc_comments(pb, o) || add_labels(b, pb, o))
        return -1;
    if (o && o->comment && o->comment[0]) {
        if ((pb->comment[pb->n_comment] = strtab_add(&b->strings, o->comment)) < 0)
            return -1;
        pb->n_comment++;
    }
    if (add_mappings(b))
        return -1;
    pb->sample = calloc(b->prof->nstacks ? b->prof->nstacks : 1, sizeof *pb->sample);
    if (!pb->sample)
        return -1;
    for (size_t i = 0; i < b->prof->nstacks; i++, pb->n_sample++)
        if (!(pb->sample[i] = make_sample(b, &b->prof->stacks[i], nvalues)))
            return -1;
    pb->mapping = b->maps;
    pb->n_mapping = b->nmaps;
    pb->location = b->locs;
    pb->n_location = b->nlocs;
    pb->function = b->fns;
    pb->n_function = b->nfns;
    pb->string_table = b->strings.v;
    pb->n_string_table = b->strings.n;
    return 0;
}

/* The profile encoded (uncompressed profile.proto), malloc'd. */
static uint8_t *encode(const struct profile *p, struct symbolizer *sym,
                       const struct pprof_options *o, size_t *len, struct mp_error *err)
{
    struct pprof_builder b = {.prof = p, .sym = sym};
    PbProfile pb;
    perftools__profiles__profile__init(&pb);
    uint8_t *buf = NULL;
    if (build(&b, &pb, o)) {
        mp_error_set(err, "out of memory while building the pprof profile");
    } else {
        *len = perftools__profiles__profile__get_packed_size(&pb);
        if (!(buf = malloc(*len ? *len : 1)))
            mp_error_set(err, "out of memory while encoding the pprof profile");
        else
            perftools__profiles__profile__pack(&pb, buf);
    }
    /* The builder owns what the message points to. */
    pb.mapping = NULL, pb.location = NULL, pb.function = NULL, pb.string_table = NULL;
    free_message_parts(&pb, &b);
    return buf;
}

/* Compress data into gz (closed here); where names it for errors. */
static int write_gzip(gzFile gz, const char *where, const uint8_t *data, size_t len,
                      struct mp_error *err)
{
    size_t off = 0;
    while (off < len) {
        unsigned chunk = len - off > (1u << 30) ? 1u << 30 : (unsigned)(len - off);
        if (gzwrite(gz, data + off, chunk) != (int)chunk) {
            gzclose(gz);
            return mp_error_set(err, "cannot write %s", where);
        }
        off += chunk;
    }
    if (gzclose(gz) != Z_OK)
        return mp_error_set(err, "cannot write %s", where);
    return 0;
}

int pprof_write(const struct profile *p, struct symbolizer *sym, const char *path,
                struct mp_error *err)
{
    size_t len;
    uint8_t *buf = encode(p, sym, NULL, &len, err);
    if (!buf)
        return -1;
    gzFile gz = gzopen(path, "wb");
    int rc = gz ? write_gzip(gz, path, buf, len, err)
                : mp_error_set(err, "cannot create %s: %s", path, strerror(errno ? errno : ENOMEM));
    free(buf);
    return rc;
}

int pprof_write_fd(const struct profile *p, struct symbolizer *sym, int fd,
                   const struct pprof_options *o, struct mp_error *err)
{
    size_t len;
    uint8_t *buf = encode(p, sym, o, &len, err);
    if (!buf)
        return -1;
    /* gzclose closes the descriptor it was given: give it a copy. */
    int copy = dup(fd);
    gzFile gz = copy >= 0 ? gzdopen(copy, "wb") : NULL;
    int rc = gz ? write_gzip(gz, "the profile", buf, len, err)
                : mp_error_set(err, "cannot write the profile: %s", strerror(errno));
    if (!gz && copy >= 0)
        close(copy);
    free(buf);
    return rc;
}
