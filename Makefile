# rtpthread — see README.md.  `make`, `make test`, `make install`,
# `make compare`, `make bench`.
# The version, from the one file that holds it (debian/changelog repeats
# it; tests/integration/version.sh checks that they agree).
VERSION := $(strip $(file <VERSION))
# CROSS=aarch64-linux-gnu- builds with Debian's cross toolchain.
CROSS ?=
ifeq ($(origin CC),default)
CC := $(CROSS)gcc
endif
CFLAGS ?= -O2 -g
WARN := -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Werror=implicit-function-declaration
LIB_CFLAGS := $(CPPFLAGS) $(CFLAGS) $(WARN) -std=gnu11 -fPIC -fvisibility=hidden -fno-plt -D_GNU_SOURCE \
	-Isrc -Iinclude -MMD -MP
LIB_LDFLAGS := $(LDFLAGS) -shared -Wl,-soname,librtpthread.so.1 \
	-Wl,-z,nodelete -Wl,-z,now -Wl,--no-undefined -nodefaultlibs $(LIB_RUNTIME) -lc -lgcc

# Install directories: the multiarch library directory under PREFIX.
PREFIX ?= /usr/local
MULTIARCH := $(shell $(CC) -print-multiarch 2>/dev/null)
LIBDIR ?= $(PREFIX)/lib$(if $(MULTIARCH),/$(MULTIARCH))
INCLUDEDIR ?= $(PREFIX)/include
BINDIR ?= $(PREFIX)/bin
MANDIR ?= $(PREFIX)/share/man
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig

