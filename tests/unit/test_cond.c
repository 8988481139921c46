/*
 * Condition variables: every entry point and error path, each mutex kind
 * (recursive depth restored, errorcheck, robust EOWNERDEAD, PI, PP),
 * timeouts on the right clock, destroy right after broadcast, cancellation,
 * process-shared use across fork, C11 cnd_*, and the real-time promises:
 * waiters woken and re-acquiring in priority order, and a waiter moved onto
 * a PI mutex boosting its owner at once.
 *
 * A plain POSIX program (built linked against librtpthread and as a plain
 * glibc program run under LD_PRELOAD).  Real-time tests pin every thread to
 * CPU 0 under SCHED_FIFO and print SKIP (and pass) when that is refused.
 * Tests marked "library behaviour" check what glibc does not promise; they
 * run only when rtpthread is loaded (or RTPTHREAD_TEST_STRICT=1).
 *
 * Threads other than the test's main thread never call ck_assert: they
 * store results that the main thread checks, and every join is bounded.
 */
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
static bool owner_trylock_ok(int r)
{
	return r == EBUSY || r == EDEADLK;
}

static bool owner_checked(const struct mkind *k)
{
	if (k->protocol == PP_)
		return k->type != N_ || k->robust;
	return k->type == R_ || k->type == E_ || k->robust || k->protocol == PI_;
}

static void init_mutex(pthread_mutex_t *m, const struct mkind *k, bool pshared)
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

static void init_cond(pthread_cond_t *c, clockid_t clock, bool pshared)
{
	pthread_condattr_t a;
	ck_assert_int_eq(pthread_condattr_init(&a), 0);
	ck_assert_int_eq(pthread_condattr_setclock(&a, clock), 0);
	if (pshared)
		ck_assert_int_eq(pthread_condattr_setpshared(&a, PTHREAD_PROCESS_SHARED), 0);
	ck_assert_int_eq(pthread_cond_init(c, &a), 0);
	ck_assert_int_eq(pthread_condattr_destroy(&a), 0);
}

static void join_within(pthread_t t, void **ret, long ms, const char *what)
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

static void *warm_waiter(void *p)
{
	struct warm *w = p;
	pthread_mutex_lock(w->m);
	atomic_store(&w->ready, 1);
	while (!w->flag)
		pthread_cond_wait(w->c, w->m);
	pthread_mutex_unlock(w->m);
	return NULL;
}

static void cond_warm_up(pthread_cond_t *c, pthread_mutex_t *m, int n)
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
static bool rt_setup(int prio)
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
static void lock_when_ready(pthread_mutex_t *m, _Atomic int *ready, int count)
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

/* ---- attributes, initialisation ---- */

START_TEST(test_condattr)
{
	pthread_condattr_t a;
	int pshared = -1;
	clockid_t clock = -1;
	ck_assert_int_eq(pthread_condattr_init(&a), 0);
	ck_assert_int_eq(pthread_condattr_getpshared(&a, &pshared), 0);
	ck_assert_int_eq(pshared, PTHREAD_PROCESS_PRIVATE);
	ck_assert_int_eq(pthread_condattr_getclock(&a, &clock), 0);
	ck_assert_int_eq(clock, CLOCK_REALTIME);

	ck_assert_int_eq(pthread_condattr_setpshared(&a, PTHREAD_PROCESS_SHARED), 0);
	ck_assert_int_eq(pthread_condattr_getpshared(&a, &pshared), 0);
	ck_assert_int_eq(pshared, PTHREAD_PROCESS_SHARED);
	ck_assert_int_eq(pthread_condattr_setpshared(&a, 2), EINVAL);
	ck_assert_int_eq(pthread_condattr_setpshared(&a, -1), EINVAL);
	ck_assert_int_eq(pthread_condattr_getpshared(&a, &pshared), 0);
	ck_assert_int_eq(pshared, PTHREAD_PROCESS_SHARED);
	ck_assert_int_eq(pthread_condattr_setpshared(&a, PTHREAD_PROCESS_PRIVATE), 0);
	ck_assert_int_eq(pthread_condattr_getpshared(&a, &pshared), 0);
	ck_assert_int_eq(pshared, PTHREAD_PROCESS_PRIVATE);

	ck_assert_int_eq(pthread_condattr_setclock(&a, CLOCK_MONOTONIC), 0);
	ck_assert_int_eq(pthread_condattr_getclock(&a, &clock), 0);
	ck_assert_int_eq(clock, CLOCK_MONOTONIC);
	static const clockid_t bad[] = { CLOCK_PROCESS_CPUTIME_ID, CLOCK_THREAD_CPUTIME_ID, CLOCK_MONOTONIC_RAW,
					 CLOCK_BOOTTIME, -1, 1000 };
	for (unsigned i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		ck_assert_msg(pthread_condattr_setclock(&a, bad[i]) == EINVAL, "setclock(%d) accepted", (int)bad[i]);
		ck_assert_int_eq(pthread_condattr_getclock(&a, &clock), 0);
		ck_assert_int_eq(clock, CLOCK_MONOTONIC);
	}
	/* the two bits are independent */
	ck_assert_int_eq(pthread_condattr_setpshared(&a, PTHREAD_PROCESS_SHARED), 0);
	ck_assert_int_eq(pthread_condattr_getclock(&a, &clock), 0);
	ck_assert_int_eq(clock, CLOCK_MONOTONIC);
	ck_assert_int_eq(pthread_condattr_setclock(&a, CLOCK_REALTIME), 0);
	ck_assert_int_eq(pthread_condattr_getclock(&a, &clock), 0);
	ck_assert_int_eq(clock, CLOCK_REALTIME);
	ck_assert_int_eq(pthread_condattr_getpshared(&a, &pshared), 0);
	ck_assert_int_eq(pshared, PTHREAD_PROCESS_SHARED);

	/* every combination initialises a condition that works */
	for (int i = 0; i < 4; i++) {
		pthread_cond_t c;
		pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
		ck_assert_int_eq(pthread_condattr_setpshared(&a, i & 1 ? PTHREAD_PROCESS_SHARED : PTHREAD_PROCESS_PRIVATE), 0);
		ck_assert_int_eq(pthread_condattr_setclock(&a, i & 2 ? CLOCK_MONOTONIC : CLOCK_REALTIME), 0);
		ck_assert_int_eq(pthread_cond_init(&c, &a), 0);
		struct timespec dl = deadline_in_ms(i & 2 ? CLOCK_MONOTONIC : CLOCK_REALTIME, 1);
		ck_assert_int_eq(pthread_mutex_lock(&m), 0);
		ck_assert_int_eq(pthread_cond_timedwait(&c, &m, &dl), ETIMEDOUT);
		ck_assert_int_eq(pthread_mutex_unlock(&m), 0);
		ck_assert_int_eq(pthread_cond_destroy(&c), 0);
	}
	ck_assert_int_eq(pthread_condattr_destroy(&a), 0);
}
END_TEST

struct static_waiter {
	pthread_cond_t *c;
	pthread_mutex_t *m;
	int *flag;
	_Atomic int ready;
	int result;
};

static void *static_waiter_main(void *p)
{
	struct static_waiter *w = p;
	pthread_mutex_lock(w->m);
	atomic_store(&w->ready, 1);
	w->result = 0;
	while (!*w->flag && w->result == 0)
		w->result = pthread_cond_wait(w->c, w->m);
	pthread_mutex_unlock(w->m);
	return NULL;
}

static pthread_cond_t static_cond = PTHREAD_COND_INITIALIZER;
static pthread_mutex_t static_mutex = PTHREAD_MUTEX_INITIALIZER;

START_TEST(test_init_destroy)
{
	pthread_cond_t c;
	/* no waiters: nothing to do, all succeed */
	ck_assert_int_eq(pthread_cond_init(&c, NULL), 0);
	ck_assert_int_eq(pthread_cond_signal(&c), 0);
	ck_assert_int_eq(pthread_cond_broadcast(&c), 0);
	ck_assert_int_eq(pthread_cond_destroy(&c), 0);
	ck_assert_int_eq(pthread_cond_init(&c, NULL), 0);
	ck_assert_int_eq(pthread_cond_destroy(&c), 0);

	/* a stack object filled with the static initializer */
	pthread_cond_t s = PTHREAD_COND_INITIALIZER;
	pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
	struct timespec dl = deadline_in_ms(CLOCK_REALTIME, 10);
	ck_assert_int_eq(pthread_mutex_lock(&m), 0);
	ck_assert_int_eq(pthread_cond_timedwait(&s, &m, &dl), ETIMEDOUT);
	ck_assert_int_eq(pthread_mutex_unlock(&m), 0);
	ck_assert_int_eq(pthread_cond_signal(&s), 0);
	ck_assert_int_eq(pthread_cond_destroy(&s), 0);

	/* a static one, never initialised by a call: wait, signal, broadcast */
	for (int round = 0; round < 2; round++) {
		int flag = 0;
		struct static_waiter w = { .c = &static_cond, .m = &static_mutex, .flag = &flag };
		pthread_t t;
		ck_assert_int_eq(pthread_create(&t, NULL, static_waiter_main, &w), 0);
		lock_when_ready(&static_mutex, &w.ready, 1);
		flag = 1;
		ck_assert_int_eq(round ? pthread_cond_broadcast(&static_cond) : pthread_cond_signal(&static_cond), 0);
		ck_assert_int_eq(pthread_mutex_unlock(&static_mutex), 0);
		join_within(t, NULL, 5000, "waiter on a static condition");
		ck_assert_int_eq(w.result, 0);
	}
}
END_TEST

/* ---- error paths ---- */

/* Kinds whose wait checks ownership (glibc and rtpthread agree). */
static const int eperm_kinds[] = { 2, 3, 4, 5, 7, 8, 9, 10 };

static void expect_eperm_waits(pthread_cond_t *c, pthread_mutex_t *m, const char *name)
{
	struct timespec rt = deadline_in_ms(CLOCK_REALTIME, 2000);
	struct timespec mono = deadline_in_ms(CLOCK_MONOTONIC, 2000);
	int r = pthread_cond_wait(c, m);
	ck_assert_msg(r == EPERM, "%s: wait returned %d, not EPERM", name, r);
	r = pthread_cond_timedwait(c, m, &rt);
	ck_assert_msg(r == EPERM, "%s: timedwait returned %d, not EPERM", name, r);
	r = pthread_cond_clockwait(c, m, CLOCK_MONOTONIC, &mono);
	ck_assert_msg(r == EPERM, "%s: clockwait returned %d, not EPERM", name, r);
}

