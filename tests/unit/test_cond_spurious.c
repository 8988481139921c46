/*
 * After a spurious return the condition must still behave: one signal,
 * two waiters back (the signalled one, and one that a signal handler
 * brought out of the kernel after the signal moved the sequence).  The
 * second one's registration must not stay counted, or:
 *   - a broadcast with no waiter left writes into the mutex they used,
 *     which the program may have destroyed and reused since;
 *   - pthread_cond_destroy right after signalling the only waiter (who
 *     has not run yet) reports EBUSY.
 * Waiters wait with a deadline, so that the same program runs on glibc,
 * where the handler does not end the wait.
 *
 * And a private condition's signal is for one waiter only: with two
 * waiters and one signal, the other returns ETIMEDOUT at its deadline,
 * also when a handler brings it out of the kernel after the signal, or
 * its deadline comes after the signal moved the sequence on.
 */
#include <signal.h>

#include "testutil.h"

static pthread_cond_t cond;
static pthread_mutex_t *mutex;

static void noop(int sig)
{
	(void)sig;
}

static void *waiter_once(void *p)
{
	(void)p;
	struct timespec dl = deadline_in_ms(CLOCK_REALTIME, 500);
	pthread_mutex_lock(mutex);
	int r = pthread_cond_timedwait(&cond, mutex, &dl);
	pthread_mutex_unlock(mutex);
	return (void *)(intptr_t)r;
}

/* One signal for two waiters, then a handler in both. */
static void spurious_round(void)
{
	pthread_t t1, t2;
	ck_assert_int_eq(pthread_create(&t1, NULL, waiter_once, NULL), 0);
	ck_assert_int_eq(pthread_create(&t2, NULL, waiter_once, NULL), 0);
	sleep_ms(50);
	pthread_mutex_lock(mutex);
	ck_assert_int_eq(pthread_cond_signal(&cond), 0);
	pthread_mutex_unlock(mutex);
	sleep_ms(20);
	pthread_kill(t1, SIGUSR1);
	pthread_kill(t2, SIGUSR1);
	ck_assert_int_eq(pthread_join(t1, NULL), 0);
	ck_assert_int_eq(pthread_join(t2, NULL), 0);
}

static void setup(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = noop;
	sigaction(SIGUSR1, &sa, NULL);
	ck_assert_int_eq(pthread_cond_init(&cond, NULL), 0);
	mutex = calloc(1, sizeof *mutex);
	ck_assert_int_eq(pthread_mutex_init(mutex, NULL), 0);
}

START_TEST(test_broadcast_after_spurious_leaves_old_mutex_alone)
{
	setup();
	spurious_round();
	spurious_round();
	ck_assert_int_eq(pthread_mutex_destroy(mutex), 0);
	memset(mutex, 0, sizeof *mutex); /* the memory, reused */
	ck_assert_int_eq(pthread_cond_broadcast(&cond), 0);
	ck_assert_int_eq(pthread_cond_signal(&cond), 0);
	static const pthread_mutex_t zero;
	ck_assert_msg(memcmp(mutex, &zero, sizeof zero) == 0, "a wake-up with no waiter wrote into freed mutex memory");
	ck_assert_int_eq(pthread_cond_destroy(&cond), 0);
	free(mutex);
}
END_TEST

START_TEST(test_destroy_after_spurious_and_signal)
{
	setup();
	spurious_round();
	pthread_t t;
	ck_assert_int_eq(pthread_create(&t, NULL, waiter_once, NULL), 0);
	sleep_ms(50);
	pthread_mutex_lock(mutex);
	ck_assert_int_eq(pthread_cond_signal(&cond), 0);
	int r = pthread_cond_destroy(&cond); /* the signalled waiter has not run */
	pthread_mutex_unlock(mutex);
	ck_assert_msg(r == 0, "destroy with nobody blocked: %s", strerror(r));
	void *rc;
	ck_assert_int_eq(pthread_join(t, &rc), 0);
	ck_assert_int_eq((int)(intptr_t)rc, 0);
	pthread_mutex_destroy(mutex);
	free(mutex);
}
END_TEST

struct timed_waiter {
	pthread_t thread;
	int deadline_ms;
	int result;
};

static void *timed_waiter_main(void *p)
{
	struct timed_waiter *w = p;
	struct timespec dl = deadline_in_ms(CLOCK_REALTIME, w->deadline_ms);
	pthread_mutex_lock(mutex);
	w->result = pthread_cond_timedwait(&cond, mutex, &dl);
	pthread_mutex_unlock(mutex);
	return NULL;
}

/* One signal, two waiters asleep: exactly one returns 0, the other
 * ETIMEDOUT.  handler: both are hit by a handler after the signal. */
static void one_signal_two_waiters(bool handler)
{
	setup();
	struct timed_waiter w[2] = { { .deadline_ms = 1500 }, { .deadline_ms = 300 } };
	for (int i = 0; i < 2; i++) {
		ck_assert_int_eq(pthread_create(&w[i].thread, NULL, timed_waiter_main, &w[i]), 0);
		sleep_ms(50);
	}
	pthread_mutex_lock(mutex);
	ck_assert_int_eq(pthread_cond_signal(&cond), 0);
	pthread_mutex_unlock(mutex);
	if (handler) {
		sleep_ms(20);
		for (int i = 0; i < 2; i++)
			pthread_kill(w[i].thread, SIGUSR1);
	}
	for (int i = 0; i < 2; i++)
		ck_assert_int_eq(pthread_join(w[i].thread, NULL), 0);
	ck_assert_msg((w[0].result == 0 && w[1].result == ETIMEDOUT) || (w[0].result == ETIMEDOUT && w[1].result == 0),
		      "one signal, two waiters: they returned %s and %s", strerror(w[0].result), strerror(w[1].result));
	ck_assert_int_eq(pthread_cond_destroy(&cond), 0);
	ck_assert_int_eq(pthread_mutex_destroy(mutex), 0);
	free(mutex);
}

START_TEST(test_signal_for_another_then_deadline)
{
	one_signal_two_waiters(false);
}
END_TEST

START_TEST(test_signal_for_another_then_handler)
{
	one_signal_two_waiters(true);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("cond_spurious");
	TCase *tc = tcase_create("after");
	tcase_set_timeout(tc, 20);
	tcase_add_test(tc, test_broadcast_after_spurious_leaves_old_mutex_alone);
	tcase_add_test(tc, test_destroy_after_spurious_and_signal);
	suite_add_tcase(s, tc);
	tc = tcase_create("exact");
	tcase_set_timeout(tc, 20);
	tcase_add_test(tc, test_signal_for_another_then_deadline);
	tcase_add_test(tc, test_signal_for_another_then_handler);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
