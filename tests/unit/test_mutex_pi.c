/*
 * PTHREAD_PRIO_INHERIT mutexes: semantics per type, timed locks, and the
 * point of the protocol: a blocked higher-priority waiter raises the
 * owner's effective priority (read from /proc) until it lets go.
 * Priority tests run every thread on CPU 0 under SCHED_FIFO and skip when
 * real-time priority is refused.
 */
#include "testutil.h"

static const int types[] = { PTHREAD_MUTEX_NORMAL, PTHREAD_MUTEX_RECURSIVE, PTHREAD_MUTEX_ERRORCHECK,
			     PTHREAD_MUTEX_ADAPTIVE_NP };
#define NTYPES 4

static void init_pi(pthread_mutex_t *m, int type, bool pshared)
{
	pthread_mutexattr_t a;
	ck_assert_int_eq(pthread_mutexattr_init(&a), 0);
	ck_assert_int_eq(pthread_mutexattr_settype(&a, type), 0);
	ck_assert_int_eq(pthread_mutexattr_setprotocol(&a, PTHREAD_PRIO_INHERIT), 0);
	if (pshared)
		ck_assert_int_eq(pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED), 0);
	ck_assert_int_eq(pthread_mutex_init(m, &a), 0);
	ck_assert_int_eq(pthread_mutexattr_destroy(&a), 0);
}

/* Pins the test to CPU 0 and runs it as SCHED_FIFO 50, above everything it
 * creates; false (skip) if real-time priority is refused. */
static bool rt_setup(void)
{
	if (!rt_available())
		return false;
	pin_cpu(0);
	ck_assert(try_fifo(50));
	return true;
}

/* ---- semantics ---- */

START_TEST(test_pi_basic)
{
	int type = types[_i];
	pthread_mutex_t m;
	init_pi(&m, type, false);
	ck_assert_int_eq(pthread_mutex_lock(&m), 0);
	if (type == PTHREAD_MUTEX_RECURSIVE) {
		ck_assert_int_eq(pthread_mutex_trylock(&m), 0);
		ck_assert_int_eq(pthread_mutex_lock(&m), 0);
		ck_assert_int_eq(pthread_mutex_unlock(&m), 0);
		ck_assert_int_eq(pthread_mutex_unlock(&m), 0);
	} else {
		ck_assert_int_eq(pthread_mutex_trylock(&m), EBUSY);
	}
	if (type == PTHREAD_MUTEX_ERRORCHECK) {
		struct timespec dl = deadline_in_ms(CLOCK_REALTIME, 5000);
		ck_assert_int_eq(pthread_mutex_lock(&m), EDEADLK);
		ck_assert_int_eq(pthread_mutex_timedlock(&m, &dl), EDEADLK);
	}
	ck_assert_int_eq(other_trylock(&m), EBUSY);
	ck_assert_int_eq(pthread_mutex_destroy(&m), EBUSY);
	ck_assert_int_eq(pthread_mutex_unlock(&m), 0);
	ck_assert_int_eq(other_trylock(&m), 0);
	ck_assert_int_eq(pthread_mutex_trylock(&m), 0);
	ck_assert_int_eq(pthread_mutex_unlock(&m), 0);
	ck_assert_int_eq(pthread_mutex_destroy(&m), 0);
}
END_TEST

START_TEST(test_pi_recursive_depth)
{
	pthread_mutex_t m;
	init_pi(&m, PTHREAD_MUTEX_RECURSIVE, false);
	struct timespec dl = deadline_in_ms(CLOCK_MONOTONIC, 1000);
	ck_assert_int_eq(pthread_mutex_lock(&m), 0);
	ck_assert_int_eq(pthread_mutex_clocklock(&m, CLOCK_MONOTONIC, &dl), 0);
	ck_assert_int_eq(pthread_mutex_trylock(&m), 0);
	for (int depth = 3; depth > 0; depth--) {
		ck_assert_msg(other_trylock(&m) == EBUSY, "free at depth %d", depth);
		ck_assert_int_eq(pthread_mutex_unlock(&m), 0);
	}
	ck_assert_int_eq(other_trylock(&m), 0);
	ck_assert_int_eq(pthread_mutex_unlock(&m), EPERM);
	ck_assert_int_eq(pthread_mutex_destroy(&m), 0);
}
END_TEST

