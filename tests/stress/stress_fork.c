/*
 * fork and _Fork from a busy multithreaded process, and threads that exit
 * holding robust mutexes.
 *
 * Background threads keep using, all the time: one mutex of each kind
 * (NORMAL, ERRORCHECK, PI, robust, robust PI; two lockers each), a
 * condition with a NORMAL and one with a PI mutex (a producer and a
 * consumer each), and a barrier (two threads).  pthread_atfork handlers
 * lock those five mutexes before a fork() (waiting for the lockers) and
 * unlock them after it, in the parent and in the child.
 *
 * The main thread forks over and over (at least MIN_FORKS times, and for
 * STRESS_DURATION), fork() or _Fork() at random.  The child, whose only thread
 * is a replica of the forking one:
 *   - fork(): the child handler ran and its unlocks all returned 0: the
 *     replica owns what the forking thread locked in the prepare handler
 *     (POSIX describes exactly this use of the handlers).  A refused
 *     unlock is counted, and fails the run at the end, so that the rest
 *     is exercised all the same; not under NPTL, which refuses it (see
 *     child_main).  _Fork(): no handler ran.
 *   - locks every kind with its own identity: the five mutexes above
 *     (after the fork() child handler released them; after a _Fork, whose
 *     child finds them in whatever state the parent's lockers left them,
 *     initialized again first) and a fresh mutex of each kind: lock 0,
 *     ERRORCHECK relock EDEADLK, trylock EBUSY (or EDEADLK), a second
 *     thread of the child blocks until the unlock (0) and then gets it.
 *   - initializes the conditions and the barrier again (the parent's
 *     threads left them mid-use) and uses them with a second thread.
 *   - exits 0 within CHILD_LIMIT_MS.
 *
 * Meanwhile a robust-exit driver runs rounds: a thread locks a random
 * subset of five robust mutexes (private and process-shared, plain and
 * PI, and a private RECURSIVE one locked up to three times), unlocks some
 * of them again, and exits (pthread_exit or return) holding the rest,
 * while zero to two lockers per held mutex are blocked on it.  Exactly
 * one acquisition of each mutex still held returns EOWNERDEAD (a blocked
 * locker's, or else the driver's trylock after the exit), none of the
 * others; the recoverer's pthread_mutex_consistent and unlock return 0
 * and the mutex is free again (held once, whatever the dead owner's
 * recursion).
 *
 * _Fork runs no atfork handler, so glibc does not reset its own locks
 * (malloc, the thread-stack cache) in the child; a _Fork therefore waits
 * until the robust-exit driver, the one thread that creates threads
 * during the run, is parked between rounds.  The background threads
 * only lock, wait and sleep.
 *
 * A watchdog fails the run if the fork loop or the robust-exit driver
 * makes no progress for STUCK_MS.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common.h"

pid_t _Fork(void); /* glibc 2.34; older headers lack it */

#define MIN_FORKS 200
#define CHILD_LIMIT_MS 5000
#define STUCK_MS 5000
#define LOCKERS 2

static bool nptl;

/* ---- mutex kinds ---- */

struct kind {
	const char *name;
	int type, protocol;
	bool robust;
};

static const struct kind kinds[] = {
	{ "NORMAL", PTHREAD_MUTEX_NORMAL, PTHREAD_PRIO_NONE, false },
	{ "ERRORCHECK", PTHREAD_MUTEX_ERRORCHECK, PTHREAD_PRIO_NONE, false },
	{ "PI", PTHREAD_MUTEX_NORMAL, PTHREAD_PRIO_INHERIT, false },
	{ "robust", PTHREAD_MUTEX_NORMAL, PTHREAD_PRIO_NONE, true },
	{ "robust PI", PTHREAD_MUTEX_NORMAL, PTHREAD_PRIO_INHERIT, true },
};
#define NKINDS (int)(sizeof kinds / sizeof kinds[0])

