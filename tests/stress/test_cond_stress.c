/*
 * Condition-variable stress: lost wake-ups, mutual exclusion and spurious
 * wake-ups under load.
 *
 *   queue:        producers and consumers on a bounded queue, with random
 *                 waits (untimed, timed on either clock, clockwait), random
 *                 signal/broadcast, with and without the mutex held.  The
 *                 counts and sums must balance, every thread must finish
 *                 after the final broadcast, and a non-atomic counter
 *                 touched only under the mutex must add up.
 *   relay:        signals only, untimed waits: nothing masks a lost one.
 *   no_spurious:  glibc's cond-perf: consumers wait WITHOUT a predicate
 *                 loop; the main thread broadcasts once all of them wait;
 *                 each round every consumer must wake exactly once.
 *
 * test_cond_stress_races.c holds the cancellation, destroy and late-waiter
 * storms; cond_stress.h the budget (STRESS_DURATION, default 5, shared by
 * both files).  Every phase has a deadline: a stuck thread fails the test
 * with a description, never hangs it.  Threads other than the test's main
 * thread only count errors; the main thread asserts.
 */
#include "cond_stress.h"

/* ---- producers and consumers ---- */

enum { QCAP = 8, NPROD = 4, NCONS = 4 };

struct queue {
	pthread_mutex_t m;
	pthread_cond_t not_empty; /* CLOCK_REALTIME */
	pthread_cond_t not_full;  /* CLOCK_MONOTONIC */
	unsigned items[QCAP];
	int head, count;
	long produced, consumed;
	unsigned long long sum_in, sum_out;
	volatile long counter; /* non-atomic, under m */
	int done;	       /* under m: consumers leave once empty */
	_Atomic int stop;      /* producers leave */
	_Atomic int inside;
	_Atomic int overlaps;
	_Atomic int errors;
	_Atomic int first_error;
	_Atomic long entries; /* critical-section entries, summed at exit */
	_Atomic long progress;
	_Atomic long waits, timeouts;
	_Atomic int prod_finished, cons_finished;
	_Atomic int waiting_full, waiting_empty;
};

struct qthread {
	struct queue *q;
	int id;
	pthread_t thread;
};

static void q_error(struct queue *q, int code)
{
	int zero = 0;
	atomic_fetch_add(&q->errors, 1);
	atomic_compare_exchange_strong(&q->first_error, &zero, code);
}

/* Entered the critical section: nobody else may be inside. */
static void q_enter(struct queue *q, long *entries)
{
	if (atomic_fetch_add(&q->inside, 1) != 0)
		atomic_fetch_add(&q->overlaps, 1);
	long c = q->counter;
	for (int k = 0; k < 4; k++)
		__asm__ volatile("" ::: "memory");
	q->counter = c + 1;
	(*entries)++;
}

static void q_leave(struct queue *q)
{
	atomic_fetch_sub(&q->inside, 1);
}

static void q_lock(struct queue *q, long *entries)
{
	int r = pthread_mutex_lock(&q->m);
	if (r != 0)
		q_error(q, 100 + r);
	q_enter(q, entries);
}

static void q_unlock(struct queue *q)
{
	q_leave(q);
	int r = pthread_mutex_unlock(&q->m);
	if (r != 0)
		q_error(q, 200 + r);
}

/* One wait of a random flavour; timeouts are short. */
static void q_wait(struct queue *q, pthread_cond_t *c, clockid_t attr_clock, unsigned *rng, long *entries,
		   _Atomic int *waiting)
{
	struct timespec dl;
	clockid_t clock;
	int r;
	q_leave(q);
	atomic_fetch_add(waiting, 1);
	atomic_fetch_add(&q->waits, 1);
	switch (rnd(rng) % 4) {
	case 0:
	case 1:
		r = pthread_cond_wait(c, &q->m);
		break;
	case 2:
		dl = deadline_in_ms(attr_clock, 1 + rnd(rng) % 3);
		r = pthread_cond_timedwait(c, &q->m, &dl);
		break;
	default:
		clock = rnd(rng) & 1 ? CLOCK_MONOTONIC : CLOCK_REALTIME;
		dl = deadline_in_ms(clock, 1 + rnd(rng) % 3);
		r = pthread_cond_clockwait(c, &q->m, clock, &dl);
		break;
	}
	atomic_fetch_sub(waiting, 1);
	q_enter(q, entries);
	if (r == ETIMEDOUT)
		atomic_fetch_add(&q->timeouts, 1);
	else if (r != 0)
		q_error(q, 300 + r);
}

