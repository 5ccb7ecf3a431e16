# Test target programs: real processes for memprof to attach to.  They are
# built without sanitizers (they run jemalloc, not ASan's allocator).
#
# Every tests/targets/NAME.c becomes $(TARGET_DIR)/NAME linked with the
# shared libjemalloc, unless a rule below says otherwise.

TARGET_DIR    = $(BUILD)/targets
# Binaries built from a source of another name (see the rules below): the
# plain program again with glibc malloc only, and with jemalloc linked in
# statically under a renamed prefix (PIE and not).
# The programs of other allocators in tests/targets/other/ (outside the
# wildcard; rules at the end).
# The Rust program (tests/targets/rust) in five builds: see build.sh.
RUST_TARGETS  = $(TARGET_DIR)/rustprof $(TARGET_DIR)/rustprof_v0 $(TARGET_DIR)/rustprof_O0 \
                $(TARGET_DIR)/rustprof_g $(TARGET_DIR)/rustprof_noprof
OTHER_TARGETS = $(TARGET_DIR)/glibc_fragmented $(TARGET_DIR)/glibc_parked \
                $(TARGET_DIR)/tcmalloc_freed $(TARGET_DIR)/tcmalloc_minimal_freed \
                $(TARGET_DIR)/mimalloc_idle $(TARGET_DIR)/glibc_live $(TARGET_DIR)/glibc_arenas_freed \
                $(TARGET_DIR)/glibc_churn $(TARGET_DIR)/glibc_events $(TARGET_DIR)/tcmalloc_live \
                $(TARGET_DIR)/glibc_mappings \
                $(TARGET_DIR)/no_libc $(TARGET_DIR)/cfi_objects $(TARGET_DIR)/glibc_arenas
TARGET_EXTRA  = $(TARGET_DIR)/nojemalloc $(TARGET_DIR)/two_builds_b $(TARGET_DIR)/static_rjem \
                $(TARGET_DIR)/static_nopie $(TARGET_DIR)/unsafe_ctor.so $(TARGET_DIR)/late_park.so \
                $(TARGET_DIR)/bump_malloc.so \
                $(TARGET_DIR)/sampler_plugin.so \
                $(TARGET_DIR)/static_glibc \
                $(OTHER_TARGETS) $(RUST_TARGETS)
