/*
 * Shared by the condition-variable unit tests (tests/unit/test_cond*.c):
 * the mutex kinds a condition is used with, and set-up helpers.
 *
 * Each test is a plain POSIX program (built linked against librtpthread
 * and as a plain glibc program run under LD_PRELOAD).  Real-time tests pin
 * every thread to CPU 0 under SCHED_FIFO and print SKIP (and pass) when
 * that is refused.  Tests marked "library behaviour" check what glibc does
 * not promise; they run only when rtpthread is loaded (or
 * RTPTHREAD_TEST_STRICT=1).
 *
 * Threads other than the test's main thread never call ck_assert: they
 * store results that the main thread checks, and every join is bounded.
 */
#ifndef RTPTHREAD_COND_UTIL_H
#define RTPTHREAD_COND_UTIL_H

#include <dlfcn.h>
#include <limits.h>
#include <threads.h>

#include "testutil.h"

/* ---- helpers ---- */

/* A mutex flavour: type, protocol, robustness, and how often the waiter
 * locks it before waiting (recursive: 3).  Waiting with a recursive mutex
 * locked more than once is library behaviour: rtpthread releases every
 * level and restores them; glibc releases one level (the waiter keeps the
 * mutex and the signaller deadlocks). */
struct mkind {
	const char *name;
	int type;
	int protocol;
	bool robust;
	int depth;
};

#define N_ PTHREAD_MUTEX_NORMAL
#define R_ PTHREAD_MUTEX_RECURSIVE
#define E_ PTHREAD_MUTEX_ERRORCHECK
#define A_ PTHREAD_MUTEX_ADAPTIVE_NP
#define NONE_ PTHREAD_PRIO_NONE
#define PI_ PTHREAD_PRIO_INHERIT
#define PP_ PTHREAD_PRIO_PROTECT

static const struct mkind kinds[] = {
	{ "normal", N_, NONE_, false, 1 },	   { "adaptive", A_, NONE_, false, 1 },
	{ "errorcheck", E_, NONE_, false, 1 },	   { "recursive x1", R_, NONE_, false, 1 },
	{ "recursive x3", R_, NONE_, false, 3 },   { "robust", N_, NONE_, true, 1 },
	{ "robust recursive x3", R_, NONE_, true, 3 }, { "pi", N_, PI_, false, 1 },
	{ "pi errorcheck", E_, PI_, false, 1 },	   { "pi recursive x3", R_, PI_, false, 3 },
	{ "pi robust", N_, PI_, true, 1 },	   { "pp", N_, PP_, false, 1 },
	{ "pp recursive x3", R_, PP_, false, 3 },
};
#define NKINDS ((int)(sizeof kinds / sizeof kinds[0]))

#define PP_CEILING 30
#define PP_BASE 5

/* Whether unlocking this kind when the caller does not own it is EPERM
 * (glibc: everything but NORMAL/ADAPTIVE without PI or robustness, and
 * PP-normal). */
#define SKIP_DEEP_RECURSION(k)                                                                         \
	do {                                                                                           \
		if ((k)->depth > 1 && !library_loaded())                                               \
			SKIP_TEST("%s: library behaviour (glibc releases one level), rtpthread not loaded", \
				  (k)->name);                                                          \
	} while (0)

/* Trylock by the owner: EBUSY (POSIX; glibc says EDEADLK for PI and
 * robust errorcheck mutexes). */
static inline bool owner_trylock_ok(int r)
{
	return r == EBUSY || r == EDEADLK;
}

static inline bool owner_checked(const struct mkind *k)
{
	if (k->protocol == PP_)
		return k->type != N_ || k->robust;
	return k->type == R_ || k->type == E_ || k->robust || k->protocol == PI_;
}

