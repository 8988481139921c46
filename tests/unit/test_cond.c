/*
 * Condition variables, the contract of every entry point: attributes,
 * initialisation (static and dynamic), C11 cnd_*, the error paths (EPERM
 * for a mutex not held, bad deadlines and clocks, the mutex kept as it
 * was) and timeouts on the right clock.
 *
 * cond_util.h: the mutex kinds and the conventions of these tests.
 */
#include "cond_util.h"

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
	return s;
}

int main(void)
{
	return run_suite(cond_suite());
}
