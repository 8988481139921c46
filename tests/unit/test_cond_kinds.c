/*
 * Condition variables with each mutex kind: wait, signal and broadcast
 * (recursive depth restored, errorcheck, PI, PP), a broadcast herd, and a
 * robust mutex whose owner dies while a signalled waiter waits for it.
 *
 * cond_util.h: the mutex kinds and the conventions of these tests.
 */
#include "cond_util.h"

/* ---- wait / signal / broadcast with each mutex kind ---- */

/* mode bit 0: broadcast; bit 1: signaller holds the mutex */
struct ww {
	pthread_mutex_t m;
	pthread_cond_t c;
	const struct mkind *k;
	_Atomic int ready;
	int flag;
	int lock_result;
	int wait_result;
	int prio_after;
	int trylock_result;
	int unlock_result[3];
	int extra_unlock;
	_Atomic pid_t tid;
};

static void *ww_waiter(void *p)
{
	struct ww *w = p;
	atomic_store(&w->tid, test_gettid());
	for (int d = 0; d < w->k->depth; d++)
		if ((w->lock_result = pthread_mutex_lock(&w->m)) != 0)
			return NULL;
	atomic_store(&w->ready, 1);
	w->wait_result = 0;
	while (!w->flag && w->wait_result == 0)
		w->wait_result = pthread_cond_wait(&w->c, &w->m);
	struct task_sched s;
	w->prio_after = task_sched_read(test_gettid(), &s) && s.prio < 0 ? (int)(-1 - s.prio) : 0;
	w->trylock_result = pthread_mutex_trylock(&w->m);
	if (w->trylock_result == 0)
		pthread_mutex_unlock(&w->m);
	for (int d = 0; d < w->k->depth; d++)
		w->unlock_result[d] = pthread_mutex_unlock(&w->m);
	w->extra_unlock = owner_checked(w->k) ? pthread_mutex_unlock(&w->m) : EPERM;
	return NULL;
}

START_TEST(test_wait_wake_kinds)
{
	const struct mkind *k = &kinds[_i / 4];
	int mode = _i % 4;
	bool broadcast = mode & 1, held = mode & 2;
	bool pp = k->protocol == PP_;
	SKIP_DEEP_RECURSION(k);
	if (pp) {
		/* PP needs a real-time caller under glibc (EINVAL otherwise). */
		if (!rt_available())
			SKIP_TEST("%s: SCHED_FIFO refused", k->name);
		ck_assert(try_fifo(PP_BASE));
	}
	struct ww *w = calloc(1, sizeof *w);
	w->k = k;
	init_mutex(&w->m, k, false);
	ck_assert_int_eq(pthread_cond_init(&w->c, NULL), 0);
	pthread_t t;
	if (pp)
		start_thread_sched(&t, SCHED_FIFO, PP_BASE, -1, ww_waiter, w);
	else
		ck_assert_int_eq(pthread_create(&t, NULL, ww_waiter, w), 0);

	/* The wait released the mutex completely (recursive: all 3 levels). */
	lock_when_ready(&w->m, &w->ready, 1);
	ck_assert_int_eq(w->lock_result, 0);
	if (pp) {
		/* The waiter gave the ceiling back while it waits. */
		ck_assert(wait_task_sleeping(atomic_load(&w->tid), 5000));
		ck_assert_msg(task_rt_prio(atomic_load(&w->tid)) == PP_BASE, "%s: waiter at %d while waiting",
			      k->name, task_rt_prio(atomic_load(&w->tid)));
	}
	w->flag = 1;
	if (held) {
		ck_assert_int_eq(broadcast ? pthread_cond_broadcast(&w->c) : pthread_cond_signal(&w->c), 0);
		ck_assert_int_eq(pthread_mutex_unlock(&w->m), 0);
	} else {
		ck_assert_int_eq(pthread_mutex_unlock(&w->m), 0);
		ck_assert_int_eq(broadcast ? pthread_cond_broadcast(&w->c) : pthread_cond_signal(&w->c), 0);
	}
	join_within(t, NULL, 5000, "waiter");

	const char *how = broadcast ? (held ? "broadcast, held" : "broadcast, not held")
				    : (held ? "signal, held" : "signal, not held");
	ck_assert_msg(w->wait_result == 0, "%s, %s: wait returned %d", k->name, how, w->wait_result);
	if (k->type == R_)
		ck_assert_msg(w->trylock_result == 0, "%s, %s: trylock by the owner %d", k->name, how,
			      w->trylock_result);
	else
		ck_assert_msg(owner_trylock_ok(w->trylock_result), "%s, %s: trylock after the wait %d (not held?)",
			      k->name, how, w->trylock_result);
	for (int d = 0; d < k->depth; d++)
		ck_assert_msg(w->unlock_result[d] == 0, "%s, %s: unlock %d of %d after the wait: %d", k->name, how,
			      d + 1, k->depth, w->unlock_result[d]);
	ck_assert_msg(w->extra_unlock == EPERM, "%s, %s: unlock %d returned %d: depth not restored", k->name, how,
		      k->depth + 1, w->extra_unlock);
	if (pp)
		ck_assert_msg(w->prio_after == PP_CEILING, "%s, %s: at %d after the wait, not the ceiling", k->name,
			      how, w->prio_after);
	ck_assert_int_eq(pthread_mutex_trylock(&w->m), 0);
	ck_assert_int_eq(pthread_mutex_unlock(&w->m), 0);
	ck_assert_int_eq(pthread_cond_destroy(&w->c), 0);
	ck_assert_int_eq(pthread_mutex_destroy(&w->m), 0);
	free(w);
}
END_TEST

