/*
 * Mutex attributes: every get/set pair, invalid values, and every
 * type x protocol x robust x pshared combination as a working mutex
 * (robust + PRIO_PROTECT included, which NPTL refuses with ENOTSUP).
 */
#include "testutil.h"

static const int types[] = { PTHREAD_MUTEX_NORMAL, PTHREAD_MUTEX_RECURSIVE, PTHREAD_MUTEX_ERRORCHECK,
			     PTHREAD_MUTEX_ADAPTIVE_NP };
static const int protocols[] = { PTHREAD_PRIO_NONE, PTHREAD_PRIO_INHERIT, PTHREAD_PRIO_PROTECT };

struct attr_values {
	int type, protocol, ceiling, robust, pshared;
};

static struct attr_values attr_read(const pthread_mutexattr_t *a)
{
	struct attr_values v;
	ck_assert_int_eq(pthread_mutexattr_gettype(a, &v.type), 0);
	ck_assert_int_eq(pthread_mutexattr_getprotocol(a, &v.protocol), 0);
	ck_assert_int_eq(pthread_mutexattr_getprioceiling(a, &v.ceiling), 0);
	ck_assert_int_eq(pthread_mutexattr_getrobust(a, &v.robust), 0);
	ck_assert_int_eq(pthread_mutexattr_getpshared(a, &v.pshared), 0);
	return v;
}

static void attr_expect(const pthread_mutexattr_t *a, struct attr_values want)
{
	struct attr_values v = attr_read(a);
	ck_assert_int_eq(v.type, want.type);
	ck_assert_int_eq(v.protocol, want.protocol);
	ck_assert_int_eq(v.ceiling, want.ceiling);
	ck_assert_int_eq(v.robust, want.robust);
	ck_assert_int_eq(v.pshared, want.pshared);
}

static const struct attr_values defaults = { PTHREAD_MUTEX_DEFAULT, PTHREAD_PRIO_NONE, 1, PTHREAD_MUTEX_STALLED,
					     PTHREAD_PROCESS_PRIVATE };

START_TEST(test_attr_defaults)
{
	pthread_mutexattr_t a;
	ck_assert_int_eq(pthread_mutexattr_init(&a), 0);
	attr_expect(&a, defaults);
	ck_assert_int_eq(PTHREAD_MUTEX_DEFAULT, PTHREAD_MUTEX_NORMAL);
	ck_assert_int_eq(pthread_mutexattr_destroy(&a), 0);
}
END_TEST

START_TEST(test_attr_type)
{
	pthread_mutexattr_t a;
	ck_assert_int_eq(pthread_mutexattr_init(&a), 0);
	for (int i = 0; i < 4; i++) {
		int type = -1;
		ck_assert_int_eq(pthread_mutexattr_settype(&a, types[i]), 0);
		ck_assert_int_eq(pthread_mutexattr_gettype(&a, &type), 0);
		ck_assert_int_eq(type, types[i]);
	}
	ck_assert_int_eq(pthread_mutexattr_settype(&a, PTHREAD_MUTEX_ERRORCHECK), 0);
	static const int bad[] = { -1, 4, 5, 0x10, 0x200, 1000, -0x7fffffff };
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		ck_assert_msg(pthread_mutexattr_settype(&a, bad[i]) == EINVAL, "type %d accepted", bad[i]);
		int type = -1;
		ck_assert_int_eq(pthread_mutexattr_gettype(&a, &type), 0);
		ck_assert_int_eq(type, PTHREAD_MUTEX_ERRORCHECK);
	}
	ck_assert_int_eq(pthread_mutexattr_settype(&a, PTHREAD_MUTEX_DEFAULT), 0);
	struct attr_values want = defaults;
	attr_expect(&a, want);
	ck_assert_int_eq(pthread_mutexattr_destroy(&a), 0);
}
END_TEST

