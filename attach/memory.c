/* memory.c - a live process's memory read and written without stopping
 * any of its threads (process_vm_readv/writev), for the unwinder, for the
 * strings memprof reads and for what a stop needs before its call. */
#include "attach/memory.h"

#include <errno.h>
#include <string.h>
#include <sys/uio.h>

#include "attach/threads.h"

/* process_vm_readv/writev through pid, or through a live thread when the
 * main thread has exited (its own memory map is gone: ESRCH). */
static ssize_t vm_rw(pid_t pid, const struct iovec *local, const struct iovec *remote,
                     bool write)
{
    ssize_t n = write ? process_vm_writev(pid, local, 1, remote, 1, 0)
                      : process_vm_readv(pid, local, 1, remote, 1, 0);
    pid_t tid;
    if (n < 0 && errno == ESRCH && (tid = threads_live_tid(pid)) > 0 && tid != pid)
        n = write ? process_vm_writev(tid, local, 1, remote, 1, 0)
                  : process_vm_readv(tid, local, 1, remote, 1, 0);
    return n;
}

int remote_read(pid_t pid, uint64_t addr, void *buf, size_t len, struct mp_error *err)
{
    struct iovec local = { buf, len }, remote = { (void *)addr, len };
    ssize_t n = vm_rw(pid, &local, &remote, false);
    if (n != (ssize_t)len)
        return mp_error_set(err, "cannot read %zu bytes at %#llx in process %d: %s",
                            len, (unsigned long long)addr, pid,
                            n < 0 ? strerror(errno) : "short read");
    return 0;
}

int remote_write(pid_t pid, uint64_t addr, const void *buf, size_t len,
                 struct mp_error *err)
{
    struct iovec local = { (void *)buf, len }, remote = { (void *)addr, len };
    ssize_t n = vm_rw(pid, &local, &remote, true);
    if (n != (ssize_t)len)
        return mp_error_set(err, "cannot write %zu bytes at %#llx in process %d: %s",
                            len, (unsigned long long)addr, pid,
                            n < 0 ? strerror(errno) : "short write");
    return 0;
}
