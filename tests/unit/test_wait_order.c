/*
 * A waiter's place among the waiters of a condition with a PI mutex
 * follows its priority as it is when it waits.  The library reads a
 * thread's priority once and caches it (no system call per wait, see
 * docs/syscalls.md); these tests change a waiter's priority between two
 * waits in each way the library sees, and check that the second wait
 * queues at the new priority:
 *   self    the waiter's own pthread_setschedparam
 *   other   another thread's pthread_setschedparam on the waiter
 *   prio    another thread's pthread_setschedprio on the waiter
 *   ceiling the waiter holds a PRIO_PROTECT mutex (ceiling 40) while it
 *           waits: it runs at the ceiling
 * Waiters A (20, raised to 40 for the second wait), B (20) and C (30)
 * wait; single signals must wake A, C, B.  NPTL does not order a
 * condition's waiters by priority: without the library the tests skip.
 */
#include "testutil.h"

enum { WAITERS = 3, CEILING = 40 };
enum change { CHANGE_SELF, CHANGE_OTHER, CHANGE_PRIO, CHANGE_CEILING };

struct order_test {
	pthread_mutex_t m;
	pthread_cond_t c;
	pthread_mutex_t pp;
	enum change change;
	int registered; /* under m */
	int tokens;	/* under m: signals not yet consumed */
	int order[WAITERS];
	int n;
	sem_t recorded, next_round;
};

struct waiter {
	struct order_test *t;
	int name; /* 0 A, 1 B, 2 C */
	pthread_t thread;
	int errors;
};

static void wait_once(struct waiter *w)
{
	struct order_test *t = w->t;
	if (pthread_mutex_lock(&t->m) != 0) {
		w->errors++;
		return;
	}
	t->registered++;
	/* Ends: the main thread hands out one token per waiter. */
	while (t->tokens == 0)
		if (pthread_cond_wait(&t->c, &t->m) != 0) {
			w->errors++;
			break;
		}
	t->tokens--;
	t->order[t->n++] = w->name;
	pthread_mutex_unlock(&t->m);
	sem_post(&t->recorded);
}

static void *waiter_main(void *arg)
{
	struct waiter *w = arg;
	struct order_test *t = w->t;
	wait_once(w); /* the library learns this thread's priority here */
	sem_wait(&t->next_round);
	bool a = w->name == 0;
	if (a && t->change == CHANGE_SELF) {
		struct sched_param param = { .sched_priority = CEILING };
		w->errors += pthread_setschedparam(pthread_self(), SCHED_FIFO, &param) != 0;
	}
	bool pp = a && t->change == CHANGE_CEILING;
	if (pp)
		w->errors += pthread_mutex_lock(&t->pp) != 0;
	wait_once(w);
	if (pp)
		w->errors += pthread_mutex_unlock(&t->pp) != 0;
	return NULL;
}

/* Waits until count waiters registered, then takes and drops the mutex:
 * a waiter that registered has released it inside its wait. */
static void await_registered(struct order_test *t, int count)
{
	for (int i = 0; i < 5000; i++) {
		ck_assert_int_eq(pthread_mutex_lock(&t->m), 0);
		int seen = t->registered;
		ck_assert_int_eq(pthread_mutex_unlock(&t->m), 0);
		if (seen >= count)
			return;
		sleep_ms(1);
	}
	ck_abort_msg("only some waiters reached the condition in 5 s");
}

/* One signal at a time, each waited for: the order of the wake-ups. */
static void signal_each(struct order_test *t)
{
	for (int i = 0; i < WAITERS; i++) {
		ck_assert_int_eq(pthread_mutex_lock(&t->m), 0);
		t->tokens++;
		ck_assert_int_eq(pthread_cond_signal(&t->c), 0);
		ck_assert_int_eq(pthread_mutex_unlock(&t->m), 0);
		struct timespec limit = deadline_in_ms(CLOCK_REALTIME, 5000);
		ck_assert_msg(sem_timedwait(&t->recorded, &limit) == 0, "signal %d woke nobody", i + 1);
	}
}

