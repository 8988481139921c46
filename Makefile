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

# Tests: the unit tests, helpers, stress programs, checked builds and
# aarch64 runs (make test, stress, debug, sanitize, sanitize-quick,
# test-aarch64).
include tests/rules.mk

-include rt-bench/rules.mk

clean:
	rm -rf $(BUILD)

.PHONY: all clean install uninstall

# once.c lets a C++ exception from an initializer run its cleanup (the
# personality routine and _Unwind_Resume are weak references there).
$(BUILD)/obj/src/once.o: LIB_CFLAGS += -fexceptions

# rtpthread_version() returns VERSION.
$(BUILD)/obj/preload/symbols.o: LIB_CFLAGS += -DRTPTHREAD_VERSION='"$(VERSION)"'
$(BUILD)/obj/preload/symbols.o: VERSION