/* Only the owner may unlock a PI mutex, whatever its type. */
START_TEST(test_pi_nonowner_unlock)
{
	pthread_mutex_t m;
	init_pi(&m, types[_i], false);
	struct holder h;
	holder_start(&h, &m);
	ck_assert_int_eq(h.lock_result, 0);
	ck_assert_int_eq(pthread_mutex_unlock(&m), EPERM);
	ck_assert_int_eq(other_unlock(&m), EPERM);
	ck_assert_int_eq(pthread_mutex_trylock(&m), EBUSY);
	holder_finish(&h);
	ck_assert_int_eq(h.unlock_result, 0);
	ck_assert_int_eq(pthread_mutex_unlock(&m), EPERM); /* free */
	ck_assert_int_eq(other_trylock(&m), 0);
	ck_assert_int_eq(pthread_mutex_destroy(&m), 0);
}
END_TEST

/* ---- timed ---- */

START_TEST(test_pi_timeout)
{
	int type = types[_i / 3];
	int variant = _i % 3; /* timedlock, clocklock MONOTONIC, clocklock REALTIME */
	clockid_t clock = variant == 1 ? CLOCK_MONOTONIC : CLOCK_REALTIME;
	pthread_mutex_t m;
	init_pi(&m, type, false);
	check_timeout_duration(&m, variant != 0, clock);
	ck_assert_int_eq(other_trylock(&m), 0);
	ck_assert_int_eq(pthread_mutex_destroy(&m), 0);
}
END_TEST

START_TEST(test_pi_timespec_invalid)
{
	pthread_mutex_t m;
	init_pi(&m, types[_i], false);
	struct timespec bad_hi = deadline_in_ms(CLOCK_REALTIME, 1000);
	bad_hi.tv_nsec = 1000000000L;
	struct timespec bad_lo = bad_hi;
	bad_lo.tv_nsec = -1;
	struct timespec past = { .tv_sec = -1, .tv_nsec = 0 };
	struct timespec ok = deadline_in_ms(CLOCK_MONOTONIC, 1000);

	struct holder h;
	holder_start(&h, &m);
	int64_t t0 = now_ns(CLOCK_MONOTONIC);
	ck_assert_int_eq(pthread_mutex_timedlock(&m, &bad_hi), EINVAL);
	ck_assert_int_eq(pthread_mutex_timedlock(&m, &bad_lo), EINVAL);
	ck_assert_int_eq(pthread_mutex_clocklock(&m, CLOCK_MONOTONIC, &bad_hi), EINVAL);
	ck_assert_int_eq(pthread_mutex_clocklock(&m, CLOCK_MONOTONIC, &bad_lo), EINVAL);
	ck_assert_int_eq(pthread_mutex_timedlock(&m, &past), ETIMEDOUT);
	ck_assert_int_eq(pthread_mutex_clocklock(&m, CLOCK_MONOTONIC, &past), ETIMEDOUT);
	ck_assert_int_lt(now_ns(CLOCK_MONOTONIC) - t0, 1000000000LL);
	holder_finish(&h);

	ck_assert_int_eq(pthread_mutex_timedlock(&m, &bad_hi), 0);
	ck_assert_int_eq(pthread_mutex_unlock(&m), 0);
	ck_assert_int_eq(pthread_mutex_clocklock(&m, CLOCK_MONOTONIC, &bad_lo), 0);
	ck_assert_int_eq(pthread_mutex_unlock(&m), 0);
	ck_assert_int_eq(pthread_mutex_clocklock(&m, CLOCK_BOOTTIME, &ok), EINVAL);
	ck_assert_int_eq(pthread_mutex_clocklock(&m, CLOCK_PROCESS_CPUTIME_ID, &ok), EINVAL);
	ck_assert_int_eq(other_trylock(&m), 0);
	ck_assert_int_eq(pthread_mutex_destroy(&m), 0);
}
END_TEST

