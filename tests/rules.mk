# Test rules, included by the top Makefile (make test, stress, debug,
# sanitize, sanitize-quick, test-aarch64).  docs/testing.md lists every
# setting these rules and tests/run read.
#
# Unit tests: every tests/unit/test_*.c is a plain POSIX program (Check),
# and so is every tests/stress/test_*.c (the condition torture and the
# condition stress, Check programs too).  Each is built twice: linked
# against the library, and as a plain glibc program that tests/run runs
# under LD_PRELOAD.  Every test program (unit, helper, stress) is built
# with the shared test library tests/lib/*.c, which needs no Check.
TEST_SRCS := $(wildcard tests/unit/test_*.c) $(wildcard tests/stress/test_*.c)
TEST_CFLAGS := $(CFLAGS) -Wall -Wextra -std=gnu11 -D_GNU_SOURCE -Itests/lib -Iinclude $(shell pkg-config --cflags check 2>/dev/null)
TEST_LIBS := $(shell pkg-config --libs check 2>/dev/null || echo -lcheck -lsubunit -lm -lrt) -pthread
DIRECT_TESTS := $(patsubst %.c,$(BUILD)/tests/direct/%,$(notdir $(TEST_SRCS)))
PLAIN_TESTS := $(patsubst %.c,$(BUILD)/tests/plain/%,$(notdir $(TEST_SRCS)))
TEST_HELPERS := $(patsubst tests/helpers/%.c,$(BUILD)/tests/helpers/%,$(wildcard tests/helpers/*.c))

# The shared test library, one object set per build directory.
TESTLIB_OBJS := $(patsubst tests/lib/%.c,$(BUILD)/tests/lib/%.o,$(wildcard tests/lib/*.c))
TESTLIB_HDRS := $(wildcard tests/lib/*.h)

$(BUILD)/tests/lib/%.o: tests/lib/%.c $(TESTLIB_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -Wshadow -Wstrict-prototypes -Wmissing-prototypes -c -o $@ $<

# Kept between builds (make removes what only pattern rules name).
.SECONDARY: $(TESTLIB_OBJS)

$(BUILD)/tests/direct/%: tests/unit/%.c $(wildcard tests/unit/*.h) $(TESTLIB_HDRS) $(TESTLIB_OBJS) $(LIB) $(BUILD)/librtpthread.so
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -o $@ $< $(TESTLIB_OBJS) -L$(BUILD) -Wl,-rpath,'$$ORIGIN/../..' -Wl,--no-as-needed -lrtpthread $(TEST_LIBS)

$(BUILD)/tests/plain/%: tests/unit/%.c $(wildcard tests/unit/*.h) $(TESTLIB_HDRS) $(TESTLIB_OBJS)
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -o $@ $< $(TESTLIB_OBJS) $(TEST_LIBS)

$(BUILD)/tests/direct/%: tests/stress/%.c $(wildcard tests/stress/*.h) $(TESTLIB_HDRS) $(TESTLIB_OBJS) $(LIB) $(BUILD)/librtpthread.so
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -o $@ $< $(TESTLIB_OBJS) -L$(BUILD) -Wl,-rpath,'$$ORIGIN/../..' -Wl,--no-as-needed -lrtpthread $(TEST_LIBS)

$(BUILD)/tests/plain/%: tests/stress/%.c $(wildcard tests/stress/*.h) $(TESTLIB_HDRS) $(TESTLIB_OBJS)
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -o $@ $< $(TESTLIB_OBJS) $(TEST_LIBS)

# Helper programs for the integration scripts, plain glibc programs
# with the test library.
$(BUILD)/tests/helpers/%: tests/helpers/%.c $(TESTLIB_HDRS) $(TESTLIB_OBJS)
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -o $@ $< $(TESTLIB_OBJS) -pthread -ldl

# C++ helper programs (tests/helpers/*.cpp), plain g++ programs.
CXX_HELPERS := $(patsubst tests/helpers/%.cpp,$(BUILD)/tests/helpers/%,$(wildcard tests/helpers/*.cpp))
TEST_HELPERS += $(CXX_HELPERS)

$(BUILD)/tests/helpers/%: tests/helpers/%.cpp
	@mkdir -p $(dir $@)
	$(CROSS)g++ $(CFLAGS) -Wall -Wextra -std=gnu++17 -o $@ $< -pthread

# Stress and fault programs: every tests/stress/stress_*.c is a plain
# glibc program (with tests/stress/common.c and the test library) that
# tests/run runs under LD_PRELOAD for STRESS_DURATION seconds (a short
# bound in `make test`).
STRESS_SRCS := $(wildcard tests/stress/stress_*.c)
STRESS_PROGS := $(patsubst tests/stress/%.c,$(BUILD)/tests/stress/%,$(STRESS_SRCS))

$(BUILD)/tests/stress/%: tests/stress/%.c tests/stress/common.c tests/stress/common.h $(TESTLIB_HDRS) $(TESTLIB_OBJS)
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -Wshadow -o $@ $< tests/stress/common.c $(TESTLIB_OBJS) -pthread

# make test goes on, whatever the host's tests gave (their status waits
# in $(BUILD)/tests/status), with a bounded run of the sanitizer build
# (sanitize-quick, below) unless TEST_SANITIZE=no, and ends with the
# aarch64 tests (test-aarch64, below) unless TEST_AARCH64=no (the checked
# builds set both).  Without the aarch64 tools it says SKIP and why; under
# CI=true, where scripts/deps has installed them, that fails.
TEST_AARCH64 ?= yes
TEST_SANITIZE ?= yes

test: all $(DIRECT_TESTS) $(PLAIN_TESTS) $(TEST_HELPERS) $(STRESS_PROGS)
	tests/run $(BUILD); echo $$? >$(BUILD)/tests/status
	@if [ "$(TEST_SANITIZE)" = yes ]; then \
		echo "== ASan and UBSan build, bounded (make sanitize-quick)"; \
		$(MAKE) --no-print-directory sanitize-quick || echo 1 >$(BUILD)/tests/status; \
	fi
	@if [ "$(TEST_AARCH64)" = no ]; then :; \
	elif [ -n "$(AARCH64_MISSING)" ] && [ "$${CI:-}" != true ]; then \
		echo "SKIP  aarch64: $(AARCH64_MISSING) missing (scripts/deps installs them)"; \
	else \
		echo "== aarch64 under qemu-user (make test-aarch64)"; \
		$(MAKE) --no-print-directory test-aarch64; \
	fi
	@exit "$$(cat $(BUILD)/tests/status)"

# Long runs: the condition torture, linked and preloaded, and every stress
# program, for STRESS_DURATION seconds each (default 600).  DURATION is the
# documented short name: make stress DURATION=600.
stress: export STRESS_DURATION := $(or $(DURATION),$(STRESS_DURATION),600)
stress: all $(BUILD)/tests/direct/test_cond_torture $(BUILD)/tests/plain/test_cond_torture $(STRESS_PROGS)
	$(BUILD)/tests/direct/test_cond_torture; s1=$$?; \
	LD_PRELOAD=$(abspath $(LIB)) $(BUILD)/tests/plain/test_cond_torture; s2=$$?; \
	TESTS_FILTER='^stress/' TEST_TIMEOUT=$$(($$STRESS_DURATION * 2 + 120)) \
		tests/run $(BUILD); s3=$$?; \
	[ $$s1 -eq 0 ] && [ $$s2 -eq 0 ] && [ $$s3 -eq 0 ]

# Checked builds, each in its own directory, each running the tests
# against itself:
#   make debug     assertions of the invariants each file states
#                  (RTPTHREAD_DEBUG: a broken one aborts with a message);
#                  every test, as `make test` runs them
#   make sanitize  the same, with ASan and UBSan in the library and the
#                  tests; any report fails the run.  Only programs built
#                  here run: the unit tests, the stress programs and the
#                  integration scripts whose helpers are built here (an
#                  uninstrumented program cannot preload an ASan library),
#                  but for the fork tests: ASan's allocator lock may be held
#                  by another thread at fork, and the child's first
#                  allocation (its pthread_create) then hangs in ASan.
DEBUG_CFLAGS := -O1 -g -DRTPTHREAD_DEBUG
# nonnull-attribute stays off: the bad-input table passes NULL where
# glibc's prototypes promise it never comes, which is what it tests.
SANITIZE_CFLAGS := $(DEBUG_CFLAGS) -fno-omit-frame-pointer -fsanitize=address,undefined \
	-fno-sanitize=nonnull-attribute -fno-sanitize-recover=all
SANITIZE_TESTS := ^(direct|preload|stress)/|^integration/(priority_no_key|bad_input)$$
SANITIZE_EXCLUDE := fork

# CHECKED_GOAL picks what a checked build runs: make debug CHECKED_GOAL=stress
# runs the long stress in it.
CHECKED_GOAL ?= test

debug:
	$(MAKE) --no-print-directory BUILD=$(BUILD)/debug CFLAGS="$(DEBUG_CFLAGS)" TEST_AARCH64=no TEST_SANITIZE=no \
		$(CHECKED_GOAL)

# The preloaded library needs libasan, which the sanitized test programs
# load themselves: ASan's "runtime first" check does not apply.
sanitize: export ASAN_OPTIONS := verify_asan_link_order=0:abort_on_error=1:detect_leaks=1
sanitize: export UBSAN_OPTIONS := print_stacktrace=1:halt_on_error=1
# ASan code runs two to three times slower: so may the tests' time limits.
sanitize: export CK_TIMEOUT_MULTIPLIER := 3
sanitize: export TESTS_FILTER := $(SANITIZE_TESTS)
sanitize: export TESTS_EXCLUDE := $(SANITIZE_EXCLUDE)
sanitize:
	$(MAKE) --no-print-directory BUILD=$(BUILD)/sanitize CFLAGS="$(SANITIZE_CFLAGS)" \
		LIB_RUNTIME="-lasan -lubsan" TEST_AARCH64=no TEST_SANITIZE=no $(CHECKED_GOAL)

# The sanitizer build as make test runs it (so CI does): the unit tests
# linked against the library, every stress program for 3 s
# (STRESS_DURATION, which bounds the condition torture and stress among
# them too) and the bad-input table; make sanitize runs all it can, for
# 8 s a stress program.
sanitize-quick:
	@$(MAKE) --no-print-directory sanitize SANITIZE_TESTS='^(direct|stress)/|^integration/bad_input$$$$' \
		STRESS_DURATION=3



# aarch64 under qemu-user: make test-aarch64 builds the library and the
# unit tests with Debian's cross toolchain into $(BUILD)/aarch64 and runs
# them under qemu-aarch64 as tests/run runs them on the host (TESTS_QEMU):
# linked against the library (direct/), and as plain glibc programs with
# the library in LD_PRELOAD (preload/), which pass only if their
# references to GLIBC_2.17 and later bind to it; then
# integration/versions holds the library's name@version pairs to those of
# the arm64 libcs (the cross toolchain's and libc6:arm64).  Needs
# gcc-aarch64-linux-gnu, libc6-dev-arm64-cross, qemu-user and Check for
# arm64 (dpkg --add-architecture arm64, then check:arm64): scripts/deps
# installs them.  The tests run on the cross toolchain's libc (qemu's -L
# and LD_LIBRARY_PATH): the arm64 libc6 that check:arm64 brings is another
# build, and ld.so and libc.so.6 must come from the same one.  (The
# library links libgcc.a: GCC for aarch64 compiles atomics to calls of its
# outline helpers, __aarch64_cas4_acq and others.)
# The guest sees TESTS_EMULATOR=qemu-user: the condition torture then runs
# its threads SCHED_OTHER (tests/stress/test_cond_torture.c says why).
# AARCH64_QEMU_SKIP (a regular expression of test names) is what
# qemu-user cannot run, for the reason AARCH64_QEMU_SKIP_WHY: test_fork*,
# because a child forked from a process with more than one thread aborts
# in qemu 7.2 ("cpu_exec: assertion failed: (cpu == current_cpu)") as soon
# as it creates a thread, which every test there does.
AARCH64_CROSS ?= aarch64-linux-gnu-
AARCH64_SYSROOT ?= /usr/aarch64-linux-gnu
QEMU_AARCH64 ?= qemu-aarch64
AARCH64 := $(BUILD)/aarch64
AARCH64_QEMU_SKIP := test_fork(_[a-z]+)?
AARCH64_QEMU_SKIP_WHY := qemu-user aborts a child forked from a threaded process when it creates a thread
AARCH64_LIBCS := $(AARCH64_SYSROOT)/lib/libc.so.6 /usr/lib/aarch64-linux-gnu/libc.so.6
# The tools test-aarch64 lacks (looked up only where this is used).
AARCH64_MISSING = $(strip $(foreach tool,$(AARCH64_CROSS)gcc $(QEMU_AARCH64), \
	$(if $(shell command -v $(tool) 2>/dev/null),,$(tool))) \
	$(if $(wildcard $(AARCH64_SYSROOT)/include/stdio.h),,libc6-dev-arm64-cross) \
	$(if $(wildcard /usr/lib/aarch64-linux-gnu/pkgconfig/check.pc),,check:arm64))

test-aarch64:
	@$(if $(AARCH64_MISSING),echo "FAIL  test-aarch64: $(AARCH64_MISSING) missing (scripts/deps installs them)"; exit 1)
	PKG_CONFIG_LIBDIR=/usr/lib/aarch64-linux-gnu/pkgconfig $(MAKE) --no-print-directory CROSS=$(AARCH64_CROSS) \
		CC=$(AARCH64_CROSS)gcc BUILD=$(AARCH64) unit-tests
	@echo "SKIP  direct/ and preload/ $(AARCH64_QEMU_SKIP): $(AARCH64_QEMU_SKIP_WHY)"
	TESTS_QEMU='$(QEMU_AARCH64) -L $(AARCH64_SYSROOT) -E LD_LIBRARY_PATH=$(AARCH64_SYSROOT)/lib -E TESTS_EMULATOR=qemu-user' \
		TESTS_FILTER='^(direct|preload)/|^integration/versions$$' TESTS_EXCLUDE='/($(AARCH64_QEMU_SKIP))$$' \
		LIBC_SO='$(AARCH64_LIBCS)' tests/run $(AARCH64)

# The library and the unit tests, both ways (test-aarch64 builds them so).
unit-tests: all $(DIRECT_TESTS) $(PLAIN_TESTS)
	@:

.PHONY: test stress debug sanitize sanitize-quick test-aarch64 unit-tests