BUILD := build
LIB := $(BUILD)/librtpthread.so.1
MAP := $(BUILD)/librtpthread.map
SRCS := $(wildcard src/*.c) $(wildcard preload/*.c)
OBJS := $(patsubst %.c,$(BUILD)/obj/%.o,$(SRCS))

all: $(LIB) $(BUILD)/librtpthread.so $(BUILD)/rtpthread

$(BUILD)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(LIB_CFLAGS) -c $< -o $@

-include $(OBJS:.o=.d)

$(LIB): $(OBJS) $(MAP)
	$(CC) $(CFLAGS) -o $@ $(OBJS) -Wl,--version-script=$(MAP) $(LIB_LDFLAGS)

# The version script: preload/librtpthread.map through the target's
# preprocessor, which picks the architecture's glibc versions
# (preload/versions.h).  -std=c11: no "linux" or "unix" macro.
$(MAP): preload/librtpthread.map preload/versions.h
	@mkdir -p $(dir $@)
	$(CC) -E -P -std=c11 -x c -o $@ $<

$(BUILD)/librtpthread.so: $(LIB)
	ln -sf librtpthread.so.1 $@

# The wrapper and the pkg-config file name the install directories, so
# install writes them for the directories given to it; the build tree's
# wrapper finds the library next to it.
# WRAPPER_LIBDIR: where the installed wrapper looks for the library first
# (empty: only the dynamic loader's search path, as the Debian package's
# wrapper, which serves every architecture, does).
WRAPPER_LIBDIR ?= $(LIBDIR)
SUBSTITUTE = sed -e 's|@VERSION@|$(VERSION)|g' -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@LIBDIR@|$(LIBDIR)|g' \
	-e 's|@INCLUDEDIR@|$(INCLUDEDIR)|g' -e 's|@WRAPPER_LIBDIR@|$(WRAPPER_LIBDIR)|g'

$(BUILD)/rtpthread: tools/rtpthread.in Makefile VERSION
	@mkdir -p $(dir $@)
	$(SUBSTITUTE) $< >$@
	chmod 755 $@

INSTALLED := $(LIBDIR)/librtpthread.so.1 $(LIBDIR)/librtpthread.so $(INCLUDEDIR)/rtpthread.h \
	$(PKGCONFIGDIR)/rtpthread.pc $(BINDIR)/rtpthread $(MANDIR)/man1/rtpthread.1 $(MANDIR)/man7/librtpthread.7

install: all
	install -d $(DESTDIR)$(LIBDIR) $(DESTDIR)$(INCLUDEDIR) $(DESTDIR)$(PKGCONFIGDIR) $(DESTDIR)$(BINDIR) \
		$(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man7
	install -m 644 $(LIB) $(DESTDIR)$(LIBDIR)/librtpthread.so.1
	ln -sf librtpthread.so.1 $(DESTDIR)$(LIBDIR)/librtpthread.so
	install -m 644 include/rtpthread.h $(DESTDIR)$(INCLUDEDIR)/rtpthread.h
	$(SUBSTITUTE) tools/rtpthread.pc.in >$(DESTDIR)$(PKGCONFIGDIR)/rtpthread.pc
	chmod 644 $(DESTDIR)$(PKGCONFIGDIR)/rtpthread.pc
	$(SUBSTITUTE) tools/rtpthread.in >$(DESTDIR)$(BINDIR)/rtpthread
	chmod 755 $(DESTDIR)$(BINDIR)/rtpthread
	$(SUBSTITUTE) man/rtpthread.1 >$(DESTDIR)$(MANDIR)/man1/rtpthread.1
	chmod 644 $(DESTDIR)$(MANDIR)/man1/rtpthread.1
	$(SUBSTITUTE) man/librtpthread.7 >$(DESTDIR)$(MANDIR)/man7/librtpthread.7
	chmod 644 $(DESTDIR)$(MANDIR)/man7/librtpthread.7

uninstall:
	rm -f $(addprefix $(DESTDIR),$(INSTALLED))
	-rmdir $(DESTDIR)$(PKGCONFIGDIR) 2>/dev/null

# Tests: every tests/test_*.c is a plain POSIX program (Check).  Each is
# built twice: linked against the library, and as a plain glibc program
# that tests/run runs under LD_PRELOAD.
TEST_SRCS := $(wildcard tests/test_*.c)
TEST_CFLAGS := $(CFLAGS) -Wall -Wextra -std=gnu11 -D_GNU_SOURCE -Itests -Iinclude $(shell pkg-config --cflags check 2>/dev/null)
TEST_LIBS := $(shell pkg-config --libs check 2>/dev/null || echo -lcheck -lsubunit -lm -lrt) -pthread
DIRECT_TESTS := $(patsubst tests/%.c,$(BUILD)/tests/direct/%,$(TEST_SRCS))
PLAIN_TESTS := $(patsubst tests/%.c,$(BUILD)/tests/plain/%,$(TEST_SRCS))
TEST_HELPERS := $(patsubst tests/helpers/%.c,$(BUILD)/tests/helpers/%,$(filter-out tests/helpers/common.c, \
	$(wildcard tests/helpers/*.c)))

$(BUILD)/tests/direct/%: tests/%.c $(wildcard tests/*.h) $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -o $@ $< -L$(BUILD) -Wl,-rpath,'$$ORIGIN/../..' -Wl,--no-as-needed -lrtpthread $(TEST_LIBS)

$(BUILD)/tests/plain/%: tests/%.c $(wildcard tests/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -o $@ $< $(TEST_LIBS)

# Helper programs for the integration scripts, each with
# tests/helpers/common.c.
$(BUILD)/tests/helpers/%: tests/helpers/%.c tests/helpers/common.c tests/helpers/common.h
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -o $@ $< tests/helpers/common.c -pthread -ldl

# C++ helper programs (tests/helpers/*.cpp), plain g++ programs.
CXX_HELPERS := $(patsubst tests/helpers/%.cpp,$(BUILD)/tests/helpers/%,$(wildcard tests/helpers/*.cpp))
TEST_HELPERS += $(CXX_HELPERS)

$(BUILD)/tests/helpers/%: tests/helpers/%.cpp
	@mkdir -p $(dir $@)
	$(CROSS)g++ $(CFLAGS) -Wall -Wextra -std=gnu++17 -o $@ $< -pthread

# Stress and fault programs: every tests/stress/stress_*.c is a plain
# glibc program (with tests/stress/common.c) that tests/run runs under
# LD_PRELOAD for DURATION seconds (a short bound in `make test`).
STRESS_SRCS := $(wildcard tests/stress/stress_*.c)
STRESS_PROGS := $(patsubst tests/stress/%.c,$(BUILD)/tests/stress/%,$(STRESS_SRCS))

$(BUILD)/tests/stress/%: tests/stress/%.c tests/stress/common.c tests/stress/common.h
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -Wshadow -o $@ $< tests/stress/common.c -pthread

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
# program, for DURATION seconds each (default 600): make stress DURATION=600
stress: export DURATION ?= 600
stress: all $(BUILD)/tests/direct/test_cond_torture $(BUILD)/tests/plain/test_cond_torture $(STRESS_PROGS)
	$(BUILD)/tests/direct/test_cond_torture; s1=$$?; \
	LD_PRELOAD=$(abspath $(LIB)) $(BUILD)/tests/plain/test_cond_torture; s2=$$?; \
	STRESS_DURATION=$(DURATION) TESTS_FILTER='^stress/' TEST_TIMEOUT=$$(($(DURATION) * 2 + 120)) \
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
# linked against the library, every stress program for 3 s and the
# bad-input table; make sanitize runs all it can, for 8 s a stress program.
sanitize-quick:
	@$(MAKE) --no-print-directory sanitize SANITIZE_TESTS='^(direct|stress)/|^integration/bad_input$$$$' \
		STRESS_DURATION=3

-include rt-bench/rules.mk

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
	TESTS_QEMU='$(QEMU_AARCH64) -L $(AARCH64_SYSROOT) -E LD_LIBRARY_PATH=$(AARCH64_SYSROOT)/lib' \
		TESTS_FILTER='^(direct|preload)/|^integration/versions$$' TESTS_EXCLUDE='/($(AARCH64_QEMU_SKIP))$$' \
		LIBC_SO='$(AARCH64_LIBCS)' tests/run $(AARCH64)

# The library and the unit tests, both ways (test-aarch64 builds them so).
unit-tests: all $(DIRECT_TESTS) $(PLAIN_TESTS)
	@:

.PHONY: test-aarch64 unit-tests

clean:
	rm -rf $(BUILD)

.PHONY: all test clean stress debug sanitize sanitize-quick install uninstall

# once.c lets a C++ exception from an initializer run its cleanup (the
# personality routine and _Unwind_Resume are weak references there).
$(BUILD)/obj/src/once.o: LIB_CFLAGS += -fexceptions

# rtpthread_version() returns VERSION.
$(BUILD)/obj/preload/symbols.o: LIB_CFLAGS += -DRTPTHREAD_VERSION='"$(VERSION)"'
$(BUILD)/obj/preload/symbols.o: VERSION