/* A NORMAL PI mutex relocked by its owner deadlocks until the deadline. */
START_TEST(test_pi_self_timedlock)
{
	pthread_mutex_t m;
	init_pi(&m, _i ? PTHREAD_MUTEX_ADAPTIVE_NP : PTHREAD_MUTEX_NORMAL, false);
	ck_assert_int_eq(pthread_mutex_lock(&m), 0);
	struct timespec dl = deadline_in_ms(CLOCK_REALTIME, 100);
	ck_assert_int_eq(pthread_mutex_timedlock(&m, &dl), ETIMEDOUT);
	ck_assert_int_ge(now_ns(CLOCK_REALTIME), ts_to_ns(&dl));
	dl = deadline_in_ms(CLOCK_MONOTONIC, 100);
	ck_assert_int_eq(pthread_mutex_clocklock(&m, CLOCK_MONOTONIC, &dl), ETIMEDOUT);
	ck_assert_int_ge(now_ns(CLOCK_MONOTONIC), ts_to_ns(&dl));
	ck_assert_int_eq(other_trylock(&m), EBUSY);
	ck_assert_int_eq(pthread_mutex_unlock(&m), 0);
	ck_assert_int_eq(other_trylock(&m), 0);
	ck_assert_int_eq(pthread_mutex_destroy(&m), 0);
}
END_TEST

/* ---- contention ---- */

START_TEST(test_pi_exclusion)
{
	int type = types[_i];
	pthread_mutex_t m;
	init_pi(&m, type, false);
	check_exclusion(&m, 4, 10000, type == PTHREAD_MUTEX_RECURSIVE, false);
	ck_assert_int_eq(pthread_mutex_destroy(&m), 0);
}
END_TEST

START_TEST(test_pi_pshared_fork)
{
	int type = types[_i];
	pthread_mutex_t *m = shared_alloc(sizeof *m);
	init_pi(m, type, true);
	check_exclusion(m, 3, 3000, type == PTHREAD_MUTEX_RECURSIVE, true);

	/* A child blocked on the parent's lock gets it at the unlock. */
	ck_assert_int_eq(pthread_mutex_lock(m), 0);
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		if (pthread_mutex_trylock(m) != EBUSY)
			_exit(1);
		if (pthread_mutex_lock(m) != 0)
			_exit(2);
		_exit(pthread_mutex_unlock(m) == 0 ? 0 : 3);
	}
	ck_assert(wait_task_sleeping(pid, 5000));
	ck_assert_int_eq(pthread_mutex_unlock(m), 0);
	ck_assert_child_ok(pid, 5000);
	ck_assert_int_eq(pthread_mutex_trylock(m), 0);
	ck_assert_int_eq(pthread_mutex_unlock(m), 0);
	ck_assert_int_eq(pthread_mutex_destroy(m), 0);
	shared_free(m, sizeof *m);
}
END_TEST

/* ---- priority inheritance ---- */

struct waiter {
	pthread_mutex_t *m;
	int how;	      /* 0 lock, 1 timedlock, 2 clocklock MONOTONIC */
	long timeout_ms;      /* for how != 0 */
	_Atomic pid_t tid;
	_Atomic int done;
	int result;
};

static void *waiter_main(void *p)
{
	struct waiter *w = p;
	atomic_store(&w->tid, test_gettid());
	struct timespec dl;
	switch (w->how) {
	case 0:
		w->result = pthread_mutex_lock(w->m);
		break;
	case 1:
		dl = deadline_in_ms(CLOCK_REALTIME, w->timeout_ms);
		w->result = pthread_mutex_timedlock(w->m, &dl);
		break;
	default:
		dl = deadline_in_ms(CLOCK_MONOTONIC, w->timeout_ms);
		w->result = pthread_mutex_clocklock(w->m, CLOCK_MONOTONIC, &dl);
		break;
	}
	if (w->result == 0 && pthread_mutex_unlock(w->m) != 0)
		w->result = 999;
	atomic_store(&w->done, 1);
	return NULL;
}