/* Several waiters of several kinds woken by one broadcast (mutex held and
 * not held) all return with the mutex, one at a time. */
struct herd {
	pthread_mutex_t m;
	pthread_cond_t c;
	const struct mkind *k;
	_Atomic int ready;
	int flag;
	_Atomic int inside;
	_Atomic int overlaps;
	_Atomic int done;
	_Atomic int errors;
};

static void *herd_waiter(void *p)
{
	struct herd *h = p;
	for (int d = 0; d < h->k->depth; d++)
		if (pthread_mutex_lock(&h->m) != 0)
			atomic_fetch_add(&h->errors, 1);
	atomic_fetch_add(&h->ready, 1);
	int r = 0;
	while (!h->flag && r == 0)
		r = pthread_cond_wait(&h->c, &h->m);
	if (r != 0)
		atomic_fetch_add(&h->errors, 1);
	if (atomic_fetch_add(&h->inside, 1) != 0)
		atomic_fetch_add(&h->overlaps, 1);
	sched_yield();
	atomic_fetch_sub(&h->inside, 1);
	for (int d = 0; d < h->k->depth; d++)
		if (pthread_mutex_unlock(&h->m) != 0)
			atomic_fetch_add(&h->errors, 1);
	atomic_fetch_add(&h->done, 1);
	return NULL;
}

static const int herd_kinds[] = { 0, 2, 4, 5, 7, 9, 10 };

START_TEST(test_broadcast_herd)
{
	const struct mkind *k = &kinds[herd_kinds[_i / 2]];
	bool held = _i % 2;
	enum { NW = 6 };
	SKIP_DEEP_RECURSION(k);
	struct herd *h = calloc(1, sizeof *h);
	h->k = k;
	init_mutex(&h->m, k, false);
	ck_assert_int_eq(pthread_cond_init(&h->c, NULL), 0);
	pthread_t t[NW];
	for (int i = 0; i < NW; i++)
		ck_assert_int_eq(pthread_create(&t[i], NULL, herd_waiter, h), 0);
	lock_when_ready(&h->m, &h->ready, NW);
	h->flag = 1;
	if (held) {
		ck_assert_int_eq(pthread_cond_broadcast(&h->c), 0);
		sleep_ms(20);
		ck_assert_int_eq(atomic_load(&h->done), 0); /* all need the mutex we hold */
		ck_assert_int_eq(pthread_mutex_unlock(&h->m), 0);
	} else {
		ck_assert_int_eq(pthread_mutex_unlock(&h->m), 0);
		ck_assert_int_eq(pthread_cond_broadcast(&h->c), 0);
	}
	for (int i = 0; i < NW; i++)
		join_within(t[i], NULL, 5000, "broadcast waiter");
	ck_assert_int_eq(atomic_load(&h->errors), 0);
	ck_assert_int_eq(atomic_load(&h->overlaps), 0);
	ck_assert_int_eq(atomic_load(&h->done), NW);
	ck_assert_int_eq(pthread_cond_destroy(&h->c), 0);
	ck_assert_int_eq(pthread_mutex_destroy(&h->m), 0);
	free(h);
}
END_TEST

/* ---- the sleepers a broadcast moves and the mutex's own sleepers ---- */

/*
 * The waiters a broadcast by the mutex's holder finds asleep, and lockers
 * that sleep on the mutex beside them, all get the mutex after the
 * holder's release, although nobody touches it afterwards:
 *   lockers      two lockers fall asleep behind the moved waiters;
 *   two mutexes  waiters on each of two mutexes held at once, released
 *                in turn;
 *   foreign      the mutex unlocked by another thread (NORMAL and
 *                ADAPTIVE: glibc lets any thread unlock them).
 * Two waiters each time (a broadcast that finds one signals it).  A
 * release that woke one sleeper, and a woken waiter that then took the
 * mutex as if nobody else slept, would leave the others asleep.
 */
