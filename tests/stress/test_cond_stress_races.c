/*
 * Condition-variable stress: cancellation and destruction under load, and
 * a late waiter during a broadcast.
 *
 *   cancel:       signals sent while a waiter is being cancelled must all
 *                 reach the other waiters.
 *   destroy:      broadcast, destroy and unmap at once, many rounds.
 *   late:         a thread starts waiting while a broadcast sent without
 *                 the mutex is under way, and is signalled at once: the
 *                 waiters the broadcast moved onto the mutex must all get
 *                 it although nobody else touches the mutex afterwards,
 *                 and the late one must get its signal.  A SCHED_FIFO
 *                 thread (where allowed) preempts the broadcaster at
 *                 random points, which widens every window inside it.
 *
 * test_cond_stress.c holds the queue, relay and no-spurious tests;
 * cond_stress.h the budget (STRESS_DURATION, default 5, shared by both
 * files).  Every phase has a deadline: a stuck thread fails the test with
 * a description, never hangs it.  Threads other than the test's main
 * thread only count errors; the main thread asserts.
 */
#include "cond_stress.h"

/* ---- a late waiter does not strand the ones a broadcast moved ---- */

enum { LATE_OLD = 3 };

struct late {
	pthread_mutex_t m;
	pthread_cond_t c;
	int round;	       /* under m: old waiters wait for it to change */
	int late_round;	       /* under m: the late waiter waits for it to change */
	_Atomic int go_old;    /* round the old waiters may start waiting in */
	_Atomic int go;	       /* round the late waiter may start waiting in */
	_Atomic int late_waiting; /* round the late waiter registered in */
	_Atomic int arrived;   /* old waiters' waits begun (under m) */
	_Atomic int returned;  /* old waiters' waits ended */
	_Atomic int late_done; /* rounds the late waiter finished */
	_Atomic int stop;
	_Atomic int errors;
	int helper_cpu;	       /* -1: one CPU, nobody is pinned */
};

/* Best effort: a failure only makes the races rarer. */
static void late_pin(int cpu)
{
	if (cpu < 0)
		return;
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	pthread_setaffinity_np(pthread_self(), sizeof set, &set);
}

static void spin_for(unsigned loops)
{
	for (volatile unsigned i = 0; i < loops; i++)
		;
}

/* Waits once per round, and not between rounds: the signal meant for the
 * late waiter cannot go to an old waiter. */
static void *late_old_waiter(void *arg)
{
	struct late *l = arg;
	late_pin(l->helper_cpu);
	for (int round = 1;; round++) {
		while (atomic_load(&l->go_old) < round)
			if (atomic_load(&l->stop))
				return NULL;
			else
				sched_yield();
		pthread_mutex_lock(&l->m);
		atomic_fetch_add(&l->arrived, 1);
		int mine = l->round;
		while (l->round == mine && !atomic_load(&l->stop))
			if (pthread_cond_wait(&l->c, &l->m) != 0)
				atomic_fetch_add(&l->errors, 1);
		pthread_mutex_unlock(&l->m);
		atomic_fetch_add(&l->returned, 1);
	}
}

/* Registers as the broadcast runs (random delay after the go). */
static void *late_waiter(void *arg)
{
	struct late *l = arg;
	unsigned rng = 12345;
	late_pin(l->helper_cpu);
	for (int round = 1; !atomic_load(&l->stop); round++) {
		while (atomic_load(&l->go) < round)
			if (atomic_load(&l->stop))
				return NULL;
			else
				sched_yield();
		spin_for(rnd(&rng) % 4000);
		pthread_mutex_lock(&l->m);
		int mine = l->late_round;
		atomic_store(&l->late_waiting, round);
		while (l->late_round == mine)
			if (pthread_cond_wait(&l->c, &l->m) != 0)
				atomic_fetch_add(&l->errors, 1);
		pthread_mutex_unlock(&l->m);
		atomic_store(&l->late_done, round);
	}
	return NULL;
}

