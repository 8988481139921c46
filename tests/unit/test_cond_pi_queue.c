/*
 * A wait on a condition used with a PI mutex costs its waiter the same
 * with one other waiter queued at its priority or with thousands.  The
 * library queues PI waiters in priority order under the condition's
 * lock; a queue that walked the waiters of the new one's priority would
 * make every wait (and a high-priority signaller behind the lock) pay
 * for all of them: 5000 waiters made a wait cost 5-6 times as much CPU.
 *
 * Measured as the thread's own CPU time of a timed wait that times out
 * (queue, unlock, sleep, leave, relock; the time asleep is not CPU
 * time), median of 41, with 1 and with 5000 other waiters queued, all
 * SCHED_OTHER.  The bound is generous (twice the cost with 1, plus
 * 10 us); a round over it, which a loaded machine can cause, is measured
 * again, up to three rounds, while linear queueing exceeds it in every
 * round.  NPTL's waits do not queue in
 * order and pass too.
 */
#include "testutil.h"

#define QUEUED 5000
#define SAMPLES 41

static pthread_mutex_t m;
static pthread_cond_t c = PTHREAD_COND_INITIALIZER;
static int stop;
static atomic_long inside;

static void *queued_waiter(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&m);
	atomic_fetch_add(&inside, 1);
	while (!stop)
		pthread_cond_wait(&c, &m);
	pthread_mutex_unlock(&m);
	return NULL;
}

static int64_t thread_cpu_ns(void)
{
	return now_ns(CLOCK_THREAD_CPUTIME_ID);
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return x < y ? -1 : x > y;
}

/* Median CPU time of a timed-out wait once n waiters have queued. */
static int64_t wait_cost(long n)
{
	int64_t end = now_ns(CLOCK_MONOTONIC) + 60 * NSEC_PER_SEC;
	for (;;) {
		ck_assert_int_eq(pthread_mutex_lock(&m), 0);
		if (atomic_load(&inside) >= n)
			break; /* each counted itself before its wait unlocked m */
		ck_assert_int_eq(pthread_mutex_unlock(&m), 0);
		ck_assert_msg(now_ns(CLOCK_MONOTONIC) < end, "waiters did not queue");
		sleep_ms(1);
	}
	int64_t cost[SAMPLES];
	for (int i = 0; i < SAMPLES; i++) {
		struct timespec deadline = deadline_in_ms(CLOCK_REALTIME, 0);
		deadline.tv_nsec += 20000;
		if (deadline.tv_nsec >= NSEC_PER_SEC) {
			deadline.tv_sec++;
			deadline.tv_nsec -= NSEC_PER_SEC;
		}
		int64_t t0 = thread_cpu_ns();
		int r = pthread_cond_timedwait(&c, &m, &deadline);
		cost[i] = thread_cpu_ns() - t0;
		ck_assert_msg(r == ETIMEDOUT || r == 0, "timedwait: %d", r);
	}
	ck_assert_int_eq(pthread_mutex_unlock(&m), 0);
	qsort(cost, SAMPLES, sizeof cost[0], cmp_i64);
	return cost[SAMPLES / 2];
}

START_TEST(test_wait_cost_flat)
{
	pthread_mutexattr_t a;
	pthread_mutexattr_init(&a);
	pthread_mutexattr_setprotocol(&a, PTHREAD_PRIO_INHERIT);
	ck_assert_int_eq(pthread_mutex_init(&m, &a), 0);
	pthread_mutexattr_destroy(&a);
	pthread_attr_t small;
	pthread_attr_init(&small);
	pthread_attr_setstacksize(&small, 64 * 1024);
	static pthread_t t[QUEUED];
	long started = 0;
	int64_t one = 0, many = 0;
	bool flat = false;
	for (long target = 1; target <= QUEUED; target += QUEUED - 1) {
		for (; started < target; started++)
			ck_assert_int_eq(pthread_create(&t[started], &small, queued_waiter, NULL), 0);
		one = target == 1 ? wait_cost(1) : one;
	}
	/* Ends: three rounds. */
	for (int round = 0; round < 3 && !flat; round++) {
		many = wait_cost(QUEUED);
		flat = many < 2 * one + 10000;
		printf("round %d: median CPU of a wait: %.1f us with 1 queued, %.1f us with %d\n", round,
		       (double)one / 1e3, (double)many / 1e3, QUEUED);
	}
	pthread_mutex_lock(&m);
	stop = 1;
	pthread_cond_broadcast(&c);
	pthread_mutex_unlock(&m);
	for (long i = 0; i < started; i++)
		pthread_join(t[i], NULL);
	pthread_attr_destroy(&small);
	ck_assert_msg(flat, "a wait with %d waiters queued costs %.1f us of CPU, with 1 %.1f us", QUEUED,
		      (double)many / 1e3, (double)one / 1e3);
}
END_TEST

