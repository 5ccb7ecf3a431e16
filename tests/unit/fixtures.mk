# Small programs and ELF files that unit tests read (not run as targets).
# Unit tests find them in $FIXTURES.
FIXTURE_DIR = $(BUILD)/fixtures
.PHONY: fixtures
fixtures:
	@mkdir -p $(FIXTURE_DIR)
