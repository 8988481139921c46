/*
 * Shared by the stress and fault programs in tests/stress/.  Each program
 * is a plain glibc program: tests/run runs it under LD_PRELOAD, and the
 * same binary without the library shows what NPTL does.
 *
 * Conventions: exit 0 pass, 1 fail, 77 skip (never under CI=true, where
 * the privileges a skip stands for exist).  Every program prints its seed
 * first; STRESS_SEED=N reruns the same random choices.  DURATION (seconds)
 * bounds the run.
 */
#ifndef STRESS_COMMON_H
#define STRESS_COMMON_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

/* Parse DURATION and STRESS_SEED, print "NAME: seed S, duration D s". */
void stress_start(const char *name, double default_seconds);

/* Seconds the run may take, from DURATION. */
double stress_duration(void);

/* True while the run's duration has not passed. */
bool stress_running(void);

/* The seed of this run. */
uint64_t stress_seed(void);

/* A per-thread random generator (xorshift64*), seeded from the run's seed
 * and a stream number, so that each thread's choices reproduce. */
struct rng {
	uint64_t state;
};
void rng_seed(struct rng *r, uint64_t stream);
uint64_t rng_next(struct rng *r);
/* Uniform in [0, n). */
uint32_t rng_below(struct rng *r, uint32_t n);

/* Monotonic nanoseconds. */
int64_t stress_now_ns(void);
/* An absolute CLOCK_REALTIME or CLOCK_MONOTONIC deadline ns from now. */
struct timespec stress_deadline(clockid_t clock, int64_t ns);

/* Report a failure (printf format) and exit 1. */
void stress_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

/* Skip (printf format): exit 77, or 1 under CI=true. */
void stress_skip(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

/* True if this process may use SCHED_FIFO (tried on the calling thread,
 * which is put back to SCHED_OTHER). */
bool stress_can_fifo(void);

/* Set the calling thread to SCHED_FIFO at prio, or SCHED_OTHER if prio
 * is 0.  Fails the run if refused (callers check stress_can_fifo first). */
void stress_set_priority(int prio);

/* The library under test: "rtpthread" if librtpthread is loaded in this
 * process, else "NPTL". */
const char *stress_library(void);

#endif
