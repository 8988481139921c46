/*
 * PTHREAD_PRIO_PROTECT mutexes: the owner runs at the ceiling (read from
 * /proc) while it holds the mutex, nested ceilings restore exactly in any
 * release order, failed or timed-out attempts leave the priority as it
 * was, a SCHED_OTHER owner runs at the ceiling and comes back, and the
 * ceiling can be read and changed.  Tests that need real-time priority
 * skip when it is refused.
 */
#include "testutil.h"

static const int types[] = { PTHREAD_MUTEX_NORMAL, PTHREAD_MUTEX_RECURSIVE, PTHREAD_MUTEX_ERRORCHECK,
			     PTHREAD_MUTEX_ADAPTIVE_NP };
#define NTYPES 4

static void init_pp(pthread_mutex_t *m, int type, int ceiling)
{
	pthread_mutexattr_t a;
	ck_assert_int_eq(pthread_mutexattr_init(&a), 0);
	ck_assert_int_eq(pthread_mutexattr_settype(&a, type), 0);
	ck_assert_int_eq(pthread_mutexattr_setprotocol(&a, PTHREAD_PRIO_PROTECT), 0);
	ck_assert_int_eq(pthread_mutexattr_setprioceiling(&a, ceiling), 0);
	ck_assert_int_eq(pthread_mutex_init(m, &a), 0);
	ck_assert_int_eq(pthread_mutexattr_destroy(&a), 0);
}

#define REQUIRE_RT()                                           \
	do {                                                   \
		if (!rt_available())                           \
			SKIP_TEST("SCHED_FIFO refused");       \
	} while (0)

/* The caller's effective priority and static sched_param, both. */
#define ck_assert_prio(want)                                                                         \
	do {                                                                                         \
		struct task_sched s_;                                                                \
		ck_assert(task_sched_read(test_gettid(), &s_));                                      \
		int eff_ = s_.prio < 0 ? (int)(-1 - s_.prio) : 0;                                    \
		ck_assert_msg(eff_ == (want), "effective priority %d, expected %d", eff_, (want));     \
		ck_assert_msg(s_.rt_priority == (want), "rt_priority %ld, expected %d", s_.rt_priority, \
			      (want));                                                               \
	} while (0)

/* ---- the ceiling while held ---- */

static int pp_acquire(pthread_mutex_t *m, int how)
{
	struct timespec dl;
	switch (how) {
	case 0:
		return pthread_mutex_lock(m);
	case 1:
		return pthread_mutex_trylock(m);
	case 2:
		dl = deadline_in_ms(CLOCK_REALTIME, 1000);
		return pthread_mutex_timedlock(m, &dl);
	default:
		dl = deadline_in_ms(CLOCK_MONOTONIC, 1000);
		return pthread_mutex_clocklock(m, CLOCK_MONOTONIC, &dl);
	}
}

START_TEST(test_pp_ceiling_while_held)
{
	REQUIRE_RT();
	int type = types[_i / 4], how = _i % 4;
	ck_assert(try_fifo(10));
	pthread_mutex_t m;
	init_pp(&m, type, 30);
	ck_assert_prio(10);
	ck_assert_int_eq(pp_acquire(&m, how), 0);
	ck_assert_prio(30);
	ck_assert_int_eq(self_policy(), SCHED_FIFO);
	ck_assert_int_eq(other_trylock(&m), EBUSY);
	ck_assert_prio(30);
	ck_assert_int_eq(pthread_mutex_unlock(&m), 0);
	ck_assert_prio(10);
	ck_assert_int_eq(self_policy(), SCHED_FIFO);
	ck_assert_int_eq(pthread_mutex_destroy(&m), 0);
}
END_TEST

/* At the ceiling already: nothing changes, in or out. */
START_TEST(test_pp_at_ceiling)
{
	REQUIRE_RT();
	ck_assert(try_fifo(30));
	pthread_mutex_t m;
	init_pp(&m, PTHREAD_MUTEX_NORMAL, 30);
	ck_assert_int_eq(pthread_mutex_lock(&m), 0);
	ck_assert_prio(30);
	ck_assert_int_eq(pthread_mutex_unlock(&m), 0);
	ck_assert_prio(30);
	ck_assert_int_eq(self_policy(), SCHED_FIFO);
	ck_assert_int_eq(pthread_mutex_destroy(&m), 0);
}
END_TEST