START_TEST(test_attr_protocol)
{
	pthread_mutexattr_t a;
	ck_assert_int_eq(pthread_mutexattr_init(&a), 0);
	for (int i = 0; i < 3; i++) {
		int protocol = -1;
		ck_assert_int_eq(pthread_mutexattr_setprotocol(&a, protocols[i]), 0);
		ck_assert_int_eq(pthread_mutexattr_getprotocol(&a, &protocol), 0);
		ck_assert_int_eq(protocol, protocols[i]);
	}
	static const int bad[] = { -1, 3, 4, 100 };
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		ck_assert_msg(pthread_mutexattr_setprotocol(&a, bad[i]) == EINVAL, "protocol %d accepted", bad[i]);
		int protocol = -1;
		ck_assert_int_eq(pthread_mutexattr_getprotocol(&a, &protocol), 0);
		ck_assert_int_eq(protocol, PTHREAD_PRIO_PROTECT);
	}
	ck_assert_int_eq(pthread_mutexattr_destroy(&a), 0);
}
END_TEST

START_TEST(test_attr_prioceiling)
{
	pthread_mutexattr_t a;
	ck_assert_int_eq(pthread_mutexattr_init(&a), 0);
	int lo = sched_get_priority_min(SCHED_FIFO), hi = sched_get_priority_max(SCHED_FIFO);
	ck_assert_int_eq(lo, 1);
	ck_assert_int_eq(hi, 99);
	for (int c = lo; c <= hi; c++) {
		int got = -1;
		ck_assert_int_eq(pthread_mutexattr_setprioceiling(&a, c), 0);
		ck_assert_int_eq(pthread_mutexattr_getprioceiling(&a, &got), 0);
		ck_assert_int_eq(got, c);
	}
	ck_assert_int_eq(pthread_mutexattr_setprioceiling(&a, 42), 0);
	static const int bad[] = { 0, -1, 100, 1000, 4096, -4096 };
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		ck_assert_msg(pthread_mutexattr_setprioceiling(&a, bad[i]) == EINVAL, "ceiling %d accepted", bad[i]);
		int got = -1;
		ck_assert_int_eq(pthread_mutexattr_getprioceiling(&a, &got), 0);
		ck_assert_int_eq(got, 42);
	}
	/* The ceiling reaches the mutex, which reports it. */
	ck_assert_int_eq(pthread_mutexattr_setprotocol(&a, PTHREAD_PRIO_PROTECT), 0);
	pthread_mutex_t m;
	ck_assert_int_eq(pthread_mutex_init(&m, &a), 0);
	int got = -1;
	ck_assert_int_eq(pthread_mutex_getprioceiling(&m, &got), 0);
	ck_assert_int_eq(got, 42);
	ck_assert_int_eq(pthread_mutex_destroy(&m), 0);
	/* An unset ceiling is the minimum. */
	ck_assert_int_eq(pthread_mutexattr_destroy(&a), 0);
	ck_assert_int_eq(pthread_mutexattr_init(&a), 0);
	ck_assert_int_eq(pthread_mutexattr_setprotocol(&a, PTHREAD_PRIO_PROTECT), 0);
	ck_assert_int_eq(pthread_mutex_init(&m, &a), 0);
	ck_assert_int_eq(pthread_mutex_getprioceiling(&m, &got), 0);
	ck_assert_int_eq(got, 1);
	ck_assert_int_eq(pthread_mutex_destroy(&m), 0);
	ck_assert_int_eq(pthread_mutexattr_destroy(&a), 0);
}
END_TEST

START_TEST(test_attr_robust)
{
	pthread_mutexattr_t a;
	int robust = -1;
	ck_assert_int_eq(pthread_mutexattr_init(&a), 0);
	ck_assert_int_eq(pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST), 0);
	ck_assert_int_eq(pthread_mutexattr_getrobust(&a, &robust), 0);
	ck_assert_int_eq(robust, PTHREAD_MUTEX_ROBUST);
	static const int bad[] = { -1, 2, 3, 100 };
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		ck_assert_msg(pthread_mutexattr_setrobust(&a, bad[i]) == EINVAL, "robust %d accepted", bad[i]);
		ck_assert_int_eq(pthread_mutexattr_getrobust(&a, &robust), 0);
		ck_assert_int_eq(robust, PTHREAD_MUTEX_ROBUST);
	}
	ck_assert_int_eq(pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_STALLED), 0);
	ck_assert_int_eq(pthread_mutexattr_getrobust(&a, &robust), 0);
	ck_assert_int_eq(robust, PTHREAD_MUTEX_STALLED);
	ck_assert_int_eq(pthread_mutexattr_destroy(&a), 0);
}
END_TEST