START_TEST(test_wait_order_follows_priority_change)
{
	enum change change = (enum change)_i;
	static const char *names[] = { "own pthread_setschedparam", "another thread's pthread_setschedparam",
				       "another thread's pthread_setschedprio", "a PRIO_PROTECT mutex held" };
	if (!library_loaded())
		SKIP_TEST("NPTL does not order a condition's waiters by priority");
	if (!rt_available())
		SKIP_TEST("SCHED_FIFO refused");
	ck_assert(try_fifo(90)); /* above the waiters: the main thread always runs */
	struct order_test *t = calloc(1, sizeof *t);
	ck_assert_ptr_nonnull(t);
	t->change = change;
	pthread_mutexattr_t a;
	ck_assert_int_eq(pthread_mutexattr_init(&a), 0);
	ck_assert_int_eq(pthread_mutexattr_setprotocol(&a, PTHREAD_PRIO_INHERIT), 0);
	ck_assert_int_eq(pthread_mutex_init(&t->m, &a), 0);
	ck_assert_int_eq(pthread_mutexattr_setprotocol(&a, PTHREAD_PRIO_PROTECT), 0);
	ck_assert_int_eq(pthread_mutexattr_setprioceiling(&a, CEILING), 0);
	ck_assert_int_eq(pthread_mutex_init(&t->pp, &a), 0);
	pthread_mutexattr_destroy(&a);
	ck_assert_int_eq(pthread_cond_init(&t->c, NULL), 0);
	ck_assert_int_eq(sem_init(&t->recorded, 0, 0), 0);
	ck_assert_int_eq(sem_init(&t->next_round, 0, 0), 0);

	static const int priorities[WAITERS] = { 20, 20, 30 };
	struct waiter w[WAITERS];
	for (int i = 0; i < WAITERS; i++) {
		w[i] = (struct waiter){ .t = t, .name = i };
		start_thread_sched(&w[i].thread, SCHED_FIFO, priorities[i], -1, waiter_main, &w[i]);
	}
	await_registered(t, WAITERS);
	signal_each(t);

	if (change == CHANGE_OTHER) {
		struct sched_param param = { .sched_priority = CEILING };
		ck_assert_int_eq(pthread_setschedparam(w[0].thread, SCHED_FIFO, &param), 0);
	} else if (change == CHANGE_PRIO) {
		ck_assert_int_eq(pthread_setschedprio(w[0].thread, CEILING), 0);
	}
	t->n = 0;
	for (int i = 0; i < WAITERS; i++)
		sem_post(&t->next_round);
	await_registered(t, 2 * WAITERS);
	signal_each(t);
	for (int i = 0; i < WAITERS; i++) {
		pthread_join(w[i].thread, NULL);
		ck_assert_int_eq(w[i].errors, 0);
	}
	static const char letters[] = "ABC";
	ck_assert_msg(t->order[0] == 0 && t->order[1] == 2 && t->order[2] == 1,
		      "after %s: woken %c %c %c, expected A (now %d) C (30) B (20)", names[change],
		      letters[t->order[0]], letters[t->order[1]], letters[t->order[2]], CEILING);
	ck_assert_int_eq(pthread_cond_destroy(&t->c), 0);
	ck_assert_int_eq(pthread_mutex_destroy(&t->m), 0);
	ck_assert_int_eq(pthread_mutex_destroy(&t->pp), 0);
	sem_destroy(&t->recorded);
	sem_destroy(&t->next_round);
	free(t);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("wait_order");
	TCase *tc = tcase_create("priority_change");
	tcase_set_timeout(tc, 30);
	tcase_add_loop_test(tc, test_wait_order_follows_priority_change, CHANGE_SELF, CHANGE_CEILING + 1);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failures = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failures ? 1 : 0;
}