START_TEST(test_pp_recursive)
{
	REQUIRE_RT();
	ck_assert(try_fifo(10));
	pthread_mutex_t m;
	init_pp(&m, PTHREAD_MUTEX_RECURSIVE, 30);
	ck_assert_int_eq(pthread_mutex_lock(&m), 0);
	ck_assert_int_eq(pthread_mutex_lock(&m), 0);
	ck_assert_int_eq(pthread_mutex_trylock(&m), 0);
	ck_assert_prio(30);
	ck_assert_int_eq(pthread_mutex_unlock(&m), 0);
	ck_assert_int_eq(pthread_mutex_unlock(&m), 0);
	ck_assert_prio(30);
	ck_assert_int_eq(other_trylock(&m), EBUSY);
	ck_assert_int_eq(pthread_mutex_unlock(&m), 0);
	ck_assert_prio(10);
	ck_assert_int_eq(pthread_mutex_unlock(&m), EPERM);
	ck_assert_prio(10);
	ck_assert_int_eq(pthread_mutex_destroy(&m), 0);
}
END_TEST

START_TEST(test_pp_errorcheck_relock)
{
	REQUIRE_RT();
	ck_assert(try_fifo(10));
	pthread_mutex_t m;
	init_pp(&m, PTHREAD_MUTEX_ERRORCHECK, 30);
	ck_assert_int_eq(pthread_mutex_lock(&m), 0);
	ck_assert_int_eq(pthread_mutex_lock(&m), EDEADLK);
	ck_assert_int_eq(pthread_mutex_trylock(&m), EBUSY);
	ck_assert_prio(30);
	ck_assert_int_eq(pthread_mutex_unlock(&m), 0);
	ck_assert_prio(10);
	ck_assert_int_eq(pthread_mutex_unlock(&m), EPERM);
	ck_assert_prio(10);
	ck_assert_int_eq(pthread_mutex_destroy(&m), 0);
}
END_TEST

/* Only the owner may unlock a PP mutex, NORMAL included (NPTL lets anyone
 * unlock a PP NORMAL mutex, leaving the owner's priority raised). */
START_TEST(test_pp_nonowner_unlock)
{
	REQUIRE_RT();
	ck_assert(try_fifo(10));
	pthread_mutex_t m;
	init_pp(&m, types[_i], 30);
	struct holder h;
	holder_start(&h, &m);
	ck_assert_int_eq(h.lock_result, 0);
	ck_assert_int_eq(task_rt_prio(h.tid), 30);
	ck_assert_int_eq(pthread_mutex_unlock(&m), EPERM);
	ck_assert_prio(10);
	ck_assert_int_eq(pthread_mutex_trylock(&m), EBUSY);
	ck_assert_prio(10);
	holder_finish(&h);
	ck_assert_int_eq(h.unlock_result, 0);
	ck_assert_int_eq(pthread_mutex_destroy(&m), 0);
}
END_TEST

/* ---- nesting ---- */

static const int perms[6][3] = { { 0, 1, 2 }, { 0, 2, 1 }, { 1, 0, 2 }, { 1, 2, 0 }, { 2, 0, 1 }, { 2, 1, 0 } };

static int expected_prio(int base, const int *ceilings, const bool *held, int n)
{
	int p = base;
	for (int i = 0; i < n; i++)
		if (held[i] && ceilings[i] > p)
			p = ceilings[i];
	return p;
}

/* Three PP mutexes (ceilings 20, 30, 40, or 20, 30, 30), every lock order
 * times every unlock order: after each step the thread runs at the
 * highest ceiling still held. */
START_TEST(test_pp_nested_orders)
{
	REQUIRE_RT();
	ck_assert(try_fifo(10));
	int ceilings[3] = { 20, 30, _i ? 30 : 40 };
	pthread_mutex_t m[3];
	for (int i = 0; i < 3; i++)
		init_pp(&m[i], PTHREAD_MUTEX_NORMAL, ceilings[i]);
	for (int lo = 0; lo < 6; lo++) {
		for (int uo = 0; uo < 6; uo++) {
			bool held[3] = { false, false, false };
			for (int k = 0; k < 3; k++) {
				int i = perms[lo][k];
				ck_assert_int_eq(pthread_mutex_lock(&m[i]), 0);
				held[i] = true;
				ck_assert_prio(expected_prio(10, ceilings, held, 3));
			}
			for (int k = 0; k < 3; k++) {
				int i = perms[uo][k];
				ck_assert_int_eq(pthread_mutex_unlock(&m[i]), 0);
				held[i] = false;
				int want = expected_prio(10, ceilings, held, 3);
				struct task_sched s;
				ck_assert(task_sched_read(test_gettid(), &s));
				ck_assert_msg(s.rt_priority == want && s.prio == -1 - want,
					      "lock order %d unlock order %d step %d: priority %ld, expected %d",
					      lo, uo, k, s.rt_priority, want);
			}
		}
	}
	ck_assert_prio(10);
	for (int i = 0; i < 3; i++)
		ck_assert_int_eq(pthread_mutex_destroy(&m[i]), 0);
}
END_TEST

