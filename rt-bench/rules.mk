# rt-bench: benchmark programs, included by the top Makefile.
#
# The programs are plain glibc programs built with -pthread and never
# linked against the library: scripts/bench applies it with LD_PRELOAD, so
# the same binary measures NPTL and rtpthread.  They depend on nothing in
# src/.
RTB_DIR := $(BUILD)/rt-bench
RTB_PROGS := machine lockunlock cond-latency cond-perf uncontended contended \
	pp-syscalls herd barrier channels spurious inversion rwlock
RTB_PROGS += cond-pi-queue
RTB_BINS := $(addprefix $(RTB_DIR)/,$(RTB_PROGS))
RTB_CFLAGS := $(CFLAGS) -Wall -Wextra -Wshadow -Wstrict-prototypes \
	-Wmissing-prototypes -std=gnu11 -D_GNU_SOURCE

$(RTB_DIR)/%: rt-bench/%.c rt-bench/common.c rt-bench/common.h
	@mkdir -p $(dir $@)
	$(CC) $(RTB_CFLAGS) -o $@ $< rt-bench/common.c -pthread $(RTB_LIBS)

# inversion calls libstdc++'s __cxa_guard_* (C++ static locals) from C.
$(RTB_DIR)/inversion: RTB_LIBS := -lstdc++

rt-bench: $(RTB_BINS)

# The library is rebuilt first, but a library that does not build yet must
# not stop the NPTL side: scripts/bench reports a missing or partial
# library in the rtpthread column.
rtb-lib:
	@$(MAKE) --no-print-directory all || \
		echo "rt-bench: building $(LIB) failed; benchmarking what exists" >&2

bench: rt-bench rtb-lib
	scripts/bench --lib $(LIB)

# The uncontended paths once more with contention statistics on (the
# report goes to a file): they must cost what they cost without them.
compare: rt-bench rtb-lib
	scripts/bench --short --lib $(LIB)
	@echo "== uncontended with RTPTHREAD_CONF=stats:$(abspath $(BUILD))/compare-stats.txt (rtpthread column)"
	RTPTHREAD_CONF=stats:$(abspath $(BUILD))/compare-stats.txt scripts/bench --short --only uncontended \
		--lib $(LIB) --out $(BUILD)/compare-stats

bench-quick: rt-bench rtb-lib
	scripts/bench --quick --lib $(LIB)

.PHONY: rt-bench rtb-lib bench compare bench-quick
