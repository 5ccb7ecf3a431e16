# Test target programs: real processes for memprof to attach to.  They are
# built without sanitizers (they run jemalloc, not ASan's allocator).
#
# Every tests/targets/NAME.c becomes $(TARGET_DIR)/NAME linked with the
# shared libjemalloc, unless a rule below says otherwise.

TARGET_DIR    = $(BUILD)/targets
TARGET_CFLAGS = -std=gnu11 -D_GNU_SOURCE -O1 -g -fno-omit-frame-pointer -Wall -Wextra -Werror -pthread
TARGET_SRC    = $(sort $(wildcard tests/targets/*.c))
TARGET_BIN    = $(TARGET_SRC:tests/targets/%.c=$(TARGET_DIR)/%) $(TARGET_EXTRA)

.PHONY: targets
targets: $(TARGET_BIN)

$(TARGET_DIR)/%: tests/targets/%.c $(wildcard tests/targets/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(TARGET_CFLAGS) -o $@ $< $(JEMALLOC_LIBS) -lm
