/*
 * Shared helpers for the rt-bench programs.
 *
 * Every program is a plain glibc program: the library under test is applied
 * with LD_PRELOAD, so one binary measures both NPTL and rtpthread.  The
 * harness itself (start, bursts, stop) therefore never uses a pthread
 * mutex, condvar or barrier: it uses atomics and clock_nanosleep, so the
 * only pthread objects exercised are the ones being measured.
 *
 * Output protocol (parsed by scripts/bench):
 *   "# text"              information (scheduling granted or not, ...)
 *   "impl SYMBOL OBJECT"  the object that defines SYMBOL at run time
 *   "metric NAME VALUE"   one result; NAME may contain spaces, VALUE is a
 *                         number or "nan" (could not be measured)
 */
#ifndef RTBENCH_COMMON_H
#define RTBENCH_COMMON_H

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

/* Cycle timer: the TSC on x86_64, nanoseconds elsewhere. */
#if defined(__x86_64__)
#include <x86intrin.h>
#define TIMER_UNIT "cycles"
/* lfence: the TSC is read only after earlier instructions have finished. */
static inline uint64_t timer_start(void)
{
	_mm_lfence();
	return __rdtsc();
}

/* rdtscp waits for the measured code; lfence keeps later code after it. */
static inline uint64_t timer_end(void)
{
	unsigned int aux;
	uint64_t t = __rdtscp(&aux);

	_mm_lfence();
	return t;
}
#else
#define TIMER_UNIT "ns"
uint64_t now_ns(void);
static inline uint64_t timer_start(void) { return now_ns(); }
static inline uint64_t timer_end(void) { return now_ns(); }
#endif

/* CLOCK_MONOTONIC in nanoseconds. */
uint64_t now_ns(void);
void sleep_until_ns(uint64_t t);
void sleep_ns(uint64_t ns);

/* Timer ticks per microsecond (TSC MHz, or 1000 for the ns fallback). */
double timer_mhz(void);

/*
 * Scheduling.  set_fifo() tries SCHED_FIFO at prio for the calling thread
 * and returns 1 if granted; when refused the thread stays SCHED_OTHER and
 * the refusal is remembered for report_sched().  pin_cpu() returns 0 if
 * the CPU does not exist (one-core machines): the thread then floats.
 */
int set_fifo(int prio);
int set_other(void);
int pin_cpu(int cpu);
int ncpus(void);
void lock_memory(void);
/*
 * Attributes for worker threads: a 128 KiB stack.  Under mlockall
 * (MCL_FUTURE) every byte of a default 8 MiB stack would be faulted in and
 * locked at creation, which makes starting 32 threads take a long time.
 */
const pthread_attr_t *small_stack(void);
void report_sched(void);

/*
 * Real-time throttling: with sched_rt_runtime_us < period, RT tasks that
 * keep a CPU busy are stopped for the rest of the period, and that stop
 * would be measured as latency.  Latency loops therefore run in bursts of
 * BURST_MS separated by PAUSE_MS of sleep (80% duty, under the 95%
 * budget).  All threads follow the same absolute schedule, so no
 * synchronization object is needed to pause them together.
 */
#define BURST_MS 200
#define PAUSE_MS 50

struct bursts {
	uint64_t start;		/* absolute CLOCK_MONOTONIC ns of burst 0 */
	uint64_t end;		/* no burst starts at or after this */
	uint64_t period;	/* burst + pause */
	uint64_t burst;
};

void bursts_init(struct bursts *b, double seconds);
void bursts_wait_start(const struct bursts *b);
/* 0: inside a burst; UINT64_MAX: done; else the start of the next burst. */
uint64_t bursts_next(const struct bursts *b);
/* 0: keep going; 1: slept through a pause (drop the next sample); -1: done. */
int bursts_check(const struct bursts *b);
void report_throttling(void);

/*
 * Latency histogram: exact below 64, then 32 bins per power of two (3%
 * resolution), so percentiles need no sample storage.
 */
#define HIST_BINS (64 + 58 * 32)

struct hist {
	uint64_t n, sum, min, max;
	uint64_t bin[HIST_BINS];
};

void hist_init(struct hist *h);
void hist_add(struct hist *h, uint64_t v);
void hist_merge(struct hist *into, const struct hist *from);
/* Upper edge of the bin holding the q-quantile (capped at the maximum). */
uint64_t hist_quantile(const struct hist *h, double q);
/* "lower_edge count" per non-empty bin, for scripts/plot. */
int hist_write(const struct hist *h, const char *path, const char *unit);
/* metric lines: min, avg, p99.9, max with the given unit suffix. */
void hist_report(const struct hist *h, const char *prefix, const char *unit,
		 double scale);

void metric(const char *name, double value);
/* Prints "impl SYMBOL OBJECT" for the object that defines symbol. */
void report_impl(const char *symbol);
double arg_double(const char *s, const char *what);
long arg_long(const char *s, const char *what);

#endif