enum { MOVED_LOCKERS, MOVED_TWO_MUTEXES, MOVED_FOREIGN_UNLOCK };

struct moved_pair {
	pthread_mutex_t m;
	pthread_cond_t c;
	int flag; /* under m */
	_Atomic int ready;
	_Atomic int done;
	_Atomic int errors;
};

struct moved_thread {
	struct moved_pair *p;
	bool waiter;
	_Atomic pid_t tid;
	pthread_t thread;
};

static void *moved_thread_main(void *arg)
{
	struct moved_thread *w = arg;
	struct moved_pair *p = w->p;
	atomic_store(&w->tid, test_gettid());
	int r = pthread_mutex_lock(&p->m);
	if (w->waiter && r == 0) {
		atomic_fetch_add(&p->ready, 1);
		while (!p->flag && r == 0)
			r = pthread_cond_wait(&p->c, &p->m);
	}
	if (r != 0 || pthread_mutex_unlock(&p->m) != 0)
		atomic_fetch_add(&p->errors, 1);
	atomic_fetch_add(&p->done, 1);
	return NULL;
}

static void moved_start(struct moved_thread *w, struct moved_pair *p, bool waiter)
{
	w->p = p;
	w->waiter = waiter;
	atomic_init(&w->tid, 0);
	ck_assert_int_eq(pthread_create(&w->thread, NULL, moved_thread_main, w), 0);
}

static void moved_until_asleep(struct moved_thread *w)
{
	int64_t end = now_ns(CLOCK_MONOTONIC) + 5 * NSEC_PER_SEC;
	while (atomic_load(&w->tid) == 0 && now_ns(CLOCK_MONOTONIC) < end)
		sleep_ms(1);
	ck_assert_msg(atomic_load(&w->tid) != 0 && wait_task_sleeping(atomic_load(&w->tid), 5000),
		      "a %s did not go to sleep", w->waiter ? "waiter" : "locker");
}

static int unlock_main(void *m)
{
	return pthread_mutex_unlock(m);
}

static const struct {
	int kind;
	int scenario;
} moved_cases[] = {
	{ 0, MOVED_LOCKERS },	  { 1, MOVED_LOCKERS },	    { 2, MOVED_LOCKERS },
	{ 3, MOVED_LOCKERS },	  { 5, MOVED_LOCKERS },	    { 0, MOVED_TWO_MUTEXES },
	{ 2, MOVED_TWO_MUTEXES }, { 5, MOVED_TWO_MUTEXES }, { 0, MOVED_FOREIGN_UNLOCK },
	{ 1, MOVED_FOREIGN_UNLOCK },
};

START_TEST(test_broadcast_moved_and_lockers)
{
	const struct mkind *k = &kinds[moved_cases[_i].kind];
	int scenario = moved_cases[_i].scenario;
	int npairs = scenario == MOVED_TWO_MUTEXES ? 2 : 1;
	int nwaiters = 2; /* one would be signalled, not moved */
	int nlockers = scenario == MOVED_LOCKERS ? 2 : 0;
	struct moved_pair *p = calloc(npairs, sizeof *p);
	struct moved_thread *w = calloc(npairs * (nwaiters + nlockers), sizeof *w);
	struct moved_thread *next = w;
	for (int i = 0; i < npairs; i++) {
		init_mutex(&p[i].m, k, false);
		ck_assert_int_eq(pthread_cond_init(&p[i].c, NULL), 0);
		for (int j = 0; j < nwaiters; j++)
			moved_start(next++, &p[i], true);
	}
	for (int i = 0; i < npairs; i++)
		lock_when_ready(&p[i].m, &p[i].ready, nwaiters);
	for (struct moved_thread *t = w; t < next; t++)
		moved_until_asleep(t);
	for (int i = 0; i < npairs; i++) {
		p[i].flag = 1;
		ck_assert_int_eq(pthread_cond_broadcast(&p[i].c), 0);
	}
	for (int j = 0; j < nlockers; j++) {
		moved_start(next, &p[0], false);
		moved_until_asleep(next++);
	}
	if (scenario == MOVED_FOREIGN_UNLOCK) {
		ck_assert_int_eq(run_in_thread(unlock_main, &p[0].m), 0);
	} else {
		for (int i = 0; i < npairs; i++)
			ck_assert_int_eq(pthread_mutex_unlock(&p[i].m), 0);
	}
	for (struct moved_thread *t = w; t < next; t++)
		join_within(t->thread, NULL, 5000, t->waiter ? "a moved waiter" : "a locker");
	for (int i = 0; i < npairs; i++) {
		ck_assert_int_eq(atomic_load(&p[i].errors), 0);
		ck_assert_int_eq(atomic_load(&p[i].done), nwaiters + (i == 0 ? nlockers : 0));
		ck_assert_int_eq(pthread_cond_destroy(&p[i].c), 0);
		ck_assert_int_eq(pthread_mutex_destroy(&p[i].m), 0);
	}
	free(w);
	free(p);
}
END_TEST

