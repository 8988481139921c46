/*
 * Condition variables and real time: waiters woken and re-acquiring in
 * priority order, a late high-priority waiter served first, and a waiter
 * moved onto a PI mutex boosting its owner at once.
 *
 * cond_util.h: the mutex kinds and the conventions of these tests.
 */
#include "cond_util.h"

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
 * bit 1 the main thread holds the mutex while it wakes; _i / 4: a normal,
 * PI or PP mutex.  With the PP mutex (ceiling PP_CEILING) the priorities
 * are 11..18, below the ceiling: each waiter queues at the ceiling, which
 * its wait gives back before it sleeps, so its place must follow.
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

/* A waiter's priority in a round: below the ceiling with a PP mutex. */
static int round_prio(int prio, bool pp)
{
	return pp ? 10 + prio / 10 : prio;
}

START_TEST(test_priority_order)
{
	static const int kind_of_test[] = { 0, 7, 11 }; /* normal, pi, pp */
	bool broadcast = _i & 1, held = _i & 2, pp = _i / 4 == 2;
	const struct mkind *k = &kinds[kind_of_test[_i / 4]];
	_Static_assert(PP_CEILING - 1 > 18, "PP round priorities below the waker's, below the ceiling");
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
			w[i] = (struct prio_waiter){ .t = t, .prio = round_prio(prio_orders[round][i], pp), .result = -1 };
			start_thread_sched(&w[i].thread, SCHED_FIFO, w[i].prio, 0, prio_waiter_main, &w[i]);
		}
		/* Every waiter outranks us on our CPU: they are all asleep. */
		ck_assert_int_eq(pthread_mutex_lock(&t->m), 0);
		ck_assert_int_eq(atomic_load(&t->registered), NPRIO);
		ck_assert_int_eq(pthread_mutex_unlock(&t->m), 0);
		ck_assert(try_fifo(pp ? PP_CEILING - 1 : 90)); /* above them all; may lock the PP mutex */

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
			ok = t->order[i] == round_prio(80 - 10 * i, pp);
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

static Suite *cond_realtime_suite(void)
{
	Suite *s = suite_create("cond_realtime");
	TCase *tc;

	tc = tcase_create("realtime");
	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, test_priority_order, 0, 12);
	tcase_add_loop_test(tc, test_priority_late_waiter, 0, 4);
	tcase_add_loop_test(tc, test_pi_boost_through_requeue, 0, 2);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return run_suite(cond_realtime_suite());
}
