/* data_only.c - a shared library with data and no function of its own,
 * as Debian's libicudata (ICU's tables): its only code is the C runtime's
 * init/fini stubs, and no stack passes through it (t_sampler_cfi_note). */
const char data_only_table[64 << 10] = "data only: no stack passes through this library";