/* Signals the late waiter as soon as it has registered, without holding
 * the mutex: the signal is for it (the old waiters are covered). */
static void *late_signaller(void *arg)
{
	struct late *l = arg;
	late_pin(l->helper_cpu);
	for (int round = 1; !atomic_load(&l->stop); round++) {
		while (atomic_load(&l->late_waiting) < round)
			if (atomic_load(&l->stop))
				return NULL;
			else
				sched_yield();
		pthread_mutex_lock(&l->m); /* the late waiter is in its wait now */
		l->late_round++;
		pthread_mutex_unlock(&l->m);
		if (pthread_cond_signal(&l->c) != 0)
			atomic_fetch_add(&l->errors, 1);
	}
	return NULL;
}

/* On the broadcaster's CPU: sleeps 20-100 us, then runs 30 us. */
static void *late_preempter(void *arg)
{
	struct late *l = arg;
	unsigned rng = 4242;
	late_pin(0);
	if (!try_fifo(50))
		return NULL;
	while (!atomic_load(&l->stop)) {
		struct timespec ts = { 0, 20000 + (long)(rnd(&rng) % 80000) };
		clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, NULL);
		int64_t end = now_ns(CLOCK_MONOTONIC) + 30000;
		while (now_ns(CLOCK_MONOTONIC) < end)
			;
	}
	return NULL;
}

START_TEST(test_late_waiter)
{
	double secs = stress_budget(0.1);
	struct late *l = calloc(1, sizeof *l);
	cpu_set_t saved;
	ck_assert_int_eq(sched_getaffinity(0, sizeof saved, &saved), 0);
	l->helper_cpu = cpu_count() > 1 ? 1 : -1;
	if (l->helper_cpu > 0)
		pin_cpu(0);
	ck_assert_int_eq(pthread_mutex_init(&l->m, NULL), 0);
	ck_assert_int_eq(pthread_cond_init(&l->c, NULL), 0);
	pthread_t old[LATE_OLD], late, signaller;
	for (int i = 0; i < LATE_OLD; i++)
		ck_assert_int_eq(pthread_create(&old[i], NULL, late_old_waiter, l), 0);
	ck_assert_int_eq(pthread_create(&late, NULL, late_waiter, l), 0);
	ck_assert_int_eq(pthread_create(&signaller, NULL, late_signaller, l), 0);
	pthread_t preempter;
	ck_assert_int_eq(pthread_create(&preempter, NULL, late_preempter, l), 0);
	unsigned rng = 777;
	int64_t end = now_ns(CLOCK_MONOTONIC) + (int64_t)(secs * 1e9);
	int round;
	for (round = 1; round <= 20 || now_ns(CLOCK_MONOTONIC) < end; round++) {
		/* The old waiters are all waiting once they have arrived and
		 * the mutex is ours (they arrive holding it). */
		atomic_store(&l->go_old, round);
		while (atomic_load(&l->arrived) < LATE_OLD * round)
			sched_yield();
		ck_assert_int_eq(pthread_mutex_lock(&l->m), 0);
		l->round++;
		atomic_store(&l->go, round);
		ck_assert_int_eq(pthread_mutex_unlock(&l->m), 0);
		spin_for(rnd(&rng) % 4000);
		ck_assert_int_eq(pthread_cond_broadcast(&l->c), 0);
		/* Nobody locks the mutex now but the waiters themselves. */
		int64_t limit = now_ns(CLOCK_MONOTONIC) + 2000000000LL;
		while (atomic_load(&l->returned) < LATE_OLD * round || atomic_load(&l->late_done) < round) {
			ck_assert_msg(now_ns(CLOCK_MONOTONIC) < limit,
				      "round %d: %d of %d old waiters and %d of 1 late waiter returned within 2 s "
				      "(a lost wake-up, or waiters stranded on the mutex)",
				      round, atomic_load(&l->returned) - LATE_OLD * (round - 1), LATE_OLD,
				      atomic_load(&l->late_done) - (round - 1));
			sched_yield();
		}
	}
	atomic_store(&l->stop, 1);
	pthread_mutex_lock(&l->m);
	l->late_round++;
	l->round++;
	ck_assert_int_eq(pthread_cond_broadcast(&l->c), 0);
	pthread_mutex_unlock(&l->m);
	for (int i = 0; i < LATE_OLD; i++)
		join_within(old[i], NULL, 5000, "old waiter");
	join_within(late, NULL, 5000, "late waiter");
	join_within(signaller, NULL, 5000, "signaller");
	join_within(preempter, NULL, 5000, "preempter");
	ck_assert_int_eq(sched_setaffinity(0, sizeof saved, &saved), 0);
	printf("late waiter: %d rounds\n", round - 1);
	fflush(stdout);
	ck_assert_int_eq(atomic_load(&l->errors), 0);
	ck_assert_int_eq(pthread_cond_destroy(&l->c), 0);
	ck_assert_int_eq(pthread_mutex_destroy(&l->m), 0);
	free(l);
}
END_TEST

