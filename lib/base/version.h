/* version.h - memprof's version, as every front end prints it. */
#ifndef MEMPROF_VERSION_H
#define MEMPROF_VERSION_H

#define MEMPROF_VERSION "0.1.0"

#endif
