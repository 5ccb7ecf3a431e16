# libFuzzer harnesses (clang from Debian): make fuzz [FUZZ_SECONDS=60]
#
# Each harness compiles only the lib/ sources it needs, with the fuzzer,
# ASan and UBSan.  It starts from the small seed corpus committed under
# fuzz/corpus/NAME/ and keeps what it learns in fuzz/corpus-work/NAME/
# (git-ignored), so later runs go on where earlier ones stopped.  Crashes
# land in fuzz/corpus-work/ as crash-* files; each becomes a unit test.

FUZZ_SECONDS ?= 60
FUZZ_DIR      = $(BUILD)/fuzz
FUZZ_CFLAGS   = -std=gnu11 -D_GNU_SOURCE -I. -g -O1 -Wall -Wextra -Werror \
                -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined
FUZZ_NAMES    = profile maps input procmem cgroup cgroup_memory_dir glibc_info cfi_rows serve_query web_config aranges abbrev_end \
                elf_object dwarf_sections seccomp_bpf jemalloc_version perf_record glibc_heaps
FUZZ_BIN      = $(FUZZ_NAMES:%=$(FUZZ_DIR)/fuzz_%)

FUZZ_SRC_profile = fuzz/fuzz_profile.c lib/profile/profile.c lib/profile/addr_tokens.c lib/profile/addr_line.c lib/base/u64map.c \
                   lib/proc/maps.c lib/base/error.c
FUZZ_SRC_maps    = fuzz/fuzz_maps.c lib/proc/maps.c lib/base/error.c
FUZZ_SRC_procmem = fuzz/fuzz_procmem.c lib/proc/procmem.c lib/proc/rss_account.c lib/proc/smaps_walk.c lib/proc/environ.c \
                   lib/proc/maps.c lib/base/error.c
FUZZ_SRC_cgroup  = fuzz/fuzz_cgroup.c lib/proc/cgroup_file.c lib/proc/container_path.c \
                   lib/proc/procmem.c lib/proc/maps.c lib/base/error.c
FUZZ_SRC_cgroup_memory_dir = fuzz/fuzz_cgroup_memory_dir.c lib/proc/cgroup_memory_dir.c lib/proc/cgroup_file.c lib/proc/procmem.c \
                   lib/proc/maps.c lib/base/error.c
FUZZ_SRC_glibc_info = fuzz/fuzz_glibc_info.c lib/mallinfo/glibc_info.c lib/base/error.c
FUZZ_SRC_glibc_heaps = fuzz/fuzz_glibc_heaps.c lib/mallinfo/glibc_heaps.c lib/mallinfo/glibc_chunk.c \
                   lib/proc/smaps_aligned.c \
                   lib/proc/rss_account.c lib/proc/smaps_walk.c lib/proc/procmem.c lib/proc/maps.c lib/base/error.c
FUZZ_SRC_input   = fuzz/fuzz_input.c repl/cmdline.c allocator/jemalloc/mallctl.c allocator/jemalloc/mallctl_names.c attach/preflight.c attach/threads.c attach/arch/x86_64.c lib/base/error.c
FUZZ_SRC_jemalloc_version = fuzz/fuzz_jemalloc_version.c allocator/jemalloc/version.c
FUZZ_SRC_cfi_rows = fuzz/fuzz_cfi_rows.c lib/elf/cfi_rows.c lib/base/error.c
FUZZ_SRC_seccomp_bpf = fuzz/fuzz_seccomp_bpf.c lib/seccomp/seccomp_bpf.c
FUZZ_SRC_perf_record = fuzz/fuzz_perf_record.c lib/proc/perf_record.c lib/elf/cfi_walk.c lib/elf/cfi_rows.c lib/base/error.c
FUZZ_SRC_aranges = fuzz/fuzz_aranges.c lib/symbolize/aranges.c
FUZZ_SRC_abbrev_end = fuzz/fuzz_abbrev_end.c lib/symbolize/abbrev_end.c
FUZZ_SRC_dwarf_sections = fuzz/fuzz_dwarf_sections.c lib/symbolize/dwarf_sections.c lib/symbolize/abbrev_end.c
FUZZ_SRC_elf_object = fuzz/fuzz_elf_object.c lib/elf/elf_object.c lib/base/safe_open.c lib/base/error.c
FUZZ_SRC_serve_query = fuzz/fuzz_serve_query.c serve/query.c serve/targets.c lib/base/text_escape.c \
                       lib/base/file_read.c lib/proc/procmem.c lib/proc/maps.c lib/base/error.c \
                       session/process_container.c lib/proc/cgroup_file.c lib/proc/container_path.c
