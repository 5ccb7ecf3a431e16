/* gen_stacks.c - a jemalloc program with N distinct call paths, for
 * benchmarking profile analysis: it writes a heap profile in which every
 * path is one stack.
 *
 *   gen_stacks N FILE      (MALLOC_CONF=prof:true,prof_active:true,lg_prof_sample:0)
 *
 * Path number c walks as many levels as N needs in base 8; at each level
 * its next octal digit picks which of eight distinct functions is called
 * next, from a call site of its own, and the last one allocates.  With
 * every allocation sampled, the profile has exactly one stack per path. */
#include <jemalloc/jemalloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void **kept;

typedef void step_fn(int level, unsigned long c);
static step_fn walk0, walk1, walk2, walk3, walk4, walk5, walk6, walk7;

/* The allocation size varies with the path so the values are not all equal. */
__attribute__((noinline)) static void leaf(unsigned long c)
{
    kept[c] = malloc(16 + (c % 7) * 16);
    if (!kept[c]) {
        perror("malloc");
        exit(1);
    }
}

#define DEFINE_WALK(name)                                               \
    __attribute__((noinline)) static void name(int level, unsigned long c) \
    {                                                                   \
        if (level == 0) {                                               \
            leaf(c);                                                    \
        } else {                                                        \
            switch ((c >> (3 * (level - 1))) & 7) {                     \
            case 0: walk0(level - 1, c); break;                         \
            case 1: walk1(level - 1, c); break;                         \
            case 2: walk2(level - 1, c); break;                         \
            case 3: walk3(level - 1, c); break;                         \
            case 4: walk4(level - 1, c); break;                         \
            case 5: walk5(level - 1, c); break;                         \
            case 6: walk6(level - 1, c); break;                         \
            default: walk7(level - 1, c); break;                        \
            }                                                           \
        }                                                               \
        __asm__ volatile("" ::: "memory"); /* keep the frame: no tail calls */ \
    }

DEFINE_WALK(walk0)
DEFINE_WALK(walk1)
DEFINE_WALK(walk2)
DEFINE_WALK(walk3)
DEFINE_WALK(walk4)
DEFINE_WALK(walk5)
DEFINE_WALK(walk6)
DEFINE_WALK(walk7)

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: gen_stacks N FILE\n");
        return 2;
    }
    unsigned long n = strtoul(argv[1], NULL, 10);
    if (n < 1 || n > 10000000) {
        fprintf(stderr, "gen_stacks: N must be 1..10000000\n");
        return 2;
    }
    int depth = 1;
    while ((1UL << (3 * depth)) < n)
        depth++;
    kept = calloc(n, sizeof *kept);
    for (unsigned long c = 0; c < n; c++)
        walk0(depth, c);
    const char *path = argv[2];
    int rc = mallctl("prof.dump", NULL, NULL, &path, sizeof path);
    if (rc) {
        fprintf(stderr, "gen_stacks: prof.dump failed (%s); run with "
                "MALLOC_CONF=prof:true,prof_active:true,lg_prof_sample:0\n", strerror(rc));
        return 1;
    }
    return 0;
}
