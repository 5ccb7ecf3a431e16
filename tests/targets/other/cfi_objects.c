/* cfi_objects.c - a glibc malloc program linked with two libraries of
 * tests/targets/lib/: libdata_only.so (data, no code of its own) and
 * libno_cfi.so (code, no call-frame information), for the note memprof's
 * sampler gives about objects whose stacks it cannot walk through
 * (t_sampler_cfi_note).  Prints "ready" and idles. */
#include <unistd.h>

#include "idle.h"

extern const char data_only_table[];
size_t no_cfi_keep(size_t n);

int main(void)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    REQUIRE(no_cfi_keep(4) == 4, "no_cfi_keep failed");
    REQUIRE(data_only_table[0] == 'd', "data_only_table is not its own");
    printf("ready\n");
    idle_forever();
}