/* ---- failures leave the priority alone ---- */

/* trylock on a held PP mutex: EBUSY, priority as before (also while the
 * caller holds another, lower, PP mutex). */
START_TEST(test_pp_trylock_busy_restores)
{
	REQUIRE_RT();
	ck_assert(try_fifo(10));
	pthread_mutex_t m, low;
	init_pp(&m, types[_i], 40);
	init_pp(&low, PTHREAD_MUTEX_NORMAL, 20);
	struct holder h;
	holder_start(&h, &m);
	ck_assert_int_eq(h.lock_result, 0);
	ck_assert_int_eq(pthread_mutex_trylock(&m), EBUSY);
	ck_assert_prio(10);
	ck_assert_int_eq(pthread_mutex_lock(&low), 0);
	ck_assert_int_eq(pthread_mutex_trylock(&m), EBUSY);
	ck_assert_prio(20);
	ck_assert_int_eq(pthread_mutex_unlock(&low), 0);
	ck_assert_prio(10);
	holder_finish(&h);
	ck_assert_int_eq(pthread_mutex_trylock(&m), 0);
	ck_assert_prio(40);
	ck_assert_int_eq(pthread_mutex_unlock(&m), 0);
	ck_assert_prio(10);
	ck_assert_int_eq(pthread_mutex_destroy(&m), 0);
	ck_assert_int_eq(pthread_mutex_destroy(&low), 0);
}
END_TEST

/* timedlock / clocklock that time out (or are given a bad or past
 * deadline) leave the priority exactly as before; NPTL leaves it raised. */
START_TEST(test_pp_timeout_restores)
{
	REQUIRE_RT();
	int type = types[_i / 2];
	clockid_t clock = (_i & 1) ? CLOCK_MONOTONIC : CLOCK_REALTIME;
	ck_assert(try_fifo(10));
	pthread_mutex_t m, low;
	init_pp(&m, type, 40);
	init_pp(&low, PTHREAD_MUTEX_NORMAL, 20);
	struct holder h;
	holder_start(&h, &m);
	ck_assert_int_eq(h.lock_result, 0);

	struct timespec dl = deadline_in_ms(clock, 50);
	ck_assert_int_eq(pthread_mutex_clocklock(&m, clock, &dl), ETIMEDOUT);
	ck_assert_prio(10);
	dl = deadline_in_ms(CLOCK_REALTIME, 50);
	ck_assert_int_eq(pthread_mutex_timedlock(&m, &dl), ETIMEDOUT);
	ck_assert_prio(10);
	struct timespec past = { .tv_sec = -1, .tv_nsec = 0 };
	ck_assert_int_eq(pthread_mutex_clocklock(&m, clock, &past), ETIMEDOUT);
	ck_assert_prio(10);
	struct timespec bad = deadline_in_ms(clock, 50);
	bad.tv_nsec = 1000000000L;
	ck_assert_int_eq(pthread_mutex_clocklock(&m, clock, &bad), EINVAL);
	ck_assert_prio(10);

	ck_assert_int_eq(pthread_mutex_lock(&low), 0);
	dl = deadline_in_ms(clock, 50);
	ck_assert_int_eq(pthread_mutex_clocklock(&m, clock, &dl), ETIMEDOUT);
	ck_assert_prio(20);
	ck_assert_int_eq(pthread_mutex_unlock(&low), 0);
	ck_assert_prio(10);

	holder_finish(&h);
	ck_assert_int_eq(h.unlock_result, 0);
	dl = deadline_in_ms(clock, 1000);
	ck_assert_int_eq(pthread_mutex_clocklock(&m, clock, &dl), 0);
	ck_assert_prio(40);
	ck_assert_int_eq(pthread_mutex_unlock(&m), 0);
	ck_assert_prio(10);
	ck_assert_int_eq(pthread_mutex_destroy(&m), 0);
	ck_assert_int_eq(pthread_mutex_destroy(&low), 0);
}
END_TEST

/* A caller whose priority is above the ceiling gets EINVAL from every
 * lock call and keeps its priority; the mutex stays free. */