static int init_kind(pthread_mutex_t *m, const struct kind *k, bool pshared)
{
	pthread_mutexattr_t a;
	pthread_mutexattr_init(&a);
	pthread_mutexattr_settype(&a, k->type);
	pthread_mutexattr_setprotocol(&a, k->protocol);
	if (k->robust)
		pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
	if (pshared)
		pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
	int r = pthread_mutex_init(m, &a);
	pthread_mutexattr_destroy(&a);
	return r;
}

/* ---- background: objects the parent's threads use during every fork ---- */

static pthread_mutex_t kind_m[NKINDS]; /* also what the atfork handlers lock */
static pthread_mutex_t cond_m[2];      /* NORMAL, PI */
static pthread_cond_t cond_c[2];
static int cond_items[2];
static pthread_barrier_t bg_barrier;
static _Atomic int bg_stop;

static void *locker_main(void *p)
{
	int k = (int)(intptr_t)p;
	struct rng rng;
	rng_seed(&rng, 100 + (uint64_t)k * LOCKERS + (uint64_t)(now_ns(CLOCK_MONOTONIC) & 1));
	while (!atomic_load(&bg_stop)) {
		int r = pthread_mutex_lock(&kind_m[k]);
		if (r != 0)
			stress_fail("background lock %s: %s", kinds[k].name, strerror(r));
		if (rng_below(&rng, 2))
			spin_ns(rng_below(&rng, 20000));
		else
			nap_us(rng_below(&rng, 100));
		r = pthread_mutex_unlock(&kind_m[k]);
		if (r != 0)
			stress_fail("background unlock %s: %s", kinds[k].name, strerror(r));
		nap_us(rng_below(&rng, 50));
	}
	return NULL;
}

static void *producer_main(void *p)
{
	int i = (int)(intptr_t)p;
	while (!atomic_load(&bg_stop)) {
		pthread_mutex_lock(&cond_m[i]);
		cond_items[i]++;
		pthread_cond_signal(&cond_c[i]);
		pthread_mutex_unlock(&cond_m[i]);
		nap_us(100);
	}
	return NULL;
}

static void *consumer_main(void *p)
{
	int i = (int)(intptr_t)p;
	pthread_mutex_lock(&cond_m[i]);
	while (!atomic_load(&bg_stop)) {
		if (cond_items[i] == 0) {
			struct timespec dl = deadline_in_ns(CLOCK_REALTIME, 20 * 1000000LL);
			int r = pthread_cond_timedwait(&cond_c[i], &cond_m[i], &dl);
			if (r != 0 && r != ETIMEDOUT)
				stress_fail("background cond wait: %s", strerror(r));
		} else {
			cond_items[i]--;
		}
	}
	pthread_mutex_unlock(&cond_m[i]);
	return NULL;
}

static void *barrier_main(void *p)
{
	(void)p;
	/* Both threads stop in the same round: the serial one decides. */
	static _Atomic int last;
	for (;;) {
		if (pthread_barrier_wait(&bg_barrier) == PTHREAD_BARRIER_SERIAL_THREAD)
			atomic_store(&last, atomic_load(&bg_stop));
		pthread_barrier_wait(&bg_barrier);
		if (atomic_load(&last))
			return NULL;
		nap_us(50);
	}
}

/* ---- atfork handlers ---- */

static int prepare_result[NKINDS], parent_result[NKINDS], child_result[NKINDS];
static bool child_handler_ran;

static void atfork_prepare(void)
{
	for (int k = 0; k < NKINDS; k++)
		prepare_result[k] = pthread_mutex_lock(&kind_m[k]);
}

static void atfork_parent(void)
{
	for (int k = NKINDS - 1; k >= 0; k--)
		parent_result[k] = pthread_mutex_unlock(&kind_m[k]);
}

static void atfork_child(void)
{
	child_handler_ran = true;
	for (int k = NKINDS - 1; k >= 0; k--)
		child_result[k] = pthread_mutex_unlock(&kind_m[k]);
}

/* ---- the child ---- */

/* Shared with every child: why it failed, and the handler unlocks that
 * failed (counted, not fatal, so that the rest of the run goes on). */