START_TEST(test_attr_pshared)
{
	pthread_mutexattr_t a;
	int pshared = -1;
	ck_assert_int_eq(pthread_mutexattr_init(&a), 0);
	ck_assert_int_eq(pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED), 0);
	ck_assert_int_eq(pthread_mutexattr_getpshared(&a, &pshared), 0);
	ck_assert_int_eq(pshared, PTHREAD_PROCESS_SHARED);
	static const int bad[] = { -1, 2, 3, 100 };
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		ck_assert_msg(pthread_mutexattr_setpshared(&a, bad[i]) == EINVAL, "pshared %d accepted", bad[i]);
		ck_assert_int_eq(pthread_mutexattr_getpshared(&a, &pshared), 0);
		ck_assert_int_eq(pshared, PTHREAD_PROCESS_SHARED);
	}
	ck_assert_int_eq(pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_PRIVATE), 0);
	ck_assert_int_eq(pthread_mutexattr_getpshared(&a, &pshared), 0);
	ck_assert_int_eq(pshared, PTHREAD_PROCESS_PRIVATE);
	ck_assert_int_eq(pthread_mutexattr_destroy(&a), 0);
}
END_TEST

/* Each attribute is stored apart from the others. */
START_TEST(test_attr_independent)
{
	pthread_mutexattr_t a;
	ck_assert_int_eq(pthread_mutexattr_init(&a), 0);
	struct attr_values v = { PTHREAD_MUTEX_ADAPTIVE_NP, PTHREAD_PRIO_PROTECT, 99, PTHREAD_MUTEX_ROBUST,
				 PTHREAD_PROCESS_SHARED };
	ck_assert_int_eq(pthread_mutexattr_settype(&a, v.type), 0);
	ck_assert_int_eq(pthread_mutexattr_setprotocol(&a, v.protocol), 0);
	ck_assert_int_eq(pthread_mutexattr_setprioceiling(&a, v.ceiling), 0);
	ck_assert_int_eq(pthread_mutexattr_setrobust(&a, v.robust), 0);
	ck_assert_int_eq(pthread_mutexattr_setpshared(&a, v.pshared), 0);
	attr_expect(&a, v);

	v.type = PTHREAD_MUTEX_RECURSIVE;
	ck_assert_int_eq(pthread_mutexattr_settype(&a, v.type), 0);
	attr_expect(&a, v);
	v.protocol = PTHREAD_PRIO_INHERIT;
	ck_assert_int_eq(pthread_mutexattr_setprotocol(&a, v.protocol), 0);
	attr_expect(&a, v);
	v.ceiling = 1;
	ck_assert_int_eq(pthread_mutexattr_setprioceiling(&a, v.ceiling), 0);
	attr_expect(&a, v);
	v.robust = PTHREAD_MUTEX_STALLED;
	ck_assert_int_eq(pthread_mutexattr_setrobust(&a, v.robust), 0);
	attr_expect(&a, v);
	v.pshared = PTHREAD_PROCESS_PRIVATE;
	ck_assert_int_eq(pthread_mutexattr_setpshared(&a, v.pshared), 0);
	attr_expect(&a, v);
	v.ceiling = 64;
	ck_assert_int_eq(pthread_mutexattr_setprioceiling(&a, v.ceiling), 0);
	v.type = PTHREAD_MUTEX_NORMAL;
	ck_assert_int_eq(pthread_mutexattr_settype(&a, v.type), 0);
	attr_expect(&a, v);

	/* destroy + init starts from the defaults again. */
	ck_assert_int_eq(pthread_mutexattr_destroy(&a), 0);
	ck_assert_int_eq(pthread_mutexattr_init(&a), 0);
	attr_expect(&a, defaults);
	ck_assert_int_eq(pthread_mutexattr_destroy(&a), 0);
}
END_TEST

/* A NULL attribute is the default mutex: NORMAL, any thread may unlock. */
START_TEST(test_init_null_attr)
{
	pthread_mutex_t m;
	ck_assert_int_eq(pthread_mutex_init(&m, NULL), 0);
	int c;
	ck_assert_int_eq(pthread_mutex_getprioceiling(&m, &c), EINVAL);
	ck_assert_int_eq(pthread_mutex_lock(&m), 0);
	ck_assert_int_eq(pthread_mutex_trylock(&m), EBUSY);
	ck_assert_int_eq(other_trylock(&m), EBUSY);
	ck_assert_int_eq(other_unlock(&m), 0);
	ck_assert_int_eq(other_trylock(&m), 0);
	ck_assert_int_eq(pthread_mutex_destroy(&m), 0);
}
END_TEST

