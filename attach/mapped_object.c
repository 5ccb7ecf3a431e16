/* mapped_object.c - opens the ELF objects a live process executes, through
 * its own view of the filesystem, and works out where each one is loaded. */
#include "attach/mapped_object.h"
#include "attach/threads.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/base/safe_open.h"

/* map_files names the very inode mapped (deleted or replaced files, other
 * mount namespaces); /proc/PID/root/<path> is the fallback when map_files
 * is not readable. */
int mapped_object_open_file(pid_t pid, const struct map_list *maps, const char *path)
{
    /* A live thread's directory when the main thread has exited: it has
     * no map_files, so root is the way in then. */
    char dir[64];
    threads_proc_dir(pid, dir, sizeof dir);
    for (size_t i = 0; i < maps->n; i++) {
        const struct map_entry *e = &maps->v[i];
        if (strcmp(e->path, path) != 0)
            continue;
        char mf[96];
        snprintf(mf, sizeof mf, "%s/map_files/%llx-%llx", dir,
                 (unsigned long long)e->start, (unsigned long long)e->end);
        int fd = open(mf, O_RDONLY | O_CLOEXEC);
        if (fd >= 0)
            return fd;
        break;
    }
    char root[4200];
    snprintf(root, sizeof root, "%s/root%s", dir, path);
    return safe_open_regular(AT_FDCWD, root, false, NULL);
}

static bool seen_path(const struct mapped_objects *objs, const char *path)
{
    for (size_t i = 0; i < objs->n; i++)
        if (strcmp(objs->v[i].path, path) == 0)
            return true;
    return false;
}

static bool has_exec_mapping(const struct map_list *maps, const char *path)
{
    for (size_t i = 0; i < maps->n; i++)
        if (maps->v[i].x && strcmp(maps->v[i].path, path) == 0)
            return true;
    return false;
}

static void text_range(const struct map_list *maps, struct mapped_object *o)
{
    o->text_start = UINT64_MAX;
    o->text_end = 0;
    for (size_t i = 0; i < maps->n; i++) {
        const struct map_entry *e = &maps->v[i];
        if (!e->x || strcmp(e->path, o->path) != 0)
            continue;
        if (e->start < o->text_start)
            o->text_start = e->start;
        if (e->end > o->text_end)
            o->text_end = e->end;
    }
}

/* first is the object's lowest mapping: the one the bias is computed from. */
static int load_one(pid_t pid, const struct map_list *maps, const struct map_entry *first,
                    ino_t exe_ino, struct mapped_object *o)
{
    int fd = mapped_object_open_file(pid, maps, first->path);
    if (fd < 0)
        return -1;
    struct mp_error ignored;
    struct elf_object *elf = elf_object_open_fd(fd, first->path, &ignored);
    close(fd);
    if (!elf)
        return -1;
    if (elf_object_bias(elf, first->start, first->offset, &o->bias) < 0) {
        elf_object_free(elf);
        return -1;
    }
    o->elf = elf;
    o->path = strdup(first->path);
    o->is_exe = exe_ino && first->inode == exe_ino;
    text_range(maps, o);
    return o->path ? 0 : -1;
}

static ino_t exe_inode(pid_t pid)
{
    char path[96];
    struct stat st;
    threads_proc_dir(pid, path, sizeof path - 4);
    strcat(path, "/exe");
    return stat(path, &st) == 0 ? st.st_ino : 0;
}

/* Opening a map_files entry was refused for want of a capability (the
 * kernel checks it before anything else: EPERM). */
static bool map_files_refused(pid_t pid, const struct map_list *maps)
{
    char dir[64], mf[128];
    threads_proc_dir(pid, dir, sizeof dir);
    for (size_t i = 0; i < maps->n; i++) {
        if (!map_entry_is_file(&maps->v[i]))
            continue;
        snprintf(mf, sizeof mf, "%s/map_files/%llx-%llx", dir,
                 (unsigned long long)maps->v[i].start, (unsigned long long)maps->v[i].end);
        int fd = open(mf, O_RDONLY | O_CLOEXEC);
        if (fd >= 0) {
            close(fd);
            return false;
        }
        return errno == EPERM;
    }
    return false;
}