START_TEST(test_pp_above_ceiling)
{
	REQUIRE_RT();
	ck_assert(try_fifo(40));
	pthread_mutex_t m;
	init_pp(&m, types[_i], 30);
	struct timespec dl = deadline_in_ms(CLOCK_REALTIME, 1000);
	struct timespec mono = deadline_in_ms(CLOCK_MONOTONIC, 1000);
	ck_assert_int_eq(pthread_mutex_lock(&m), EINVAL);
	ck_assert_prio(40);
	ck_assert_int_eq(pthread_mutex_trylock(&m), EINVAL);
	ck_assert_prio(40);
	ck_assert_int_eq(pthread_mutex_timedlock(&m, &dl), EINVAL);
	ck_assert_int_eq(pthread_mutex_clocklock(&m, CLOCK_MONOTONIC, &mono), EINVAL);
	ck_assert_prio(40);
	ck_assert_int_eq(pthread_mutex_unlock(&m), EPERM);
	/* Free: a thread below the ceiling takes it. */
	ck_assert(try_fifo(20));
	ck_assert_int_eq(pthread_mutex_trylock(&m), 0);
	ck_assert_prio(30);
	ck_assert_int_eq(pthread_mutex_unlock(&m), 0);
	ck_assert_prio(20);
	ck_assert_int_eq(pthread_mutex_destroy(&m), 0);
}
END_TEST

/* ---- SCHED_OTHER callers ---- */

/* A SCHED_OTHER thread runs as SCHED_FIFO at the ceiling while it holds a
 * PP mutex, and is SCHED_OTHER with its nice value again afterwards (NPTL
 * refuses: EINVAL). */
START_TEST(test_pp_sched_other)
{
	REQUIRE_RT();
	pid_t tid = test_gettid();
	ck_assert_int_eq(setpriority(PRIO_PROCESS, (id_t)tid, 5), 0);
	pthread_mutex_t a, b;
	init_pp(&a, types[_i], 25);
	init_pp(&b, PTHREAD_MUTEX_NORMAL, 35);
	struct task_sched s;

	ck_assert_int_eq(pthread_mutex_lock(&a), 0);
	ck_assert(task_sched_read(tid, &s));
	ck_assert_int_eq(s.policy, SCHED_FIFO);
	ck_assert_int_eq(s.rt_priority, 25);
	ck_assert_int_eq(s.prio, -26);
	ck_assert_int_eq(pthread_mutex_lock(&b), 0);
	ck_assert_prio(35);
	ck_assert_int_eq(pthread_mutex_unlock(&b), 0);
	ck_assert_prio(25);
	ck_assert_int_eq(self_policy(), SCHED_FIFO);
	ck_assert_int_eq(pthread_mutex_unlock(&a), 0);
	ck_assert(task_sched_read(tid, &s));
	ck_assert_int_eq(s.policy, SCHED_OTHER);
	ck_assert_int_eq(s.rt_priority, 0);
	ck_assert_int_eq(s.nice, 5);
	ck_assert_int_eq(s.prio, 25);

	/* A failed attempt leaves it SCHED_OTHER. */
	struct holder h;
	holder_start(&h, &a);
	ck_assert_int_eq(h.lock_result, 0);
	ck_assert_int_eq(pthread_mutex_trylock(&a), EBUSY);
	struct timespec dl = deadline_in_ms(CLOCK_MONOTONIC, 30);
	ck_assert_int_eq(pthread_mutex_clocklock(&a, CLOCK_MONOTONIC, &dl), ETIMEDOUT);
	ck_assert(task_sched_read(tid, &s));
	ck_assert_int_eq(s.policy, SCHED_OTHER);
	ck_assert_int_eq(s.nice, 5);
	holder_finish(&h);
	ck_assert_int_eq(pthread_mutex_destroy(&a), 0);
	ck_assert_int_eq(pthread_mutex_destroy(&b), 0);
}
END_TEST

/* ---- the ceiling itself ---- */