static inline void init_mutex(pthread_mutex_t *m, const struct mkind *k, bool pshared)
{
	pthread_mutexattr_t a;
	ck_assert_int_eq(pthread_mutexattr_init(&a), 0);
	ck_assert_int_eq(pthread_mutexattr_settype(&a, k->type), 0);
	ck_assert_int_eq(pthread_mutexattr_setprotocol(&a, k->protocol), 0);
	if (k->protocol == PP_)
		ck_assert_int_eq(pthread_mutexattr_setprioceiling(&a, PP_CEILING), 0);
	if (k->robust)
		ck_assert_int_eq(pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST), 0);
	if (pshared)
		ck_assert_int_eq(pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED), 0);
	ck_assert_int_eq(pthread_mutex_init(m, &a), 0);
	ck_assert_int_eq(pthread_mutexattr_destroy(&a), 0);
}

static inline void init_cond(pthread_cond_t *c, clockid_t clock, bool pshared)
{
	pthread_condattr_t a;
	ck_assert_int_eq(pthread_condattr_init(&a), 0);
	ck_assert_int_eq(pthread_condattr_setclock(&a, clock), 0);
	if (pshared)
		ck_assert_int_eq(pthread_condattr_setpshared(&a, PTHREAD_PROCESS_SHARED), 0);
	ck_assert_int_eq(pthread_cond_init(c, &a), 0);
	ck_assert_int_eq(pthread_condattr_destroy(&a), 0);
}

static inline void join_within(pthread_t t, void **ret, long ms, const char *what)
{
	struct timespec dl = deadline_in_ms(CLOCK_REALTIME, ms);
	int r = pthread_timedjoin_np(t, ret, &dl);
	ck_assert_msg(r == 0, "%s did not finish within %ld ms (%s)", what, ms, strerror(r));
}

/* Runs n wait/signal cycles on c with a helper thread, so that the
 * condition's internal state is not the freshly initialised one. */
struct warm {
	pthread_cond_t *c;
	pthread_mutex_t *m;
	int flag;
	_Atomic int ready;
};

static inline void *warm_waiter(void *p)
{
	struct warm *w = p;
	pthread_mutex_lock(w->m);
	atomic_store(&w->ready, 1);
	while (!w->flag)
		pthread_cond_wait(w->c, w->m);
	pthread_mutex_unlock(w->m);
	return NULL;
}

static inline void cond_warm_up(pthread_cond_t *c, pthread_mutex_t *m, int n)
{
	for (int i = 0; i < n; i++) {
		struct warm w = { .c = c, .m = m };
		pthread_t t;
		ck_assert_int_eq(pthread_create(&t, NULL, warm_waiter, &w), 0);
		ck_assert(wait_flag(&w.ready, 1, 5000));
		ck_assert_int_eq(pthread_mutex_lock(m), 0);
		w.flag = 1;
		ck_assert_int_eq(pthread_cond_signal(c), 0);
		ck_assert_int_eq(pthread_mutex_unlock(m), 0);
		join_within(t, NULL, 5000, "warm-up waiter");
	}
}

/* Real time on CPU 0 for the calling thread at prio; false: skip. */
static inline bool rt_setup(int prio)
{
	if (!rt_available())
		return false;
	pin_cpu(0);
	ck_assert(try_fifo(prio));
	return true;
}

/* Locks m until the caller holds it with a registered waiter behind it:
 * the waiter sets *ready under m before it waits, so once we hold m with
 * *ready set, the waiter is inside the wait and released m (whatever its
 * recursion depth).  A timed lock, so a wait that does not release the
 * mutex fails here instead of hanging. */
static inline void lock_when_ready(pthread_mutex_t *m, _Atomic int *ready, int count)
{
	int64_t end = now_ns(CLOCK_MONOTONIC) + 5 * NSEC_PER_SEC;
	for (;;) {
		struct timespec dl = deadline_in_ms(CLOCK_REALTIME, 5000);
		int r = pthread_mutex_timedlock(m, &dl);
		ck_assert_msg(r == 0 || r == EOWNERDEAD, "lock while a waiter waits: %d (wait kept the mutex?)", r);
		if (atomic_load(ready) >= count)
			return;
		ck_assert_int_eq(pthread_mutex_unlock(m), 0);
		ck_assert_msg(now_ns(CLOCK_MONOTONIC) < end, "waiters did not register: %d of %d",
			      atomic_load(ready), count);
		sleep_ms(1);
	}
}

#endif