/* Wake the other side: signal or broadcast, holding the mutex or after
 * releasing it.  Releases the mutex either way. */
static void q_notify_unlock(struct queue *q, pthread_cond_t *c, unsigned *rng)
{
	unsigned how = rnd(rng) % 4;
	int r;
	if (how < 2) {
		r = how == 0 ? pthread_cond_signal(c) : pthread_cond_broadcast(c);
		q_unlock(q);
	} else {
		q_unlock(q);
		r = how == 2 ? pthread_cond_signal(c) : pthread_cond_broadcast(c);
	}
	if (r != 0)
		q_error(q, 400 + r);
}

static void *producer(void *p)
{
	struct qthread *t = p;
	struct queue *q = t->q;
	unsigned rng = 0x9e3779b9u * (unsigned)(t->id + 1);
	long entries = 0;
	unsigned seq = 0;
	while (!atomic_load(&q->stop)) {
		q_lock(q, &entries);
		while (q->count == QCAP && !atomic_load(&q->stop))
			q_wait(q, &q->not_full, CLOCK_MONOTONIC, &rng, &entries, &q->waiting_full);
		if (q->count == QCAP) { /* stopping */
			q_unlock(q);
			break;
		}
		unsigned v = ((unsigned)t->id << 24) | (seq++ & 0xffffff);
		q->items[(q->head + q->count) % QCAP] = v;
		q->count++;
		q->produced++;
		q->sum_in += v;
		atomic_fetch_add(&q->progress, 1);
		q_notify_unlock(q, &q->not_empty, &rng);
	}
	atomic_fetch_add(&q->entries, entries);
	atomic_fetch_add(&q->prod_finished, 1);
	return NULL;
}

static void *consumer(void *p)
{
	struct qthread *t = p;
	struct queue *q = t->q;
	unsigned rng = 0x85ebca6bu * (unsigned)(t->id + 1);
	long entries = 0;
	for (;;) {
		q_lock(q, &entries);
		while (q->count == 0 && !q->done)
			q_wait(q, &q->not_empty, CLOCK_REALTIME, &rng, &entries, &q->waiting_empty);
		if (q->count == 0) { /* done */
			q_unlock(q);
			break;
		}
		unsigned v = q->items[q->head];
		q->head = (q->head + 1) % QCAP;
		q->count--;
		q->consumed++;
		q->sum_out += v;
		atomic_fetch_add(&q->progress, 1);
		q_notify_unlock(q, &q->not_full, &rng);
	}
	atomic_fetch_add(&q->entries, entries);
	atomic_fetch_add(&q->cons_finished, 1);
	return NULL;
}

/* Waits until *counter reaches n; fails if nothing moved for stall_ms. */
static void q_await(struct queue *q, _Atomic int *counter, int n, long stall_ms, const char *what)
{
	long last = -1;
	int64_t last_change = now_ns(CLOCK_MONOTONIC);
	while (atomic_load(counter) < n) {
		long p = atomic_load(&q->progress);
		int64_t now = now_ns(CLOCK_MONOTONIC);
		if (p != last) {
			last = p;
			last_change = now;
		}
		ck_assert_msg(now - last_change < stall_ms * 1000000LL,
			      "%s: stuck for %ld ms (lost wake-up?): %d of %d finished; queue %d, produced %ld, "
			      "consumed %ld, waiting on not_full %d, on not_empty %d",
			      what, stall_ms, atomic_load(counter), n, q->count, q->produced, q->consumed,
			      atomic_load(&q->waiting_full), atomic_load(&q->waiting_empty));
		sleep_ms(10);
	}
}