START_TEST(test_pp_getset_prioceiling)
{
	pthread_mutex_t m;
	init_pp(&m, PTHREAD_MUTEX_NORMAL, 30);
	int c = -1, old = -1;
	ck_assert_int_eq(pthread_mutex_getprioceiling(&m, &c), 0);
	ck_assert_int_eq(c, 30);
	ck_assert_int_eq(pthread_mutex_setprioceiling(&m, 50, &old), 0);
	ck_assert_int_eq(old, 30);
	ck_assert_int_eq(pthread_mutex_getprioceiling(&m, &c), 0);
	ck_assert_int_eq(c, 50);
	static const int bad[] = { 0, -1, 100, 4096 };
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		old = -1;
		ck_assert_msg(pthread_mutex_setprioceiling(&m, bad[i], &old) == EINVAL, "ceiling %d accepted",
			      bad[i]);
		ck_assert_int_eq(pthread_mutex_getprioceiling(&m, &c), 0);
		ck_assert_int_eq(c, 50);
	}
	ck_assert_int_eq(pthread_mutex_setprioceiling(&m, 1, &old), 0);
	ck_assert_int_eq(old, 50);
	ck_assert_int_eq(pthread_mutex_setprioceiling(&m, 99, &old), 0);
	ck_assert_int_eq(old, 1);
	ck_assert_int_eq(pthread_mutex_getprioceiling(&m, &c), 0);
	ck_assert_int_eq(c, 99);
	/* The mutex is free afterwards (a trylock raises the SCHED_OTHER
	 * caller to the ceiling, which needs real-time priority). */
	ck_assert_int_eq(pthread_mutex_setprioceiling(&m, 5, &old), 0);
	ck_assert_int_eq(old, 99);
	ck_assert_int_eq(other_trylock(&m), rt_available() ? 0 : EPERM);
	ck_assert_int_eq(pthread_mutex_destroy(&m), 0);

	/* Not a PP mutex: EINVAL. */
	pthread_mutex_t n = PTHREAD_MUTEX_INITIALIZER;
	ck_assert_int_eq(pthread_mutex_getprioceiling(&n, &c), EINVAL);
	ck_assert_int_eq(pthread_mutex_setprioceiling(&n, 10, &old), EINVAL);
	pthread_mutexattr_t a;
	ck_assert_int_eq(pthread_mutexattr_init(&a), 0);
	ck_assert_int_eq(pthread_mutexattr_setprotocol(&a, PTHREAD_PRIO_INHERIT), 0);
	ck_assert_int_eq(pthread_mutex_init(&n, &a), 0);
	ck_assert_int_eq(pthread_mutex_getprioceiling(&n, &c), EINVAL);
	ck_assert_int_eq(pthread_mutex_setprioceiling(&n, 10, &old), EINVAL);
	ck_assert_int_eq(pthread_mutex_destroy(&n), 0);
	ck_assert_int_eq(pthread_mutexattr_destroy(&a), 0);
}
END_TEST

/* The owner changes the ceiling of a mutex it holds: the old one comes
 * back in old_ceiling and its priority follows the new one. */
START_TEST(test_pp_setprioceiling_held)
{
	REQUIRE_RT();
	ck_assert(try_fifo(10));
	pthread_mutex_t m;
	init_pp(&m, types[_i], 30);
	int old = -1, c = -1;
	ck_assert_int_eq(pthread_mutex_lock(&m), 0);
	ck_assert_prio(30);
	ck_assert_int_eq(pthread_mutex_setprioceiling(&m, 40, &old), 0);
	ck_assert_int_eq(old, 30);
	ck_assert_int_eq(pthread_mutex_getprioceiling(&m, &c), 0);
	ck_assert_int_eq(c, 40);
	ck_assert_prio(40);
	ck_assert_int_eq(pthread_mutex_setprioceiling(&m, 20, &old), 0);
	ck_assert_int_eq(old, 40);
	ck_assert_prio(20);
	ck_assert_int_eq(other_trylock(&m), EBUSY); /* still held */
	ck_assert_int_eq(pthread_mutex_unlock(&m), 0);
	ck_assert_prio(10);
	ck_assert_int_eq(pthread_mutex_lock(&m), 0);
	ck_assert_prio(20);
	ck_assert_int_eq(pthread_mutex_unlock(&m), 0);
	ck_assert_prio(10);
	ck_assert_int_eq(pthread_mutex_destroy(&m), 0);
}
END_TEST

/* Changing the ceiling of a mutex another thread holds waits for it. */
struct setceiling {
	pthread_mutex_t *m;
	int ceiling, old;
};

static int setceiling_fn(void *p)
{
	struct setceiling *s = p;
	return pthread_mutex_setprioceiling(s->m, s->ceiling, &s->old);
}

