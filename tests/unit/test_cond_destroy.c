/*
 * Condition variables and destroy: right after a broadcast or signals,
 * with the memory freed or unmapped at once; with a waiter nobody
 * signalled (EBUSY); after every waiter got its signal; and one signal
 * waking one waiter.
 *
 * cond_util.h: the mutex kinds and the conventions of these tests.
 */
#include "cond_util.h"

/* ---- destroy ---- */

/*
 * The classic pattern: waiters wait for a flag; the last user sets it,
 * broadcasts, destroys the condition and frees (or unmaps) its memory
 * while the woken waiters have not yet returned from the wait.
 *   variant 0: broadcast held, unlock, destroy
 *   variant 1: broadcast held, destroy while still holding, unlock
 *              (glibc: waiters confirm their wake-up before relocking
 *              "to allow pthread_cond_destroy while having acquired the
 *              mutex")
 *   variant 2: set the flag, unlock, broadcast, destroy
 *   variant 3: signal each waiter (held), unlock, destroy
 * Even rounds use malloc (scribbled before free), odd rounds a private
 * mapping that is unmapped, so a late touch of the object crashes.
 */
enum { DESTROY_WAITERS = 4 };

struct destroy_round {
	pthread_mutex_t *m;
	pthread_cond_t *c;
	_Atomic int *ready;
	int *flag;
	int result;
};

static void *destroy_waiter(void *p)
{
	struct destroy_round *d = p;
	pthread_mutex_lock(d->m);
	atomic_fetch_add(d->ready, 1);
	d->result = 0;
	while (!*d->flag && d->result == 0)
		d->result = pthread_cond_wait(d->c, d->m);
	pthread_mutex_unlock(d->m);
	return NULL;
}

struct watchdog {
	pthread_t thread;
	sem_t stop;
	long ms;
	char what[200];
};

static void *watchdog_main(void *p)
{
	struct watchdog *w = p;
	struct timespec dl = deadline_in_ms(CLOCK_REALTIME, w->ms);
	while (sem_timedwait(&w->stop, &dl) == -1) {
		if (errno == ETIMEDOUT) {
			fprintf(stderr, "watchdog: %s did not finish within %ld ms\n", w->what, w->ms);
			ck_abort_msg("watchdog: %s did not finish within %ld ms", w->what, w->ms);
		}
	}
	return NULL;
}

static void watchdog_start(struct watchdog *w, long ms, const char *what)
{
	w->ms = ms;
	snprintf(w->what, sizeof w->what, "%s", what);
	ck_assert_int_eq(sem_init(&w->stop, 0, 0), 0);
	ck_assert_int_eq(pthread_create(&w->thread, NULL, watchdog_main, w), 0);
}

static void watchdog_stop(struct watchdog *w)
{
	sem_post(&w->stop);
	pthread_join(w->thread, NULL);
	sem_destroy(&w->stop);
}

static const char *const destroy_variant_names[] = { "broadcast held, unlock, destroy",
						     "broadcast held, destroy holding the mutex",
						     "unlock, broadcast, destroy", "signal each held, unlock, destroy" };