START_TEST(test_queue)
{
	const struct skind *k = &skinds[_i];
	double secs = stress_budget(0.35 / NSKINDS);
	struct queue *q = calloc(1, sizeof *q);
	init_skind(&q->m, k);
	pthread_condattr_t a;
	ck_assert_int_eq(pthread_condattr_init(&a), 0);
	ck_assert_int_eq(pthread_cond_init(&q->not_empty, &a), 0);
	ck_assert_int_eq(pthread_condattr_setclock(&a, CLOCK_MONOTONIC), 0);
	ck_assert_int_eq(pthread_cond_init(&q->not_full, &a), 0);
	ck_assert_int_eq(pthread_condattr_destroy(&a), 0);

	struct qthread prod[NPROD], cons[NCONS];
	for (int i = 0; i < NCONS; i++) {
		cons[i] = (struct qthread){ .q = q, .id = i };
		ck_assert_int_eq(pthread_create(&cons[i].thread, NULL, consumer, &cons[i]), 0);
	}
	for (int i = 0; i < NPROD; i++) {
		prod[i] = (struct qthread){ .q = q, .id = i };
		ck_assert_int_eq(pthread_create(&prod[i].thread, NULL, producer, &prod[i]), 0);
	}

	/* Run, watching for a stall: with producers and consumers both
	 * active, nothing may stand still for long. */
	int64_t end = now_ns(CLOCK_MONOTONIC) + (int64_t)(secs * 1e9);
	long last = -1;
	int64_t last_change = now_ns(CLOCK_MONOTONIC);
	while (now_ns(CLOCK_MONOTONIC) < end) {
		sleep_ms(20);
		long p = atomic_load(&q->progress);
		int64_t now = now_ns(CLOCK_MONOTONIC);
		if (p != last) {
			last = p;
			last_change = now;
		}
		ck_assert_msg(now - last_change < 3 * NSEC_PER_SEC,
			      "%s: no progress for 3 s (lost wake-up?): queue %d, produced %ld, consumed %ld, "
			      "waiting on not_full %d, on not_empty %d",
			      k->name, q->count, q->produced, q->consumed, atomic_load(&q->waiting_full),
			      atomic_load(&q->waiting_empty));
	}

	/* Producers stop; consumers still drain, so a producer blocked on a
	 * full queue is woken by them. */
	atomic_store(&q->stop, 1);
	ck_assert_int_eq(pthread_mutex_lock(&q->m), 0);
	ck_assert_int_eq(pthread_cond_broadcast(&q->not_full), 0);
	ck_assert_int_eq(pthread_mutex_unlock(&q->m), 0);
	q_await(q, &q->prod_finished, NPROD, 5000, "producers");
	for (int i = 0; i < NPROD; i++)
		join_within(prod[i].thread, NULL, 5000, "producer");

	/* One final broadcast must release every consumer. */
	ck_assert_int_eq(pthread_mutex_lock(&q->m), 0);
	q->done = 1;
	ck_assert_int_eq(pthread_cond_broadcast(&q->not_empty), 0);
	ck_assert_int_eq(pthread_mutex_unlock(&q->m), 0);
	q_await(q, &q->cons_finished, NCONS, 5000, "consumers after the final broadcast");
	for (int i = 0; i < NCONS; i++)
		join_within(cons[i].thread, NULL, 5000, "consumer");

	printf("%s: %.1f s, %ld items, %ld waits, %ld timeouts\n", k->name, secs, q->produced,
	       atomic_load(&q->waits), atomic_load(&q->timeouts));
	fflush(stdout);
	ck_assert_msg(atomic_load(&q->errors) == 0, "%s: %d errors, first code %d", k->name,
		      atomic_load(&q->errors), atomic_load(&q->first_error));
	ck_assert_msg(atomic_load(&q->overlaps) == 0, "%s: %d mutual-exclusion violations", k->name,
		      atomic_load(&q->overlaps));
	ck_assert_int_eq(q->count, 0);
	ck_assert_int_eq(q->produced, q->consumed);
	ck_assert(q->sum_in == q->sum_out);
	ck_assert_int_eq(q->counter, atomic_load(&q->entries));
	ck_assert_int_gt(q->produced, 0);
	ck_assert_int_eq(pthread_cond_destroy(&q->not_empty), 0);
	ck_assert_int_eq(pthread_cond_destroy(&q->not_full), 0);
	ck_assert_int_eq(pthread_mutex_destroy(&q->m), 0);
	free(q);
}
END_TEST

/* ---- relay: signals only, untimed waits, nothing to mask a lost one ---- */

/*
 * RELAY_N threads pass a baton: take it (waiting, untimed, while it is
 * not there or was put down by ourselves), do a little work outside the
 * mutex, put it down and signal (holding the mutex or not), then come
 * back for it.  The thread that put it down may not take it again, so
 * the signal must reach another thread.  Only signals, never a broadcast
 * or a timeout: a wake-up lost while every other thread sleeps leaves the
 * baton on the table and the relay stops.
 */
enum { RELAY_N = 3, RELAY_T = 1 };