/* Why not one object could be read, as far as memprof can tell. */
static int no_object_error(pid_t pid, const struct map_list *maps, struct mp_error *err)
{
    if (!maps_have_program(maps))
        return mp_error_set(err, "process %d has no program mapped (it is executing a "
                            "new program or exiting): attach to it again", pid);
    if (geteuid() != 0)
        return mp_error_set(err, "cannot read any executable object mapped by "
                            "process %d (through /proc/%d/map_files or /proc/%d/root): "
                            "run memprof as root", pid, pid, pid);
    if (map_files_refused(pid, maps))
        return mp_error_set(err, "cannot read any executable object mapped by process %d: "
                            "opening /proc/%d/map_files needs CAP_CHECKPOINT_RESTORE or "
                            "CAP_SYS_ADMIN, which memprof lacks (a container or a dropped "
                            "capability set), and their paths under /proc/%d/root name "
                            "nothing (deleted files, or a process chroot()ed inside its "
                            "container): give memprof CAP_CHECKPOINT_RESTORE (podman/docker "
                            "--cap-add; Kubernetes securityContext.capabilities.add)",
                            pid, pid, pid);
    return mp_error_set(err, "cannot read any executable object mapped by process %d "
                        "(through /proc/%d/map_files or /proc/%d/root): the files are "
                        "not ELF objects memprof can read, or were replaced since",
                        pid, pid, pid);
}

int mapped_objects_load(pid_t pid, const struct map_list *maps,
                        struct mapped_objects *out, struct mp_error *err)
{
    out->v = calloc(maps->n ? maps->n : 1, sizeof *out->v);
    out->n = 0;
    if (!out->v)
        return mp_error_set(err, "out of memory listing the objects of process %d", pid);
    ino_t exe_ino = exe_inode(pid);
    for (size_t i = 0; i < maps->n; i++) {
        const struct map_entry *e = &maps->v[i];
        if (!map_entry_is_file(e) || seen_path(out, e->path) ||
            !has_exec_mapping(maps, e->path))
            continue;
        if (load_one(pid, maps, e, exe_ino, &out->v[out->n]) == 0)
            out->n++;
    }
    if (out->n == 0) {
        mapped_objects_free(out);
        return no_object_error(pid, maps, err);
    }
    return 0;
}

void mapped_objects_free(struct mapped_objects *objs)
{
    for (size_t i = 0; i < objs->n; i++) {
        free(objs->v[i].path);
        elf_object_free(objs->v[i].elf);
        elf_object_free(objs->v[i].debug_syms);
        free(objs->v[i].debug_syms_path);
    }
    free(objs->v);
    objs->v = NULL;
    objs->n = 0;
}

const struct elf_object *mapped_object_symbols(const struct mapped_object *o)
{
    return o->debug_syms ? o->debug_syms : o->elf;
}

const struct mapped_object *mapped_objects_find(const struct mapped_objects *objs,
                                                uint64_t addr)
{
    for (size_t i = 0; i < objs->n; i++)
        if (addr >= objs->v[i].text_start && addr < objs->v[i].text_end)
            return &objs->v[i];
    return NULL;
}

const struct mapped_object *mapped_objects_exe(const struct mapped_objects *objs)
{
    for (size_t i = 0; i < objs->n; i++)
        if (objs->v[i].is_exe)
            return &objs->v[i];
    return NULL;
}

const struct elf_symbol *mapped_object_function(const struct mapped_object *o,
                                                const char *name)
{
    const struct elf_symbol *s = elf_object_symbol_named(mapped_object_symbols(o), name);
    return s && s->defined && (s->type == STT_FUNC || s->type == STT_GNU_IFUNC) ? s : NULL;
}

uint64_t mapped_object_function_address(const struct mapped_object *o, const char *name)
{
    const struct elf_symbol *s = mapped_object_function(o, name);
    return s && s->type == STT_FUNC ? s->value + o->bias : 0;
}

const struct mapped_object *mapped_objects_named(const struct mapped_objects *objs,
                                                 const char *base)
{
    for (size_t i = 0; i < objs->n; i++) {
        const char *slash = strrchr(objs->v[i].path, '/');
        const char *name = slash ? slash + 1 : objs->v[i].path;
        if (strncmp(name, base, strlen(base)) == 0)
            return &objs->v[i];
    }
    return NULL;
}

int mapped_object_file_offset(const struct mapped_object *o, uint64_t addr,
                              uint64_t *offset)
{
    uint64_t vaddr = addr - o->bias;
    for (size_t i = 0; i < o->elf->nloads; i++) {
        const struct elf_load_segment *l = &o->elf->loads[i];
        if (vaddr >= l->vaddr && vaddr < l->vaddr + l->filesz) {
            *offset = vaddr - l->vaddr + l->offset;
            return 0;
        }
    }
    return -1;
}