TARGET_CFLAGS = -std=gnu11 -D_GNU_SOURCE -O1 -g -fno-omit-frame-pointer -Wall -Wextra -Werror -pthread
TARGET_SRC    = $(sort $(wildcard tests/targets/*.c))
TARGET_BIN    = $(TARGET_SRC:tests/targets/%.c=$(TARGET_DIR)/%) $(TARGET_EXTRA)

.PHONY: targets
targets: $(TARGET_BIN)

$(TARGET_DIR)/%: tests/targets/%.c $(wildcard tests/targets/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(TARGET_CFLAGS) -o $@ $< $(JEMALLOC_LIBS) -lm

# --- targets that are not "a program linked with -ljemalloc" ---------------


# glibc malloc only (for LD_PRELOAD tests and the no-jemalloc error).
$(TARGET_DIR)/nojemalloc: tests/targets/plain.c $(wildcard tests/targets/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(TARGET_CFLAGS) -o $@ $< -lm

# The other build of two_builds: other code where its sites are.
$(TARGET_DIR)/two_builds_b: tests/targets/two_builds.c $(wildcard tests/targets/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(TARGET_CFLAGS) -DOTHER_BUILD -o $@ $< $(JEMALLOC_LIBS) -lm

# A static program: glibc malloc linked into the executable, with only the
# libc functions the program uses (t_allocator_named).
$(TARGET_DIR)/static_glibc: tests/targets/plain.c $(wildcard tests/targets/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(TARGET_CFLAGS) -static -o $@ $< -lm

# jemalloc linked in statically with its mallctl renamed to _rjem_mallctl,
# as Rust's tikv-jemallocator does: the whole archive is merged into one
# relocatable so the rename reaches every reference, and nothing exports it.
JEMALLOC_PIC = $(shell $(CC) -print-file-name=libjemalloc_pic.a)
RJEM_RENAMES = mallctl mallctlnametomib mallctlbymib malloc_stats_print
$(TARGET_DIR)/jemalloc_rjem.o: $(JEMALLOC_PIC)
	@mkdir -p $(dir $@)
	ld -r --whole-archive $< -o $@.tmp
	objcopy $(foreach s,$(RJEM_RENAMES),--redefine-sym $(s)=_rjem_$(s)) $@.tmp $@
	rm -f $@.tmp

STATIC_LIBS = -lstdc++ -lpthread -ldl -lm
$(TARGET_DIR)/static_rjem: tests/targets/plain.c $(TARGET_DIR)/jemalloc_rjem.o $(wildcard tests/targets/*.h)
	$(CC) $(TARGET_CFLAGS) -pie -fPIE -o $@ $< $(TARGET_DIR)/jemalloc_rjem.o $(STATIC_LIBS)
	@! nm -D $@ | grep -q mallctl || { echo "$@: mallctl leaked into .dynsym"; rm -f $@; exit 1; }

$(TARGET_DIR)/static_nopie: tests/targets/plain.c $(TARGET_DIR)/jemalloc_rjem.o $(wildcard tests/targets/*.h)
	$(CC) $(TARGET_CFLAGS) -no-pie -fno-PIE -o $@ $< $(TARGET_DIR)/jemalloc_rjem.o $(STATIC_LIBS)
	@! nm -D $@ | grep -q mallctl || { echo "$@: mallctl leaked into .dynsym"; rm -f $@; exit 1; }

# unsafe_frames exports unsafe_frames_block (-rdynamic) for the constructor
# of unsafe_ctor.so, which it dlopen()s.
$(TARGET_DIR)/unsafe_frames: tests/targets/unsafe_frames.c $(wildcard tests/targets/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(TARGET_CFLAGS) -rdynamic -o $@ $< $(JEMALLOC_LIBS) -ldl -lm

# inline_sites needs -O2 for its always_inline helpers to be inlined the
# way optimised servers are (later flags win over TARGET_CFLAGS' -O1).
$(TARGET_DIR)/inline_sites: tests/targets/inline_sites.c $(wildcard tests/targets/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(TARGET_CFLAGS) -O2 -o $@ $< $(JEMALLOC_LIBS) -lm

# An allocator memprof does not know, for LD_PRELOAD (t_allocator_unknown).
$(TARGET_DIR)/bump_malloc.so: tests/targets/lib/bump_malloc.c
	@mkdir -p $(dir $@)
	$(CC) $(TARGET_CFLAGS) -shared -fPIC -o $@ $<

$(TARGET_DIR)/unsafe_ctor.so: tests/targets/lib/unsafe_ctor.c tests/targets/unsafe_frames.h
	@mkdir -p $(dir $@)
	$(CC) $(TARGET_CFLAGS) -shared -fPIC -o $@ $<

# Without frame pointers: only its own unwind tables step past its frame.
$(TARGET_DIR)/late_park.so: tests/targets/lib/late_park.c tests/targets/unsafe_frames.h
	@mkdir -p $(dir $@)
	$(CC) $(TARGET_CFLAGS) -O2 -fomit-frame-pointer -shared -fPIC -o $@ $<

# The Rust target (tests/targets/rust): jemalloc-sys's static _rjem_ copy
# with profiling, in legacy and v0 symbol mangling, unoptimised and with
# full debug info, and without profiling; one run of build.sh makes all.
RUST_SRC = $(wildcard tests/targets/rust/src/*.rs) tests/targets/rust/Cargo.toml \
           tests/targets/rust/Cargo.lock tests/targets/rust/.cargo/config.toml \
           tests/targets/rust/build.sh
$(RUST_TARGETS) &: $(RUST_SRC)
	@mkdir -p $(TARGET_DIR)
	@mkdir -p build
	tests/targets/rust/build.sh $(TARGET_DIR) build/rust-cargo

# Allocators other than jemalloc (tests/targets/other/, none links it):
# glibc malloc alone, gperftools tcmalloc full and minimal from one source
# (which says which it runs), mimalloc.  -fno-builtin-malloc and friends, as
# gperftools asks of programs linked with it: no call is folded away.
OTHER_DEPS   = $(wildcard tests/targets/other/*.h) tests/targets/helper_thread.h
OTHER_CFLAGS = $(TARGET_CFLAGS) -fno-builtin-malloc -fno-builtin-calloc \
               -fno-builtin-realloc -fno-builtin-free
$(TARGET_DIR)/glibc_fragmented $(TARGET_DIR)/glibc_parked: $(TARGET_DIR)/%: tests/targets/other/%.c $(OTHER_DEPS)
	@mkdir -p $(dir $@)
	$(CC) $(OTHER_CFLAGS) -o $@ $<

# many_arenas with glibc malloc alone: a thread arena per thread
# (t_memory_arenas).
$(TARGET_DIR)/glibc_arenas: tests/targets/many_arenas.c $(wildcard tests/targets/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(OTHER_CFLAGS) -o $@ $<

$(TARGET_DIR)/tcmalloc_freed $(TARGET_DIR)/tcmalloc_minimal_freed: $(TARGET_DIR)/%_freed: tests/targets/other/tcmalloc_freed.c $(OTHER_DEPS)
	@mkdir -p $(dir $@)
	$(CC) $(OTHER_CFLAGS) -DTCMALLOC_NAME='"$*"' -o $@ $< -l$*

$(TARGET_DIR)/mimalloc_idle: tests/targets/other/mimalloc_idle.c $(OTHER_DEPS)
	@mkdir -p $(dir $@)
	$(CC) $(OTHER_CFLAGS) -o $@ $< -lmimalloc

# The sampler's known heap (t_sampler_*): -O2 without frame pointers, as
# Debian builds its servers, so stacks need the call-frame information.
# Eight arenas each holding 16 MiB free (t_memory_diagnose).
$(TARGET_DIR)/glibc_arenas_freed: tests/targets/other/glibc_arenas_freed.c $(OTHER_DEPS)
	@mkdir -p $(dir $@)
	$(CC) $(OTHER_CFLAGS) -o $@ $<

$(TARGET_DIR)/glibc_live: tests/targets/other/glibc_live.c $(OTHER_DEPS)
	@mkdir -p $(dir $@)
	$(CC) $(OTHER_CFLAGS) -O2 -fomit-frame-pointer -o $@ $<

# The sampler's mappings (t_sampler_mappings): the same build, memory
# mapped by mmap and mremap per function.
$(TARGET_DIR)/glibc_mappings: tests/targets/other/glibc_mappings.c $(OTHER_DEPS)
	@mkdir -p $(dir $@)
	$(CC) $(OTHER_CFLAGS) -O2 -fomit-frame-pointer -o $@ $<

# The sampler's lifecycle and SIGKILL load (t_sampler_lifecycle,
# t_sampler_sigkill): threads allocating and freeing without pause.
$(TARGET_DIR)/glibc_churn: tests/targets/other/glibc_churn.c $(OTHER_DEPS)
	@mkdir -p $(dir $@)
	$(CC) $(OTHER_CFLAGS) -o $@ $<

# fork, exec, threads and dlopen under the sampler (t_sampler_fork_exec).
$(TARGET_DIR)/glibc_events: tests/targets/other/glibc_events.c $(OTHER_DEPS)
	@mkdir -p $(dir $@)
	$(CC) $(OTHER_CFLAGS) -o $@ $<

# No C library at all, yet a loader (x86_64 system calls by hand).
$(TARGET_DIR)/no_libc: tests/targets/other/no_libc.c
	@mkdir -p $(dir $@)
	$(CC) -O1 -fPIE -pie -nostdlib -Wl,-z,now -o $@ $<

$(TARGET_DIR)/sampler_plugin.so: tests/targets/lib/sampler_plugin.c
	@mkdir -p $(dir $@)
	$(CC) $(OTHER_CFLAGS) -shared -fPIC -o $@ $<

# A data-only library and one with code but no call-frame information,
# and a program linked with both (t_sampler_cfi_note).  libno_cfi.so: no
# unwind tables compiled, none generated by the linker (its .eh_frame is
# the terminator alone).
$(TARGET_DIR)/libdata_only.so: tests/targets/lib/data_only.c
	@mkdir -p $(dir $@)
	$(CC) $(TARGET_CFLAGS) -shared -fPIC -Wl,-soname,libdata_only.so -o $@ $<

$(TARGET_DIR)/libno_cfi.so: tests/targets/lib/no_cfi.c
	@mkdir -p $(dir $@)
	$(CC) $(OTHER_CFLAGS) -O2 -fomit-frame-pointer -fno-asynchronous-unwind-tables \
	    -fno-unwind-tables -shared -fPIC -Wl,-soname,libno_cfi.so \
	    -Wl,--no-ld-generated-unwind-info -o $@ $<

$(TARGET_DIR)/cfi_objects: tests/targets/other/cfi_objects.c $(OTHER_DEPS) \
                           $(TARGET_DIR)/libdata_only.so $(TARGET_DIR)/libno_cfi.so
	@mkdir -p $(dir $@)
	$(CC) $(OTHER_CFLAGS) -o $@ $< -L$(TARGET_DIR) -ldata_only -lno_cfi \
	    -Wl,-rpath,'$$ORIGIN'

# The known heap again with gperftools tcmalloc serving malloc
# (t_sampler_servers: the sampler stands in for tcmalloc's malloc).
$(TARGET_DIR)/tcmalloc_live: tests/targets/other/glibc_live.c $(OTHER_DEPS)
	@mkdir -p $(dir $@)
	$(CC) $(OTHER_CFLAGS) -O2 -fomit-frame-pointer -o $@ $< -ltcmalloc

# A glibc-malloc program under a filter libseccomp builds, as container
# runtimes build theirs (t_sampler_seccomp).
$(TARGET_DIR)/seccomp_profile: tests/targets/seccomp_profile.c $(wildcard tests/targets/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(TARGET_CFLAGS) -o $@ $< -lseccomp
