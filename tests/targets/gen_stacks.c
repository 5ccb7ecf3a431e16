/* gen_stacks.c - bench/gen_stacks.c built as a test target: it writes the
 * big heap profile (one stack per call path) that t_cli_prompt interrupts
 * an analysis of. */
#include "../../bench/gen_stacks.c"
