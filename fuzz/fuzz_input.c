/* fuzz_input.c - libFuzzer harness for the parsers of what a user or a
 * process hands memprof besides profiles: command lines (command_split),
 * mallctl values and type names (lib/mallctl), and /proc/PID/status text
 * (attach/preflight).  The first byte picks the parser. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "attach/preflight.h"
#include "allocator/jemalloc/mallctl.h"
#include "repl/commands.h"

static void fuzz_split(const char *s)
{
    char **argv;
    struct mp_error err;
    int argc = command_split(s, &argv, &err);
    if (argc < 0)
        return;
    size_t total = 0;
    for (int i = 0; i < argc; i++)
        total += strlen(argv[i]);
    if (argv[argc] != NULL || total > strlen(s))
        abort();   /* words can only shrink the line */
    free(argv);
}

static void fuzz_mallctl(const char *s)
{
    struct mp_error err;
    enum mallctl_type t;
    char buf[8], out[64];
    size_t len;
    const struct mallctl_info *info = mallctl_lookup(s);
    struct mallctl_shape read = {true, 8, false, 0, NULL}, write = {false, 0, true, 8, s};
    mallctl_check_call(s, info, &read, &err);
    mallctl_check_call(s, info, &write, &err);
    mallctl_type_parse(s, &t, &err);
    for (t = MALLCTL_BOOL; t <= MALLCTL_VOID; t++)
        if (mallctl_value_parse(t, s, buf, &len, &err) == 0) {
            if (len != mallctl_type_size(t))
                abort();
            mallctl_value_format(t, buf, out, sizeof out);
        }
}

static void fuzz_status(const char *s, size_t len)
{
    struct proc_status st;
    struct mp_error err;
    if (preflight_parse_status(s, len, &st, &err) == 0 &&
        memchr(st.name, '\0', sizeof st.name) == NULL)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    char *s = malloc(size);
    if (!s)
        return 0;
    memcpy(s, data + 1, size - 1);
    s[size - 1] = '\0';
    switch (data[0] % 3) {
    case 0: fuzz_split(s); break;
    case 1: fuzz_mallctl(s); break;
    case 2: fuzz_status(s, size - 1); break;
    }
    free(s);
    return 0;
}