/* ---- robust: the owner dies while a signalled waiter waits for it ---- */

struct robust_case {
	pthread_mutex_t m;
	pthread_cond_t c;
	_Atomic int ready;
	int flag;
	int wait_result;
	int consistent_result;
	int unlock_result;
	_Atomic pid_t waiter_tid;
	bool broadcast;
};

static void *robust_waiter(void *p)
{
	struct robust_case *rc = p;
	atomic_store(&rc->waiter_tid, test_gettid());
	pthread_mutex_lock(&rc->m);
	atomic_store(&rc->ready, 1);
	rc->wait_result = 0;
	while (!rc->flag && rc->wait_result == 0)
		rc->wait_result = pthread_cond_wait(&rc->c, &rc->m);
	if (rc->wait_result == EOWNERDEAD)
		rc->consistent_result = pthread_mutex_consistent(&rc->m);
	rc->unlock_result = pthread_mutex_unlock(&rc->m);
	return NULL;
}

/* Locks, wakes the waiter, lets it block on the mutex, dies holding it. */
static void *robust_killer(void *p)
{
	struct robust_case *rc = p;
	if (pthread_mutex_lock(&rc->m) != 0)
		return NULL;
	rc->flag = 1;
	if (rc->broadcast)
		pthread_cond_broadcast(&rc->c);
	else
		pthread_cond_signal(&rc->c);
	sleep_ms(30);
	wait_task_sleeping(atomic_load(&rc->waiter_tid), 2000);
	sleep_ms(20);
	pthread_exit(NULL);
}

START_TEST(test_robust_owner_dies)
{
	REQUIRE_ROBUST_LIST();
	static const int robust_kinds[] = { 5, 10 }; /* robust, pi robust */
	const struct mkind *k = &kinds[robust_kinds[_i / 2]];
	struct robust_case *rc = calloc(1, sizeof *rc);
	rc->broadcast = _i % 2;
	init_mutex(&rc->m, k, false);
	ck_assert_int_eq(pthread_cond_init(&rc->c, NULL), 0);
	pthread_t w, x;
	ck_assert_int_eq(pthread_create(&w, NULL, robust_waiter, rc), 0);
	lock_when_ready(&rc->m, &rc->ready, 1);
	ck_assert_int_eq(pthread_mutex_unlock(&rc->m), 0);
	ck_assert(wait_task_sleeping(atomic_load(&rc->waiter_tid), 5000));
	ck_assert_int_eq(pthread_create(&x, NULL, robust_killer, rc), 0);
	join_within(x, NULL, 5000, "dying owner");
	join_within(w, NULL, 5000, "waiter");
	ck_assert_msg(rc->wait_result == EOWNERDEAD, "%s, %s: wait returned %d, not EOWNERDEAD", k->name,
		      rc->broadcast ? "broadcast" : "signal", rc->wait_result);
	ck_assert_int_eq(rc->consistent_result, 0);
	ck_assert_int_eq(rc->unlock_result, 0);
	ck_assert_int_eq(pthread_mutex_lock(&rc->m), 0); /* consistent again */
	ck_assert_int_eq(pthread_mutex_unlock(&rc->m), 0);
	ck_assert_int_eq(pthread_cond_destroy(&rc->c), 0);
	ck_assert_int_eq(pthread_mutex_destroy(&rc->m), 0);
	free(rc);
}
END_TEST

/* ---- suite ---- */

static Suite *cond_kinds_suite(void)
{
	Suite *s = suite_create("cond_kinds");
	TCase *tc;

	tc = tcase_create("kinds");
	tcase_set_timeout(tc, 30);
	tcase_add_loop_test(tc, test_wait_wake_kinds, 0, NKINDS * 4);
	tcase_add_loop_test(tc, test_broadcast_herd, 0, (int)(sizeof herd_kinds / sizeof herd_kinds[0]) * 2);
	tcase_add_loop_test(tc, test_robust_owner_dies, 0, 4);
	tcase_add_loop_test(tc, test_broadcast_moved_and_lockers, 0,
			    (int)(sizeof moved_cases / sizeof moved_cases[0]));
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return run_suite(cond_kinds_suite());
}
