# rtpthread — see README.md.  `make`, `make test`, `make compare`, `make bench`.
CC ?= cc
CFLAGS ?= -O2 -g
WARN := -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Werror=implicit-function-declaration
LIB_CFLAGS := $(CFLAGS) $(WARN) -std=gnu11 -fPIC -fvisibility=hidden -fno-plt -D_GNU_SOURCE -Isrc -Iinclude
LIB_LDFLAGS := -shared -Wl,-soname,librtpthread.so.1 -Wl,--version-script=preload/librtpthread.map \
	-Wl,-z,nodelete -Wl,-z,now -Wl,--no-undefined -nodefaultlibs -lc

BUILD := build
LIB := $(BUILD)/librtpthread.so.1
SRCS := $(wildcard src/*.c) $(wildcard preload/*.c)
OBJS := $(patsubst %.c,$(BUILD)/obj/%.o,$(SRCS))

all: $(LIB) $(BUILD)/librtpthread.so

$(BUILD)/obj/%.o: %.c $(wildcard src/*.h) $(wildcard include/*.h) $(wildcard preload/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(LIB_CFLAGS) -c $< -o $@

$(LIB): $(OBJS) preload/librtpthread.map
	$(CC) $(LIB_CFLAGS) -o $@ $(OBJS) $(LIB_LDFLAGS)

$(BUILD)/librtpthread.so: $(LIB)
	ln -sf librtpthread.so.1 $@

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

test: all $(DIRECT_TESTS) $(PLAIN_TESTS) $(TEST_HELPERS)
	tests/run $(BUILD)

# Condition-variable torture, linked and preloaded, for DURATION seconds
# each (default 600): make stress DURATION=600
stress: export DURATION ?= 600
stress: all $(BUILD)/tests/direct/test_cond_torture $(BUILD)/tests/plain/test_cond_torture
	$(BUILD)/tests/direct/test_cond_torture; s1=$$?; \
	LD_PRELOAD=$(abspath $(LIB)) $(BUILD)/tests/plain/test_cond_torture; s2=$$?; \
	[ $$s1 -eq 0 ] && [ $$s2 -eq 0 ]

-include rt-bench/rules.mk

clean:
	rm -rf $(BUILD)

.PHONY: all test clean stress
