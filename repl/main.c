/* main.c - placeholder until the front end lands. */
#include <stdio.h>
int main(void) { fprintf(stderr, "memprof: not built yet\n"); return 2; }