struct relay {
	pthread_mutex_t m;
	pthread_cond_t c;
	int batons; /* under m */
	int last;   /* under m: who put the baton down */
	int stop;   /* under m */
	_Atomic long passes;
	_Atomic int sleeping;
	_Atomic int finished;
	_Atomic int errors;
};

struct relay_thread {
	struct relay *r;
	int id;
	bool rt; /* change priority every round */
	pthread_t thread;
};

static void *relay_main(void *arg)
{
	struct relay_thread *t = arg;
	struct relay *r = t->r;
	unsigned rng = 0x27d4eb2fu * (unsigned)(t->id + 1);
	for (;;) {
		if (t->rt)
			pthread_setschedprio(pthread_self(), 10 + (int)(rnd(&rng) % 8));
		if (pthread_mutex_lock(&r->m) != 0)
			atomic_fetch_add(&r->errors, 1);
		while ((r->batons == 0 || r->last == t->id) && !r->stop) {
			atomic_fetch_add(&r->sleeping, 1);
			if (pthread_cond_wait(&r->c, &r->m) != 0)
				atomic_fetch_add(&r->errors, 1);
			atomic_fetch_sub(&r->sleeping, 1);
		}
		if (r->stop) {
			pthread_mutex_unlock(&r->m);
			atomic_fetch_add(&r->finished, 1);
			break;
		}
		r->batons--;
		pthread_mutex_unlock(&r->m);

		for (unsigned k = rnd(&rng) % 200; k > 0; k--)
			__asm__ volatile("" ::: "memory");
		if (rnd(&rng) % 8 == 0)
			sched_yield();

		pthread_mutex_lock(&r->m);
		r->batons++;
		r->last = t->id;
		atomic_fetch_add(&r->passes, 1);
		if (rnd(&rng) & 1) {
			pthread_cond_signal(&r->c);
			pthread_mutex_unlock(&r->m);
		} else {
			pthread_mutex_unlock(&r->m);
			pthread_cond_signal(&r->c);
		}
	}
	return NULL;
}

/* _i: bit 0 PI mutex; bit 1 every relay thread SCHED_FIFO on CPU 0 at
 * its own priority (each wake-up of a higher one preempts at once, which
 * puts threads to sleep in the middle of their wait sequence). */
START_TEST(test_relay)
{
	const struct skind *k = &skinds[_i & 1];
	bool rt = _i & 2;
	if (rt && test_emulator())
		SKIP_TEST("SCHED_FIFO threads of several priorities on one CPU under %s (testlib.h says why)",
			  test_emulator());
	if (rt && !rt_available())
		SKIP_TEST("SCHED_FIFO refused");
	double secs = stress_budget(0.25 / 4);
	struct relay *r = calloc(1, sizeof *r);
	init_skind(&r->m, k);
	ck_assert_int_eq(pthread_cond_init(&r->c, NULL), 0);
	r->batons = RELAY_T;
	r->last = -1;
	struct relay_thread t[RELAY_N];
	if (rt) {
		/* The watcher stays off CPU 0, above the relay. */
		if (cpu_count() > 1) {
			cpu_set_t set;
			CPU_ZERO(&set);
			for (int c = 1; c < CPU_SETSIZE; c++)
				CPU_SET(c, &set);
			sched_setaffinity(0, sizeof set, &set);
		}
		ck_assert(try_fifo(50));
	}
	for (int i = 0; i < RELAY_N; i++) {
		t[i] = (struct relay_thread){ .r = r, .id = i, .rt = rt };
		if (rt)
			start_thread_sched(&t[i].thread, SCHED_FIFO, 10 + (i * 5) % RELAY_N, 0, relay_main, &t[i]);
		else
			ck_assert_int_eq(pthread_create(&t[i].thread, NULL, relay_main, &t[i]), 0);
	}
	int64_t end = now_ns(CLOCK_MONOTONIC) + (int64_t)(secs * 1e9);
	long last = -1;
	int64_t last_change = now_ns(CLOCK_MONOTONIC);
	while (now_ns(CLOCK_MONOTONIC) < end) {
		sleep_ms(10);
		long p = atomic_load(&r->passes);
		int64_t now = now_ns(CLOCK_MONOTONIC);
		if (p != last) {
			last = p;
			last_change = now;
		}
		if (now - last_change >= 2 * NSEC_PER_SEC) {
			ck_assert_int_eq(pthread_mutex_lock(&r->m), 0);
			int batons = r->batons;
			ck_assert_int_eq(pthread_mutex_unlock(&r->m), 0);
			ck_abort_msg("%s%s: relay stopped after %ld passes: %d baton(s) on the table, %d of %d "
				     "threads asleep in the wait: a signal was lost",
				     k->name, rt ? ", fifo one cpu" : "", p, batons, atomic_load(&r->sleeping), RELAY_N);
		}
	}
	/* One broadcast must release everybody. */
	ck_assert_int_eq(pthread_mutex_lock(&r->m), 0);
	r->stop = 1;
	ck_assert_int_eq(pthread_cond_broadcast(&r->c), 0);
	ck_assert_int_eq(pthread_mutex_unlock(&r->m), 0);
	ck_assert_msg(wait_flag(&r->finished, RELAY_N, 5000),
		      "%s%s: the final broadcast left %d of %d threads asleep (%d counted in the wait): lost "
		      "wake-up",
		      k->name, rt ? ", fifo one cpu" : "", RELAY_N - atomic_load(&r->finished), RELAY_N,
		      atomic_load(&r->sleeping));
	for (int i = 0; i < RELAY_N; i++)
		join_within(t[i].thread, NULL, 5000, "relay thread");
	printf("%s%s: relay %.1f s, %ld passes\n", k->name, rt ? ", fifo one cpu" : "", secs, atomic_load(&r->passes));
	fflush(stdout);
	ck_assert_int_eq(atomic_load(&r->errors), 0);
	ck_assert_int_eq(r->batons, RELAY_T);
	ck_assert_int_eq(pthread_cond_destroy(&r->c), 0);
	ck_assert_int_eq(pthread_mutex_destroy(&r->m), 0);
	free(r);
}
END_TEST