struct report {
	char why[512];
	_Atomic uint64_t atfork_unlock_failed[NKINDS];
	_Atomic int atfork_unlock_error[NKINDS];
};
static struct report *report;

static void __attribute__((format(printf, 1, 2), noreturn)) child_fail(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(report->why, sizeof report->why, fmt, ap);
	va_end(ap);
	_exit(1);
}

struct second {
	pthread_mutex_t *m;
	_Atomic int locked;
	int lock_result, unlock_result;
};

static void *second_main(void *p)
{
	struct second *s = p;
	/* Far beyond the child's bound (reap): a machine too busy to run the
	 * child for a while must not pass for a second owner. */
	struct timespec dl = deadline_in_ns(CLOCK_REALTIME, 6 * CHILD_LIMIT_MS * 1000000LL);
	s->lock_result = pthread_mutex_timedlock(s->m, &dl);
	atomic_store(&s->locked, 1);
	if (s->lock_result == 0)
		s->unlock_result = pthread_mutex_unlock(s->m);
	return NULL;
}

/* Lock with the child's identity; a second child thread gets the mutex
 * only after the unlock. */
static void child_check_mutex(pthread_mutex_t *m, const struct kind *k, const char *which)
{
	int r = pthread_mutex_lock(m);
	if (r != 0)
		child_fail("%s %s: lock: %s", which, k->name, strerror(r));
	if (k->type == PTHREAD_MUTEX_ERRORCHECK && (r = pthread_mutex_lock(m)) != EDEADLK)
		child_fail("%s %s: relock by the owner: %s, expected EDEADLK", which, k->name, strerror(r));
	r = pthread_mutex_trylock(m);
	if (r != EBUSY && r != EDEADLK)
		child_fail("%s %s: trylock by the owner: %s", which, k->name, strerror(r));
	struct second s = { .m = m };
	pthread_t t;
	if ((r = pthread_create(&t, NULL, second_main, &s)) != 0)
		child_fail("pthread_create: %s", strerror(r));
	nap_us(200);
	if (atomic_load(&s.locked))
		child_fail("%s %s: a second thread's timedlock returned %s while the child held the mutex", which,
			   k->name, strerror(s.lock_result));
	r = pthread_mutex_unlock(m);
	if (r != 0)
		child_fail("%s %s: unlock by the owner: %s", which, k->name, strerror(r));
	pthread_join(t, NULL);
	if (s.lock_result != 0 || s.unlock_result != 0)
		child_fail("%s %s: the second thread's lock %s, unlock %s", which, k->name, strerror(s.lock_result),
			   strerror(s.unlock_result));
}

static void *child_waiter_main(void *p)
{
	int i = (int)(intptr_t)p;
	pthread_mutex_lock(&cond_m[i]);
	while (cond_items[i] == 0) {
		int r = pthread_cond_wait(&cond_c[i], &cond_m[i]);
		if (r != 0) {
			pthread_mutex_unlock(&cond_m[i]);
			return (void *)(intptr_t)r;
		}
	}
	cond_items[i]--;
	pthread_mutex_unlock(&cond_m[i]);
	return NULL;
}

static void *child_barrier_main(void *p)
{
	(void)p;
	return (void *)(intptr_t)pthread_barrier_wait(&bg_barrier);
}

/* The conditions and the barrier, initialized again: a waiter is woken,
 * a round of two is released with one serial thread. */