/* ---- cancellation does not swallow signals ---- */

enum { CW = 4, CTOKENS = 3 };

struct cstorm {
	pthread_mutex_t m;
	pthread_cond_t c;
	_Atomic int ready;
	int tokens;	  /* under m */
	int stop;	  /* under m */
	int consumed;	  /* under m */
	_Atomic int errors;
};

static void cstorm_unlock(void *arg)
{
	struct cstorm *s = arg;
	if (pthread_mutex_unlock(&s->m) != 0)
		atomic_fetch_add(&s->errors, 1);
}

static void *cstorm_waiter(void *arg)
{
	struct cstorm *s = arg;
	pthread_mutex_lock(&s->m);
	pthread_cleanup_push(cstorm_unlock, s);
	atomic_fetch_add(&s->ready, 1);
	while (s->tokens == 0 && !s->stop)
		if (pthread_cond_wait(&s->c, &s->m) != 0)
			atomic_fetch_add(&s->errors, 1);
	if (s->tokens > 0) {
		s->tokens--;
		s->consumed++;
	}
	pthread_cleanup_pop(1);
	return NULL;
}

START_TEST(test_cancel_storm)
{
	const struct skind *k = &skinds[_i];
	double secs = stress_budget(0.1 / 2);
	int64_t end = now_ns(CLOCK_MONOTONIC) + (int64_t)(secs * 1e9);
	unsigned rng = 12345;
	long rounds = 0, cancelled = 0;
	struct cstorm *s = calloc(1, sizeof *s);
	init_skind(&s->m, k);
	ck_assert_int_eq(pthread_cond_init(&s->c, NULL), 0);
	for (rounds = 0; rounds < 20 || now_ns(CLOCK_MONOTONIC) < end; rounds++) {
		pthread_t t[CW];
		atomic_store(&s->ready, 0);
		s->tokens = 0;
		s->stop = 0;
		s->consumed = 0;
		for (int i = 0; i < CW; i++)
			ck_assert_int_eq(pthread_create(&t[i], NULL, cstorm_waiter, s), 0);
		/* All registered: each set ready under m before waiting. */
		int64_t until = now_ns(CLOCK_MONOTONIC) + 5 * NSEC_PER_SEC;
		for (;;) {
			ck_assert_int_eq(pthread_mutex_lock(&s->m), 0);
			if (atomic_load(&s->ready) == CW)
				break;
			ck_assert_int_eq(pthread_mutex_unlock(&s->m), 0);
			ck_assert(now_ns(CLOCK_MONOTONIC) < until);
			sched_yield();
		}
		int victim = (int)(rnd(&rng) % CW);
		unsigned how = rnd(&rng) % 4;
		bool victim_joined = false;
		s->tokens = CTOKENS;
		if (k->protocol == PTHREAD_PRIO_INHERIT) {
			/* Known limitation (README): a PI waiter cancelled after a
			 * signal moved it onto the mutex cannot tell that it was
			 * moved, so it cannot pass that signal on.  Here the victim
			 * is cancelled and gone before any signal. */
			ck_assert_int_eq(pthread_mutex_unlock(&s->m), 0);
			ck_assert_int_eq(pthread_cancel(t[victim]), 0);
			void *ret;
			join_within(t[victim], &ret, 5000, "cancelled waiter");
			ck_assert(ret == PTHREAD_CANCELED);
			cancelled++;
			victim_joined = true;
			for (int n = 0; n < CTOKENS; n++)
				ck_assert_int_eq(pthread_cond_signal(&s->c), 0);
		} else if (how & 1) {
			/* signals under the mutex, cancel in between */
			for (int n = 0; n < CTOKENS; n++) {
				if ((int)(rnd(&rng) % CTOKENS) == n && (how & 2))
					ck_assert_int_eq(pthread_cancel(t[victim]), 0);
				ck_assert_int_eq(pthread_cond_signal(&s->c), 0);
			}
			if (!(how & 2))
				ck_assert_int_eq(pthread_cancel(t[victim]), 0);
			ck_assert_int_eq(pthread_mutex_unlock(&s->m), 0);
		} else {
			ck_assert_int_eq(pthread_mutex_unlock(&s->m), 0);
			for (int n = 0; n < CTOKENS; n++) {
				if ((int)(rnd(&rng) % CTOKENS) == n)
					ck_assert_int_eq(pthread_cancel(t[victim]), 0);
				ck_assert_int_eq(pthread_cond_signal(&s->c), 0);
				if (how & 2)
					sched_yield();
			}
		}
		/* Every token must be taken, by the survivors if need be. */
		int64_t deadline = now_ns(CLOCK_MONOTONIC) + 3 * NSEC_PER_SEC;
		for (;;) {
			ck_assert_int_eq(pthread_mutex_lock(&s->m), 0);
			int left = s->tokens;
			ck_assert_int_eq(pthread_mutex_unlock(&s->m), 0);
			if (left == 0)
				break;
			if (now_ns(CLOCK_MONOTONIC) >= deadline) {
				char raw[200];
				format_raw(raw, sizeof raw, &s->c, sizeof s->c);
				ck_abort_msg("%s, round %ld: %d of %d signals never reached a waiter (a cancelled "
					     "waiter swallowed one?); victim %d, scenario %u, %d consumed; condition "
					     "bytes %s",
					     k->name, rounds, left, CTOKENS, victim, how, s->consumed, raw);
			}
			sleep_ms(1);
		}
		ck_assert_int_eq(pthread_mutex_lock(&s->m), 0);
		s->stop = 1;
		ck_assert_int_eq(pthread_cond_broadcast(&s->c), 0);
		ck_assert_int_eq(pthread_mutex_unlock(&s->m), 0);
		for (int i = 0; i < CW; i++) {
			void *ret;
			if (victim_joined && i == victim)
				continue;
			join_within(t[i], &ret, 5000, "waiter");
			if (ret == PTHREAD_CANCELED)
				cancelled++;
		}
		ck_assert_int_eq(s->consumed, CTOKENS);
	}
	printf("%s: %ld rounds, %ld waiters cancelled in the wait\n", k->name, rounds, cancelled);
	fflush(stdout);
	ck_assert_int_eq(atomic_load(&s->errors), 0);
	ck_assert_int_eq(pthread_cond_destroy(&s->c), 0);
	ck_assert_int_eq(pthread_mutex_destroy(&s->m), 0);
	free(s);
}
END_TEST

