/* arch_x86_64.c - STUB: x86-64 register handling (being written). */
typedef int arch_x86_64_placeholder;