/*
 * The queue's levels stay right through leaves at every place in a level
 * (first, middle, last, alone) and arrivals after them: a signal wakes
 * the highest priority, the oldest among equals.  SCHED_FIFO waiters
 * below the main thread; the leavers' deadline passes once all are
 * queued.  A library promise (NPTL's groups do not keep this order).
 */
struct ordered {
	int id, prio;
	bool leaves;
	_Atomic pid_t tid;
	int result;
};

static const struct timespec *leave_at;
static int woken[16], nwoken; /* under m */

static void *ordered_waiter(void *arg)
{
	struct ordered *w = arg;
	atomic_store(&w->tid, test_gettid());
	struct timespec far = deadline_in_ms(CLOCK_REALTIME, 20000);
	pthread_mutex_lock(&m);
	int r = pthread_cond_timedwait(&c, &m, w->leaves ? leave_at : &far);
	w->result = r;
	if (r == 0)
		woken[nwoken++] = w->id;
	pthread_mutex_unlock(&m);
	return NULL;
}

static void start_ordered(pthread_t *t, struct ordered *w)
{
	atomic_store(&w->tid, 0);
	start_thread_sched(t, SCHED_FIFO, w->prio, -1, ordered_waiter, w);
	while (atomic_load(&w->tid) == 0)
		sleep_ms(1);
	ck_assert(wait_task_sleeping(atomic_load(&w->tid), 5000));
}

START_TEST(test_levels_order)
{
	if (!library_loaded())
		SKIP_TEST("NPTL does not wake condition waiters in priority order");
	if (!try_fifo(60)) {
		ck_assert_msg(!under_ci(), "SCHED_FIFO refused");
		SKIP_TEST("SCHED_FIFO refused");
	}
	pthread_mutexattr_t a;
	pthread_mutexattr_init(&a);
	pthread_mutexattr_setprotocol(&a, PTHREAD_PRIO_INHERIT);
	ck_assert_int_eq(pthread_mutex_init(&m, &a), 0);
	pthread_mutexattr_destroy(&a);
	ck_assert_int_eq(pthread_cond_init(&c, NULL), 0);
	static struct ordered w[] = {
		{ .id = 1, .prio = 20, .leaves = true },   /* first of its level */
		{ .id = 2, .prio = 20, .leaves = false },
		{ .id = 3, .prio = 20, .leaves = true },   /* in the middle */
		{ .id = 4, .prio = 20, .leaves = false },
		{ .id = 5, .prio = 20, .leaves = true },   /* last */
		{ .id = 6, .prio = 30, .leaves = true },   /* alone, then first */
		{ .id = 7, .prio = 10, .leaves = false },
		{ .id = 8, .prio = 10, .leaves = true },   /* last of the lowest */
		{ .id = 9, .prio = 30, .leaves = false },
		/* after the leavers have gone */
		{ .id = 10, .prio = 20, .leaves = false },
		{ .id = 11, .prio = 30, .leaves = false },
		{ .id = 12, .prio = 10, .leaves = false },
	};
	enum { N = sizeof w / sizeof w[0], FIRST_PHASE = 9 };
	static const int expected[] = { 9, 11, 2, 4, 10, 7, 12 };
	pthread_t t[N];
	static struct timespec leave;
	leave = deadline_in_ms(CLOCK_REALTIME, 1000);
	leave_at = &leave;
	nwoken = 0;
	for (int i = 0; i < FIRST_PHASE; i++)
		start_ordered(&t[i], &w[i]);
	for (int i = 0; i < FIRST_PHASE; i++)
		if (w[i].leaves) {
			ck_assert_int_eq(pthread_join(t[i], NULL), 0);
			ck_assert_int_eq(w[i].result, ETIMEDOUT);
		}
	for (int i = FIRST_PHASE; i < N; i++)
		start_ordered(&t[i], &w[i]);
	for (int k = 0; k < (int)(sizeof expected / sizeof expected[0]); k++) {
		ck_assert_int_eq(pthread_mutex_lock(&m), 0);
		ck_assert_int_eq(nwoken, k);
		ck_assert_int_eq(pthread_cond_signal(&c), 0);
		ck_assert_int_eq(pthread_mutex_unlock(&m), 0);
		int64_t end = now_ns(CLOCK_MONOTONIC) + 10 * NSEC_PER_SEC;
		for (;;) {
			pthread_mutex_lock(&m);
			int n = nwoken;
			pthread_mutex_unlock(&m);
			if (n > k)
				break;
			ck_assert_msg(now_ns(CLOCK_MONOTONIC) < end, "signal %d woke nobody", k);
			sleep_ms(1);
		}
	}
	for (int i = 0; i < N; i++)
		if (!w[i].leaves)
			ck_assert_int_eq(pthread_join(t[i], NULL), 0);
	for (int k = 0; k < (int)(sizeof expected / sizeof expected[0]); k++)
		ck_assert_msg(woken[k] == expected[k], "wake %d went to waiter %d, expected %d", k, woken[k],
			      expected[k]);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("cond_pi_queue");
	TCase *tc = tcase_create("queue");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_wait_cost_flat);
	tcase_add_test(tc, test_levels_order);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
