# rtpthread — see README.md.  `make`, `make test`, `make install`,
# `make compare`, `make bench`.
VERSION := 0.1.0
# CROSS=aarch64-linux-gnu- builds with Debian's cross toolchain.
CROSS ?=
ifeq ($(origin CC),default)
CC := $(CROSS)gcc
endif
CFLAGS ?= -O2 -g
WARN := -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Werror=implicit-function-declaration
LIB_CFLAGS := $(CPPFLAGS) $(CFLAGS) $(WARN) -std=gnu11 -fPIC -fvisibility=hidden -fno-plt -D_GNU_SOURCE \
	-Isrc -Iinclude -MMD -MP
LIB_LDFLAGS := $(LDFLAGS) -shared -Wl,-soname,librtpthread.so.1 -Wl,--version-script=preload/librtpthread.map \
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
SRCS := $(wildcard src/*.c) $(wildcard preload/*.c)
OBJS := $(patsubst %.c,$(BUILD)/obj/%.o,$(SRCS))

all: $(LIB) $(BUILD)/librtpthread.so $(BUILD)/rtpthread

$(BUILD)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(LIB_CFLAGS) -c $< -o $@

-include $(OBJS:.o=.d)

$(LIB): $(OBJS) preload/librtpthread.map
	$(CC) $(CFLAGS) -o $@ $(OBJS) $(LIB_LDFLAGS)

$(BUILD)/librtpthread.so: $(LIB)
	ln -sf librtpthread.so.1 $@

# The wrapper and the pkg-config file name the install directories, so
# install writes them for the directories given to it; the build tree's
# wrapper finds the library next to it.
SUBSTITUTE = sed -e 's|@VERSION@|$(VERSION)|g' -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@LIBDIR@|$(LIBDIR)|g' \
	-e 's|@INCLUDEDIR@|$(INCLUDEDIR)|g'

$(BUILD)/rtpthread: tools/rtpthread.in Makefile
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
	install -m 644 man/rtpthread.1 $(DESTDIR)$(MANDIR)/man1/rtpthread.1
	install -m 644 man/librtpthread.7 $(DESTDIR)$(MANDIR)/man7/librtpthread.7

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
TEST_HELPERS := $(patsubst tests/helpers/%.c,$(BUILD)/tests/helpers/%,$(wildcard tests/helpers/*.c))

$(BUILD)/tests/direct/%: tests/%.c $(wildcard tests/*.h) $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -o $@ $< -L$(BUILD) -Wl,-rpath,'$$ORIGIN/../..' -Wl,--no-as-needed -lrtpthread $(TEST_LIBS)

$(BUILD)/tests/plain/%: tests/%.c $(wildcard tests/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -o $@ $< $(TEST_LIBS)

$(BUILD)/tests/helpers/%: tests/helpers/%.c
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -o $@ $< -pthread -ldl

# Stress and fault programs: every tests/stress/stress_*.c is a plain
# glibc program (with tests/stress/common.c) that tests/run runs under
# LD_PRELOAD for DURATION seconds (a short bound in `make test`).
STRESS_SRCS := $(wildcard tests/stress/stress_*.c)
STRESS_PROGS := $(patsubst tests/stress/%.c,$(BUILD)/tests/stress/%,$(STRESS_SRCS))

$(BUILD)/tests/stress/%: tests/stress/%.c tests/stress/common.c tests/stress/common.h
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -Wshadow -o $@ $< tests/stress/common.c -pthread

test: all $(DIRECT_TESTS) $(PLAIN_TESTS) $(TEST_HELPERS) $(STRESS_PROGS)
	tests/run $(BUILD)

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
	$(MAKE) --no-print-directory BUILD=$(BUILD)/debug CFLAGS="$(DEBUG_CFLAGS)" $(CHECKED_GOAL)

# The preloaded library needs libasan, which the sanitized test programs
# load themselves: ASan's "runtime first" check does not apply.
sanitize: export ASAN_OPTIONS := verify_asan_link_order=0:abort_on_error=1:detect_leaks=1
sanitize: export UBSAN_OPTIONS := print_stacktrace=1:halt_on_error=1
sanitize: export TESTS_FILTER := $(SANITIZE_TESTS)
sanitize: export TESTS_EXCLUDE := $(SANITIZE_EXCLUDE)
sanitize:
	$(MAKE) --no-print-directory BUILD=$(BUILD)/sanitize CFLAGS="$(SANITIZE_CFLAGS)" \
		LIB_RUNTIME="-lasan -lubsan" $(CHECKED_GOAL)

-include rt-bench/rules.mk

# aarch64 under qemu-user: make test-aarch64 builds the library and the
# unit tests with Debian's cross toolchain into $(BUILD)/aarch64 and runs
# the tests linked against it (tests/run's direct/ group) under
# qemu-aarch64, through one wrapper script per test in
# $(BUILD)/aarch64/qemu.  Needs gcc-aarch64-linux-gnu, libc6-dev-arm64-cross
# and qemu-user, and Check for arm64 (dpkg --add-architecture arm64, then
# check:arm64).  The tests run on the cross toolchain's libc (qemu's -L and
# LD_LIBRARY_PATH): the arm64 libc6 that check:arm64 brings is another
# build, and ld.so and libc.so.6 must come from the same one.
# (The library links libgcc.a: GCC for aarch64 compiles atomics to calls
# of its outline helpers, __aarch64_cas4_acq and others.)  scripts/deps
# does not install the cross toolchain, qemu or arm64 Check: make test
# does not run this target.
# qemu-user cannot run test_fork: a child forked from a process with more
# than one thread aborts in qemu (7.2: "cpu_exec: assertion failed: (cpu ==
# current_cpu)") as soon as it creates a thread, which every test there
# does; its wrapper says so and runs nothing.
AARCH64_CROSS ?= aarch64-linux-gnu-
AARCH64_SYSROOT ?= /usr/aarch64-linux-gnu
QEMU_AARCH64 ?= qemu-aarch64
AARCH64 := $(BUILD)/aarch64
AARCH64_TESTS := $(patsubst tests/%.c,$(AARCH64)/tests/direct/%,$(TEST_SRCS))
AARCH64_QEMU_SKIP := test_fork

test-aarch64:
	@for tool in $(AARCH64_CROSS)gcc $(QEMU_AARCH64); do command -v $$tool >/dev/null || \
		{ echo "test-aarch64: $$tool missing (scripts/deps)"; exit 1; }; done
	@[ -e /usr/lib/aarch64-linux-gnu/pkgconfig/check.pc ] || { echo "test-aarch64: Check for arm64 missing" \
		"(dpkg --add-architecture arm64; apt-get update; apt-get install check:arm64)"; exit 1; }
	PKG_CONFIG_LIBDIR=/usr/lib/aarch64-linux-gnu/pkgconfig $(MAKE) --no-print-directory CROSS=$(AARCH64_CROSS) \
		CC=$(AARCH64_CROSS)gcc BUILD=$(AARCH64) all $(AARCH64_TESTS)
	@rm -rf $(AARCH64)/qemu && mkdir -p $(AARCH64)/qemu/tests/direct
	@ln -s ../librtpthread.so.1 $(AARCH64)/qemu/librtpthread.so.1
	@for t in $(notdir $(AARCH64_TESTS)); do \
		w=$(AARCH64)/qemu/tests/direct/$$t; \
		if echo " $(AARCH64_QEMU_SKIP) " | grep -q " $$t "; then \
			printf '#!/bin/sh\necho "SKIP: %s: qemu-user aborts a child forked from a threaded process when it creates a thread"\n' \
				$$t >$$w; \
		else \
			printf '#!/bin/sh\nexec %s -L %s -E LD_LIBRARY_PATH=%s/lib %s "$$@"\n' '$(QEMU_AARCH64)' \
				'$(AARCH64_SYSROOT)' '$(AARCH64_SYSROOT)' '$(abspath $(AARCH64))/tests/direct/'$$t >$$w; \
		fi; \
		chmod 755 $$w; \
	done
	TESTS_FILTER='^direct/' tests/run $(AARCH64)/qemu

.PHONY: test-aarch64

clean:
	rm -rf $(BUILD)

.PHONY: all test clean stress debug sanitize install uninstall