START_TEST(test_destroy_after_broadcast)
{
	static const int destroy_kinds[] = { 0, 7 }; /* normal, pi */
	const struct mkind *k = &kinds[destroy_kinds[_i / 4]];
	int variant = _i % 4;
	enum { ROUNDS = 200 };
	pthread_mutex_t m;
	init_mutex(&m, k, false);
	char what[200];
	snprintf(what, sizeof what, "%s, %s", k->name, destroy_variant_names[variant]);
	struct watchdog wd;
	watchdog_start(&wd, 15000, what);

	for (int round = 0; round < ROUNDS; round++) {
		bool mapped = round & 1;
		size_t size = 4096;
		pthread_cond_t *c = mapped ? mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)
					   : malloc(sizeof *c);
		ck_assert(c != MAP_FAILED && c != NULL);
		ck_assert_int_eq(pthread_cond_init(c, NULL), 0);
		_Atomic int ready = 0;
		int flag = 0;
		struct destroy_round d[DESTROY_WAITERS];
		pthread_t t[DESTROY_WAITERS];
		for (int i = 0; i < DESTROY_WAITERS; i++) {
			d[i] = (struct destroy_round){ .m = &m, .c = c, .ready = &ready, .flag = &flag, .result = -1 };
			ck_assert_int_eq(pthread_create(&t[i], NULL, destroy_waiter, &d[i]), 0);
		}
		lock_when_ready(&m, &ready, DESTROY_WAITERS);
		flag = 1;
		int r = 0;
		switch (variant) {
		case 0:
			ck_assert_int_eq(pthread_cond_broadcast(c), 0);
			ck_assert_int_eq(pthread_mutex_unlock(&m), 0);
			r = pthread_cond_destroy(c);
			break;
		case 1:
			ck_assert_int_eq(pthread_cond_broadcast(c), 0);
			r = pthread_cond_destroy(c);
			ck_assert_int_eq(pthread_mutex_unlock(&m), 0);
			break;
		case 2:
			ck_assert_int_eq(pthread_mutex_unlock(&m), 0);
			ck_assert_int_eq(pthread_cond_broadcast(c), 0);
			r = pthread_cond_destroy(c);
			break;
		default:
			for (int i = 0; i < DESTROY_WAITERS; i++)
				ck_assert_int_eq(pthread_cond_signal(c), 0);
			ck_assert_int_eq(pthread_mutex_unlock(&m), 0);
			r = pthread_cond_destroy(c);
			break;
		}
		ck_assert_msg(r == 0, "%s, round %d: destroy returned %d", what, round, r);
		if (mapped) {
			munmap(c, size);
		} else {
			memset(c, 0xa5, sizeof *c);
			free(c);
		}
		for (int i = 0; i < DESTROY_WAITERS; i++) {
			join_within(t[i], NULL, 5000, "woken waiter");
			ck_assert_int_eq(d[i].result, 0);
		}
	}
	watchdog_stop(&wd);
	ck_assert_int_eq(pthread_mutex_destroy(&m), 0);
}
END_TEST

/* Library behaviour: destroy with a waiter nobody signalled is EBUSY (and
 * leaves the condition usable); glibc blocks until the waiter leaves. */
struct busy_destroy {
	pthread_cond_t *c;
	_Atomic int done;
	int result;
};

static void *busy_destroy_main(void *p)
{
	struct busy_destroy *b = p;
	b->result = pthread_cond_destroy(b->c);
	atomic_store(&b->done, 1);
	return NULL;
}

START_TEST(test_destroy_busy)
{
	if (!library_loaded())
		SKIP_TEST("library behaviour (glibc blocks), rtpthread not loaded");
	const struct mkind *k = &kinds[_i ? 7 : 0];
	pthread_mutex_t m;
	pthread_cond_t c;
	init_mutex(&m, k, false);
	ck_assert_int_eq(pthread_cond_init(&c, NULL), 0);
	int flag = 0;
	_Atomic int ready = 0;
	struct destroy_round d = { .m = &m, .c = &c, .ready = &ready, .flag = &flag };
	pthread_t t;
	ck_assert_int_eq(pthread_create(&t, NULL, destroy_waiter, &d), 0);
	lock_when_ready(&m, &ready, 1);
	ck_assert_int_eq(pthread_mutex_unlock(&m), 0);

	struct busy_destroy b = { .c = &c };
	pthread_t dt;
	ck_assert_int_eq(pthread_create(&dt, NULL, busy_destroy_main, &b), 0);
	ck_assert_msg(wait_flag(&b.done, 1, 3000), "destroy blocked with an unsignalled waiter (expected EBUSY)");
	join_within(dt, NULL, 1000, "destroy");
	ck_assert_int_eq(b.result, EBUSY);

	/* still a working condition */
	ck_assert_int_eq(pthread_mutex_lock(&m), 0);
	flag = 1;
	ck_assert_int_eq(pthread_cond_signal(&c), 0);
	ck_assert_int_eq(pthread_mutex_unlock(&m), 0);
	join_within(t, NULL, 5000, "waiter");
	ck_assert_int_eq(d.result, 0);
	ck_assert_int_eq(pthread_cond_destroy(&c), 0);
	ck_assert_int_eq(pthread_mutex_destroy(&m), 0);
}
END_TEST

/*
 * Every waiter got its signal and left: destroy must succeed (EBUSY is
 * only for a condition "referenced by another thread").  Two waiters
 * with a token each, signalled one at a time on a fresh condition.
 */
struct tokq {
	pthread_mutex_t m;
	pthread_cond_t c;
	_Atomic int ready;
	int tokens;
	_Atomic int consumed;
	_Atomic int returns; /* returns from the wait, spurious ones included */
	int errors;
};