/* An attribute object may be destroyed once the mutex is initialized. */
START_TEST(test_attr_destroyed_after_init)
{
	pthread_mutexattr_t a;
	pthread_mutex_t m;
	ck_assert_int_eq(pthread_mutexattr_init(&a), 0);
	ck_assert_int_eq(pthread_mutexattr_settype(&a, PTHREAD_MUTEX_ERRORCHECK), 0);
	ck_assert_int_eq(pthread_mutex_init(&m, &a), 0);
	ck_assert_int_eq(pthread_mutexattr_destroy(&a), 0);
	memset(&a, 0xff, sizeof a);
	ck_assert_int_eq(pthread_mutex_lock(&m), 0);
	ck_assert_int_eq(pthread_mutex_lock(&m), EDEADLK);
	ck_assert_int_eq(pthread_mutex_unlock(&m), 0);
	ck_assert_int_eq(pthread_mutex_unlock(&m), EPERM);
	ck_assert_int_eq(pthread_mutex_destroy(&m), 0);
}
END_TEST

/* ---- every combination ---- */

#define NCOMBOS (4 * 3 * 2 * 2)

struct combo {
	int type, protocol;
	bool robust, pshared;
};

static struct combo combo_of(int i)
{
	struct combo c;
	c.type = types[i % 4];
	c.protocol = protocols[(i / 4) % 3];
	c.robust = (i / 12) % 2;
	c.pshared = (i / 24) % 2;
	return c;
}

static int die_holding_fn(void *m)
{
	int r = pthread_mutex_lock(m);
	if (r == 0)
		pthread_exit(NULL);
	return r;
}