/* ---- broadcast, destroy, unmap ---- */

enum { DW = 4 };

struct dstorm_waiter {
	pthread_mutex_t *m;
	pthread_cond_t *c;
	int *flag;
	_Atomic int *ready;
	bool timed;
	int result;
};

static void *dstorm_waiter_main(void *arg)
{
	struct dstorm_waiter *w = arg;
	struct timespec dl = deadline_in_ms(CLOCK_REALTIME, 10000);
	pthread_mutex_lock(w->m);
	atomic_fetch_add(w->ready, 1);
	w->result = 0;
	while (!*w->flag && w->result == 0)
		w->result = w->timed ? pthread_cond_timedwait(w->c, w->m, &dl) : pthread_cond_wait(w->c, w->m);
	pthread_mutex_unlock(w->m);
	return NULL;
}

START_TEST(test_destroy_storm)
{
	const struct skind *k = &skinds[_i / 2];
	bool held = _i & 1; /* broadcast holding the mutex (destroy after unlocking) */
	double secs = stress_budget(0.1 / 4);
	int64_t end = now_ns(CLOCK_MONOTONIC) + (int64_t)(secs * 1e9);
	pthread_mutex_t m;
	init_skind(&m, k);
	long round;
	for (round = 0; round < 20 || now_ns(CLOCK_MONOTONIC) < end; round++) {
		pthread_cond_t *c = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		ck_assert(c != MAP_FAILED);
		ck_assert_int_eq(pthread_cond_init(c, NULL), 0);
		_Atomic int ready = 0;
		int flag = 0;
		struct dstorm_waiter w[DW];
		pthread_t t[DW];
		for (int i = 0; i < DW; i++) {
			w[i] = (struct dstorm_waiter){ .m = &m, .c = c, .flag = &flag, .ready = &ready,
						       .timed = (i + round) & 1 };
			ck_assert_int_eq(pthread_create(&t[i], NULL, dstorm_waiter_main, &w[i]), 0);
		}
		int64_t until = now_ns(CLOCK_MONOTONIC) + 5 * NSEC_PER_SEC;
		for (;;) {
			ck_assert_int_eq(pthread_mutex_lock(&m), 0);
			if (atomic_load(&ready) == DW)
				break;
			ck_assert_int_eq(pthread_mutex_unlock(&m), 0);
			ck_assert(now_ns(CLOCK_MONOTONIC) < until);
			sched_yield();
		}
		flag = 1;
		if (held) {
			ck_assert_int_eq(pthread_cond_broadcast(c), 0);
			ck_assert_int_eq(pthread_mutex_unlock(&m), 0);
		} else {
			ck_assert_int_eq(pthread_mutex_unlock(&m), 0);
			ck_assert_int_eq(pthread_cond_broadcast(c), 0);
		}
		int r = pthread_cond_destroy(c);
		ck_assert_msg(r == 0, "%s, round %ld: destroy after broadcast returned %d", k->name, round, r);
		munmap(c, 4096); /* a waiter touching it now crashes */
		for (int i = 0; i < DW; i++) {
			join_within(t[i], NULL, 5000, "waiter");
			ck_assert_int_eq(w[i].result, 0);
		}
	}
	printf("%s%s: %ld rounds\n", k->name, held ? ", held" : "", round);
	fflush(stdout);
	ck_assert_int_eq(pthread_mutex_destroy(&m), 0);
}
END_TEST

/* ---- suite ---- */

static Suite *cond_stress_races_suite(void)
{
	Suite *s = suite_create("cond_stress_races");
	TCase *tc;
	int slack = 30;

	tc = tcase_create("cancel");
	tcase_set_timeout(tc, (double)stress_budget(0.1 / 2) + slack);
	tcase_add_loop_test(tc, test_cancel_storm, 0, 2);
	suite_add_tcase(s, tc);

	tc = tcase_create("destroy");
	tcase_set_timeout(tc, (double)stress_budget(0.1 / 4) + slack);
	tcase_add_loop_test(tc, test_destroy_storm, 0, 4);
	suite_add_tcase(s, tc);

	tc = tcase_create("late");
	tcase_set_timeout(tc, (double)stress_budget(0.1) + slack);
	tcase_add_test(tc, test_late_waiter);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	stress_read_duration();
	return run_suite(cond_stress_races_suite());
}