static void child_check_cond_barrier(void)
{
	for (int i = 0; i < 2; i++) {
		if (init_kind(&cond_m[i], &kinds[i ? 2 : 0], false) != 0 || pthread_cond_init(&cond_c[i], NULL) != 0)
			child_fail("initializing condition %d again failed", i);
		cond_items[i] = 0;
		pthread_t t;
		if (pthread_create(&t, NULL, child_waiter_main, (void *)(intptr_t)i) != 0)
			child_fail("pthread_create failed");
		nap_us(100);
		pthread_mutex_lock(&cond_m[i]);
		cond_items[i] = 1;
		pthread_cond_signal(&cond_c[i]);
		pthread_mutex_unlock(&cond_m[i]);
		void *r;
		pthread_join(t, &r);
		if (r != NULL)
			child_fail("condition %d: the child's waiter: %s", i, strerror((int)(intptr_t)r));
		if (pthread_cond_destroy(&cond_c[i]) != 0 || pthread_mutex_destroy(&cond_m[i]) != 0)
			child_fail("condition %d: destroy failed", i);
	}
	if (pthread_barrier_init(&bg_barrier, NULL, 2) != 0)
		child_fail("initializing the barrier again failed");
	pthread_t t;
	if (pthread_create(&t, NULL, child_barrier_main, NULL) != 0)
		child_fail("pthread_create failed");
	int mine = pthread_barrier_wait(&bg_barrier);
	void *theirs;
	pthread_join(t, &theirs);
	int serial = (mine == PTHREAD_BARRIER_SERIAL_THREAD) + ((intptr_t)theirs == PTHREAD_BARRIER_SERIAL_THREAD);
	if (serial != 1 || (mine != 0 && mine != PTHREAD_BARRIER_SERIAL_THREAD))
		child_fail("barrier: results %d and %d", mine, (int)(intptr_t)theirs);
	if (pthread_barrier_destroy(&bg_barrier) != 0)
		child_fail("barrier destroy failed");
}

static void __attribute__((noreturn)) child_main(bool raw)
{
	if (raw && child_handler_ran)
		child_fail("_Fork ran the atfork child handler");
	if (!raw && !child_handler_ran)
		child_fail("fork did not run the atfork child handler");
	for (int k = 0; k < NKINDS; k++) {
		bool reinit = raw;
		if (!raw && child_result[k] != 0) {
			/* NPTL (glibc 2.36) compares the owner with the child's
			 * new TID and refuses the unlock (EPERM) for every kind
			 * but NORMAL, so the mutex stays locked for ever (a
			 * later timedlock of a PI one gets EPERM from the
			 * kernel, and NPTL aborts the process).  Counted only
			 * under rtpthread; either way it is initialized again
			 * so that the rest of the checks can run. */
			if (!nptl) {
				atomic_fetch_add(&report->atfork_unlock_failed[k], 1);
				atomic_store(&report->atfork_unlock_error[k], child_result[k]);
			}
			reinit = true;
		}
		if (reinit && init_kind(&kind_m[k], &kinds[k], false) != 0)
			child_fail("initializing %s again failed", kinds[k].name);
		child_check_mutex(&kind_m[k], &kinds[k], raw ? "re-initialized" : "atfork-released");
		pthread_mutex_t fresh;
		if (init_kind(&fresh, &kinds[k], false) != 0)
			child_fail("pthread_mutex_init %s failed", kinds[k].name);
		child_check_mutex(&fresh, &kinds[k], "fresh");
		if (pthread_mutex_destroy(&fresh) != 0)
			child_fail("destroy of a fresh %s failed", kinds[k].name);
	}
	child_check_cond_barrier();
	_exit(0);
}

/* ---- robust mutexes held at thread exit ---- */

#define NROBUST 5

struct robust_mutex {
	const char *name;
	pthread_mutex_t *m;
	int type, protocol;
	bool pshared;
};

static pthread_mutex_t robust_private[3];
static pthread_mutex_t *robust_shared; /* 2, in a MAP_SHARED page */
static struct robust_mutex robust[NROBUST] = {
	{ "private robust", &robust_private[0], PTHREAD_MUTEX_NORMAL, PTHREAD_PRIO_NONE, false },
	{ "private robust PI", &robust_private[1], PTHREAD_MUTEX_NORMAL, PTHREAD_PRIO_INHERIT, false },
	{ "private robust RECURSIVE", &robust_private[2], PTHREAD_MUTEX_RECURSIVE, PTHREAD_PRIO_NONE, false },
	{ "pshared robust", NULL, PTHREAD_MUTEX_NORMAL, PTHREAD_PRIO_NONE, true },
	{ "pshared robust PI", NULL, PTHREAD_MUTEX_NORMAL, PTHREAD_PRIO_INHERIT, true },
};