START_TEST(test_wait_not_owner)
{
	const struct mkind *k = &kinds[eperm_kinds[_i]];
	pthread_mutex_t m;
	pthread_cond_t c;
	init_mutex(&m, k, false);
	ck_assert_int_eq(pthread_cond_init(&c, NULL), 0);

	/* unlocked */
	expect_eperm_waits(&c, &m, k->name);
	ck_assert_int_eq(pthread_mutex_trylock(&m), 0); /* still free */
	ck_assert_int_eq(pthread_mutex_unlock(&m), 0);

	/* held by another thread, which still holds it afterwards */
	struct holder h;
	holder_start(&h, &m);
	ck_assert_int_eq(h.lock_result, 0);
	expect_eperm_waits(&c, &m, k->name);
	ck_assert_int_eq(pthread_mutex_trylock(&m), EBUSY);
	holder_finish(&h);
	ck_assert_int_eq(h.unlock_result, 0);

	/* owned by the caller: a past deadline times out, still owned */
	struct timespec past = deadline_in_ms(CLOCK_REALTIME, -10);
	ck_assert_int_eq(pthread_mutex_lock(&m), 0);
	ck_assert_int_eq(pthread_cond_timedwait(&c, &m, &past), ETIMEDOUT);
	ck_assert_int_eq(other_trylock(&m), EBUSY);
	ck_assert_int_eq(pthread_mutex_unlock(&m), 0);
	ck_assert_int_eq(pthread_mutex_unlock(&m), EPERM);
	ck_assert_int_eq(pthread_cond_destroy(&c), 0);
	ck_assert_int_eq(pthread_mutex_destroy(&m), 0);
}
END_TEST

/* Kinds for the timespec / clock checks (no PP: it needs real time). */
static const int plain_kinds[] = { 0, 2, 4, 5, 7, 9, 10 };

static void lock_depth(pthread_mutex_t *m, const struct mkind *k)
{
	for (int d = 0; d < k->depth; d++)
		ck_assert_int_eq(pthread_mutex_lock(m), 0);
}

/* The caller holds m at k->depth: still held by it, exactly that deep. */
static void expect_still_held(pthread_mutex_t *m, const struct mkind *k, const char *after)
{
	ck_assert_msg(other_trylock(m) == EBUSY, "%s, %s: mutex no longer held", k->name, after);
	for (int d = 0; d < k->depth; d++)
		ck_assert_msg(pthread_mutex_unlock(m) == 0, "%s, %s: unlock %d of %d failed", k->name, after, d + 1,
			      k->depth);
	if (owner_checked(k))
		ck_assert_msg(pthread_mutex_unlock(m) == EPERM, "%s, %s: held deeper than %d", k->name, after,
			      k->depth);
	ck_assert_int_eq(other_trylock(m), 0);
}

START_TEST(test_bad_timespec)
{
	const struct mkind *k = &kinds[plain_kinds[_i]];
	pthread_mutex_t m;
	pthread_cond_t c, cm;
	init_mutex(&m, k, false);
	ck_assert_int_eq(pthread_cond_init(&c, NULL), 0);
	init_cond(&cm, CLOCK_MONOTONIC, false);

	static const long bad_nsec[] = { 1000000000L, -1, LONG_MAX, LONG_MIN };
	for (unsigned i = 0; i < sizeof bad_nsec / sizeof bad_nsec[0]; i++) {
		struct timespec ts = deadline_in_ms(CLOCK_REALTIME, 1000);
		ts.tv_nsec = bad_nsec[i];
		lock_depth(&m, k);
		ck_assert_int_eq(pthread_cond_timedwait(&c, &m, &ts), EINVAL);
		ck_assert_int_eq(pthread_cond_timedwait(&cm, &m, &ts), EINVAL);
		ck_assert_int_eq(pthread_cond_clockwait(&c, &m, CLOCK_REALTIME, &ts), EINVAL);
		ck_assert_int_eq(pthread_cond_clockwait(&c, &m, CLOCK_MONOTONIC, &ts), EINVAL);
		expect_still_held(&m, k, "after EINVAL");
	}
	/* before the epoch: already timed out */
	struct timespec neg = { .tv_sec = -1, .tv_nsec = 0 };
	struct timespec neg_big = { .tv_sec = -1000000, .tv_nsec = 999999999 };
	lock_depth(&m, k);
	ck_assert_int_eq(pthread_cond_timedwait(&c, &m, &neg), ETIMEDOUT);
	ck_assert_int_eq(pthread_cond_timedwait(&cm, &m, &neg_big), ETIMEDOUT);
	ck_assert_int_eq(pthread_cond_clockwait(&c, &m, CLOCK_MONOTONIC, &neg), ETIMEDOUT);
	ck_assert_int_eq(pthread_cond_clockwait(&c, &m, CLOCK_REALTIME, &neg_big), ETIMEDOUT);
	expect_still_held(&m, k, "after tv_sec < 0");
	/* zero: the epoch of each clock, long past */
	struct timespec zero = { 0, 0 };
	lock_depth(&m, k);
	ck_assert_int_eq(pthread_cond_timedwait(&c, &m, &zero), ETIMEDOUT);
	ck_assert_int_eq(pthread_cond_clockwait(&c, &m, CLOCK_MONOTONIC, &zero), ETIMEDOUT);
	expect_still_held(&m, k, "after a deadline of 0");

	ck_assert_int_eq(pthread_cond_destroy(&c), 0);
	ck_assert_int_eq(pthread_cond_destroy(&cm), 0);
	ck_assert_int_eq(pthread_mutex_destroy(&m), 0);
}
END_TEST

START_TEST(test_clockwait_bad_clock)
{
	const struct mkind *k = &kinds[plain_kinds[_i]];
	pthread_mutex_t m;
	pthread_cond_t c;
	init_mutex(&m, k, false);
	ck_assert_int_eq(pthread_cond_init(&c, NULL), 0);
	static const clockid_t bad[] = { CLOCK_PROCESS_CPUTIME_ID, CLOCK_THREAD_CPUTIME_ID, CLOCK_MONOTONIC_RAW,
					 CLOCK_BOOTTIME, CLOCK_REALTIME_COARSE, -1, 1000 };
	for (unsigned i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		struct timespec ts = deadline_in_ms(CLOCK_MONOTONIC, 100);
		lock_depth(&m, k);
		int r = pthread_cond_clockwait(&c, &m, bad[i], &ts);
		ck_assert_msg(r == EINVAL, "%s: clockwait on clock %d returned %d", k->name, (int)bad[i], r);
		expect_still_held(&m, k, "after a bad clock");
	}
	ck_assert_int_eq(pthread_cond_destroy(&c), 0);
	ck_assert_int_eq(pthread_mutex_destroy(&m), 0);
}
END_TEST

/* ---- timeouts: the right clock, about the right time ---- */

/* 0 timedwait on a default cond (REALTIME); 1 timedwait on a MONOTONIC
 * cond; 2 clockwait MONOTONIC on a default cond; 3 clockwait REALTIME on a
 * MONOTONIC cond (clockwait ignores the attribute); 4 clockwait MONOTONIC
 * on a MONOTONIC cond. */
struct timeout_case {
	const char *name;
	clockid_t attr_clock;
	int use_clockwait;
	clockid_t clock;
};

static const struct timeout_case timeout_cases[] = {
	{ "timedwait, REALTIME cond", CLOCK_REALTIME, 0, CLOCK_REALTIME },
	{ "timedwait, MONOTONIC cond", CLOCK_MONOTONIC, 0, CLOCK_MONOTONIC },
	{ "clockwait MONOTONIC, REALTIME cond", CLOCK_REALTIME, 1, CLOCK_MONOTONIC },
	{ "clockwait REALTIME, MONOTONIC cond", CLOCK_MONOTONIC, 1, CLOCK_REALTIME },
	{ "clockwait MONOTONIC, MONOTONIC cond", CLOCK_MONOTONIC, 1, CLOCK_MONOTONIC },
};
#define NTIMEOUT_CASES 5
static const int timeout_kinds[] = { 2, 8 }; /* errorcheck, pi errorcheck */

static int timed(const struct timeout_case *tc, pthread_cond_t *c, pthread_mutex_t *m, const struct timespec *dl)
{
	return tc->use_clockwait ? pthread_cond_clockwait(c, m, tc->clock, dl) : pthread_cond_timedwait(c, m, dl);
}

START_TEST(test_timeout_clock)
{
	const struct timeout_case *tc = &timeout_cases[_i % NTIMEOUT_CASES];
	const struct mkind *k = &kinds[timeout_kinds[_i / NTIMEOUT_CASES]];
	pthread_mutex_t m;
	pthread_cond_t c;
	init_mutex(&m, k, false);
	init_cond(&c, tc->attr_clock, false);
	clockid_t other = tc->clock == CLOCK_REALTIME ? CLOCK_MONOTONIC : CLOCK_REALTIME;

	/* 150 ms on the right clock: ETIMEDOUT after 150 ms, not much more.
	 * On the wrong clock this deadline is decades away (REALTIME read as
	 * MONOTONIC: the test times out) or long past (the other way round:
	 * it returns at once, below the lower bound). */
	for (int round = 0; round < 2; round++) {
		ck_assert_int_eq(pthread_mutex_lock(&m), 0);
		struct timespec dl = deadline_in_ms(tc->clock, 150);
		int r = timed(tc, &c, &m, &dl);
		int64_t late = now_ns(tc->clock) - ts_to_ns(&dl);
		ck_assert_msg(r == ETIMEDOUT, "%s, %s: returned %d", tc->name, k->name, r);
		ck_assert_msg(late >= 0, "%s, %s: returned %lld us before the deadline", tc->name, k->name,
			      (long long)(-late / 1000));
		ck_assert_msg(late < 500000000LL, "%s, %s: returned %lld ms after the deadline", tc->name, k->name,
			      (long long)(late / 1000000));
		ck_assert_msg(pthread_mutex_unlock(&m) == 0, "%s: mutex not held after ETIMEDOUT", tc->name);
	}

	/* A deadline in the past on the right clock but an hour ahead on
	 * the other (only constructible when the right clock is REALTIME,
	 * which is far ahead of MONOTONIC): must return at once. */
	if (tc->clock == CLOCK_REALTIME && now_ns(CLOCK_REALTIME) > now_ns(CLOCK_MONOTONIC) + 7200 * NSEC_PER_SEC) {
		struct timespec dl = deadline_in_ms(other, 3600 * 1000L);
		ck_assert_int_eq(pthread_mutex_lock(&m), 0);
		int64_t start = now_ns(CLOCK_MONOTONIC);
		ck_assert_int_eq(timed(tc, &c, &m, &dl), ETIMEDOUT);
		ck_assert_int_lt(now_ns(CLOCK_MONOTONIC) - start, 100000000LL);
		ck_assert_int_eq(pthread_mutex_unlock(&m), 0);
	}

	/* already past on the right clock */
	struct timespec past = deadline_in_ms(tc->clock, -1000);
	ck_assert_int_eq(pthread_mutex_lock(&m), 0);
	int64_t start = now_ns(CLOCK_MONOTONIC);
	ck_assert_int_eq(timed(tc, &c, &m, &past), ETIMEDOUT);
	ck_assert_int_lt(now_ns(CLOCK_MONOTONIC) - start, 100000000LL);
	ck_assert_int_eq(pthread_mutex_unlock(&m), 0);

	ck_assert_int_eq(pthread_cond_destroy(&c), 0);
	ck_assert_int_eq(pthread_mutex_destroy(&m), 0);
}
END_TEST

