# Small programs and ELF files that unit tests read (not run as targets).
# Unit tests find them in $FIXTURES.  Built without sanitizers: they are
# data for the tests, and two of them run once here to record their own
# addresses and maps (prog.cpp explains what they write).
#
#   prog_pie, prog_nopie   the same C++ program as PIE and non-PIE, -g
#   prog_other             a different build (other build-id) for mismatches
#   prog_noid              built without a build-id: debuglink CRC checks
#   libfixture.so          the shared library they use (rpath $ORIGIN)
#   libcfichain.so         a chain of calls built -O2 -fomit-frame-pointer
#                          (test_cfi_rows walks it with unwind rows)
#   libnocfi.so            a shared object without .eh_frame
#   manyunits.debug        the DWARF of four units of 1500 functions each
#                          (about 100 KB of .debug_info a unit), as built
#                          and zlib-compressed (zmanyunits.debug)
#   *.out                  what each program reported about itself
#   stripped/, dotdebug/, globaldebug/, buildid/, mismatch/, noid/, noid_bad/,
#   zdebug/, zbadheader/
#                          stripped copies whose symbols live in separate
#                          debug files found by debuglink or build-id
#   debugroot/, baddebug/  debug directories (.build-id/ and path-mirrored)
FIXTURE_DIR = $(BUILD)/fixtures
FX          = $(FIXTURE_DIR)
FX_SRC      = tests/unit/fixtures
FX_ABS      = $(abspath $(FX))
FX_CFLAGS   = -g -O2 -Wl,--build-id
FX_RPATH    = -Wl,-rpath,'$$ORIGIN'

FIXTURE_FILES = $(FX)/libfixture.so $(FX)/prog_pie.out $(FX)/prog_nopie.out \
	$(FX)/prog_other $(FX)/prog_noid.out \
	$(FX)/stripped/prog_pie $(FX)/dotdebug/prog_pie $(FX)/globaldebug/prog_pie \
	$(FX)/buildid/prog_pie $(FX)/mismatch/prog_pie $(FX)/noid/prog_noid \
	$(FX)/noid_bad/prog_noid $(FX)/zdebug/prog_pie $(FX)/zbadheader/prog_pie $(FX)/debugroot.stamp $(FX)/baddebug.stamp \
	$(FX)/libcfichain.so $(FX)/libnocfi.so $(FX)/zmanyunits.debug

.PHONY: fixtures
fixtures: $(FIXTURE_FILES)

$(FX)/libfixture.so: $(FX_SRC)/fixlib.c $(FX_SRC)/fixlib.map tests/unit/fixtures.mk
	@mkdir -p $(dir $@)
	gcc $(FX_CFLAGS) -fPIC -shared -Wl,--version-script=$(FX_SRC)/fixlib.map -o $@ $<

# As Debian builds its libraries: no frame pointers.
$(FX)/libcfichain.so: $(FX_SRC)/cfi_chain.c tests/unit/fixtures.mk
	@mkdir -p $(dir $@)
	gcc -g -O2 -fomit-frame-pointer -fPIC -shared -o $@ $<

# No start files (they bring .eh_frame), no unwind tables, and the empty
# .eh_frame the linker still makes removed (in the text segment: no empty
# segment is left).
$(FX)/libnocfi.so: $(FX_SRC)/nocfi.c tests/unit/fixtures.mk
	@mkdir -p $(dir $@)
	gcc -O2 -fPIC -shared -nostdlib -fno-asynchronous-unwind-tables -fno-unwind-tables \
	  -Wl,--no-eh-frame-hdr -Wl,-z,noseparate-code -o $@ $<
	objcopy --remove-section .eh_frame $@

# Each unit generated: functions f<unit>_<n> returning a constant.
$(FX)/manyunits.debug: tests/unit/fixtures.mk
	@mkdir -p $(FX)/manyunits
	for u in 1 2 3 4; do \
	  awk -v u=$$u 'BEGIN { for (i = 0; i < 1500; i++) printf "int f%d_%d(int x) { return x + %d; }\n", u, i, i }' \
	    >$(FX)/manyunits/unit$$u.c; done
	gcc -g -O0 -fPIC -shared -o $(FX)/manyunits/libmanyunits.so $(FX)/manyunits/unit*.c
	objcopy --only-keep-debug $(FX)/manyunits/libmanyunits.so $@

$(FX)/zmanyunits.debug: $(FX)/manyunits.debug
	objcopy --compress-debug-sections=zlib $< $@

$(FX)/prog_pie: $(FX_SRC)/prog.cpp $(FX)/libfixture.so
	g++ $(FX_CFLAGS) -DFIXTURE_VARIANT=1 -fPIE -pie $(FX_RPATH) -o $@ $< -L$(FX) -lfixture

$(FX)/prog_nopie: $(FX_SRC)/prog.cpp $(FX)/libfixture.so
	g++ $(FX_CFLAGS) -DFIXTURE_VARIANT=1 -fno-pie -no-pie $(FX_RPATH) -o $@ $< -L$(FX) -lfixture

$(FX)/prog_other: $(FX_SRC)/prog.cpp $(FX)/libfixture.so
	g++ $(FX_CFLAGS) -DFIXTURE_VARIANT=2 -fPIE -pie $(FX_RPATH) -o $@ $< -L$(FX) -lfixture

$(FX)/prog_noid: $(FX_SRC)/prog.cpp $(FX)/libfixture.so
	g++ -g -O2 -Wl,--build-id=none -DFIXTURE_VARIANT=1 -fPIE -pie $(FX_RPATH) -o $@ $< -L$(FX) -lfixture

