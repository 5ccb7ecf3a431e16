/* analysis_symbolize.c - the engine's real resolver: the session's
 * symbolizer, looking addresses up in the profile's own memory map (so a
 * dump of a process with another ASLR layout still resolves). */
#include "lib/analysis.h"

int analysis_symbolizer_resolve(void *cookie, const struct profile *p,
                                uint64_t addr, enum symbolize_detail detail,
                                struct symbol_frame *frames, int max)
{
    return symbolizer_lookup(cookie, &p->maps, addr, detail, frames, max);
}