/* A waiter woken just before its deadline returns 0 and is not counted
 * twice: a signal sent to a timed waiter wakes it, and the next waiter
 * is still reachable. */
struct timed_waiter {
	pthread_cond_t *c;
	pthread_mutex_t *m;
	int *tokens;
	_Atomic int *ready;
	long ms;
	int result;
};

static void *timed_waiter_main(void *p)
{
	struct timed_waiter *w = p;
	struct timespec dl = deadline_in_ms(CLOCK_REALTIME, w->ms);
	pthread_mutex_lock(w->m);
	atomic_fetch_add(w->ready, 1);
	w->result = 0;
	while (*w->tokens == 0 && w->result == 0)
		w->result = pthread_cond_timedwait(w->c, w->m, &dl);
	if (*w->tokens > 0) {
		(*w->tokens)--;
		w->result = 0;
	}
	pthread_mutex_unlock(w->m);
	return NULL;
}

START_TEST(test_timed_wait_woken)
{
	pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
	pthread_cond_t c = PTHREAD_COND_INITIALIZER;
	int tokens = 0;
	_Atomic int ready = 0;
	struct timed_waiter w[3];
	pthread_t t[3];
	for (int i = 0; i < 3; i++) {
		w[i] = (struct timed_waiter){ .c = &c, .m = &m, .tokens = &tokens, .ready = &ready, .ms = 10000 };
		ck_assert_int_eq(pthread_create(&t[i], NULL, timed_waiter_main, &w[i]), 0);
	}
	lock_when_ready(&m, &ready, 3);
	for (int i = 0; i < 3; i++) {
		tokens++;
		ck_assert_int_eq(pthread_cond_signal(&c), 0);
	}
	ck_assert_int_eq(pthread_mutex_unlock(&m), 0);
	for (int i = 0; i < 3; i++) {
		join_within(t[i], NULL, 5000, "signalled timed waiter");
		ck_assert_int_eq(w[i].result, 0);
	}
	ck_assert_int_eq(tokens, 0);
	ck_assert_int_eq(pthread_cond_destroy(&c), 0);
}
END_TEST

/* ---- wait / signal / broadcast with each mutex kind ---- */

/* mode bit 0: broadcast; bit 1: signaller holds the mutex */
struct ww {
	pthread_mutex_t m;
	pthread_cond_t c;
	const struct mkind *k;
	_Atomic int ready;
	int flag;
	int lock_result;
	int wait_result;
	int prio_after;
	int trylock_result;
	int unlock_result[3];
	int extra_unlock;
	_Atomic pid_t tid;
};

static void *ww_waiter(void *p)
{
	struct ww *w = p;
	atomic_store(&w->tid, test_gettid());
	for (int d = 0; d < w->k->depth; d++)
		if ((w->lock_result = pthread_mutex_lock(&w->m)) != 0)
			return NULL;
	atomic_store(&w->ready, 1);
	w->wait_result = 0;
	while (!w->flag && w->wait_result == 0)
		w->wait_result = pthread_cond_wait(&w->c, &w->m);
	struct task_sched s;
	w->prio_after = task_sched_read(test_gettid(), &s) && s.prio < 0 ? (int)(-1 - s.prio) : 0;
	w->trylock_result = pthread_mutex_trylock(&w->m);
	if (w->trylock_result == 0)
		pthread_mutex_unlock(&w->m);
	for (int d = 0; d < w->k->depth; d++)
		w->unlock_result[d] = pthread_mutex_unlock(&w->m);
	w->extra_unlock = owner_checked(w->k) ? pthread_mutex_unlock(&w->m) : EPERM;
	return NULL;
}

START_TEST(test_wait_wake_kinds)
{
	const struct mkind *k = &kinds[_i / 4];
	int mode = _i % 4;
	bool broadcast = mode & 1, held = mode & 2;
	bool pp = k->protocol == PP_;
	SKIP_DEEP_RECURSION(k);
	if (pp) {
		/* PP needs a real-time caller under glibc (EINVAL otherwise). */
		if (!rt_available())
			SKIP_TEST("%s: SCHED_FIFO refused", k->name);
		ck_assert(try_fifo(PP_BASE));
	}
	struct ww *w = calloc(1, sizeof *w);
	w->k = k;
	init_mutex(&w->m, k, false);
	ck_assert_int_eq(pthread_cond_init(&w->c, NULL), 0);
	pthread_t t;
	if (pp)
		start_thread_sched(&t, SCHED_FIFO, PP_BASE, -1, ww_waiter, w);
	else
		ck_assert_int_eq(pthread_create(&t, NULL, ww_waiter, w), 0);

	/* The wait released the mutex completely (recursive: all 3 levels). */
	lock_when_ready(&w->m, &w->ready, 1);
	ck_assert_int_eq(w->lock_result, 0);
	if (pp) {
		/* The waiter gave the ceiling back while it waits. */
		ck_assert(wait_task_sleeping(atomic_load(&w->tid), 5000));
		ck_assert_msg(task_rt_prio(atomic_load(&w->tid)) == PP_BASE, "%s: waiter at %d while waiting",
			      k->name, task_rt_prio(atomic_load(&w->tid)));
	}
	w->flag = 1;
	if (held) {
		ck_assert_int_eq(broadcast ? pthread_cond_broadcast(&w->c) : pthread_cond_signal(&w->c), 0);
		ck_assert_int_eq(pthread_mutex_unlock(&w->m), 0);
	} else {
		ck_assert_int_eq(pthread_mutex_unlock(&w->m), 0);
		ck_assert_int_eq(broadcast ? pthread_cond_broadcast(&w->c) : pthread_cond_signal(&w->c), 0);
	}
	join_within(t, NULL, 5000, "waiter");

	const char *how = broadcast ? (held ? "broadcast, held" : "broadcast, not held")
				    : (held ? "signal, held" : "signal, not held");
	ck_assert_msg(w->wait_result == 0, "%s, %s: wait returned %d", k->name, how, w->wait_result);
	if (k->type == R_)
		ck_assert_msg(w->trylock_result == 0, "%s, %s: trylock by the owner %d", k->name, how,
			      w->trylock_result);
	else
		ck_assert_msg(owner_trylock_ok(w->trylock_result), "%s, %s: trylock after the wait %d (not held?)",
			      k->name, how, w->trylock_result);
	for (int d = 0; d < k->depth; d++)
		ck_assert_msg(w->unlock_result[d] == 0, "%s, %s: unlock %d of %d after the wait: %d", k->name, how,
			      d + 1, k->depth, w->unlock_result[d]);
	ck_assert_msg(w->extra_unlock == EPERM, "%s, %s: unlock %d returned %d: depth not restored", k->name, how,
		      k->depth + 1, w->extra_unlock);
	if (pp)
		ck_assert_msg(w->prio_after == PP_CEILING, "%s, %s: at %d after the wait, not the ceiling", k->name,
			      how, w->prio_after);
	ck_assert_int_eq(pthread_mutex_trylock(&w->m), 0);
	ck_assert_int_eq(pthread_mutex_unlock(&w->m), 0);
	ck_assert_int_eq(pthread_cond_destroy(&w->c), 0);
	ck_assert_int_eq(pthread_mutex_destroy(&w->m), 0);
	free(w);
}
END_TEST

/* Several waiters of several kinds woken by one broadcast (mutex held and
 * not held) all return with the mutex, one at a time. */
struct herd {
	pthread_mutex_t m;
	pthread_cond_t c;
	const struct mkind *k;
	_Atomic int ready;
	int flag;
	_Atomic int inside;
	_Atomic int overlaps;
	_Atomic int done;
	_Atomic int errors;
};

static void *herd_waiter(void *p)
{
	struct herd *h = p;
	for (int d = 0; d < h->k->depth; d++)
		if (pthread_mutex_lock(&h->m) != 0)
			atomic_fetch_add(&h->errors, 1);
	atomic_fetch_add(&h->ready, 1);
	int r = 0;
	while (!h->flag && r == 0)
		r = pthread_cond_wait(&h->c, &h->m);
	if (r != 0)
		atomic_fetch_add(&h->errors, 1);
	if (atomic_fetch_add(&h->inside, 1) != 0)
		atomic_fetch_add(&h->overlaps, 1);
	sched_yield();
	atomic_fetch_sub(&h->inside, 1);
	for (int d = 0; d < h->k->depth; d++)
		if (pthread_mutex_unlock(&h->m) != 0)
			atomic_fetch_add(&h->errors, 1);
	atomic_fetch_add(&h->done, 1);
	return NULL;
}

static const int herd_kinds[] = { 0, 2, 4, 5, 7, 9, 10 };

START_TEST(test_broadcast_herd)
{
	const struct mkind *k = &kinds[herd_kinds[_i / 2]];
	bool held = _i % 2;
	enum { NW = 6 };
	SKIP_DEEP_RECURSION(k);
	struct herd *h = calloc(1, sizeof *h);
	h->k = k;
	init_mutex(&h->m, k, false);
	ck_assert_int_eq(pthread_cond_init(&h->c, NULL), 0);
	pthread_t t[NW];
	for (int i = 0; i < NW; i++)
		ck_assert_int_eq(pthread_create(&t[i], NULL, herd_waiter, h), 0);
	lock_when_ready(&h->m, &h->ready, NW);
	h->flag = 1;
	if (held) {
		ck_assert_int_eq(pthread_cond_broadcast(&h->c), 0);
		sleep_ms(20);
		ck_assert_int_eq(atomic_load(&h->done), 0); /* all need the mutex we hold */
		ck_assert_int_eq(pthread_mutex_unlock(&h->m), 0);
	} else {
		ck_assert_int_eq(pthread_mutex_unlock(&h->m), 0);
		ck_assert_int_eq(pthread_cond_broadcast(&h->c), 0);
	}
	for (int i = 0; i < NW; i++)
		join_within(t[i], NULL, 5000, "broadcast waiter");
	ck_assert_int_eq(atomic_load(&h->errors), 0);
	ck_assert_int_eq(atomic_load(&h->overlaps), 0);
	ck_assert_int_eq(atomic_load(&h->done), NW);
	ck_assert_int_eq(pthread_cond_destroy(&h->c), 0);
	ck_assert_int_eq(pthread_mutex_destroy(&h->m), 0);
	free(h);
}
END_TEST

/* ---- robust: the owner dies while a signalled waiter waits for it ---- */

struct robust_case {
	pthread_mutex_t m;
	pthread_cond_t c;
	_Atomic int ready;
	int flag;
	int wait_result;
	int consistent_result;
	int unlock_result;
	_Atomic pid_t waiter_tid;
	bool broadcast;
};

static void *robust_waiter(void *p)
{
	struct robust_case *rc = p;
	atomic_store(&rc->waiter_tid, test_gettid());
	pthread_mutex_lock(&rc->m);
	atomic_store(&rc->ready, 1);
	rc->wait_result = 0;
	while (!rc->flag && rc->wait_result == 0)
		rc->wait_result = pthread_cond_wait(&rc->c, &rc->m);
	if (rc->wait_result == EOWNERDEAD)
		rc->consistent_result = pthread_mutex_consistent(&rc->m);
	rc->unlock_result = pthread_mutex_unlock(&rc->m);
	return NULL;
}