struct exiter {
	uint32_t lock, unlock; /* masks over robust[] */
	bool reverse, pthread_exit;
	int depth;		 /* recursive locks of the RECURSIVE one */
	_Atomic int ready, go;
	int error;
};

static void *exiter_main(void *p)
{
	struct exiter *e = p;
	for (int n = 0; n < NROBUST; n++) {
		int i = e->reverse ? NROBUST - 1 - n : n;
		if (!(e->lock & (1u << i)))
			continue;
		for (int d = 0; d < (robust[i].type == PTHREAD_MUTEX_RECURSIVE ? e->depth : 1); d++) {
			int r = pthread_mutex_lock(robust[i].m);
			if (r != 0)
				e->error = r;
		}
	}
	for (int i = NROBUST - 1; i >= 0; i--)
		if (e->unlock & (1u << i))
			for (int d = 0; d < (robust[i].type == PTHREAD_MUTEX_RECURSIVE ? e->depth : 1); d++) {
				int r = pthread_mutex_unlock(robust[i].m);
				if (r != 0)
					e->error = 1000 + r;
			}
	atomic_store(&e->ready, 1);
	while (!atomic_load(&e->go))
		nap_us(20);
	if (e->pthread_exit)
		pthread_exit(NULL);
	return NULL;
}

struct blocked {
	int index; /* into robust[] */
	int how;   /* lock, timedlock, clocklock */
	_Atomic pid_t tid;
	int result, consistent, unlock;
};

static void *blocked_main(void *p)
{
	struct blocked *b = p;
	atomic_store(&b->tid, gettid());
	pthread_mutex_t *m = robust[b->index].m;
	struct timespec dl;
	switch (b->how) {
	case 0:
		b->result = pthread_mutex_lock(m);
		break;
	case 1:
		dl = deadline_in_ns(CLOCK_REALTIME, 10 * 1000000000LL);
		b->result = pthread_mutex_timedlock(m, &dl);
		break;
	default:
		dl = deadline_in_ns(CLOCK_MONOTONIC, 10 * 1000000000LL);
		b->result = pthread_mutex_clocklock(m, CLOCK_MONOTONIC, &dl);
	}
	if (b->result == EOWNERDEAD)
		b->consistent = pthread_mutex_consistent(m);
	if (b->result == 0 || b->result == EOWNERDEAD)
		b->unlock = pthread_mutex_unlock(m);
	return NULL;
}

/* True once the thread sleeps (in the kernel: blocked in the lock). */
static bool thread_sleeping(pid_t tid)
{
	char state;
	return stress_task_stat(tid, &state, NULL) && state == 'S';
}

static _Atomic int gate_wanted, gate_parked; /* a _Fork waits for the driver */
static _Atomic uint64_t robust_rounds, robust_held, robust_ownerdead_blocked;
static _Atomic int robust_stop;