/* ---- no spurious wake-ups in practice (glibc's cond-perf) ---- */

enum { PERF_THREADS = 8 };

struct perf {
	pthread_mutex_t mut1, mut2;
	pthread_cond_t cond1, cond2;
	int ntogo;   /* under mut1 */
	int alldone; /* under mut2 */
	int stop;    /* under mut1 */
	long arrivals[PERF_THREADS]; /* under mut1 */
	_Atomic int errors;
	_Atomic int negative;
};

struct perf_thread {
	struct perf *p;
	int id;
	pthread_t thread;
};

static void *perf_consumer(void *arg)
{
	struct perf_thread *t = arg;
	struct perf *p = t->p;
	if (pthread_mutex_lock(&p->mut1) != 0)
		atomic_fetch_add(&p->errors, 1);
	for (;;) {
		p->arrivals[t->id]++;
		if (--p->ntogo == 0) {
			pthread_mutex_lock(&p->mut2);
			p->alldone = 1;
			pthread_cond_signal(&p->cond2);
			pthread_mutex_unlock(&p->mut2);
		} else if (p->ntogo < 0) {
			atomic_fetch_add(&p->negative, 1);
		}
		/* No predicate: every return counts as a wake-up. */
		if (pthread_cond_wait(&p->cond1, &p->mut1) != 0)
			atomic_fetch_add(&p->errors, 1);
		if (p->stop)
			break;
	}
	pthread_mutex_unlock(&p->mut1);
	return NULL;
}