/* Locks, wakes the waiter, lets it block on the mutex, dies holding it. */
static void *robust_killer(void *p)
{
	struct robust_case *rc = p;
	if (pthread_mutex_lock(&rc->m) != 0)
		return NULL;
	rc->flag = 1;
	if (rc->broadcast)
		pthread_cond_broadcast(&rc->c);
	else
		pthread_cond_signal(&rc->c);
	sleep_ms(30);
	wait_task_sleeping(atomic_load(&rc->waiter_tid), 2000);
	sleep_ms(20);
	pthread_exit(NULL);
}

START_TEST(test_robust_owner_dies)
{
	REQUIRE_ROBUST_LIST();
	static const int robust_kinds[] = { 5, 10 }; /* robust, pi robust */
	const struct mkind *k = &kinds[robust_kinds[_i / 2]];
	struct robust_case *rc = calloc(1, sizeof *rc);
	rc->broadcast = _i % 2;
	init_mutex(&rc->m, k, false);
	ck_assert_int_eq(pthread_cond_init(&rc->c, NULL), 0);
	pthread_t w, x;
	ck_assert_int_eq(pthread_create(&w, NULL, robust_waiter, rc), 0);
	lock_when_ready(&rc->m, &rc->ready, 1);
	ck_assert_int_eq(pthread_mutex_unlock(&rc->m), 0);
	ck_assert(wait_task_sleeping(atomic_load(&rc->waiter_tid), 5000));
	ck_assert_int_eq(pthread_create(&x, NULL, robust_killer, rc), 0);
	join_within(x, NULL, 5000, "dying owner");
	join_within(w, NULL, 5000, "waiter");
	ck_assert_msg(rc->wait_result == EOWNERDEAD, "%s, %s: wait returned %d, not EOWNERDEAD", k->name,
		      rc->broadcast ? "broadcast" : "signal", rc->wait_result);
	ck_assert_int_eq(rc->consistent_result, 0);
	ck_assert_int_eq(rc->unlock_result, 0);
	ck_assert_int_eq(pthread_mutex_lock(&rc->m), 0); /* consistent again */
	ck_assert_int_eq(pthread_mutex_unlock(&rc->m), 0);
	ck_assert_int_eq(pthread_cond_destroy(&rc->c), 0);
	ck_assert_int_eq(pthread_mutex_destroy(&rc->m), 0);
	free(rc);
}
END_TEST

/* ---- destroy ---- */

/*
 * The classic pattern: waiters wait for a flag; the last user sets it,
 * broadcasts, destroys the condition and frees (or unmaps) its memory
 * while the woken waiters have not yet returned from the wait.
 *   variant 0: broadcast held, unlock, destroy
 *   variant 1: broadcast held, destroy while still holding, unlock
 *              (glibc: waiters confirm their wake-up before relocking
 *              "to allow pthread_cond_destroy while having acquired the
 *              mutex")
 *   variant 2: set the flag, unlock, broadcast, destroy
 *   variant 3: signal each waiter (held), unlock, destroy
 * Even rounds use malloc (scribbled before free), odd rounds a private
 * mapping that is unmapped, so a late touch of the object crashes.
 */
enum { DESTROY_WAITERS = 4 };

struct destroy_round {
	pthread_mutex_t *m;
	pthread_cond_t *c;
	_Atomic int *ready;
	int *flag;
	int result;
};

static void *destroy_waiter(void *p)
{
	struct destroy_round *d = p;
	pthread_mutex_lock(d->m);
	atomic_fetch_add(d->ready, 1);
	d->result = 0;
	while (!*d->flag && d->result == 0)
		d->result = pthread_cond_wait(d->c, d->m);
	pthread_mutex_unlock(d->m);
	return NULL;
}

struct watchdog {
	pthread_t thread;
	sem_t stop;
	long ms;
	char what[200];
};

static void *watchdog_main(void *p)
{
	struct watchdog *w = p;
	struct timespec dl = deadline_in_ms(CLOCK_REALTIME, w->ms);
	while (sem_timedwait(&w->stop, &dl) == -1) {
		if (errno == ETIMEDOUT) {
			fprintf(stderr, "watchdog: %s did not finish within %ld ms\n", w->what, w->ms);
			ck_abort_msg("watchdog: %s did not finish within %ld ms", w->what, w->ms);
		}
	}
	return NULL;
}

static void watchdog_start(struct watchdog *w, long ms, const char *what)
{
	w->ms = ms;
	snprintf(w->what, sizeof w->what, "%s", what);
	ck_assert_int_eq(sem_init(&w->stop, 0, 0), 0);
	ck_assert_int_eq(pthread_create(&w->thread, NULL, watchdog_main, w), 0);
}

static void watchdog_stop(struct watchdog *w)
{
	sem_post(&w->stop);
	pthread_join(w->thread, NULL);
	sem_destroy(&w->stop);
}

static const char *const destroy_variant_names[] = { "broadcast held, unlock, destroy",
						     "broadcast held, destroy holding the mutex",
						     "unlock, broadcast, destroy", "signal each held, unlock, destroy" };

START_TEST(test_destroy_after_broadcast)
{
	static const int destroy_kinds[] = { 0, 7 }; /* normal, pi */
	const struct mkind *k = &kinds[destroy_kinds[_i / 4]];
	int variant = _i % 4;
	enum { ROUNDS = 200 };
	pthread_mutex_t m;
	init_mutex(&m, k, false);
	char what[200];
	snprintf(what, sizeof what, "%s, %s", k->name, destroy_variant_names[variant]);
	struct watchdog wd;
	watchdog_start(&wd, 15000, what);

	for (int round = 0; round < ROUNDS; round++) {
		bool mapped = round & 1;
		size_t size = 4096;
		pthread_cond_t *c = mapped ? mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)
					   : malloc(sizeof *c);
		ck_assert(c != MAP_FAILED && c != NULL);
		ck_assert_int_eq(pthread_cond_init(c, NULL), 0);
		_Atomic int ready = 0;
		int flag = 0;
		struct destroy_round d[DESTROY_WAITERS];
		pthread_t t[DESTROY_WAITERS];
		for (int i = 0; i < DESTROY_WAITERS; i++) {
			d[i] = (struct destroy_round){ .m = &m, .c = c, .ready = &ready, .flag = &flag, .result = -1 };
			ck_assert_int_eq(pthread_create(&t[i], NULL, destroy_waiter, &d[i]), 0);
		}
		lock_when_ready(&m, &ready, DESTROY_WAITERS);
		flag = 1;
		int r = 0;
		switch (variant) {
		case 0:
			ck_assert_int_eq(pthread_cond_broadcast(c), 0);
			ck_assert_int_eq(pthread_mutex_unlock(&m), 0);
			r = pthread_cond_destroy(c);
			break;
		case 1:
			ck_assert_int_eq(pthread_cond_broadcast(c), 0);
			r = pthread_cond_destroy(c);
			ck_assert_int_eq(pthread_mutex_unlock(&m), 0);
			break;
		case 2:
			ck_assert_int_eq(pthread_mutex_unlock(&m), 0);
			ck_assert_int_eq(pthread_cond_broadcast(c), 0);
			r = pthread_cond_destroy(c);
			break;
		default:
			for (int i = 0; i < DESTROY_WAITERS; i++)
				ck_assert_int_eq(pthread_cond_signal(c), 0);
			ck_assert_int_eq(pthread_mutex_unlock(&m), 0);
			r = pthread_cond_destroy(c);
			break;
		}
		ck_assert_msg(r == 0, "%s, round %d: destroy returned %d", what, round, r);
		if (mapped) {
			munmap(c, size);
		} else {
			memset(c, 0xa5, sizeof *c);
			free(c);
		}
		for (int i = 0; i < DESTROY_WAITERS; i++) {
			join_within(t[i], NULL, 5000, "woken waiter");
			ck_assert_int_eq(d[i].result, 0);
		}
	}
	watchdog_stop(&wd);
	ck_assert_int_eq(pthread_mutex_destroy(&m), 0);
}
END_TEST

/* Library behaviour: destroy with a waiter nobody signalled is EBUSY (and
 * leaves the condition usable); glibc blocks until the waiter leaves. */
struct busy_destroy {
	pthread_cond_t *c;
	_Atomic int done;
	int result;
};

static void *busy_destroy_main(void *p)
{
	struct busy_destroy *b = p;
	b->result = pthread_cond_destroy(b->c);
	atomic_store(&b->done, 1);
	return NULL;
}

START_TEST(test_destroy_busy)
{
	if (!library_loaded())
		SKIP_TEST("library behaviour (glibc blocks), rtpthread not loaded");
	const struct mkind *k = &kinds[_i ? 7 : 0];
	pthread_mutex_t m;
	pthread_cond_t c;
	init_mutex(&m, k, false);
	ck_assert_int_eq(pthread_cond_init(&c, NULL), 0);
	int flag = 0;
	_Atomic int ready = 0;
	struct destroy_round d = { .m = &m, .c = &c, .ready = &ready, .flag = &flag };
	pthread_t t;
	ck_assert_int_eq(pthread_create(&t, NULL, destroy_waiter, &d), 0);
	lock_when_ready(&m, &ready, 1);
	ck_assert_int_eq(pthread_mutex_unlock(&m), 0);

	struct busy_destroy b = { .c = &c };
	pthread_t dt;
	ck_assert_int_eq(pthread_create(&dt, NULL, busy_destroy_main, &b), 0);
	ck_assert_msg(wait_flag(&b.done, 1, 3000), "destroy blocked with an unsignalled waiter (expected EBUSY)");
	join_within(dt, NULL, 1000, "destroy");
	ck_assert_int_eq(b.result, EBUSY);

	/* still a working condition */
	ck_assert_int_eq(pthread_mutex_lock(&m), 0);
	flag = 1;
	ck_assert_int_eq(pthread_cond_signal(&c), 0);
	ck_assert_int_eq(pthread_mutex_unlock(&m), 0);
	join_within(t, NULL, 5000, "waiter");
	ck_assert_int_eq(d.result, 0);
	ck_assert_int_eq(pthread_cond_destroy(&c), 0);
	ck_assert_int_eq(pthread_mutex_destroy(&m), 0);
}
END_TEST

/*
 * Every waiter got its signal and left: destroy must succeed (EBUSY is
 * only for a condition "referenced by another thread").  Two waiters
 * with a token each, signalled one at a time on a fresh condition.
 */
struct tokq {
	pthread_mutex_t m;
	pthread_cond_t c;
	_Atomic int ready;
	int tokens;
	_Atomic int consumed;
	_Atomic int returns; /* returns from the wait, spurious ones included */
	int errors;
};

static void *tokq_waiter(void *p)
{
	struct tokq *q = p;
	pthread_mutex_lock(&q->m);
	atomic_fetch_add(&q->ready, 1);
	while (q->tokens == 0) {
		if (pthread_cond_wait(&q->c, &q->m) != 0)
			q->errors++;
		atomic_fetch_add(&q->returns, 1);
	}
	q->tokens--;
	atomic_fetch_add(&q->consumed, 1);
	pthread_mutex_unlock(&q->m);
	return NULL;
}