static void waiter_start(struct waiter *w, pthread_t *t, pthread_mutex_t *m, int prio, int how, long timeout_ms)
{
	w->m = m;
	w->how = how;
	w->timeout_ms = timeout_ms;
	atomic_init(&w->tid, 0);
	atomic_init(&w->done, 0);
	w->result = -1;
	start_thread_sched(t, SCHED_FIFO, prio, 0, waiter_main, w);
	while (atomic_load(&w->tid) == 0)
		sleep_ms(1);
}

/*
 * A SCHED_FIFO 10 (or SCHED_OTHER) owner is raised to 30 while a FIFO 30
 * thread blocks on the mutex (lock, timedlock or clocklock), keeps its own
 * policy and static priority, and falls back when it unlocks.
 */
START_TEST(test_pi_boost)
{
	int how = _i % 3;
	bool other_owner = _i >= 3;
	if (!rt_setup())
		SKIP_TEST("SCHED_FIFO refused");
	pthread_mutex_t m;
	init_pi(&m, PTHREAD_MUTEX_NORMAL, false);
	struct holder low;
	holder_start_prio(&low, &m, other_owner ? -1 : 10, true);
	ck_assert_int_eq(low.lock_result, 0);
	int base = other_owner ? 0 : 10;
	ck_assert_int_eq(task_rt_prio(low.tid), base);

	struct waiter high;
	pthread_t t;
	waiter_start(&high, &t, &m, 30, how, 20000);
	ck_assert_msg(wait_task_rt_prio(low.tid, 30, 5000), "owner not boosted: effective priority %d",
		      task_rt_prio(low.tid));
	struct task_sched s;
	ck_assert(task_sched_read(low.tid, &s));
	ck_assert_int_eq(s.policy, other_owner ? SCHED_OTHER : SCHED_FIFO);
	ck_assert_int_eq(s.rt_priority, base);
	ck_assert(!atomic_load(&high.done));
	sleep_ms(20);
	ck_assert_int_eq(task_rt_prio(low.tid), 30); /* stays boosted */

	holder_unlock(&low);
	ck_assert_int_eq(low.unlock_result, 0);
	ck_assert_msg(wait_task_rt_prio(low.tid, base, 5000), "owner still boosted after unlock: %d",
		      task_rt_prio(low.tid));
	ck_assert_int_eq(pthread_join(t, NULL), 0);
	ck_assert_int_eq(high.result, 0);
	ck_assert_int_eq(task_rt_prio(low.tid), base);
	holder_finish(&low);
	ck_assert_int_eq(pthread_mutex_destroy(&m), 0);
}
END_TEST

/* A waiter that times out takes its boost away with it. */
START_TEST(test_pi_boost_timeout)
{
	int how = 1 + _i; /* timedlock, clocklock MONOTONIC */
	if (!rt_setup())
		SKIP_TEST("SCHED_FIFO refused");
	pthread_mutex_t m;
	init_pi(&m, PTHREAD_MUTEX_NORMAL, false);
	struct holder low;
	holder_start_prio(&low, &m, 10, true);
	struct waiter high;
	pthread_t t;
	waiter_start(&high, &t, &m, 30, how, 400);
	ck_assert_msg(wait_task_rt_prio(low.tid, 30, 350), "owner not boosted: %d", task_rt_prio(low.tid));
	ck_assert_int_eq(pthread_join(t, NULL), 0);
	ck_assert_int_eq(high.result, ETIMEDOUT);
	ck_assert_msg(wait_task_rt_prio(low.tid, 10, 2000), "boost outlived the timed-out waiter: %d",
		      task_rt_prio(low.tid));
	holder_unlock(&low);
	ck_assert_int_eq(low.unlock_result, 0);
	ck_assert_int_eq(task_rt_prio(low.tid), 10);
	holder_finish(&low);
	ck_assert_int_eq(other_trylock(&m), 0);
	ck_assert_int_eq(pthread_mutex_destroy(&m), 0);
}
END_TEST