START_TEST(test_pp_setprioceiling_waits)
{
	REQUIRE_RT();
	ck_assert(try_fifo(10));
	pthread_mutex_t m;
	init_pp(&m, PTHREAD_MUTEX_NORMAL, 30);
	struct holder h;
	holder_start(&h, &m);
	ck_assert_int_eq(h.lock_result, 0);
	struct setceiling sc = { .m = &m, .ceiling = 45, .old = -1 };
	struct call c;
	call_start(&c, setceiling_fn, &sc);
	ck_assert(wait_task_sleeping(c.tid, 5000));
	sleep_ms(30);
	ck_assert_msg(!atomic_load(&c.done), "setprioceiling did not wait for the owner");
	holder_finish(&h);
	ck_assert_int_eq(call_join(&c), 0);
	ck_assert_int_eq(sc.old, 30);
	int ceiling = -1;
	ck_assert_int_eq(pthread_mutex_getprioceiling(&m, &ceiling), 0);
	ck_assert_int_eq(ceiling, 45);
	ck_assert_int_eq(pthread_mutex_lock(&m), 0);
	ck_assert_prio(45);
	ck_assert_int_eq(pthread_mutex_unlock(&m), 0);
	ck_assert_prio(10);
	ck_assert_int_eq(pthread_mutex_destroy(&m), 0);
}
END_TEST

/* pthread_setschedparam / setschedprio on oneself while holding: the new
 * priority is the base, the ceiling stays in force; after the last
 * unlock the thread runs at its new base. */
START_TEST(test_pp_setschedparam_while_held)
{
	REQUIRE_RT();
	ck_assert(try_fifo(10));
	pthread_mutex_t m;
	init_pp(&m, PTHREAD_MUTEX_NORMAL, 30);
	struct sched_param sp;

	ck_assert_int_eq(pthread_mutex_lock(&m), 0);
	sp.sched_priority = 20;
	ck_assert_int_eq(pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp), 0);
	ck_assert_prio(30);
	ck_assert_int_eq(pthread_mutex_unlock(&m), 0);
	ck_assert_prio(20);

	ck_assert_int_eq(pthread_mutex_lock(&m), 0);
	ck_assert_prio(30);
	ck_assert_int_eq(pthread_setschedprio(pthread_self(), 25), 0);
	ck_assert_prio(30);
	ck_assert_int_eq(pthread_mutex_unlock(&m), 0);
	ck_assert_prio(25);

	/* To SCHED_OTHER while holding: still at the ceiling, SCHED_OTHER after. */
	ck_assert_int_eq(pthread_mutex_lock(&m), 0);
	sp.sched_priority = 0;
	ck_assert_int_eq(pthread_setschedparam(pthread_self(), SCHED_OTHER, &sp), 0);
	ck_assert_prio(30);
	ck_assert_int_eq(pthread_mutex_unlock(&m), 0);
	ck_assert_int_eq(self_policy(), SCHED_OTHER);
	ck_assert_int_eq(self_rt_prio(), 0);
	ck_assert(try_fifo(25));

	/* Changed with nothing held: the next lock starts from the new base. */
	ck_assert_int_eq(pthread_setschedprio(pthread_self(), 15), 0);
	ck_assert_prio(15);
	ck_assert_int_eq(pthread_mutex_lock(&m), 0);
	ck_assert_prio(30);
	ck_assert_int_eq(pthread_mutex_unlock(&m), 0);
	ck_assert_prio(15);
	ck_assert_int_eq(pthread_mutex_destroy(&m), 0);
}
END_TEST

/* Another thread changes the priority of a PP owner (pthread_setschedparam
 * and pthread_setschedprio on it): the ceiling stays in force while it
 * holds the mutex, and it runs at the new priority after unlocking.
 * NPTL does both (its per-thread ceiling record caps the change). */
START_TEST(test_pp_setschedparam_other_thread)
{
	REQUIRE_RT();
	ck_assert(try_fifo(50)); /* above everything, to watch */
	pthread_mutex_t m;
	init_pp(&m, PTHREAD_MUTEX_NORMAL, 30);
	struct holder h;
	holder_start_prio(&h, &m, 10, true);
	ck_assert_int_eq(h.lock_result, 0);
	ck_assert_int_eq(task_rt_prio(h.tid), 30);
	struct sched_param sp = { .sched_priority = 20 };
	if (_i == 0)
		ck_assert_int_eq(pthread_setschedparam(h.thread, SCHED_FIFO, &sp), 0);
	else
		ck_assert_int_eq(pthread_setschedprio(h.thread, 20), 0);
	sleep_ms(5);
	ck_assert_msg(task_rt_prio(h.tid) == 30, "owner dropped below the ceiling to %d while holding",
		      task_rt_prio(h.tid));
	holder_unlock(&h);
	ck_assert_int_eq(h.unlock_result, 0);
	ck_assert_msg(task_rt_prio(h.tid) == 20, "owner at %d after unlock, expected its new priority 20",
		      task_rt_prio(h.tid));
	holder_finish(&h);
	ck_assert_int_eq(pthread_mutex_destroy(&m), 0);
}
END_TEST