START_TEST(test_destroy_after_signals)
{
	const struct mkind *k = &kinds[_i ? 7 : 0]; /* normal, pi */
	enum { NQ = 3 };
	struct tokq *q = calloc(1, sizeof *q);
	init_mutex(&q->m, k, false);
	ck_assert_int_eq(pthread_cond_init(&q->c, NULL), 0);
	pthread_t t[NQ];
	for (int i = 0; i < NQ; i++)
		ck_assert_int_eq(pthread_create(&t[i], NULL, tokq_waiter, q), 0);
	lock_when_ready(&q->m, &q->ready, NQ);
	for (int i = 0; i < NQ; i++) {
		q->tokens++;
		ck_assert_int_eq(pthread_cond_signal(&q->c), 0);
		ck_assert_int_eq(pthread_mutex_unlock(&q->m), 0);
		ck_assert_msg(wait_flag(&q->consumed, i + 1, 5000), "%s: signal %d woke nobody", k->name, i + 1);
		ck_assert_int_eq(pthread_mutex_lock(&q->m), 0);
	}
	ck_assert_int_eq(pthread_mutex_unlock(&q->m), 0);
	for (int i = 0; i < NQ; i++)
		join_within(t[i], NULL, 5000, "signalled waiter");
	ck_assert_int_eq(q->errors, 0);
	int r = pthread_cond_destroy(&q->c);
	ck_assert_msg(r == 0, "%s: destroy returned %d after every waiter was signalled and left (%d returns from "
		      "%d waits)", k->name, r, atomic_load(&q->returns), NQ);
	ck_assert_int_eq(pthread_mutex_destroy(&q->m), 0);
	free(q);
}
END_TEST

/* Library behaviour: one signal wakes one waiter, also on a fresh
 * condition (POSIX allows more; rtpthread promises the top one only). */
START_TEST(test_signal_wakes_one)
{
	if (!library_loaded())
		SKIP_TEST("library behaviour, rtpthread not loaded");
	const struct mkind *k = &kinds[_i ? 7 : 0]; /* normal, pi */
	enum { NQ = 3 };
	struct tokq *q = calloc(1, sizeof *q);
	init_mutex(&q->m, k, false);
	ck_assert_int_eq(pthread_cond_init(&q->c, NULL), 0);
	pthread_t t[NQ];
	for (int i = 0; i < NQ; i++)
		ck_assert_int_eq(pthread_create(&t[i], NULL, tokq_waiter, q), 0);
	for (int round = 0; round < NQ; round++) {
		lock_when_ready(&q->m, &q->ready, NQ);
		int before = atomic_load(&q->returns);
		q->tokens++;
		ck_assert_int_eq(pthread_cond_signal(&q->c), 0);
		ck_assert_int_eq(pthread_mutex_unlock(&q->m), 0);
		ck_assert(wait_flag(&q->consumed, round + 1, 5000));
		sleep_ms(50);
		ck_assert_msg(atomic_load(&q->returns) - before == 1,
			      "%s, signal %d: %d waiters returned from the wait", k->name, round + 1,
			      atomic_load(&q->returns) - before);
	}
	for (int i = 0; i < NQ; i++)
		join_within(t[i], NULL, 5000, "signalled waiter");
	ck_assert_int_eq(pthread_cond_destroy(&q->c), 0);
	ck_assert_int_eq(pthread_mutex_destroy(&q->m), 0);
	free(q);
}
END_TEST

/* ---- cancellation ---- */

/* _i: wait flavour (3) x kind (4) x main holds the mutex at cancel (2) */
static const int cancel_kinds[] = { 2, 4, 8, 9 }; /* errorcheck, recursive x3, pi errorcheck, pi recursive x3 */

struct cancel_case {
	pthread_mutex_t m;
	pthread_cond_t c;
	const struct mkind *k;
	int how;
	_Atomic int ready;
	_Atomic int handler_ran;
	int handler_trylock;
	int handler_unlock[3];
	int handler_extra_unlock;
	_Atomic pid_t tid;
};

static void cancel_handler(void *p)
{
	struct cancel_case *cc = p;
	cc->handler_trylock = cc->k->type == R_ ? EBUSY : pthread_mutex_trylock(&cc->m);
	for (int d = 0; d < cc->k->depth; d++)
		cc->handler_unlock[d] = pthread_mutex_unlock(&cc->m);
	cc->handler_extra_unlock = pthread_mutex_unlock(&cc->m);
	atomic_store(&cc->handler_ran, 1);
}

static void *cancel_waiter(void *p)
{
	struct cancel_case *cc = p;
	atomic_store(&cc->tid, test_gettid());
	for (int d = 0; d < cc->k->depth; d++)
		pthread_mutex_lock(&cc->m);
	pthread_cleanup_push(cancel_handler, cc);
	atomic_store(&cc->ready, 1);
	for (;;) {
		struct timespec rt = deadline_in_ms(CLOCK_REALTIME, 30000);
		struct timespec mono = deadline_in_ms(CLOCK_MONOTONIC, 30000);
		if (cc->how == 0)
			pthread_cond_wait(&cc->c, &cc->m);
		else if (cc->how == 1)
			pthread_cond_timedwait(&cc->c, &cc->m, &rt);
		else
			pthread_cond_clockwait(&cc->c, &cc->m, CLOCK_MONOTONIC, &mono);
	}
	pthread_cleanup_pop(0);
	return NULL;
}

START_TEST(test_cancel_relocks)
{
	static const char *const hows[] = { "wait", "timedwait", "clockwait" };
	int how = _i % 3;
	const struct mkind *k = &kinds[cancel_kinds[(_i / 3) % 4]];
	bool held = _i / 12;
	SKIP_DEEP_RECURSION(k);
	struct cancel_case *cc = calloc(1, sizeof *cc);
	cc->k = k;
	cc->how = how;
	init_mutex(&cc->m, k, false);
	ck_assert_int_eq(pthread_cond_init(&cc->c, NULL), 0);
	pthread_t t;
	ck_assert_int_eq(pthread_create(&t, NULL, cancel_waiter, cc), 0);
	lock_when_ready(&cc->m, &cc->ready, 1);
	if (!held)
		ck_assert_int_eq(pthread_mutex_unlock(&cc->m), 0);
	ck_assert(wait_task_sleeping(atomic_load(&cc->tid), 5000));
	ck_assert_int_eq(pthread_cancel(t), 0);
	if (held) {
		/* The handler must not run before the waiter has the mutex. */
		sleep_ms(50);
		ck_assert_msg(atomic_load(&cc->handler_ran) == 0, "%s, %s: cleanup handler ran without the mutex",
			      k->name, hows[how]);
		ck_assert_int_eq(pthread_mutex_unlock(&cc->m), 0);
	}
	void *ret = NULL;
	join_within(t, &ret, 5000, "cancelled waiter");
	ck_assert(ret == PTHREAD_CANCELED);
	ck_assert_int_eq(atomic_load(&cc->handler_ran), 1);
	ck_assert_msg(owner_trylock_ok(cc->handler_trylock), "%s, %s: trylock in the handler: %d", k->name,
		      hows[how], cc->handler_trylock);
	for (int d = 0; d < k->depth; d++)
		ck_assert_msg(cc->handler_unlock[d] == 0, "%s, %s: unlock %d in the handler: %d (mutex not owned)",
			      k->name, hows[how], d + 1, cc->handler_unlock[d]);
	ck_assert_msg(cc->handler_extra_unlock == EPERM, "%s, %s: unlock %d in the handler: %d", k->name, hows[how],
		      k->depth + 1, cc->handler_extra_unlock);
	ck_assert_int_eq(pthread_mutex_trylock(&cc->m), 0);
	ck_assert_int_eq(pthread_mutex_unlock(&cc->m), 0);
	ck_assert_int_eq(pthread_cond_destroy(&cc->c), 0);
	ck_assert_int_eq(pthread_mutex_destroy(&cc->m), 0);
	free(cc);
}
END_TEST

/*
 * A cancelled waiter does not swallow a signal meant for another waiter
 * (POSIX: "shall not consume any condition signal that may be directed
 * concurrently at the condition variable if there are other threads
 * blocked on it").  Made deterministic on one CPU: A (prio 20) and B
 * (prio 10) wait; main (prio 30) signals, which wakes A (the higher), and
 * cancels A before A runs; A acts on the cancellation on its way out of
 * the wait.  B must still be woken by that signal.
 */
struct swallow {
	pthread_mutex_t m;
	pthread_cond_t c;
	_Atomic int ready;
	int tokens;
	int b_result;
	int b_got;
	int b_late;
	int a_got;
	_Atomic int a_handler;
};

static void swallow_a_handler(void *p)
{
	struct swallow *s = p;
	atomic_store(&s->a_handler, 1);
	pthread_mutex_unlock(&s->m);
}

static void *swallow_a(void *p)
{
	struct swallow *s = p;
	pthread_mutex_lock(&s->m);
	pthread_cleanup_push(swallow_a_handler, s);
	atomic_fetch_add(&s->ready, 1);
	while (s->tokens == 0)
		pthread_cond_wait(&s->c, &s->m);
	s->tokens--; /* only if the cancellation was not acted upon in the wait */
	s->a_got = 1;
	pthread_cleanup_pop(1);
	return NULL;
}

static void *swallow_b(void *p)
{
	struct swallow *s = p;
	struct timespec dl = deadline_in_ms(CLOCK_MONOTONIC, 2000);
	pthread_mutex_lock(&s->m);
	atomic_fetch_add(&s->ready, 1);
	s->b_result = 0;
	while (s->tokens == 0 && s->b_result == 0)
		s->b_result = pthread_cond_clockwait(&s->c, &s->m, CLOCK_MONOTONIC, &dl);
	/* Woken by the deadline (whatever the wait returned): not by the signal. */
	s->b_late = now_ns(CLOCK_MONOTONIC) >= ts_to_ns(&dl);
	if (s->tokens > 0) {
		s->tokens--;
		s->b_got = 1;
	}
	pthread_mutex_unlock(&s->m);
	return NULL;
}

