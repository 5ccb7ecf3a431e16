/* unit.h - the shape of a unit test program: each tests/unit/test_*.c
 * defines one Check suite and ends with UNIT_MAIN(its_suite). */
#ifndef MEMPROF_UNIT_H
#define MEMPROF_UNIT_H

#include <check.h>
#include <stdlib.h>

/* Check's per-test time limits (4 s by default, tcase_set_timeout's) are
 * guesses at a machine's speed: built with ASan they are stretched 4 times,
 * as the integration tests' deadlines are ($SLOW), unless
 * CK_TIMEOUT_MULTIPLIER says otherwise.  Check reads it as the suite's
 * test cases are made, so it is set before. */
#if defined(__SANITIZE_ADDRESS__)
#define UNIT_SLOW() setenv("CK_TIMEOUT_MULTIPLIER", "4", 0)
#else
#define UNIT_SLOW() ((void)0)
#endif

#define UNIT_MAIN(suite_fn)                                           \
    int main(void)                                                    \
    {                                                                 \
        UNIT_SLOW();                                                  \
        SRunner *sr = srunner_create(suite_fn());                     \
        srunner_run_all(sr, CK_NORMAL);                               \
        int failed = srunner_ntests_failed(sr);                       \
        srunner_free(sr);                                             \
        return failed ? EXIT_FAILURE : EXIT_SUCCESS;                  \
    }

#endif