START_TEST(test_no_spurious)
{
	bool hold = _i & 1; /* cond-perf -k: broadcast holding mut1 */
	const struct skind *k = &skinds[_i & 2 ? 1 : 0];
	double secs = stress_budget(0.2 / 4);
	struct perf *p = calloc(1, sizeof *p);
	init_skind(&p->mut1, k);
	ck_assert_int_eq(pthread_mutex_init(&p->mut2, NULL), 0);
	ck_assert_int_eq(pthread_cond_init(&p->cond1, NULL), 0);
	ck_assert_int_eq(pthread_cond_init(&p->cond2, NULL), 0);
	p->ntogo = PERF_THREADS;
	struct perf_thread t[PERF_THREADS];
	for (int i = 0; i < PERF_THREADS; i++) {
		t[i] = (struct perf_thread){ .p = p, .id = i };
		ck_assert_int_eq(pthread_create(&t[i].thread, NULL, perf_consumer, &t[i]), 0);
	}
	int64_t end = now_ns(CLOCK_MONOTONIC) + (int64_t)(secs * 1e9);
	long round;
	for (round = 0; round < 20 || now_ns(CLOCK_MONOTONIC) < end; round++) {
		ck_assert_int_eq(pthread_mutex_lock(&p->mut2), 0);
		while (!p->alldone) {
			struct timespec dl = deadline_in_ms(CLOCK_REALTIME, 5000);
			int r = pthread_cond_timedwait(&p->cond2, &p->mut2, &dl);
			ck_assert_msg(r == 0 || r == ETIMEDOUT, "%s: wait on cond2: %d", k->name, r);
			if (r == ETIMEDOUT) {
				int ntogo = p->ntogo; /* racy read, for the message */
				ck_abort_msg("%s%s, round %ld: consumers did not all arrive within 5 s (ntogo %d): a "
					     "consumer missed the broadcast or woke spuriously",
					     k->name, hold ? ", held" : "", round, ntogo);
			}
		}
		p->alldone = 0;
		ck_assert_int_eq(pthread_mutex_unlock(&p->mut2), 0);
		ck_assert_int_eq(pthread_mutex_lock(&p->mut1), 0);
		/* Every consumer woke exactly once per broadcast and waits again. */
		for (int i = 0; i < PERF_THREADS; i++)
			ck_assert_msg(p->arrivals[i] == round + 1,
				      "%s%s, round %ld: consumer %d woke %ld times (spurious wake-up)", k->name,
				      hold ? ", held" : "", round, i, p->arrivals[i] - round);
		ck_assert_int_eq(p->ntogo, 0);
		p->ntogo = PERF_THREADS;
		if (hold) {
			ck_assert_int_eq(pthread_cond_broadcast(&p->cond1), 0);
			ck_assert_int_eq(pthread_mutex_unlock(&p->mut1), 0);
		} else {
			ck_assert_int_eq(pthread_mutex_unlock(&p->mut1), 0);
			ck_assert_int_eq(pthread_cond_broadcast(&p->cond1), 0);
		}
	}
	/* Wait for the last round, then let everybody go. */
	ck_assert_int_eq(pthread_mutex_lock(&p->mut2), 0);
	while (!p->alldone) {
		struct timespec dl = deadline_in_ms(CLOCK_REALTIME, 5000);
		ck_assert_msg(pthread_cond_timedwait(&p->cond2, &p->mut2, &dl) == 0, "%s: last round stuck", k->name);
	}
	ck_assert_int_eq(pthread_mutex_unlock(&p->mut2), 0);
	ck_assert_int_eq(pthread_mutex_lock(&p->mut1), 0);
	p->stop = 1;
	ck_assert_int_eq(pthread_cond_broadcast(&p->cond1), 0);
	ck_assert_int_eq(pthread_mutex_unlock(&p->mut1), 0);
	for (int i = 0; i < PERF_THREADS; i++)
		join_within(t[i].thread, NULL, 5000, "consumer");
	printf("%s%s: %ld rounds of %d consumers\n", k->name, hold ? ", held" : "", round, PERF_THREADS);
	fflush(stdout);
	ck_assert_int_eq(atomic_load(&p->errors), 0);
	ck_assert_int_eq(atomic_load(&p->negative), 0);
	ck_assert_int_eq(pthread_cond_destroy(&p->cond1), 0);
	ck_assert_int_eq(pthread_cond_destroy(&p->cond2), 0);
	ck_assert_int_eq(pthread_mutex_destroy(&p->mut1), 0);
	ck_assert_int_eq(pthread_mutex_destroy(&p->mut2), 0);
	free(p);
}
END_TEST

/* ---- suite ---- */

static Suite *cond_stress_suite(void)
{
	Suite *s = suite_create("cond_stress");
	TCase *tc;
	int slack = 30;

	tc = tcase_create("queue");
	tcase_set_timeout(tc, (double)stress_budget(0.35 / NSKINDS) + slack);
	tcase_add_loop_test(tc, test_queue, 0, NSKINDS);
	suite_add_tcase(s, tc);

	tc = tcase_create("relay");
	tcase_set_timeout(tc, (double)stress_budget(0.25 / 4) + slack);
	tcase_add_loop_test(tc, test_relay, 0, 4);
	suite_add_tcase(s, tc);

	tc = tcase_create("no_spurious");
	tcase_set_timeout(tc, (double)stress_budget(0.2 / 4) + slack);
	tcase_add_loop_test(tc, test_no_spurious, 0, 4);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	stress_read_duration();
	return run_suite(cond_stress_suite());
}