START_TEST(test_cancel_no_swallow)
{
	const struct mkind *k = &kinds[_i ? 7 : 0]; /* normal, pi */
	if (!rt_setup(30))
		SKIP_TEST("SCHED_FIFO refused");
	int conclusive = 0;
	for (int round = 0; round < 3; round++) {
		struct swallow *s = calloc(1, sizeof *s);
		init_mutex(&s->m, k, false);
		ck_assert_int_eq(pthread_cond_init(&s->c, NULL), 0);
		cond_warm_up(&s->c, &s->m, round + 1);
		pthread_t a, b;
		start_thread_sched(&b, SCHED_FIFO, 10, 0, swallow_b, s);
		start_thread_sched(&a, SCHED_FIFO, 20, 0, swallow_a, s);
		lock_when_ready(&s->m, &s->ready, 2);
		s->tokens = 1;
		ck_assert_int_eq(pthread_cond_signal(&s->c), 0);
		ck_assert_int_eq(pthread_cancel(a), 0);
		ck_assert_int_eq(pthread_mutex_unlock(&s->m), 0);
		void *ret = NULL;
		join_within(a, &ret, 5000, "cancelled waiter");
		join_within(b, NULL, 5000, "other waiter");
		ck_assert_int_eq(atomic_load(&s->a_handler), 1);
		if (s->a_got) {
			/* Not cancelled in the wait: A took the signal, legitimately. */
			ck_assert(ret == NULL);
			ck_assert_int_eq(s->b_got, 0);
		} else {
			conclusive++;
			ck_assert(ret == PTHREAD_CANCELED);
			ck_assert_msg(s->b_got == 1 && !s->b_late,
				      "%s, round %d: the signal was swallowed by the cancelled waiter: the other "
				      "waiter %s (wait returned %d)",
				      k->name, round, s->b_got ? "only woke at its deadline" : "never got it",
				      s->b_result);
		}
		ck_assert_int_eq(pthread_cond_destroy(&s->c), 0);
		ck_assert_int_eq(pthread_mutex_destroy(&s->m), 0);
		free(s);
	}
	if (conclusive == 0)
		printf("%s: cancellation never acted upon inside the wait: inconclusive\n", __func__);
}
END_TEST

/*
 * A signal sent while the only waiter is between releasing the mutex and
 * sleeping must not leave the condition unable to wake a later waiter.
 * Deterministic on one CPU: A (prio 10) holds the mutex while H (prio 20)
 * blocks on it; A's wait releases the mutex, which hands the CPU to H
 * before A sleeps; H signals (A's wake-up), then waits itself.  A returns
 * and signals H, which must wake.
 */
struct prewait {
	pthread_mutex_t m;
	pthread_cond_t c;
	sem_t go_h;
	int a_flag;
	int h_flag;
	int h_result;
	int h_late;
	int a_result;
};

static void *prewait_h(void *p)
{
	struct prewait *s = p;
	sem_wait_intr(&s->go_h);
	pthread_mutex_lock(&s->m);
	s->a_flag = 1;
	pthread_cond_signal(&s->c);
	struct timespec dl = deadline_in_ms(CLOCK_MONOTONIC, 2000);
	s->h_result = 0;
	while (!s->h_flag && s->h_result == 0)
		s->h_result = pthread_cond_clockwait(&s->c, &s->m, CLOCK_MONOTONIC, &dl);
	s->h_late = now_ns(CLOCK_MONOTONIC) >= ts_to_ns(&dl);
	pthread_mutex_unlock(&s->m);
	return NULL;
}

static void *prewait_a(void *p)
{
	struct prewait *s = p;
	pthread_mutex_lock(&s->m);
	sem_post(&s->go_h); /* H runs, blocks on the mutex */
	s->a_result = 0;
	while (!s->a_flag && s->a_result == 0)
		s->a_result = pthread_cond_wait(&s->c, &s->m);
	s->h_flag = 1;
	pthread_cond_signal(&s->c);
	pthread_mutex_unlock(&s->m);
	return NULL;
}

START_TEST(test_signal_before_sleep)
{
	const struct mkind *k = &kinds[_i ? 7 : 0]; /* normal, pi */
	if (!rt_setup(30))
		SKIP_TEST("SCHED_FIFO refused");
	for (int round = 0; round < 3; round++) {
		struct prewait *s = calloc(1, sizeof *s);
		init_mutex(&s->m, k, false);
		ck_assert_int_eq(pthread_cond_init(&s->c, NULL), 0);
		ck_assert_int_eq(sem_init(&s->go_h, 0, 0), 0);
		cond_warm_up(&s->c, &s->m, round + 1);
		pthread_t a, h;
		start_thread_sched(&h, SCHED_FIFO, 20, 0, prewait_h, s);
		start_thread_sched(&a, SCHED_FIFO, 10, 0, prewait_a, s);
		join_within(a, NULL, 5000, "first waiter");
		join_within(h, NULL, 5000, "second waiter");
		ck_assert_int_eq(s->a_result, 0);
		ck_assert_msg(s->h_flag && !s->h_late,
			      "%s, round %d: lost wake-up: the second waiter, signalled while it was the only "
			      "waiter, woke only at its deadline (wait returned %d)",
			      k->name, round, s->h_result);
		ck_assert_int_eq(pthread_cond_destroy(&s->c), 0);
		ck_assert_int_eq(pthread_mutex_destroy(&s->m), 0);
		sem_destroy(&s->go_h);
		free(s);
	}
}
END_TEST

/* ---- process-shared across fork ---- */

struct shm_cond {
	pthread_mutex_t m;
	pthread_cond_t c;
	int waiting;
	int tokens; /* signal: one per waiter */
	int flag;   /* broadcast */
	int woken;
	int errors;
};

struct shm_waiter_arg {
	struct shm_cond *s;
	bool broadcast;
};

static void *shm_waiter(void *p)
{
	struct shm_waiter_arg *a = p;
	struct shm_cond *s = a->s;
	struct timespec dl = deadline_in_ms(CLOCK_REALTIME, 5000);
	if (pthread_mutex_lock(&s->m) != 0) {
		__atomic_fetch_add(&s->errors, 1, __ATOMIC_SEQ_CST);
		return NULL;
	}
	s->waiting++;
	int r = 0;
	if (a->broadcast) {
		while (!s->flag && r == 0)
			r = pthread_cond_timedwait(&s->c, &s->m, &dl);
	} else {
		while (s->tokens == 0 && r == 0)
			r = pthread_cond_timedwait(&s->c, &s->m, &dl);
		if (r == 0)
			s->tokens--;
	}
	if (r == 0)
		s->woken++;
	else
		s->errors++;
	pthread_mutex_unlock(&s->m);
	return NULL;
}

/* nw waiter threads in this process; 0 if all were woken.  If the other
 * process is given (other > 0) and dies first, gives up on the threads
 * (they may be stuck on a mutex it held): 60 + its signal or exit code. */
static int shm_run_waiters(struct shm_cond *s, int nw, bool broadcast, pid_t other)
{
	pthread_t t[4];
	struct shm_waiter_arg a = { s, broadcast };
	for (int i = 0; i < nw; i++)
		if (pthread_create(&t[i], NULL, shm_waiter, &a) != 0)
			return 10;
	/* A waker that exited 0 has sent its wake-ups: the woken may still
	 * be on their way out (slowly, under qemu or load), so they get 10 s
	 * more; one that failed ends the wait at once. */
	int64_t give_up = INT64_MAX;
	for (int i = 0; i < nw; i++) {
		for (;;) {
			struct timespec dl = deadline_in_ms(CLOCK_REALTIME, 10);
			if (pthread_timedjoin_np(t[i], NULL, &dl) == 0)
				break;
			/* WNOWAIT: the caller reaps it (ck_assert_child_ok). */
			siginfo_t info = { .si_pid = 0 };
			if (other > 0 && waitid(P_PID, (id_t)other, &info, WEXITED | WNOHANG | WNOWAIT) == 0 &&
			    info.si_pid == other) {
				other = 0;
				if (info.si_code != CLD_EXITED || info.si_status != 0) {
					fprintf(stderr, "the waking process failed first: code %d status %d\n", info.si_code,
						info.si_status);
					return info.si_code == CLD_EXITED ? 60 + 100 + info.si_status : 60 + info.si_status;
				}
				give_up = now_ns(CLOCK_MONOTONIC) + 10 * NSEC_PER_SEC;
			}
			if (now_ns(CLOCK_MONOTONIC) > give_up) {
				fprintf(stderr, "the waking process exited 0, and a waiter is still waiting 10 s later\n");
				return 50;
			}
		}
	}
	return s->errors ? 20 + s->errors : (s->woken == nw ? 0 : 30 + s->woken);
}

/* Waits for nw waiters to be waiting, then wakes them. */
static int shm_run_waker(struct shm_cond *s, int nw, bool broadcast)
{
	int64_t end = now_ns(CLOCK_MONOTONIC) + 10 * NSEC_PER_SEC;
	for (;;) {
		if (pthread_mutex_lock(&s->m) != 0)
			return 40;
		if (s->waiting == nw)
			break;
		pthread_mutex_unlock(&s->m);
		if (now_ns(CLOCK_MONOTONIC) > end)
			return 41;
		sleep_ms(1);
	}
	int r = 0;
	if (broadcast) {
		s->flag = 1;
		r = pthread_cond_broadcast(&s->c);
		pthread_mutex_unlock(&s->m);
	} else {
		/* the first signal with the mutex held, the others without */
		s->tokens++;
		r = pthread_cond_signal(&s->c);
		pthread_mutex_unlock(&s->m);
		for (int i = 1; i < nw && r == 0; i++) {
			sleep_ms(5);
			pthread_mutex_lock(&s->m);
			s->tokens++;
			pthread_mutex_unlock(&s->m);
			r = pthread_cond_signal(&s->c);
		}
	}
	return r ? 50 + r : 0;
}

START_TEST(test_pshared_fork)
{
	/* bit 0: broadcast; bit 1: the child waits (else the parent); bit 2: PI mutex */
	bool broadcast = _i & 1, child_waits = _i & 2;
	const struct mkind *k = &kinds[(_i & 4) ? 7 : 0];
	int nw = broadcast ? 3 : 2;
	struct shm_cond *s = shared_alloc(sizeof *s);
	init_mutex(&s->m, k, true);
	init_cond(&s->c, CLOCK_REALTIME, true);
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0)
		_exit(child_waits ? shm_run_waiters(s, nw, broadcast, 0) : shm_run_waker(s, nw, broadcast));
	int r = child_waits ? shm_run_waker(s, nw, broadcast) : shm_run_waiters(s, nw, broadcast, pid);
	ck_assert_msg(r == 0, "%s, %s, %s: parent failed with %d%s", k->name, broadcast ? "broadcast" : "signal",
		      child_waits ? "child waits" : "parent waits", r,
		      r > 60 && r < 100 ? " (the waking child was killed by a signal: 60 + signo)" : "");
	ck_assert_child_ok(pid, 15000);
	ck_assert_int_eq(s->woken, nw);
	ck_assert_int_eq(pthread_cond_destroy(&s->c), 0);
	ck_assert_int_eq(pthread_mutex_destroy(&s->m), 0);
	shared_free(s, sizeof *s);
}
END_TEST

/* ---- C11 ---- */

struct c11_case {
	mtx_t m;
	cnd_t c;
	_Atomic int ready;
	int flag;
	int result;
	int relock_depth_ok;
	bool recursive;
};

static int c11_waiter(void *p)
{
	struct c11_case *cc = p;
	mtx_lock(&cc->m);
	if (cc->recursive)
		mtx_lock(&cc->m);
	atomic_fetch_add(&cc->ready, 1);
	int r = thrd_success;
	while (!cc->flag && r == thrd_success)
		r = cnd_wait(&cc->c, &cc->m);
	if (cc->recursive)
		mtx_unlock(&cc->m);
	mtx_unlock(&cc->m);
	return r;
}

