/* kernel_abi.h - the parts of Linux's system-call ABI the in-process
 * sampler uses that are the same on every CPU it runs on (x86-64 and
 * arm64), written out because the image cannot use libc's headers: poll,
 * ppoll's timeout and sigset size, process_vm_readv's iovec, O_CLOEXEC,
 * rt_sigprocmask's EINVAL for a `how` it does not know,
 * where st_ino sits, mmap's failure and mremap's flags.  What differs per CPU is in arch_<cpu>.h. */
#ifndef MEMPROF_SAMPLER_KERNEL_ABI_H
#define MEMPROF_SAMPLER_KERNEL_ABI_H

#include <stdint.h>

#define KERNEL_POLLIN         0x001
#define KERNEL_SIGSET_SIZE    8           /* the kernel's sigset_t, for ppoll */
#define KERNEL_O_CLOEXEC      02000000
#define KERNEL_STAT_INO_WORD  1           /* struct stat: st_dev, then st_ino */
#define KERNEL_MREMAP_DONTUNMAP 4         /* mremap: the old range stays mapped */
#define KERNEL_MAP_FAILED     (~(uint64_t)0)
#define KERNEL_EINVAL         22
#define KERNEL_EFAULT         14
#define KERNEL_UNREADABLE_PAGE UINT64_C(0xfffffffffffff000) /* the kernel's half */
#define KERNEL_SIG_HOW_NONE   3           /* not SIG_BLOCK, SIG_UNBLOCK nor SIG_SETMASK */
struct kernel_pollfd { int32_t fd; int16_t events; int16_t revents; };
struct kernel_iovec { uint64_t base; uint64_t len; };
struct kernel_timespec { int64_t sec; int64_t nsec; };

#endif