/*
 * Another thread moves a PP owner's priority between the ceiling and
 * below it while the owner locks and unlocks at its ceiling (where a lock
 * changes nothing in the kernel and the library only counts it, without
 * the lock the changer takes).  Every lock must still hold the mutex at
 * the ceiling, pthread_getschedparam must report each change as made,
 * and after the changer's last change, the owner's next unlock must
 * leave it at that priority, not at the ceiling.
 */
#define RACE_CEILING 30
#define RACE_BELOW 20

/* Sets the owner's priority and reads it back as pthread_getschedparam
 * reports it: false if that is not what was set. */
static bool set_and_report(pthread_t owner, int priority)
{
	struct sched_param sp;
	int policy;
	ck_assert_int_eq(pthread_setschedprio(owner, priority), 0);
	ck_assert_int_eq(pthread_getschedparam(owner, &policy, &sp), 0);
	return policy == SCHED_FIFO && sp.sched_priority == priority;
}

struct pp_race {
	pthread_mutex_t m;
	_Atomic pid_t tid;
	_Atomic int round;    /* the changer starts round n by storing n; -1: quit */
	_Atomic int stop;     /* finish the pair under way and report */
	_Atomic int reported; /* the last round the owner reported */
	_Atomic int below;    /* pairs that held the mutex below the ceiling */
	_Atomic int after;    /* the owner's priority after its round's last pair */
};

static int own_rt_priority(void)
{
	struct sched_param sp;
	return sched_getparam(0, &sp) == 0 ? sp.sched_priority : -1;
}

static void *pp_race_owner(void *arg)
{
	struct pp_race *r = arg;
	atomic_store(&r->tid, test_gettid());
	for (int round = 1;; round++) {
		int now;
		while ((now = atomic_load(&r->round)) != -1 && now < round)
			sched_yield();
		if (now == -1)
			return NULL;
		while (!atomic_load(&r->stop)) {
			if (pthread_mutex_lock(&r->m) != 0)
				return NULL;
			if (own_rt_priority() < RACE_CEILING)
				atomic_fetch_add(&r->below, 1);
			pthread_mutex_unlock(&r->m);
		}
		atomic_store(&r->after, own_rt_priority());
		atomic_store(&r->reported, round);
	}
}

START_TEST(test_pp_setschedprio_races_owner)
{
	REQUIRE_RT();
	ck_assert(try_fifo(50)); /* the changer, above the owner */
	struct pp_race r = { 0 };
	init_pp(&r.m, PTHREAD_MUTEX_NORMAL, RACE_CEILING);
	pthread_t owner;
	start_thread_sched(&owner, SCHED_FIFO, RACE_CEILING, -1, pp_race_owner, &r);
	while (atomic_load(&r.tid) == 0)
		sleep_ms(1);
	int wrong_after = 0, wrong_report = 0, rounds = 300;
	for (int round = 1; round <= rounds; round++) {
		ck_assert_int_eq(pthread_setschedprio(owner, RACE_CEILING), 0);
		atomic_store(&r.stop, 0);
		atomic_store(&r.round, round);
		/* Changes land at every point of the owner's pairs: each takes
		 * a system call or two, the pairs some tens of nanoseconds. */
		for (int i = 0; i < 20; i++) {
			wrong_report += !set_and_report(owner, RACE_BELOW);
			wrong_report += !set_and_report(owner, RACE_CEILING);
		}
		wrong_report += !set_and_report(owner, RACE_BELOW);
		atomic_store(&r.stop, 1);
		while (atomic_load(&r.reported) != round)
			sched_yield();
		if (atomic_load(&r.after) != RACE_BELOW)
			wrong_after++;
		if (round % 50 == 0)
			sleep_ms(20); /* under the real-time throttle */
	}
	atomic_store(&r.round, -1);
	ck_assert_int_eq(pthread_join(owner, NULL), 0);
	ck_assert_msg(atomic_load(&r.below) == 0, "%d locks held the mutex below its ceiling",
		      atomic_load(&r.below));
	ck_assert_msg(wrong_report == 0, "pthread_getschedparam reported another priority than set %d times",
		      wrong_report);
	ck_assert_msg(wrong_after == 0, "%d of %d rounds left the owner away from its new priority %d",
		      wrong_after, rounds, RACE_BELOW);
	ck_assert_int_eq(pthread_mutex_destroy(&r.m), 0);
}
END_TEST