START_TEST(test_c11)
{
	if (_i && !library_loaded())
		SKIP_TEST("recursive mtx locked twice: library behaviour, rtpthread not loaded");
	struct c11_case *cc = calloc(1, sizeof *cc);
	cc->recursive = _i;
	ck_assert_int_eq(mtx_init(&cc->m, cc->recursive ? mtx_plain | mtx_recursive : mtx_timed), thrd_success);
	ck_assert_int_eq(cnd_init(&cc->c), thrd_success);
	ck_assert_int_eq(cnd_signal(&cc->c), thrd_success);
	ck_assert_int_eq(cnd_broadcast(&cc->c), thrd_success);

	/* timed out: thrd_timedout, after the deadline, mutex held */
	ck_assert_int_eq(mtx_lock(&cc->m), thrd_success);
	struct timespec dl = deadline_in_ms(CLOCK_REALTIME, 50);
	ck_assert_int_eq(cnd_timedwait(&cc->c, &cc->m, &dl), thrd_timedout);
	ck_assert_int_ge(now_ns(CLOCK_REALTIME), ts_to_ns(&dl));
	ck_assert_int_eq(c11_other_trylock(&cc->m), thrd_busy);
	struct timespec past = deadline_in_ms(CLOCK_REALTIME, -50);
	ck_assert_int_eq(cnd_timedwait(&cc->c, &cc->m, &past), thrd_timedout);
	struct timespec bad = deadline_in_ms(CLOCK_REALTIME, 50);
	bad.tv_nsec = 1000000000L;
	ck_assert_int_eq(cnd_timedwait(&cc->c, &cc->m, &bad), thrd_error);
	ck_assert_int_eq(c11_other_trylock(&cc->m), thrd_busy);
	ck_assert_int_eq(mtx_unlock(&cc->m), thrd_success);

	/* signal one, then broadcast two */
	for (int round = 0; round < 2; round++) {
		int n = round ? 2 : 1;
		thrd_t t[2];
		atomic_store(&cc->ready, 0);
		cc->flag = 0;
		for (int i = 0; i < n; i++)
			ck_assert_int_eq(thrd_create(&t[i], c11_waiter, cc), thrd_success);
		lock_when_ready((pthread_mutex_t *)&cc->m, &cc->ready, n);
		cc->flag = 1;
		ck_assert_int_eq(round ? cnd_broadcast(&cc->c) : cnd_signal(&cc->c), thrd_success);
		ck_assert_int_eq(mtx_unlock(&cc->m), thrd_success);
		for (int i = 0; i < n; i++) {
			int r = -1;
			ck_assert_int_eq(thrd_join(t[i], &r), thrd_success);
			ck_assert_int_eq(r, thrd_success);
		}
	}
	cnd_destroy(&cc->c);
	mtx_destroy(&cc->m);
	free(cc);
}
END_TEST

/* ---- real time: priority order ---- */

/*
 * Eight SCHED_FIFO waiters, priorities 10..80 created in a shuffled order,
 * all on CPU 0.  The main thread runs at 5 while they start, so each one
 * runs at once and blocks in the wait before the main thread runs again;
 * it then checks all eight registered (a count under the mutex) and
 * rises to 90 to wake them.
 *   signal:    one signal at a time (a token under the mutex), waiting for
 *              the woken thread to record itself: the order of wake-ups.
 *   broadcast: one broadcast; the order in which they re-acquire.
 * Both must be strictly by descending priority.  _i: bit 0 broadcast,
 * bit 1 the main thread holds the mutex while it wakes, bit 2 PI mutex.
 */
enum { NPRIO = 8, PRIO_ROUNDS = 5 };

static const int prio_orders[PRIO_ROUNDS][NPRIO] = {
	{ 30, 80, 10, 50, 70, 20, 60, 40 }, { 50, 10, 80, 20, 70, 40, 30, 60 }, { 20, 60, 40, 80, 10, 70, 50, 30 },
	{ 70, 30, 60, 10, 40, 80, 20, 50 }, { 40, 20, 70, 60, 30, 10, 80, 50 },
};

struct prio_test {
	pthread_mutex_t m;
	pthread_cond_t c;
	bool broadcast;
	_Atomic int registered;
	int tokens;
	int go;
	int order[NPRIO];
	int n;
	sem_t recorded;
};

struct prio_waiter {
	struct prio_test *t;
	int prio;
	int result;
	pthread_t thread;
};

static void *prio_waiter_main(void *p)
{
	struct prio_waiter *w = p;
	struct prio_test *t = w->t;
	w->result = pthread_mutex_lock(&t->m);
	if (w->result)
		return NULL;
	atomic_fetch_add(&t->registered, 1);
	if (t->broadcast) {
		while (!t->go && w->result == 0)
			w->result = pthread_cond_wait(&t->c, &t->m);
	} else {
		while (t->tokens == 0 && w->result == 0)
			w->result = pthread_cond_wait(&t->c, &t->m);
		t->tokens--;
	}
	t->order[t->n++] = w->prio;
	pthread_mutex_unlock(&t->m);
	sem_post(&t->recorded);
	return NULL;
}

static void format_order(char *buf, size_t size, const int *order, int n)
{
	size_t used = 0;
	buf[0] = '\0';
	for (int i = 0; i < n && used < size; i++)
		used += (size_t)snprintf(buf + used, size - used, "%s%d", i ? " " : "", order[i]);
}

START_TEST(test_priority_order)
{
	bool broadcast = _i & 1, held = _i & 2, pi = _i & 4;
	const struct mkind *k = &kinds[pi ? 7 : 0];
	const char *name = broadcast ? (held ? "broadcast, held" : "broadcast, not held")
				     : (held ? "signal, held" : "signal, not held");
	if (!rt_setup(5))
		SKIP_TEST("SCHED_FIFO refused");
	int failures = 0;
	char first_bad[200] = "";
	for (int round = 0; round < PRIO_ROUNDS; round++) {
		struct prio_test *t = calloc(1, sizeof *t);
		struct prio_waiter w[NPRIO];
		t->broadcast = broadcast;
		init_mutex(&t->m, k, false);
		ck_assert_int_eq(pthread_cond_init(&t->c, NULL), 0);
		ck_assert_int_eq(sem_init(&t->recorded, 0, 0), 0);
		ck_assert(try_fifo(5));
		for (int i = 0; i < NPRIO; i++) {
			w[i] = (struct prio_waiter){ .t = t, .prio = prio_orders[round][i], .result = -1 };
			start_thread_sched(&w[i].thread, SCHED_FIFO, w[i].prio, 0, prio_waiter_main, &w[i]);
		}
		/* Every waiter outranks us on our CPU: they are all asleep. */
		ck_assert_int_eq(pthread_mutex_lock(&t->m), 0);
		ck_assert_int_eq(atomic_load(&t->registered), NPRIO);
		ck_assert_int_eq(pthread_mutex_unlock(&t->m), 0);
		ck_assert(try_fifo(90));

		struct timespec dl;
		if (broadcast) {
			ck_assert_int_eq(pthread_mutex_lock(&t->m), 0);
			t->go = 1;
			if (held) {
				ck_assert_int_eq(pthread_cond_broadcast(&t->c), 0);
				ck_assert_int_eq(pthread_mutex_unlock(&t->m), 0);
			} else {
				ck_assert_int_eq(pthread_mutex_unlock(&t->m), 0);
				ck_assert_int_eq(pthread_cond_broadcast(&t->c), 0);
			}
			for (int i = 0; i < NPRIO; i++) {
				dl = deadline_in_ms(CLOCK_REALTIME, 5000);
				ck_assert_msg(sem_timedwait(&t->recorded, &dl) == 0, "%s: only %d of %d woke", name, i,
					      NPRIO);
			}
		} else {
			for (int i = 0; i < NPRIO; i++) {
				ck_assert_int_eq(pthread_mutex_lock(&t->m), 0);
				t->tokens++;
				if (held) {
					ck_assert_int_eq(pthread_cond_signal(&t->c), 0);
					ck_assert_int_eq(pthread_mutex_unlock(&t->m), 0);
				} else {
					ck_assert_int_eq(pthread_mutex_unlock(&t->m), 0);
					ck_assert_int_eq(pthread_cond_signal(&t->c), 0);
				}
				dl = deadline_in_ms(CLOCK_REALTIME, 5000);
				ck_assert_msg(sem_timedwait(&t->recorded, &dl) == 0, "%s: signal %d woke nobody", name,
					      i + 1);
			}
		}
		for (int i = 0; i < NPRIO; i++) {
			join_within(w[i].thread, NULL, 5000, "prioritised waiter");
			ck_assert_int_eq(w[i].result, 0);
		}
		char buf[128];
		format_order(buf, sizeof buf, t->order, t->n);
		bool ok = t->n == NPRIO;
		for (int i = 0; ok && i < NPRIO; i++)
			ok = t->order[i] == 80 - 10 * i;
		if (!ok) {
			printf("%s, %s, round %d: %s order %s  <-- NOT by priority\n", k->name, name, round,
			       broadcast ? "re-acquire" : "wake", buf);
			fflush(stdout);
		}
		if (!ok && failures++ == 0)
			snprintf(first_bad, sizeof first_bad, "round %d: %s", round, buf);
		ck_assert_int_eq(pthread_cond_destroy(&t->c), 0);
		ck_assert_int_eq(pthread_mutex_destroy(&t->m), 0);
		sem_destroy(&t->recorded);
		free(t);
	}
	printf("%s, %s: %s order by priority in %d of %d rounds\n", k->name, name,
	       broadcast ? "re-acquire" : "wake", PRIO_ROUNDS - failures, PRIO_ROUNDS);
	fflush(stdout);
	ck_assert_msg(failures == 0, "%s mutex, %s: %d of %d rounds not in descending priority order (first: %s)",
		      k->name, name, failures, PRIO_ROUNDS, first_bad);
}
END_TEST

/*
 * A waiter that arrives after earlier signals outranks the older waiters:
 * 20, 10, 30 wait; one signal (30 wakes); then 80 starts waiting; three
 * more signals must wake 80, 20, 10.  (NPTL's groups serve the waiters
 * that were there at the first signal before any later one.)  _i: bit 0
 * the main thread holds the mutex while it signals, bit 1 PI mutex.
 */
