# libFuzzer harnesses (clang from Debian): make fuzz
.PHONY: fuzz
fuzz:
	@echo "no fuzz harnesses yet"