FUZZ_SRC_web_config = fuzz/fuzz_web_config.c serve/web_config.c lib/base/text_escape.c \
                      lib/base/file_read.c lib/base/error.c
# Libraries a harness links besides its sources (libdw and libelf are not
# instrumented: crashes in them still show, coverage does not).
FUZZ_LIBS_cfi_rows = -ldw -lelf
FUZZ_LIBS_perf_record = -ldw -lelf
FUZZ_LIBS_serve_query = -ljson-c
FUZZ_LIBS_elf_object = -lelf
FUZZ_LIBS_dwarf_sections = -lelf -lz -ldeflate
FUZZ_LIBS_web_config = -lyaml
FUZZ_OPT_profile = -dict=fuzz/profile.dict
FUZZ_OPT_glibc_info = -dict=fuzz/glibc_info.dict

.PHONY: fuzz fuzz-build
fuzz-build: $(FUZZ_BIN)

$(FUZZ_DIR)/fuzz_%: fuzz/fuzz_%.c lib/profile/profile.c lib/profile/profile.h lib/profile/addr_line.c lib/profile/addr_line.h lib/profile/addr_tokens.c lib/profile/addr_tokens.h lib/proc/maps.c lib/proc/maps.h lib/base/error.c lib/base/error.h lib/proc/procmem.c lib/proc/procmem.h lib/proc/environ.c lib/proc/environ.h \
                    lib/mallinfo/glibc_info.c lib/mallinfo/glibc_info.h \
                    lib/elf/cfi_rows.c lib/elf/cfi_rows.h lib/elf/elf_object.c lib/elf/elf_object.h lib/symbolize/aranges.c lib/symbolize/aranges.h lib/symbolize/abbrev_end.c lib/symbolize/abbrev_end.h lib/symbolize/dwarf_sections.c lib/symbolize/dwarf_sections.h serve/query.c serve/query.h serve/targets.c \
                    serve/web_config.c serve/web_config.h lib/seccomp/seccomp_bpf.c lib/seccomp/seccomp_bpf.h \
                    lib/proc/cgroup_file.c lib/proc/cgroup_file.h lib/proc/container_path.c \
                    lib/proc/container_path.h session/process_container.c session/process_container.h \
                    lib/proc/cgroup_memory_dir.c lib/proc/cgroup_memory_dir.h lib/proc/rss_account.c lib/proc/rss_account.h lib/proc/smaps_walk.c lib/proc/smaps_walk.h \
                    lib/proc/smaps_aligned.c lib/proc/smaps_aligned.h lib/mallinfo/glibc_heaps.c lib/mallinfo/glibc_heaps.h \
                    lib/mallinfo/glibc_chunk.c lib/mallinfo/glibc_chunk.h \
                    repl/cmdline.c allocator/jemalloc/mallctl.c allocator/jemalloc/mallctl_names.c attach/preflight.c attach/threads.c attach/arch/x86_64.c \
                    allocator/jemalloc/version.c allocator/jemalloc/version.h \
                    lib/proc/perf_record.c lib/proc/perf_record.h lib/elf/cfi_walk.c lib/elf/cfi_walk.h
	@mkdir -p $(dir $@)
	$(CLANG) $(FUZZ_CFLAGS) -o $@ $(FUZZ_SRC_$*) $(FUZZ_LIBS_$*) -lm

# One run per harness (they may run side by side under make -j).  Not
# .PHONY: make does not apply pattern rules to phony targets.
fuzz: $(FUZZ_NAMES:%=fuzz-run-%)

fuzz-run-%: $(FUZZ_DIR)/fuzz_%
	@mkdir -p fuzz/corpus-work/$*
	@echo "fuzzing $* for $(FUZZ_SECONDS) s"
	$< -max_total_time=$(FUZZ_SECONDS) -max_len=65536 -timeout=10 \
	  -artifact_prefix=fuzz/corpus-work/$*- $(FUZZ_OPT_$*) \
	  fuzz/corpus-work/$* fuzz/corpus/$*