static void *tokq_waiter(void *p)
{
	struct tokq *q = p;
	pthread_mutex_lock(&q->m);
	atomic_fetch_add(&q->ready, 1);
	while (q->tokens == 0) {
		if (pthread_cond_wait(&q->c, &q->m) != 0)
			q->errors++;
		atomic_fetch_add(&q->returns, 1);
	}
	q->tokens--;
	atomic_fetch_add(&q->consumed, 1);
	pthread_mutex_unlock(&q->m);
	return NULL;
}

START_TEST(test_destroy_after_signals)
{
	const struct mkind *k = &kinds[_i ? 7 : 0]; /* normal, pi */
	enum { NQ = 3 };
	struct tokq *q = calloc(1, sizeof *q);
	init_mutex(&q->m, k, false);
	ck_assert_int_eq(pthread_cond_init(&q->c, NULL), 0);
	pthread_t t[NQ];
	for (int i = 0; i < NQ; i++)
		ck_assert_int_eq(pthread_create(&t[i], NULL, tokq_waiter, q), 0);
	lock_when_ready(&q->m, &q->ready, NQ);
	for (int i = 0; i < NQ; i++) {
		q->tokens++;
		ck_assert_int_eq(pthread_cond_signal(&q->c), 0);
		ck_assert_int_eq(pthread_mutex_unlock(&q->m), 0);
		ck_assert_msg(wait_flag(&q->consumed, i + 1, 5000), "%s: signal %d woke nobody", k->name, i + 1);
		ck_assert_int_eq(pthread_mutex_lock(&q->m), 0);
	}
	ck_assert_int_eq(pthread_mutex_unlock(&q->m), 0);
	for (int i = 0; i < NQ; i++)
		join_within(t[i], NULL, 5000, "signalled waiter");
	ck_assert_int_eq(q->errors, 0);
	int r = pthread_cond_destroy(&q->c);
	ck_assert_msg(r == 0, "%s: destroy returned %d after every waiter was signalled and left (%d returns from "
		      "%d waits)", k->name, r, atomic_load(&q->returns), NQ);
	ck_assert_int_eq(pthread_mutex_destroy(&q->m), 0);
	free(q);
}
END_TEST

/* Library behaviour: one signal wakes one waiter, also on a fresh
 * condition (POSIX allows more; rtpthread promises the top one only). */
START_TEST(test_signal_wakes_one)
{
	if (!library_loaded())
		SKIP_TEST("library behaviour, rtpthread not loaded");
	const struct mkind *k = &kinds[_i ? 7 : 0]; /* normal, pi */
	enum { NQ = 3 };
	struct tokq *q = calloc(1, sizeof *q);
	init_mutex(&q->m, k, false);
	ck_assert_int_eq(pthread_cond_init(&q->c, NULL), 0);
	pthread_t t[NQ];
	for (int i = 0; i < NQ; i++)
		ck_assert_int_eq(pthread_create(&t[i], NULL, tokq_waiter, q), 0);
	for (int round = 0; round < NQ; round++) {
		lock_when_ready(&q->m, &q->ready, NQ);
		int before = atomic_load(&q->returns);
		q->tokens++;
		ck_assert_int_eq(pthread_cond_signal(&q->c), 0);
		ck_assert_int_eq(pthread_mutex_unlock(&q->m), 0);
		ck_assert(wait_flag(&q->consumed, round + 1, 5000));
		sleep_ms(50);
		ck_assert_msg(atomic_load(&q->returns) - before == 1,
			      "%s, signal %d: %d waiters returned from the wait", k->name, round + 1,
			      atomic_load(&q->returns) - before);
	}
	for (int i = 0; i < NQ; i++)
		join_within(t[i], NULL, 5000, "signalled waiter");
	ck_assert_int_eq(pthread_cond_destroy(&q->c), 0);
	ck_assert_int_eq(pthread_mutex_destroy(&q->m), 0);
	free(q);
}
END_TEST

/* ---- suite ---- */

static Suite *cond_destroy_suite(void)
{
	Suite *s = suite_create("cond_destroy");
	TCase *tc;

	tc = tcase_create("destroy");
	tcase_set_timeout(tc, 30);
	tcase_add_loop_test(tc, test_destroy_after_broadcast, 0, 8);
	tcase_add_loop_test(tc, test_destroy_busy, 0, 2);
	tcase_add_loop_test(tc, test_destroy_after_signals, 0, 2);
	tcase_add_loop_test(tc, test_signal_wakes_one, 0, 2);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return run_suite(cond_destroy_suite());
}