static void robust_round(struct rng *rng)
{
	struct exiter e = { .lock = (uint32_t)rng_below(rng, 1u << NROBUST),
			    .reverse = rng_below(rng, 2),
			    .pthread_exit = rng_below(rng, 2),
			    .depth = 1 + (int)rng_below(rng, 3) };
	if (e.lock == 0)
		e.lock = 1u << rng_below(rng, NROBUST);
	for (int i = 0; i < NROBUST; i++)
		if ((e.lock & (1u << i)) && rng_below(rng, 4) == 0)
			e.unlock |= 1u << i;
	uint32_t held = e.lock & ~e.unlock;
	pthread_t exiter;
	if (pthread_create(&exiter, NULL, exiter_main, &e) != 0)
		stress_fail("pthread_create failed");
	while (!atomic_load(&e.ready))
		nap_us(20);
	if (e.error)
		stress_fail("robust exit: the exiting thread's %s: %s", e.error >= 1000 ? "unlock" : "lock",
			    strerror(e.error % 1000));

	/* Lockers blocked on the held mutexes (mostly seen asleep first). */
	struct blocked b[2 * NROBUST];
	pthread_t bt[2 * NROBUST];
	int nb = 0;
	for (int i = 0; i < NROBUST; i++) {
		if (!(held & (1u << i)))
			continue;
		for (int n = (int)rng_below(rng, 3); n > 0; n--) {
			b[nb] = (struct blocked){ .index = i, .how = (int)rng_below(rng, 3), .result = -1 };
			if (pthread_create(&bt[nb], NULL, blocked_main, &b[nb]) != 0)
				stress_fail("pthread_create failed");
			nb++;
		}
	}
	if (rng_below(rng, 4)) {
		for (int i = 0; i < nb; i++) {
			while (atomic_load(&b[i].tid) == 0)
				nap_us(20);
			int64_t end = now_ns(CLOCK_MONOTONIC) + 2000000000LL;
			while (!thread_sleeping(b[i].tid) && now_ns(CLOCK_MONOTONIC) < end)
				nap_us(20);
		}
	}
	atomic_store(&e.go, 1);
	pthread_join(exiter, NULL);

	int ownerdead[NROBUST] = { 0 };
	for (int i = 0; i < nb; i++) {
		pthread_join(bt[i], NULL);
		const char *name = robust[b[i].index].name;
		if (b[i].result != 0 && b[i].result != EOWNERDEAD)
			stress_fail("robust exit: %s: a blocked locker got %s", name, strerror(b[i].result));
		if (b[i].result == EOWNERDEAD && b[i].consistent != 0)
			stress_fail("robust exit: %s: pthread_mutex_consistent: %s", name, strerror(b[i].consistent));
		if (b[i].unlock != 0)
			stress_fail("robust exit: %s: unlock after the lock: %s", name, strerror(b[i].unlock));
		if (b[i].result == EOWNERDEAD) {
			ownerdead[b[i].index]++;
			atomic_fetch_add(&robust_ownerdead_blocked, 1);
		}
	}
	for (int i = 0; i < NROBUST; i++) {
		pthread_mutex_t *m = robust[i].m;
		int r = pthread_mutex_trylock(m);
		if (r != 0 && r != EOWNERDEAD)
			stress_fail("robust exit: %s: trylock after the exit: %s", robust[i].name, strerror(r));
		if (r == EOWNERDEAD) {
			ownerdead[i]++;
			if ((r = pthread_mutex_consistent(m)) != 0)
				stress_fail("robust exit: %s: pthread_mutex_consistent: %s", robust[i].name, strerror(r));
		}
		if ((r = pthread_mutex_unlock(m)) != 0)
			stress_fail("robust exit: %s: unlock: %s", robust[i].name, strerror(r));
		/* Held once, whatever the dead owner's recursion. */
		if ((r = pthread_mutex_unlock(m)) != EPERM)
			stress_fail("robust exit: %s: a second unlock: %s, expected EPERM", robust[i].name, strerror(r));
		int want = (held >> i) & 1;
		if (ownerdead[i] != want)
			stress_fail("robust exit: %s, %s at the exit (%s the thread's lock%s): %d EOWNERDEAD results, "
				    "expected %d",
				    robust[i].name, want ? "held" : "not held",
				    (e.lock >> i) & 1 ? ((e.unlock >> i) & 1 ? "released after" : "after") : "not taken by",
				    e.pthread_exit ? ", pthread_exit" : ", return", ownerdead[i], want);
	}
	atomic_fetch_add(&robust_held, (uint64_t)__builtin_popcount(held));
	atomic_fetch_add(&robust_rounds, 1);
}

static void *robust_driver_main(void *p)
{
	(void)p;
	struct rng rng;
	rng_seed(&rng, 7);
	while (!atomic_load(&robust_stop)) {
		if (atomic_load(&gate_wanted)) {
			atomic_store(&gate_parked, 1);
			while (atomic_load(&gate_wanted))
				nap_us(20);
			atomic_store(&gate_parked, 0);
		}
		robust_round(&rng);
	}
	return NULL;
}