/* Boosts follow a chain of owners: T1 (10) holds A; T2 (20) holds B and
 * waits for A; T3 (30) waits for B: both T1 and T2 run at 30. */
struct chain_mid {
	pthread_mutex_t *a, *b;
	_Atomic pid_t tid;
	_Atomic int has_b;
	int result;
};

static void *chain_mid_main(void *p)
{
	struct chain_mid *c = p;
	atomic_store(&c->tid, test_gettid());
	c->result = pthread_mutex_lock(c->b);
	atomic_store(&c->has_b, 1);
	if (c->result == 0)
		c->result = pthread_mutex_lock(c->a);
	if (c->result == 0)
		c->result = pthread_mutex_unlock(c->a) | pthread_mutex_unlock(c->b);
	return NULL;
}

START_TEST(test_pi_boost_chain)
{
	if (!rt_setup())
		SKIP_TEST("SCHED_FIFO refused");
	pthread_mutex_t a, b;
	init_pi(&a, PTHREAD_MUTEX_NORMAL, false);
	init_pi(&b, PTHREAD_MUTEX_ERRORCHECK, false);
	struct holder t1;
	holder_start_prio(&t1, &a, 10, true);
	struct chain_mid t2 = { .a = &a, .b = &b };
	pthread_t t2_thread, t3_thread;
	start_thread_sched(&t2_thread, SCHED_FIFO, 20, 0, chain_mid_main, &t2);
	ck_assert(wait_flag(&t2.has_b, 1, 5000));
	ck_assert(wait_task_rt_prio(t1.tid, 20, 5000));
	struct waiter t3;
	waiter_start(&t3, &t3_thread, &b, 30, 0, 0);
	ck_assert_msg(wait_task_rt_prio(t2.tid, 30, 5000), "T2 not boosted: %d", task_rt_prio(t2.tid));
	ck_assert_msg(wait_task_rt_prio(t1.tid, 30, 5000), "T1 not boosted through the chain: %d",
		      task_rt_prio(t1.tid));
	holder_unlock(&t1);
	ck_assert(wait_task_rt_prio(t1.tid, 10, 5000));
	ck_assert_int_eq(pthread_join(t2_thread, NULL), 0);
	ck_assert_int_eq(pthread_join(t3_thread, NULL), 0);
	ck_assert_int_eq(t2.result, 0);
	ck_assert_int_eq(t3.result, 0);
	holder_finish(&t1);
	ck_assert_int_eq(pthread_mutex_destroy(&a), 0);
	ck_assert_int_eq(pthread_mutex_destroy(&b), 0);
}
END_TEST

/*
 * The classic inversion on one CPU: low (10) holds the mutex with 100 ms
 * of work left, medium (20) spins for up to 3 s, high (30) blocks on the
 * mutex.  With inheritance low outruns medium and high gets the mutex
 * after about 100 ms; without it, only after medium gives up.
 */
struct inversion {
	pthread_mutex_t *m;
	_Atomic int low_locked;
	_Atomic int stop;
	_Atomic int medium_gave_up;
	int low_result, high_result;
	int64_t high_wait_ns;
};

static void *inversion_low(void *p)
{
	struct inversion *v = p;
	v->low_result = pthread_mutex_lock(v->m);
	atomic_store(&v->low_locked, 1);
	burn_cpu_ms(100);
	if (v->low_result == 0)
		v->low_result = pthread_mutex_unlock(v->m);
	return NULL;
}

static void *inversion_medium(void *p)
{
	struct inversion *v = p;
	int64_t end = now_ns(CLOCK_MONOTONIC) + 3 * NSEC_PER_SEC;
	while (!atomic_load(&v->stop)) {
		if (now_ns(CLOCK_MONOTONIC) > end) {
			atomic_store(&v->medium_gave_up, 1);
			break;
		}
	}
	return NULL;
}