START_TEST(test_combination)
{
	struct combo c = combo_of(_i);
	printf("combination %d: type %d protocol %d robust %d pshared %d\n", _i, c.type, c.protocol, c.robust,
	       c.pshared);
	if (c.protocol == PTHREAD_PRIO_PROTECT) {
		/* Run as SCHED_FIFO 1 below the ceiling 20: a PP lock then raises
		 * a real-time thread, which NPTL supports too. */
		if (!rt_available())
			SKIP_TEST("PRIO_PROTECT needs SCHED_FIFO, refused");
		ck_assert(try_fifo(1));
	}
	pthread_mutexattr_t a;
	ck_assert_int_eq(pthread_mutexattr_init(&a), 0);
	ck_assert_int_eq(pthread_mutexattr_settype(&a, c.type), 0);
	ck_assert_int_eq(pthread_mutexattr_setprotocol(&a, c.protocol), 0);
	ck_assert_int_eq(pthread_mutexattr_setprioceiling(&a, 20), 0);
	ck_assert_int_eq(pthread_mutexattr_setrobust(&a, c.robust ? PTHREAD_MUTEX_ROBUST : PTHREAD_MUTEX_STALLED), 0);
	ck_assert_int_eq(pthread_mutexattr_setpshared(&a, c.pshared ? PTHREAD_PROCESS_SHARED : PTHREAD_PROCESS_PRIVATE),
			 0);
	pthread_mutex_t *m = shared_alloc(sizeof *m);
	ck_assert_int_eq(pthread_mutex_init(m, &a), 0);
	ck_assert_int_eq(pthread_mutexattr_destroy(&a), 0);

	int ceiling = -1;
	if (c.protocol == PTHREAD_PRIO_PROTECT) {
		ck_assert_int_eq(pthread_mutex_getprioceiling(m, &ceiling), 0);
		ck_assert_int_eq(ceiling, 20);
	} else {
		ck_assert_int_eq(pthread_mutex_getprioceiling(m, &ceiling), EINVAL);
	}

	/* lock / trylock / unlock by the owner */
	ck_assert_int_eq(pthread_mutex_lock(m), 0);
	if (c.protocol == PTHREAD_PRIO_PROTECT)
		ck_assert_int_eq(self_rt_prio(), 20);
	if (c.type == PTHREAD_MUTEX_RECURSIVE) {
		ck_assert_int_eq(pthread_mutex_trylock(m), 0);
		ck_assert_int_eq(pthread_mutex_lock(m), 0);
		ck_assert_int_eq(pthread_mutex_unlock(m), 0);
		ck_assert_int_eq(pthread_mutex_unlock(m), 0);
	} else {
		ck_assert_int_eq(pthread_mutex_trylock(m), EBUSY);
	}
	if (c.type == PTHREAD_MUTEX_ERRORCHECK)
		ck_assert_int_eq(pthread_mutex_lock(m), EDEADLK);
	ck_assert_int_eq(other_trylock(m), EBUSY);
	ck_assert_int_eq(pthread_mutex_destroy(m), EBUSY);

	/* Only a plain NORMAL/ADAPTIVE mutex may be unlocked by another thread. */
	bool anyone_unlocks = (c.type == PTHREAD_MUTEX_NORMAL || c.type == PTHREAD_MUTEX_ADAPTIVE_NP) &&
			      c.protocol == PTHREAD_PRIO_NONE && !c.robust;
	if (anyone_unlocks) {
		ck_assert_int_eq(other_unlock(m), 0);
		ck_assert_int_eq(other_trylock(m), 0);
		ck_assert_int_eq(pthread_mutex_lock(m), 0);
	} else {
		ck_assert_int_eq(other_unlock(m), EPERM);
		ck_assert_int_eq(other_trylock(m), EBUSY);
	}
	ck_assert_int_eq(pthread_mutex_unlock(m), 0);
	if (c.protocol == PTHREAD_PRIO_PROTECT)
		ck_assert_int_eq(self_rt_prio(), 1);
	ck_assert_int_eq(other_trylock(m), 0);

	/* timed variants */
	struct timespec dl = deadline_in_ms(CLOCK_REALTIME, 1000);
	ck_assert_int_eq(pthread_mutex_timedlock(m, &dl), 0);
	ck_assert_int_eq(pthread_mutex_unlock(m), 0);
	dl = deadline_in_ms(CLOCK_MONOTONIC, 1000);
	ck_assert_int_eq(pthread_mutex_clocklock(m, CLOCK_MONOTONIC, &dl), 0);
	ck_assert_int_eq(pthread_mutex_unlock(m), 0);
	ck_assert_int_eq(pthread_mutex_trylock(m), 0);
	ck_assert_int_eq(pthread_mutex_unlock(m), 0);

	/* mutual exclusion between threads, and between processes */
	check_exclusion(m, 4, 1500, c.type == PTHREAD_MUTEX_RECURSIVE, false);
	if (c.pshared)
		check_exclusion(m, 2, 1500, c.type == PTHREAD_MUTEX_RECURSIVE, true);

	/* robust: an owner that dies is reported */
	if (c.robust) {
		REQUIRE_ROBUST_LIST(); /* (everything above was checked) */
		ck_assert_int_eq(run_in_thread(die_holding_fn, m), -1); /* never returned */
		ck_assert_int_eq(pthread_mutex_lock(m), EOWNERDEAD);
		ck_assert_int_eq(pthread_mutex_consistent(m), 0);
		ck_assert_int_eq(pthread_mutex_unlock(m), 0);
		ck_assert_int_eq(other_trylock(m), 0);
	} else {
		ck_assert_int_eq(pthread_mutex_lock(m), 0);
		ck_assert_int_eq(pthread_mutex_consistent(m), EINVAL);
		ck_assert_int_eq(pthread_mutex_unlock(m), 0);
	}
	ck_assert_int_eq(pthread_mutex_destroy(m), 0);
	shared_free(m, sizeof *m);
}
END_TEST

static Suite *mutexattr_suite(void)
{
	Suite *s = suite_create("mutexattr");
	TCase *tc = tcase_create("attributes");
	tcase_set_timeout(tc, 20);
	tcase_add_test(tc, test_attr_defaults);
	tcase_add_test(tc, test_attr_type);
	tcase_add_test(tc, test_attr_protocol);
	tcase_add_test(tc, test_attr_prioceiling);
	tcase_add_test(tc, test_attr_robust);
	tcase_add_test(tc, test_attr_pshared);
	tcase_add_test(tc, test_attr_independent);
	tcase_add_test(tc, test_init_null_attr);
	tcase_add_test(tc, test_attr_destroyed_after_init);
	suite_add_tcase(s, tc);

	tc = tcase_create("combinations");
	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, test_combination, 0, NCOMBOS);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return run_suite(mutexattr_suite());
}