/* ---- watchdog ---- */

static _Atomic uint64_t forks_done;
static _Atomic int watchdog_done;

/* Limits are on wall time and the run clock (common.h): a machine too
 * busy to run these threads is not a hang. */
static void *watchdog_main(void *p)
{
	(void)p;
	uint64_t f = 0, r = 0;
	struct moment f_at = stress_moment_now(), r_at = f_at;
	while (!atomic_load(&watchdog_done)) {
		nap_us(100000);
		struct moment now = stress_moment_now();
		if (atomic_load(&forks_done) != f) {
			f = atomic_load(&forks_done);
			f_at = now;
		} else if (stress_lasted(f_at, now, STUCK_MS)) {
			stress_fail("the fork loop made no progress for %d ms (fork %llu)", STUCK_MS,
				    (unsigned long long)f + 1);
		}
		if (atomic_load(&robust_rounds) != r) {
			r = atomic_load(&robust_rounds);
			r_at = now;
		} else if (!atomic_load(&robust_stop) && stress_lasted(r_at, now, STUCK_MS)) {
			stress_fail("the robust-exit driver made no progress for %d ms (round %llu)", STUCK_MS,
				    (unsigned long long)r + 1);
		}
	}
	return NULL;
}

/* ---- main ---- */

static void start_thread(pthread_t *t, void *(*fn)(void *), void *arg)
{
	int r = pthread_create(t, NULL, fn, arg);
	if (r != 0)
		stress_fail("pthread_create: %s", strerror(r));
}

/* Reap the child within CHILD_LIMIT_MS, on both the wall and the run
 * clock (a machine too busy to run the child is not a hang); its exit
 * status, or -1. */
