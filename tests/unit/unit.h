/* unit.h - the shape of a unit test program: each tests/unit/test_*.c
 * defines one Check suite and ends with UNIT_MAIN(its_suite). */
#ifndef MEMPROF_UNIT_H
#define MEMPROF_UNIT_H

#include <check.h>
#include <stdlib.h>

#define UNIT_MAIN(suite_fn)                                           \
    int main(void)                                                    \
    {                                                                 \
        SRunner *sr = srunner_create(suite_fn());                     \
        srunner_run_all(sr, CK_NORMAL);                               \
        int failed = srunner_ntests_failed(sr);                       \
        srunner_free(sr);                                             \
        return failed ? EXIT_FAILURE : EXIT_SUCCESS;                  \
    }

#endif