/* ---- contention ---- */

/* A waiter blocked on a PP mutex gets it at the unlock and runs at the
 * ceiling while it holds it, at its own priority after. */
struct pp_waiter {
	pthread_mutex_t *m;
	int prio_inside, prio_after, result;
	_Atomic pid_t tid;
};

static void *pp_waiter_main(void *p)
{
	struct pp_waiter *w = p;
	atomic_store(&w->tid, test_gettid());
	w->result = pthread_mutex_lock(w->m);
	w->prio_inside = self_rt_prio();
	if (w->result == 0)
		w->result = pthread_mutex_unlock(w->m);
	w->prio_after = self_rt_prio();
	return NULL;
}

START_TEST(test_pp_waiter)
{
	REQUIRE_RT();
	ck_assert(try_fifo(10));
	pthread_mutex_t m;
	init_pp(&m, types[_i], 30);
	struct holder h;
	holder_start(&h, &m);
	struct pp_waiter w = { .m = &m };
	pthread_t t;
	start_thread_sched(&t, SCHED_FIFO, 12, -1, pp_waiter_main, &w);
	while (atomic_load(&w.tid) == 0)
		sleep_ms(1);
	ck_assert(wait_task_sleeping(w.tid, 5000));
	sleep_ms(10);
	holder_finish(&h);
	ck_assert_int_eq(pthread_join(t, NULL), 0);
	ck_assert_int_eq(w.result, 0);
	ck_assert_int_eq(w.prio_inside, 30);
	ck_assert_int_eq(w.prio_after, 12);
	ck_assert_int_eq(pthread_mutex_destroy(&m), 0);
}
END_TEST

START_TEST(test_pp_exclusion)
{
	REQUIRE_RT();
	ck_assert(try_fifo(5)); /* inherited by the workers */
	pthread_mutex_t m;
	init_pp(&m, types[_i], 20);
	check_exclusion(&m, 4, 3000, types[_i] == PTHREAD_MUTEX_RECURSIVE, false);
	ck_assert_prio(5);
	ck_assert_int_eq(pthread_mutex_destroy(&m), 0);
}
END_TEST

static Suite *pp_suite(void)
{
	Suite *s = suite_create("mutex_pp");
	TCase *tc;

	tc = tcase_create("ceiling");
	tcase_set_timeout(tc, 30);
	tcase_add_loop_test(tc, test_pp_ceiling_while_held, 0, NTYPES * 4);
	tcase_add_test(tc, test_pp_at_ceiling);
	tcase_add_test(tc, test_pp_recursive);
	tcase_add_test(tc, test_pp_errorcheck_relock);
	tcase_add_loop_test(tc, test_pp_nonowner_unlock, 0, NTYPES);
	tcase_add_loop_test(tc, test_pp_nested_orders, 0, 2);
	suite_add_tcase(s, tc);

	tc = tcase_create("failures");
	tcase_set_timeout(tc, 30);
	tcase_add_loop_test(tc, test_pp_trylock_busy_restores, 0, NTYPES);
	tcase_add_loop_test(tc, test_pp_timeout_restores, 0, NTYPES * 2);
	tcase_add_loop_test(tc, test_pp_above_ceiling, 0, NTYPES);
	suite_add_tcase(s, tc);

	tc = tcase_create("sched_other");
	tcase_set_timeout(tc, 30);
	tcase_add_loop_test(tc, test_pp_sched_other, 0, NTYPES);
	suite_add_tcase(s, tc);

	tc = tcase_create("prioceiling");
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_pp_getset_prioceiling);
	tcase_add_loop_test(tc, test_pp_setprioceiling_held, 0, NTYPES);
	tcase_add_test(tc, test_pp_setprioceiling_waits);
	tcase_add_test(tc, test_pp_setschedparam_while_held);
	tcase_add_loop_test(tc, test_pp_setschedparam_other_thread, 0, 2);
	tcase_add_test(tc, test_pp_setschedprio_races_owner);
	suite_add_tcase(s, tc);

	tc = tcase_create("contention");
	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, test_pp_waiter, 0, NTYPES);
	tcase_add_loop_test(tc, test_pp_exclusion, 0, NTYPES);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return run_suite(pp_suite());
}