static int reap(pid_t pid)
{
	struct moment since = stress_moment_now();
	/* Ends: the child exits, or the limit passes on both clocks (the run
	 * clock advances while this thread naps). */
	for (;;) {
		int status;
		pid_t r = waitpid(pid, &status, WNOHANG);
		if (r == pid)
			return WIFEXITED(status) ? WEXITSTATUS(status) : 1000 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
		if (r < 0)
			stress_fail("waitpid: %s", strerror(errno));
		if (stress_lasted(since, stress_moment_now(), CHILD_LIMIT_MS)) {
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			return -1;
		}
		nap_us(50);
	}
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	stress_start("stress_fork", 8);
	stress_start_run_clock();
	nptl = strcmp(stress_library(), "NPTL") == 0;
	report = mmap(NULL, sizeof *report, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	robust_shared = mmap(NULL, 2 * sizeof(pthread_mutex_t), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
			     -1, 0);
	if (report == MAP_FAILED || robust_shared == MAP_FAILED)
		stress_fail("mmap: %s", strerror(errno));
	robust[3].m = &robust_shared[0];
	robust[4].m = &robust_shared[1];
	for (int i = 0; i < NROBUST; i++) {
		struct kind k = { robust[i].name, robust[i].type, robust[i].protocol, true };
		if (init_kind(robust[i].m, &k, robust[i].pshared) != 0)
			stress_fail("pthread_mutex_init %s failed", robust[i].name);
	}
	for (int k = 0; k < NKINDS; k++)
		if (init_kind(&kind_m[k], &kinds[k], false) != 0)
			stress_fail("pthread_mutex_init %s failed", kinds[k].name);
	for (int i = 0; i < 2; i++)
		if (init_kind(&cond_m[i], &kinds[i ? 2 : 0], false) != 0 || pthread_cond_init(&cond_c[i], NULL) != 0)
			stress_fail("initializing condition %d failed", i);
	if (pthread_barrier_init(&bg_barrier, NULL, 2) != 0)
		stress_fail("pthread_barrier_init failed");
	if (pthread_atfork(atfork_prepare, atfork_parent, atfork_child) != 0)
		stress_fail("pthread_atfork failed");

	pthread_t bg[NKINDS * LOCKERS + 6], driver, watchdog;
	int nbg = 0;
	for (int k = 0; k < NKINDS; k++)
		for (int i = 0; i < LOCKERS; i++)
			start_thread(&bg[nbg++], locker_main, (void *)(intptr_t)k);
	for (int i = 0; i < 2; i++) {
		start_thread(&bg[nbg++], producer_main, (void *)(intptr_t)i);
		start_thread(&bg[nbg++], consumer_main, (void *)(intptr_t)i);
		start_thread(&bg[nbg++], barrier_main, NULL);
	}
	start_thread(&driver, robust_driver_main, NULL);
	start_thread(&watchdog, watchdog_main, NULL);

	struct rng rng;
	rng_seed(&rng, 1);
	uint64_t forks[2] = { 0, 0 };
	while (forks[0] + forks[1] < MIN_FORKS || stress_running()) {
		bool raw = rng_below(&rng, 2);
		if (raw) {
			atomic_store(&gate_wanted, 1);
			while (!atomic_load(&gate_parked))
				nap_us(20);
		}
		report->why[0] = 0;
		pid_t pid = raw ? _Fork() : fork();
		if (pid < 0)
			stress_fail("%s: %s", raw ? "_Fork" : "fork", strerror(errno));
		if (pid == 0)
			child_main(raw);
		atomic_store(&gate_wanted, 0);
		if (!raw)
			for (int k = 0; k < NKINDS; k++)
				if (prepare_result[k] != 0 || parent_result[k] != 0)
					stress_fail("atfork %s: prepare handler's lock %s, parent handler's unlock %s",
						    kinds[k].name, strerror(prepare_result[k]), strerror(parent_result[k]));
		int status = reap(pid);
		if (status != 0)
			stress_fail("%s child %llu: %s", raw ? "_Fork" : "fork",
				    (unsigned long long)(forks[0] + forks[1] + 1),
				    status < 0    ? "did not exit within the bound"
				    : report->why[0] ? report->why
						     : "died");
		forks[raw]++;
		atomic_fetch_add(&forks_done, 1);
		nap_us(rng_below(&rng, 1000));
	}

	atomic_store(&robust_stop, 1);
	pthread_join(driver, NULL);
	atomic_store(&bg_stop, 1);
	for (int i = 0; i < nbg; i++)
		pthread_join(bg[i], NULL);
	atomic_store(&watchdog_done, 1);
	pthread_join(watchdog, NULL);
	for (int k = 0; k < NKINDS; k++)
		if (pthread_mutex_destroy(&kind_m[k]) != 0)
			stress_fail("destroy %s failed", kinds[k].name);
	for (int i = 0; i < NROBUST; i++)
		if (pthread_mutex_destroy(robust[i].m) != 0)
			stress_fail("destroy %s failed", robust[i].name);

	printf("stress_fork: %llu forks (%llu fork, %llu _Fork), every child exited 0; %llu robust exits, %llu "
	       "mutexes held at exit, each one EOWNERDEAD (%llu to a blocked locker)\n",
	       (unsigned long long)(forks[0] + forks[1]), (unsigned long long)forks[0], (unsigned long long)forks[1],
	       (unsigned long long)atomic_load(&robust_rounds), (unsigned long long)atomic_load(&robust_held),
	       (unsigned long long)atomic_load(&robust_ownerdead_blocked));
	uint64_t failed = 0;
	for (int k = 0; k < NKINDS; k++) {
		uint64_t n = atomic_load(&report->atfork_unlock_failed[k]);
		if (n) {
			printf("atfork child handler: unlock of the %s mutex the prepare handler locked failed in %llu of "
			       "%llu fork children: %s\n",
			       kinds[k].name, (unsigned long long)n, (unsigned long long)forks[0],
			       strerror(atomic_load(&report->atfork_unlock_error[k])));
			failed += n;
		}
	}
	if (failed)
		stress_fail("the fork child could not unlock what the forking thread locked before the fork");
	return 0;
}