$(FX)/%.out: $(FX)/%
	$< $@

$(FX)/%.debug: $(FX)/%
	objcopy --only-keep-debug $< $@

# Stripped copy + debug file next to it, linked by .gnu_debuglink.
$(FX)/stripped/prog_pie: $(FX)/prog_pie $(FX)/prog_pie.debug
	@mkdir -p $(dir $@)
	cp $(FX)/prog_pie.debug $(dir $@)prog_pie.debug
	objcopy --strip-all --add-gnu-debuglink=$(dir $@)prog_pie.debug $< $@

# A debug file whose DWARF is compressed (zlib), as Debian's -dbg
# packages ship theirs: read a unit at a time (dwarf_sections.c).
$(FX)/zdebug/prog_pie: $(FX)/prog_pie $(FX)/prog_pie.debug
	@mkdir -p $(dir $@)
	objcopy --compress-debug-sections=zlib $(FX)/prog_pie.debug $(dir $@)prog_pie.debug
	objcopy --strip-all --add-gnu-debuglink=$(dir $@)prog_pie.debug $< $@

# zdebug's debug file with its .debug_info's zlib header spoiled (the
# byte after the 24-byte ELF64 compression header): a section that cannot
# be inflated lazily, whose names still come from the symbol table.
$(FX)/zbadheader/prog_pie: $(FX)/zdebug/prog_pie
	@mkdir -p $(dir $@)
	cp $(FX)/zdebug/prog_pie.debug $(dir $@)prog_pie.debug
	off=$$(readelf -SW $(dir $@)prog_pie.debug | \
	       awk '{ for (i = 1; i < NF; i++) if ($$i == ".debug_info") print $$(i + 3) }'); \
	  test -n "$$off" && printf '\000' | \
	  dd of=$(dir $@)prog_pie.debug bs=1 seek=$$((0x$$off + 24)) conv=notrunc status=none
	objcopy --strip-all --add-gnu-debuglink=$(dir $@)prog_pie.debug $(FX)/prog_pie $@

# The debug file in a .debug/ subdirectory.
$(FX)/dotdebug/prog_pie: $(FX)/prog_pie $(FX)/prog_pie.debug
	@mkdir -p $(dir $@).debug
	cp $(FX)/prog_pie.debug $(dir $@).debug/prog_pie.debug
	objcopy --strip-all --add-gnu-debuglink=$(FX)/prog_pie.debug $< $@

# The debug file under <debug_dir>/<object's directory>/ (debugroot.stamp).
$(FX)/globaldebug/prog_pie: $(FX)/prog_pie $(FX)/prog_pie.debug
	@mkdir -p $(dir $@)
	objcopy --strip-all --add-gnu-debuglink=$(FX)/prog_pie.debug $< $@

# Stripped with no debuglink: only the build-id leads to its debug file.
$(FX)/buildid/prog_pie: $(FX)/prog_pie
	@mkdir -p $(dir $@)
	objcopy --strip-all $< $@

# A debuglink whose target is another build's debug file.
$(FX)/mismatch/prog_pie: $(FX)/prog_pie $(FX)/prog_pie.debug $(FX)/prog_other.debug
	@mkdir -p $(dir $@)
	objcopy --strip-all --add-gnu-debuglink=$(FX)/prog_pie.debug $< $@
	cp $(FX)/prog_other.debug $(dir $@)prog_pie.debug

# No build-ids: the debuglink CRC decides (noid_bad's debug file has an
# extra byte, so its CRC differs).
$(FX)/noid/prog_noid: $(FX)/prog_noid $(FX)/prog_noid.debug
	@mkdir -p $(dir $@)
	cp $(FX)/prog_noid.debug $(dir $@)prog_noid.debug
	objcopy --strip-all --add-gnu-debuglink=$(FX)/prog_noid.debug $< $@

$(FX)/noid_bad/prog_noid: $(FX)/prog_noid $(FX)/prog_noid.debug
	@mkdir -p $(dir $@)
	objcopy --strip-all --add-gnu-debuglink=$(FX)/prog_noid.debug $< $@
	cp $(FX)/prog_noid.debug $(dir $@)prog_noid.debug
	printf 'x' >> $(dir $@)prog_noid.debug

FX_BUILD_ID = $$(readelf -n $(FX)/prog_pie | sed -n 's/.*Build ID: *//p')

$(FX)/debugroot.stamp: $(FX)/prog_pie $(FX)/prog_pie.debug
	id=$(FX_BUILD_ID); d=$(FX)/debugroot/.build-id/$$(echo $$id | cut -c1-2); \
	  mkdir -p $$d && cp $(FX)/prog_pie.debug $$d/$$(echo $$id | cut -c3-).debug
	mkdir -p $(FX)/debugroot$(FX_ABS)/globaldebug
	cp $(FX)/prog_pie.debug $(FX)/debugroot$(FX_ABS)/globaldebug/prog_pie.debug
	touch $@

$(FX)/baddebug.stamp: $(FX)/prog_pie $(FX)/prog_other.debug
	id=$(FX_BUILD_ID); d=$(FX)/baddebug/.build-id/$$(echo $$id | cut -c1-2); \
	  mkdir -p $$d && cp $(FX)/prog_other.debug $$d/$$(echo $$id | cut -c3-).debug
	touch $@

.SECONDARY: $(FX)/prog_pie.debug $(FX)/prog_other.debug $(FX)/prog_noid.debug \
	$(FX)/prog_pie $(FX)/prog_nopie $(FX)/prog_noid