static void *inversion_high(void *p)
{
	struct inversion *v = p;
	int64_t t0 = now_ns(CLOCK_MONOTONIC);
	v->high_result = pthread_mutex_lock(v->m);
	v->high_wait_ns = now_ns(CLOCK_MONOTONIC) - t0;
	atomic_store(&v->stop, 1);
	if (v->high_result == 0)
		v->high_result = pthread_mutex_unlock(v->m);
	return NULL;
}

START_TEST(test_pi_inversion_avoided)
{
	if (!rt_setup())
		SKIP_TEST("SCHED_FIFO refused");
	pthread_mutex_t m;
	init_pi(&m, types[_i], false);
	struct inversion v = { .m = &m };
	pthread_t low, medium, high;
	start_thread_sched(&low, SCHED_FIFO, 10, 0, inversion_low, &v);
	ck_assert(wait_flag(&v.low_locked, 1, 5000));
	start_thread_sched(&medium, SCHED_FIFO, 20, 0, inversion_medium, &v);
	start_thread_sched(&high, SCHED_FIFO, 30, 0, inversion_high, &v);
	ck_assert_int_eq(pthread_join(high, NULL), 0);
	ck_assert_int_eq(pthread_join(medium, NULL), 0);
	ck_assert_int_eq(pthread_join(low, NULL), 0);
	ck_assert_int_eq(v.low_result, 0);
	ck_assert_int_eq(v.high_result, 0);
	ck_assert_msg(!atomic_load(&v.medium_gave_up) && v.high_wait_ns < 1500000000LL,
		      "priority inversion: high waited %lld ms", (long long)(v.high_wait_ns / 1000000));
	ck_assert_int_eq(pthread_mutex_destroy(&m), 0);
}
END_TEST

/* The kernel hands a PI mutex to its highest-priority waiter first. */
START_TEST(test_pi_handoff_order)
{
	if (!rt_setup())
		SKIP_TEST("SCHED_FIFO refused");
	pthread_mutex_t m;
	init_pi(&m, types[_i], false);
	check_lock_order(&m);
	ck_assert_int_eq(pthread_mutex_destroy(&m), 0);
}
END_TEST

static Suite *pi_suite(void)
{
	Suite *s = suite_create("mutex_pi");
	TCase *tc;

	tc = tcase_create("semantics");
	tcase_set_timeout(tc, 30);
	tcase_add_loop_test(tc, test_pi_basic, 0, NTYPES);
	tcase_add_test(tc, test_pi_recursive_depth);
	tcase_add_loop_test(tc, test_pi_nonowner_unlock, 0, NTYPES);
	suite_add_tcase(s, tc);

	tc = tcase_create("timed");
	tcase_set_timeout(tc, 30);
	tcase_add_loop_test(tc, test_pi_timeout, 0, NTYPES * 3);
	tcase_add_loop_test(tc, test_pi_timespec_invalid, 0, NTYPES);
	tcase_add_loop_test(tc, test_pi_self_timedlock, 0, 2);
	suite_add_tcase(s, tc);

	tc = tcase_create("contention");
	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, test_pi_exclusion, 0, NTYPES);
	tcase_add_loop_test(tc, test_pi_pshared_fork, 0, NTYPES);
	suite_add_tcase(s, tc);

	tc = tcase_create("inheritance");
	tcase_set_timeout(tc, 30);
	tcase_add_loop_test(tc, test_pi_boost, 0, 6);
	tcase_add_loop_test(tc, test_pi_boost_timeout, 0, 2);
	tcase_add_test(tc, test_pi_boost_chain);
	tcase_add_loop_test(tc, test_pi_inversion_avoided, 0, NTYPES);
	tcase_add_loop_test(tc, test_pi_handoff_order, 0, NTYPES);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return run_suite(pi_suite());
}
