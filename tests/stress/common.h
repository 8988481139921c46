/*
 * Shared by the stress and fault programs in tests/stress/.  Each program
 * is a plain glibc program: tests/run runs it under LD_PRELOAD, and the
 * same binary without the library shows what NPTL does.
 *
 * Conventions: exit 0 pass, 1 fail, 77 skip (never under CI=true, where
 * the privileges a skip stands for exist).  Every program prints its seed
 * first; STRESS_SEED=N reruns the same random choices.  STRESS_DURATION
 * (seconds) bounds the run.  Time, /proc readers and SCHED_FIFO probes
 * come from the test library (testlib.h).
 */
#ifndef STRESS_COMMON_H
#define STRESS_COMMON_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "testlib.h"

/* Parse STRESS_DURATION and STRESS_SEED, print "NAME: seed S, duration D s". */
void stress_start(const char *name, double default_seconds);

/* Seconds the run may take, from STRESS_DURATION. */
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

/*
 * The run clock: time in which a SCHED_OTHER thread of this process could
 * run.  A thread naps 1 ms at a time and counts each step at its real
 * length, up to 20 ms: an ordinary wake-up latency counts in full, time
 * kept off the CPUs beyond that does not.  A watchdog calls a stall a
 * failure only once it has lasted its limit both in wall time and on this
 * clock, so that a machine too busy to run SCHED_OTHER threads (other
 * programs' SCHED_FIFO threads leave them 5% under RT throttling) does not
 * pass for a lost wake-up or a hang; a sleeping, spinning or deadlocked
 * thread stops no clock.
 */
void stress_start_run_clock(void);
/* Nanoseconds on the run clock since stress_start_run_clock. */
int64_t stress_run_clock_ns(void);

/* A moment on both clocks (wall_ns 0: none, where a caller needs one). */
struct moment {
	int64_t wall_ns, run_ns;
};
struct moment stress_moment_now(void);
/* True once more than limit_ms have passed since since on both clocks. */
bool stress_lasted(struct moment since, struct moment now, int limit_ms);

/* State letter (field 3 of stat) and, if prio is not NULL, effective
 * priority (field 18: -1 - rtprio for SCHED_FIFO, 20 + nice otherwise) of
 * a thread of this process, from the test library's task_sched_read.
 * False if stat cannot be read or parsed. */
bool stress_task_stat(pid_t tid, char *state, int *prio);

/* One line for a watchdog report: "  LABEL " and task_describe's line
 * (testlib.h: state, priority, wchan, syscall, CPU times).  A thread asleep
 * (S) in a futex with its work undone is a lost wake-up; a runnable one
 * (R) that waited long for a CPU was starved. */
void stress_print_task(const char *label, pid_t tid);

/* Report a failure (printf format) and exit 1. */
void stress_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

/* Skip (printf format): exit 77, or 1 under CI=true. */
void stress_skip(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

/* True if this process may use SCHED_FIFO (tried on the calling thread,
 * which is put back to SCHED_OTHER); never in the ASan build (common.c
 * says why). */
bool stress_can_fifo(void);

/* Whether this process may use SCHED_FIFO.  If not, the run goes on at
 * SCHED_OTHER after a note that says so and what that leaves out
 * (left_out, or NULL); under CI=true, where it is allowed, it fails. */
bool stress_fifo_or_note(const char *left_out);

/* Set the calling thread to SCHED_FIFO at prio, or SCHED_OTHER if prio
 * is 0.  Fails the run if refused (callers check stress_can_fifo first). */
void stress_set_priority(int prio);

/* The library under test: "rtpthread" if librtpthread is loaded in this
 * process, else "NPTL". */
const char *stress_library(void);

/* ---- the kinds of mutex stress_mutex and stress_cond run ---- */

enum kind_api { API_ATTR, API_STATIC, API_C11 };

struct mutex_kind {
	char name[64];
	enum kind_api api; /* made with pthread_mutexattr_*, a static initializer or mtx_init */
	int type;	   /* PTHREAD_MUTEX_*: what the relock and unlock rules follow */
	int protocol;	   /* PTHREAD_PRIO_*: NONE but for API_ATTR */
	bool robust, pshared;
	int c11;	 /* API_C11: the mtx_* flags */
	int initializer; /* API_STATIC: 0 normal, 1 recursive, 2 errorcheck, 3 adaptive */
};

/* Fills kinds (room for max) with every kind and returns how many, always
 * in this order: the pthread_mutexattr_* combinations of type, protocol,
 * robustness and (last) process-sharing, the four static initializers,
 * the four mtx_init flag sets.  PP kinds only with fifo (a ceiling needs
 * SCHED_FIFO); robust PP only under rtpthread (NPTL: ENOTSUP). */
int stress_mutex_kinds(struct mutex_kind *kinds, int max, bool fifo, bool rtpthread);

/* pthread_mutex_init of an API_ATTR kind (ceiling: PP only); the error. */
int stress_mutex_init(pthread_mutex_t *m, const struct mutex_kind *k, int ceiling);

/* Whether unlock, and a condition wait, by a thread that does not hold a
 * mutex of this kind returns EPERM. */
bool stress_checks_owner(const struct mutex_kind *k, bool rtpthread);

/* A C11 thrd_* result as the errno value pthread_* would return. */
int stress_from_c11(int r);

#endif
