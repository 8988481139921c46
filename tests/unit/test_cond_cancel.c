/*
 * Condition variables and cancellation: a cancelled waiter relocks the
 * mutex (every kind and wait flavour), a cancelled waiter does not swallow a
 * signal meant for another waiter, and a signal sent while the only
 * waiter is between releasing the mutex and sleeping leaves the condition
 * able to wake a later waiter.
 *
 * cond_util.h: the mutex kinds and the conventions of these tests.
 */
#include "cond_util.h"

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

/* ---- suite ---- */

static Suite *cond_cancel_suite(void)
{
	Suite *s = suite_create("cond_cancel");
	TCase *tc;

	tc = tcase_create("cancel");
	tcase_set_timeout(tc, 30);
	tcase_add_loop_test(tc, test_cancel_relocks, 0, 24);
	suite_add_tcase(s, tc);

	tc = tcase_create("races");
	tcase_set_timeout(tc, 30);
	tcase_add_loop_test(tc, test_cancel_no_swallow, 0, 2);
	tcase_add_loop_test(tc, test_signal_before_sleep, 0, 2);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return run_suite(cond_cancel_suite());
}