START_TEST(test_priority_late_waiter)
{
	bool held = _i & 1, pi = _i & 2;
	const struct mkind *k = &kinds[pi ? 7 : 0];
	static const int first[] = { 20, 10, 30 };
	static const int expect[] = { 30, 80, 20, 10 };
	if (!rt_setup(5))
		SKIP_TEST("SCHED_FIFO refused");
	int failures = 0;
	char first_bad[200] = "";
	for (int round = 0; round < PRIO_ROUNDS; round++) {
		struct prio_test *t = calloc(1, sizeof *t);
		struct prio_waiter w[4];
		init_mutex(&t->m, k, false);
		ck_assert_int_eq(pthread_cond_init(&t->c, NULL), 0);
		ck_assert_int_eq(sem_init(&t->recorded, 0, 0), 0);
		ck_assert(try_fifo(5));
		for (int i = 0; i < 4; i++) {
			if (i == 3) {
				/* the late one, after the first signal */
				ck_assert(try_fifo(5));
			}
			w[i] = (struct prio_waiter){ .t = t, .prio = i < 3 ? first[i] : 80, .result = -1 };
			start_thread_sched(&w[i].thread, SCHED_FIFO, w[i].prio, 0, prio_waiter_main, &w[i]);
			if (i < 2)
				continue;
			ck_assert_int_eq(pthread_mutex_lock(&t->m), 0);
			ck_assert_int_eq(atomic_load(&t->registered), i == 2 ? 3 : 3 + 1);
			ck_assert_int_eq(pthread_mutex_unlock(&t->m), 0);
			ck_assert(try_fifo(90));
			for (int n = 0; n < (i == 2 ? 1 : 3); n++) {
				ck_assert_int_eq(pthread_mutex_lock(&t->m), 0);
				t->tokens++;
				if (held) {
					ck_assert_int_eq(pthread_cond_signal(&t->c), 0);
					ck_assert_int_eq(pthread_mutex_unlock(&t->m), 0);
				} else {
					ck_assert_int_eq(pthread_mutex_unlock(&t->m), 0);
					ck_assert_int_eq(pthread_cond_signal(&t->c), 0);
				}
				struct timespec dl = deadline_in_ms(CLOCK_REALTIME, 5000);
				ck_assert_msg(sem_timedwait(&t->recorded, &dl) == 0, "signal woke nobody");
			}
		}
		for (int i = 0; i < 4; i++) {
			join_within(w[i].thread, NULL, 5000, "prioritised waiter");
			ck_assert_int_eq(w[i].result, 0);
		}
		char buf[128];
		format_order(buf, sizeof buf, t->order, t->n);
		bool ok = t->n == 4;
		for (int i = 0; ok && i < 4; i++)
			ok = t->order[i] == expect[i];
		if (!ok) {
			printf("%s, late waiter, signal %s, round %d: wake order %s  <-- expected 30 80 20 10\n",
			       k->name, held ? "held" : "not held", round, buf);
			fflush(stdout);
		}
		if (!ok && failures++ == 0)
			snprintf(first_bad, sizeof first_bad, "round %d: %s", round, buf);
		ck_assert_int_eq(pthread_cond_destroy(&t->c), 0);
		ck_assert_int_eq(pthread_mutex_destroy(&t->m), 0);
		sem_destroy(&t->recorded);
		free(t);
	}
	printf("%s, late waiter, signal %s: right order in %d of %d rounds\n", k->name, held ? "held" : "not held",
	       PRIO_ROUNDS - failures, PRIO_ROUNDS);
	fflush(stdout);
	ck_assert_msg(failures == 0, "%s mutex: a late high-priority waiter was not woken first in %d of %d rounds "
		      "(first: %s; expected 30 80 20 10)", k->name, failures, PRIO_ROUNDS, first_bad);
}
END_TEST

/* ---- real time: a waiter requeued onto a PI mutex boosts its owner ---- */

/*
 * All on CPU 0.  H (prio 50) waits on the condition with PI mutex m; L
 * (prio 10) then takes m and spins reading its own priority; the main
 * thread (60, the "third thread") signals or broadcasts without the
 * mutex.  H is then blocked on m, owned by L: L must run at 50, and at
 * once (read by the main thread before anyone else ran: a library that
 * merely wakes H leaves L at 10 until H gets the CPU), and at 10 again
 * after it unlocked.
 */
struct boost {
	pthread_mutex_t m;
	pthread_cond_t c;
	_Atomic int h_ready;
	_Atomic int flag;
	int h_result;
	_Atomic int h_got;
	_Atomic int l_locked;
	_Atomic int l_max;
	_Atomic int l_release;
	int l_after;
	int l_unlock;
	_Atomic pid_t h_tid, l_tid;
};

static int own_prio(void)
{
	struct task_sched s;
	if (!task_sched_read(test_gettid(), &s))
		return -1;
	return s.prio < 0 ? (int)(-1 - s.prio) : 0;
}

static void *boost_h(void *p)
{
	struct boost *b = p;
	atomic_store(&b->h_tid, test_gettid());
	pthread_mutex_lock(&b->m);
	atomic_store(&b->h_ready, 1);
	b->h_result = 0;
	while (!atomic_load(&b->flag) && b->h_result == 0)
		b->h_result = pthread_cond_wait(&b->c, &b->m);
	atomic_store(&b->h_got, 1);
	pthread_mutex_unlock(&b->m);
	return NULL;
}

static void *boost_l(void *p)
{
	struct boost *b = p;
	atomic_store(&b->l_tid, test_gettid());
	pthread_mutex_lock(&b->m);
	atomic_store(&b->l_locked, 1);
	while (!atomic_load(&b->l_release)) {
		int prio = own_prio();
		if (prio > atomic_load(&b->l_max))
			atomic_store(&b->l_max, prio);
	}
	b->l_unlock = pthread_mutex_unlock(&b->m);
	b->l_after = own_prio();
	return NULL;
}

START_TEST(test_pi_boost_through_requeue)
{
	bool broadcast = _i;
	const char *how = broadcast ? "broadcast" : "signal";
	if (!rt_setup(60))
		SKIP_TEST("SCHED_FIFO refused");
	struct boost *b = calloc(1, sizeof *b);
	init_mutex(&b->m, &kinds[7], false);
	ck_assert_int_eq(pthread_cond_init(&b->c, NULL), 0);
	pthread_t h, l;
	start_thread_sched(&h, SCHED_FIFO, 50, 0, boost_h, b);
	lock_when_ready(&b->m, &b->h_ready, 1); /* H is inside the wait */
	ck_assert_int_eq(pthread_mutex_unlock(&b->m), 0);
	ck_assert(wait_task_sleeping(atomic_load(&b->h_tid), 5000));

	start_thread_sched(&l, SCHED_FIFO, 10, 0, boost_l, b);
	ck_assert(wait_flag(&b->l_locked, 1, 5000));
	pid_t l_tid = atomic_load(&b->l_tid), h_tid = atomic_load(&b->h_tid);
	ck_assert_int_eq(task_rt_prio(l_tid), 10); /* H waits on the condition, not the mutex */

	atomic_store(&b->flag, 1);
	ck_assert_int_eq(broadcast ? pthread_cond_broadcast(&b->c) : pthread_cond_signal(&b->c), 0);
	int immediate = task_rt_prio(l_tid);
	char h_state = task_state(h_tid);
	/* Let L run (and H, if it was merely woken). */
	bool saw = wait_flag(&b->l_max, 50, 2000);
	int l_boosted = task_rt_prio(l_tid);
	int h_got_early = atomic_load(&b->h_got);
	atomic_store(&b->l_release, 1);
	join_within(l, NULL, 5000, "mutex owner L");
	join_within(h, NULL, 5000, "waiter H");
	printf("pi boost, %s: owner at %d right after the %s (H state %c), at %d later, max seen by itself %d, "
	       "%d after unlock\n",
	       how, immediate, how, h_state, l_boosted, atomic_load(&b->l_max), b->l_after);
	fflush(stdout);
	ck_assert_msg(h_got_early == 0, "%s: H got the mutex while L held it", how);
	ck_assert_msg(saw && l_boosted == 50, "%s: owner not boosted to 50 by the waiter blocked on the mutex "
		      "(saw max %d, now %d)", how, atomic_load(&b->l_max), l_boosted);
	ck_assert_msg(immediate == 50,
		      "%s: owner at %d right after the %s: the waiter was woken, not requeued onto the PI mutex "
		      "(boost only once it runs)",
		      how, immediate, how);
	ck_assert_int_eq(b->l_unlock, 0);
	ck_assert_msg(b->l_after == 10, "%s: owner still at %d after unlocking", how, b->l_after);
	ck_assert_int_eq(b->h_result, 0);
	ck_assert_int_eq(atomic_load(&b->h_got), 1);
	ck_assert_int_eq(pthread_cond_destroy(&b->c), 0);
	ck_assert_int_eq(pthread_mutex_destroy(&b->m), 0);
	free(b);
}
END_TEST

/* ---- suite ---- */

static Suite *cond_suite(void)
{
	Suite *s = suite_create("cond");
	TCase *tc;

	tc = tcase_create("basics");
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_condattr);
	tcase_add_test(tc, test_init_destroy);
	tcase_add_loop_test(tc, test_c11, 0, 2);
	suite_add_tcase(s, tc);

	tc = tcase_create("errors");
	tcase_set_timeout(tc, 30);
	tcase_add_loop_test(tc, test_wait_not_owner, 0, (int)(sizeof eperm_kinds / sizeof eperm_kinds[0]));
	tcase_add_loop_test(tc, test_bad_timespec, 0, (int)(sizeof plain_kinds / sizeof plain_kinds[0]));
	tcase_add_loop_test(tc, test_clockwait_bad_clock, 0, (int)(sizeof plain_kinds / sizeof plain_kinds[0]));
	suite_add_tcase(s, tc);

	tc = tcase_create("timeouts");
	tcase_set_timeout(tc, 30);
	tcase_add_loop_test(tc, test_timeout_clock, 0, NTIMEOUT_CASES * 2);
	tcase_add_test(tc, test_timed_wait_woken);
	suite_add_tcase(s, tc);

	tc = tcase_create("kinds");
	tcase_set_timeout(tc, 30);
	tcase_add_loop_test(tc, test_wait_wake_kinds, 0, NKINDS * 4);
	tcase_add_loop_test(tc, test_broadcast_herd, 0, (int)(sizeof herd_kinds / sizeof herd_kinds[0]) * 2);
	tcase_add_loop_test(tc, test_robust_owner_dies, 0, 4);
	suite_add_tcase(s, tc);

	tc = tcase_create("destroy");
	tcase_set_timeout(tc, 30);
	tcase_add_loop_test(tc, test_destroy_after_broadcast, 0, 8);
	tcase_add_loop_test(tc, test_destroy_busy, 0, 2);
	tcase_add_loop_test(tc, test_destroy_after_signals, 0, 2);
	tcase_add_loop_test(tc, test_signal_wakes_one, 0, 2);
	suite_add_tcase(s, tc);

	tc = tcase_create("cancel");
	tcase_set_timeout(tc, 30);
	tcase_add_loop_test(tc, test_cancel_relocks, 0, 24);
	suite_add_tcase(s, tc);

	tc = tcase_create("races");
	tcase_set_timeout(tc, 30);
	tcase_add_loop_test(tc, test_cancel_no_swallow, 0, 2);
	tcase_add_loop_test(tc, test_signal_before_sleep, 0, 2);
	suite_add_tcase(s, tc);

	tc = tcase_create("pshared");
	tcase_set_timeout(tc, 30);
	tcase_add_loop_test(tc, test_pshared_fork, 0, 8);
	suite_add_tcase(s, tc);

	tc = tcase_create("realtime");
	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, test_priority_order, 0, 8);
	tcase_add_loop_test(tc, test_priority_late_waiter, 0, 4);
	tcase_add_loop_test(tc, test_pi_boost_through_requeue, 0, 2);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return run_suite(cond_suite());
}
