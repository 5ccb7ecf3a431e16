/* memory_arenas.h - the heap-by-arena part of the 'memory' command's
 * answer (memory_arenas.c): its lines; the JSON is heap_arenas_json's. */
#ifndef MEMPROF_MEMORY_ARENAS_H
#define MEMPROF_MEMORY_ARENAS_H

#include <stdbool.h>
#include <stdio.h>

#include "session/heap_arenas.h"

/* all: every row (memory --arenas), else the largest few and the rest in
 * one line. */
void memory_arenas_text(FILE *o, const struct heap_arenas *a, const char *who, bool all);

#endif
