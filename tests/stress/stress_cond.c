/*
 * Condition-variable stress: every mutex kind a condition can be used
 * with, waiters at mixed priorities, producers that signal or broadcast
 * with and without the mutex, and a watchdog for lost wake-ups.
 *
 * Kinds: NORMAL, RECURSIVE, ERRORCHECK, ADAPTIVE_NP x PRIO_NONE, INHERIT,
 * PROTECT x robust or not x private or process-shared (condition and
 * mutex both, in a MAP_SHARED mapping), every other one with its
 * condition on CLOCK_MONOTONIC; PTHREAD_COND_INITIALIZER with each of
 * glibc's static mutex initializers; C11 cnd_t with mtx_plain,
 * mtx_timed, mtx_recursive and mtx_timed|mtx_recursive.
 *
 * One episode per kind, in a random order, repeated while STRESS_DURATION lasts
 * (every kind at least once).  An episode: NWAITERS waiters (SCHED_OTHER
 * and SCHED_FIFO 10-40) and two producers (SCHED_OTHER, FIFO 25).
 *
 * The protocol.  items (under the mutex) counts what was posted and not
 * yet consumed.  A producer posts only when items is 0 (1-3 items), then
 * signals once per item or broadcasts, holding the mutex or not.  A
 * waiter: lock; while (items == 0) wait; consume one; unlock.  So nothing
 * new is posted while items are pending, and a lost wake-up leaves items
 * above 0 with sleepers nobody will wake.  Timed waiters could hide one
 * (one times out and consumes the item): each episode first runs mixed
 * waits (wait, timedwait, clockwait on either clock, deadlines 0-2 ms,
 * some already past), then untimed waits only, and then drains: the
 * producers stop and every item must be consumed.
 *
 *   lost wake-up  items > 0 for LOST_MS, no signal or broadcast under way,
 *                 while a waiter is in a wait that began before the items
 *                 were posted: fail.  (Every waiter that returns from a
 *                 wait consumes an item if there is one, so items that
 *                 stay while such a waiter sleeps mean that a wake-up
 *                 owed to a sleeper of that time reached nobody.)
 *   stuck         items > 0 for STUCK_MS whatever the waiters do, nothing
 *                 posted for STUCK_MS while the producers run, a waiter
 *                 that does not return within JOIN_MS of the final
 *                 broadcast: fail, with every thread described.  Every
 *                 limit holds in wall time and on the run clock (see
 *                 there): a machine too busy to run us is no failure.
 *   exclusion     an occupancy count and a plain counter incremented in
 *                 every critical section must add up.
 *   results       wait 0; timed waits 0 or ETIMEDOUT (a return that finds
 *                 nothing is counted: broadcasts wake more waiters than
 *                 there are items); a wait on a mutex the caller does not
 *                 hold returns EPERM for every kind whose unlock checks
 *                 the owner; destroy 0 at the end.
 *
 * Priority order (SCHED_FIFO only).  Before its first episode each kind
 * runs an order phase: ORDER_WAITERS SCHED_FIFO waiters at priorities
 * with ties block one after another (each seen asleep in the kernel
 * before the next starts), then one signal at a time, each waiting for
 * its wake-up.  rtpthread promises that a signal wakes the
 * highest-priority waiter, FIFO among equals, for every condition kind
 * (README: the PI record queue and the kernel's futex queue both keep
 * that order), and no spurious return where no deadline, handler or
 * cancellation is involved; NPTL promises no order, so under NPTL the
 * order is only counted, not asserted.
 *
 * NPTL differences (stress_library()): NPTL refuses robust + PP mutexes
 * (ENOTSUP at init: those kinds run only under rtpthread) and PP locks
 * by SCHED_OTHER threads (EINVAL: in PP episodes under NPTL, the
 * SCHED_OTHER threads run SCHED_FIFO 1 instead).  A wait on an unheld
 * NORMAL/ADAPTIVE PP mutex is EPERM only in rtpthread (NPTL releases it).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "common.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <threads.h>
#include <unistd.h>

enum {
	NWAITERS = 5,
	NPRODUCERS = 2,
	ORDER_WAITERS = 6,
	CEILING = 50,	/* above every thread that locks a PP mutex */
	MAIN_PRIO = 45, /* the watchdog */
	LOST_MS = 2000,
	STUCK_MS = 4000,
	JOIN_MS = 2000,
	MAX_KINDS = 64,
};

/* 0 is SCHED_OTHER. */
static const int waiter_prio[NWAITERS] = { 0, 10, 20, 30, 40 };
static const int producer_prio[NPRODUCERS] = { 0, 25 };
static const int order_prio[ORDER_WAITERS] = { 10, 30, 20, 30, 40, 20 };

#define MS 1000000LL

static bool fifo, rtpthread;

/* A moment published to the watchdog, which reads it without the mutex:
 * release/acquire, wall time last written and first read, so that a
 * reader that sees the new wall time sees its run time too. */
struct shared_moment {
	_Atomic int64_t wall_ns, run_ns;
};

static void publish(struct shared_moment *m, struct moment v)
{
	atomic_store_explicit(&m->run_ns, v.run_ns, memory_order_relaxed);
	atomic_store_explicit(&m->wall_ns, v.wall_ns, memory_order_release);
}

static struct moment read_moment(struct shared_moment *m)
{
	struct moment v;
	v.wall_ns = atomic_load_explicit(&m->wall_ns, memory_order_acquire);
	v.run_ns = atomic_load_explicit(&m->run_ns, memory_order_relaxed);
	return v;
}

/* ---- kinds ---- */

static struct mutex_kind kinds[MAX_KINDS];
static int nkinds;

static pthread_mutex_t static_mutexes[4] = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP,
					     PTHREAD_ERRORCHECK_MUTEX_INITIALIZER_NP,
					     PTHREAD_ADAPTIVE_MUTEX_INITIALIZER_NP };
static pthread_cond_t static_conds[4] = { PTHREAD_COND_INITIALIZER, PTHREAD_COND_INITIALIZER, PTHREAD_COND_INITIALIZER,
					  PTHREAD_COND_INITIALIZER };

/* The clock of pthread_cond_timedwait: every other attribute kind's
 * condition is made with CLOCK_MONOTONIC. */
static clockid_t cond_clock(const struct mutex_kind *k)
{
	return k->api == API_ATTR && (k - kinds) % 2 == 0 ? CLOCK_MONOTONIC : CLOCK_REALTIME;
}

/* Every kind, named with its condition's clock when that is MONOTONIC. */
static void make_kinds(void)
{
	nkinds = stress_mutex_kinds(kinds, MAX_KINDS, fifo, rtpthread);
	for (int i = 0; i < nkinds; i++) {
		size_t len = strlen(kinds[i].name);
		if (cond_clock(&kinds[i]) == CLOCK_MONOTONIC)
			snprintf(kinds[i].name + len, sizeof kinds[i].name - len, " (cond MONOTONIC)");
	}
}

/* ---- the channel: one condition, its mutex, what they protect ---- */

enum flavour { F_WAIT, F_TIMEDWAIT, F_CLOCK_MONO, F_CLOCK_REAL, NFLAVOURS };
static const char *const flavour_names[NFLAVOURS] = { "wait", "timedwait", "clockwait(MONOTONIC)",
						      "clockwait(REALTIME)" };

struct waiter_view {
	/* Written by the waiter under the mutex (release), read by the
	 * watchdog without it (acquire). */
	_Atomic int64_t wait_since; /* CLOCK_MONOTONIC start of its current wait; 0 outside */
	_Atomic int flavour;
	_Atomic pid_t tid;
	_Atomic bool done;
};

struct channel {
	const struct mutex_kind *k;
	pthread_mutex_t pm_storage;
	pthread_cond_t pc_storage;
	pthread_mutex_t *m;
	pthread_cond_t *c;
	mtx_t cm;
	cnd_t cc;

	/* Under the mutex. */
	int items;
	bool stop;
	unsigned long counter; /* plain on purpose: checks exclusion */
	/* The order phase's: wake-ups to take, waiters inside, and who
	 * took them, in order. */
	int tickets, registered, woken;
	int order[ORDER_WAITERS];

	/* The watchdog's view (release by the writer, acquire by the reader). */
	_Atomic int items_pub;
	struct shared_moment items_since; /* items became > 0; wall_ns 0 while items == 0 */
	struct shared_moment last_change; /* items last changed */
	_Atomic int notifying;		  /* posts whose signal or broadcast has not returned */
	struct shared_moment last_notify;
	_Atomic int last_how;
	_Atomic bool untimed_only, stop_producers;
	_Atomic int inside;
	_Atomic int registered_pub, woken_pub, spurious_order;

	struct waiter_view view[ORDER_WAITERS];
};

/* Statistics over the whole run: counters only, relaxed. */
static _Atomic unsigned long st_posted, st_consumed, st_posts, st_signals, st_broadcasts, st_unheld, st_waits, st_timed,
    st_timeouts, st_nothing, st_empty, st_eperm, st_episodes, st_order_kinds, st_out_of_order;

static void count(_Atomic unsigned long *counter, unsigned long n)
{
	atomic_fetch_add_explicit(counter, n, memory_order_relaxed);
}

static unsigned long total(_Atomic unsigned long *counter)
{
	return atomic_load_explicit(counter, memory_order_relaxed);
}

static void channel_init(struct channel *ch, const struct mutex_kind *k)
{
	memset(ch, 0, sizeof *ch);
	ch->k = k;
	int r = 0;
	if (k->api == API_C11) {
		if (mtx_init(&ch->cm, k->c11) != thrd_success || cnd_init(&ch->cc) != thrd_success)
			stress_fail("%s: mtx_init or cnd_init failed", k->name);
		return;
	}
	if (k->api == API_STATIC) {
		ch->m = &static_mutexes[k->initializer];
		ch->c = &static_conds[k->initializer];
		return;
	}
	ch->m = &ch->pm_storage;
	ch->c = &ch->pc_storage;
	if ((r = stress_mutex_init(ch->m, k, CEILING)) != 0)
		stress_fail("%s: pthread_mutex_init: %s", k->name, strerror(r));
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, cond_clock(k));
	pthread_condattr_setpshared(&ca, k->pshared ? PTHREAD_PROCESS_SHARED : PTHREAD_PROCESS_PRIVATE);
	if ((r = pthread_cond_init(ch->c, &ca)) != 0)
		stress_fail("%s: pthread_cond_init: %s", k->name, strerror(r));
	pthread_condattr_destroy(&ca);
}

/* Static objects stay: they are destroyed once, at the very end. */
static void channel_destroy(struct channel *ch)
{
	const struct mutex_kind *k = ch->k;
	if (k->api == API_C11) {
		cnd_destroy(&ch->cc);
		mtx_destroy(&ch->cm);
		return;
	}
	if (k->api == API_STATIC)
		return;
	int r = pthread_cond_destroy(ch->c);
	if (r != 0)
		stress_fail("%s: pthread_cond_destroy after the episode returned %s", k->name, strerror(r));
	if ((r = pthread_mutex_destroy(ch->m)) != 0)
		stress_fail("%s: pthread_mutex_destroy after the episode returned %s", k->name, strerror(r));
}

static int ch_lock_once(struct channel *ch)
{
	return ch->k->api == API_C11 ? stress_from_c11(mtx_lock(&ch->cm)) : pthread_mutex_lock(ch->m);
}

static int ch_trylock(struct channel *ch)
{
	return ch->k->api == API_C11 ? stress_from_c11(mtx_trylock(&ch->cm)) : pthread_mutex_trylock(ch->m);
}

static void ch_lock(struct channel *ch)
{
	int r = ch_lock_once(ch);
	if (r != 0)
		stress_fail("%s: lock returned %s", ch->k->name, strerror(r));
}

static void ch_unlock(struct channel *ch)
{
	int r = ch->k->api == API_C11 ? stress_from_c11(mtx_unlock(&ch->cm)) : pthread_mutex_unlock(ch->m);
	if (r != 0)
		stress_fail("%s: unlock returned %s", ch->k->name, strerror(r));
}

static void ch_signal(struct channel *ch)
{
	int r = ch->k->api == API_C11 ? stress_from_c11(cnd_signal(&ch->cc)) : pthread_cond_signal(ch->c);
	if (r != 0)
		stress_fail("%s: signal returned %s", ch->k->name, strerror(r));
}

static void ch_broadcast(struct channel *ch)
{
	int r = ch->k->api == API_C11 ? stress_from_c11(cnd_broadcast(&ch->cc)) : pthread_cond_broadcast(ch->c);
	if (r != 0)
		stress_fail("%s: broadcast returned %s", ch->k->name, strerror(r));
}

/* A deadline 0-2 ms away, one in sixteen already past. */
static struct timespec wait_deadline(struct rng *rng, clockid_t clock)
{
	int64_t ns = rng_below(rng, 16) == 0 ? -100000 : (int64_t)rng_below(rng, 2000001);
	return deadline_in_ns(clock, ns);
}

static int ch_wait(struct channel *ch, enum flavour f, struct rng *rng)
{
	struct timespec dl;
	if (ch->k->api == API_C11) {
		if (f == F_WAIT)
			return stress_from_c11(cnd_wait(&ch->cc, &ch->cm));
		dl = wait_deadline(rng, CLOCK_REALTIME);
		return stress_from_c11(cnd_timedwait(&ch->cc, &ch->cm, &dl));
	}
	switch (f) {
	case F_WAIT:
		return pthread_cond_wait(ch->c, ch->m);
	case F_TIMEDWAIT:
		dl = wait_deadline(rng, cond_clock(ch->k));
		return pthread_cond_timedwait(ch->c, ch->m, &dl);
	case F_CLOCK_MONO:
		dl = wait_deadline(rng, CLOCK_MONOTONIC);
		return pthread_cond_clockwait(ch->c, ch->m, CLOCK_MONOTONIC, &dl);
	default:
		dl = wait_deadline(rng, CLOCK_REALTIME);
		return pthread_cond_clockwait(ch->c, ch->m, CLOCK_REALTIME, &dl);
	}
}

/* Critical-section bookkeeping: nobody else inside, count it. */
static void enter(struct channel *ch, unsigned long *entries)
{
	int in = atomic_fetch_add_explicit(&ch->inside, 1, memory_order_relaxed);
	if (in != 0)
		stress_fail("%s: %d other thread(s) inside the critical section", ch->k->name, in);
	ch->counter++;
	(*entries)++;
}

static void leave(struct channel *ch)
{
	atomic_fetch_sub_explicit(&ch->inside, 1, memory_order_relaxed);
}

/* items = n, under the mutex, with the watchdog's view kept in step. */
static void set_items(struct channel *ch, int n)
{
	struct moment now = stress_moment_now();
	int old = ch->items;
	ch->items = n;
	atomic_store_explicit(&ch->items_pub, n, memory_order_release);
	if (old == 0 && n > 0)
		publish(&ch->items_since, now);
	else if (n == 0)
		publish(&ch->items_since, (struct moment){ 0, 0 });
	publish(&ch->last_change, now);
}

/* ---- threads of an episode ---- */

/* What a producer is doing, for the watchdog's report. */
enum step { P_SLEEP, P_LOCK, P_INSIDE, P_SIGNAL, P_BROADCAST, P_UNLOCK, NSTEPS };
static const char *const step_names[NSTEPS] = { "sleeping",   "locking",      "inside",
						"signalling", "broadcasting", "unlocking" };

struct actor {
	struct channel *ch;
	int index, prio;
	struct rng rng;
	pthread_t thread;
	unsigned long entries;
	_Atomic bool done;
	_Atomic pid_t tid;	/* producers' (waiters have theirs in the channel's view) */
	_Atomic enum step step; /* relaxed: a report only */
};

/* The threads of an episode. */
struct crew {
	struct actor waiters[NWAITERS], producers[NPRODUCERS];
};

static void set_step(struct actor *a, enum step step)
{
	atomic_store_explicit(&a->step, step, memory_order_relaxed);
}

/* A wait on the mutex without holding it: EPERM, and nothing else
 * happens (a deadline bounds it if the library got it wrong). */
static void unheld_wait(struct actor *a)
{
	struct channel *ch = a->ch;
	struct timespec dl = deadline_in_ns(CLOCK_REALTIME, MS);
	int r = ch->k->api == API_C11 ? stress_from_c11(cnd_timedwait(&ch->cc, &ch->cm, &dl))
				      : pthread_cond_clockwait(ch->c, ch->m, CLOCK_REALTIME, &dl);
	if (r != EPERM)
		stress_fail("%s: a wait by w%d, which does not hold the mutex, returned %s", ch->k->name, a->index,
			    r ? strerror(r) : "0");
	count(&st_eperm, 1);
}

static void *waiter_main(void *arg)
{
	struct actor *a = arg;
	struct channel *ch = a->ch;
	struct waiter_view *v = &ch->view[a->index];
	stress_set_priority(a->prio);
	atomic_store_explicit(&v->tid, gettid(), memory_order_release);
	for (;;) {
		if (stress_checks_owner(ch->k, rtpthread) && rng_below(&a->rng, 64) == 0)
			unheld_wait(a);
		ch_lock(ch);
		enter(ch, &a->entries);
		while (ch->items == 0 && !ch->stop) {
			enum flavour f = F_WAIT;
			if (!atomic_load_explicit(&ch->untimed_only, memory_order_acquire) && rng_below(&a->rng, 2))
				f = (enum flavour)(1 + rng_below(&a->rng, NFLAVOURS - 1));
			if (ch->k->api == API_C11 && f != F_WAIT)
				f = F_TIMEDWAIT;
			atomic_store_explicit(&v->flavour, f, memory_order_relaxed);
			atomic_store_explicit(&v->wait_since, now_ns(CLOCK_MONOTONIC), memory_order_release);
			count(&st_waits, 1);
			if (f != F_WAIT)
				count(&st_timed, 1);
			leave(ch);
			int r = ch_wait(ch, f, &a->rng);
			enter(ch, &a->entries);
			atomic_store_explicit(&v->wait_since, 0, memory_order_release);
			if (r == ETIMEDOUT && f != F_WAIT)
				count(&st_timeouts, 1);
			else if (r != 0)
				stress_fail("%s: %s by w%d returned %s", ch->k->name, flavour_names[f], a->index,
					    strerror(r));
			else if (ch->items == 0 && !ch->stop)
				count(&st_nothing, 1);
		}
		if (ch->items == 0) { /* told to stop */
			leave(ch);
			ch_unlock(ch);
			break;
		}
		set_items(ch, ch->items - 1);
		count(&st_consumed, 1);
		leave(ch);
		ch_unlock(ch);
		if (rng_below(&a->rng, 4) == 0)
			sched_yield();
	}
	atomic_store_explicit(&v->done, true, memory_order_release);
	atomic_store_explicit(&a->done, true, memory_order_release);
	return NULL;
}

enum { HOW_BROADCAST = 1, HOW_UNHELD = 2 };

static void notify(struct actor *a, int how, int n)
{
	if (how & HOW_BROADCAST) {
		set_step(a, P_BROADCAST);
		ch_broadcast(a->ch);
		count(&st_broadcasts, 1);
		return;
	}
	set_step(a, P_SIGNAL);
	for (int i = 0; i < n; i++)
		ch_signal(a->ch);
	count(&st_signals, (unsigned long)n);
}

static void unlock_depth(struct actor *a, int depth)
{
	set_step(a, P_UNLOCK);
	for (int i = 0; i < depth; i++)
		ch_unlock(a->ch);
}

static void *producer_main(void *arg)
{
	struct actor *a = arg;
	struct channel *ch = a->ch;
	stress_set_priority(a->prio);
	atomic_store_explicit(&a->tid, gettid(), memory_order_relaxed);
	while (!atomic_load_explicit(&ch->stop_producers, memory_order_acquire)) {
		set_step(a, P_SLEEP);
		nap_us(20 + rng_below(&a->rng, 480));
		set_step(a, P_LOCK);
		ch_lock(ch);
		int depth = 1;
		if (ch->k->type == PTHREAD_MUTEX_RECURSIVE && rng_below(&a->rng, 2)) {
			int r = rng_below(&a->rng, 2) ? ch_trylock(ch) : ch_lock_once(ch);
			if (r != 0)
				stress_fail("%s: the owner's relock returned %s", ch->k->name, strerror(r));
			depth = 2;
		}
		set_step(a, P_INSIDE);
		enter(ch, &a->entries);
		if (ch->items != 0) {
			leave(ch);
			unlock_depth(a, depth);
			continue;
		}
		if (rng_below(&a->rng, 8) == 0) {
			/* A signal with nothing posted: whoever it wakes finds
			 * nothing and waits again.  Sent only while items is 0,
			 * so it never stands in for a wake-up pending items are
			 * owed. */
			leave(ch);
			set_step(a, P_SIGNAL);
			ch_signal(ch);
			count(&st_empty, 1);
			unlock_depth(a, depth);
			continue;
		}
		int n = 1 + (int)rng_below(&a->rng, 3);
		int how = (int)rng_below(&a->rng, 4);
		atomic_fetch_add_explicit(&ch->notifying, 1, memory_order_acq_rel);
		atomic_store_explicit(&ch->last_how, how, memory_order_relaxed);
		set_items(ch, n);
		count(&st_posted, (unsigned long)n);
		count(&st_posts, 1);
		leave(ch);
		if (!(how & HOW_UNHELD))
			notify(a, how, n);
		unlock_depth(a, depth);
		if (how & HOW_UNHELD) {
			notify(a, how, n);
			count(&st_unheld, 1);
		}
		publish(&ch->last_notify, stress_moment_now());
		atomic_fetch_sub_explicit(&ch->notifying, 1, memory_order_acq_rel);
	}
	atomic_store_explicit(&a->done, true, memory_order_release);
	return NULL;
}

/* ---- the watchdog ---- */

/* Fails the run with what, the channel's state and every thread's. */
static void describe(struct channel *ch, struct crew *crew, const char *what)
{
	int64_t now = now_ns(CLOCK_MONOTONIC);
	int64_t since = read_moment(&ch->items_since).wall_ns;
	int64_t last = read_moment(&ch->last_notify).wall_ns;
	int how = atomic_load_explicit(&ch->last_how, memory_order_relaxed);
	char state, wchan[64];
	long long cpu, waiting;
	printf("FAIL: %s: %s\n", ch->k->name, what);
	printf("  run clock: %lld ms; items %d (for %lld ms), %d notification(s) under way, the last one (%s %s) "
	       "returned %lld ms "
	       "ago\n",
	       (long long)(stress_run_clock_ns() / MS),
	       atomic_load_explicit(&ch->items_pub, memory_order_acquire), since ? (now - since) / MS : 0LL,
	       atomic_load_explicit(&ch->notifying, memory_order_acquire),
	       (how & HOW_BROADCAST) ? "broadcast" : "signal", (how & HOW_UNHELD) ? "without the mutex" : "held",
	       last ? (now - last) / MS : -1LL);
	for (int i = 0; i < NWAITERS; i++) {
		struct actor *a = &crew->waiters[i];
		struct waiter_view *v = &ch->view[i];
		pid_t tid = atomic_load_explicit(&v->tid, memory_order_acquire);
		int64_t ws = atomic_load_explicit(&v->wait_since, memory_order_acquire);
		state = '?';
		wchan[0] = '\0';
		if (stress_task_stat(tid, &state, NULL))
			task_wchan(tid, wchan, sizeof wchan);
		task_times(tid, &cpu, &waiting);
		printf("  waiter w%d tid %d %s %d: %s, %s%s for %lld ms%s, state %c, wchan %s, %lld ms on a CPU and "
		       "%lld ms waiting for one in all\n",
		       i, (int)tid, a->prio ? "FIFO" : "OTHER", a->prio,
		       atomic_load_explicit(&v->done, memory_order_acquire) ? "finished" : "running",
		       ws ? "in " : "outside a wait",
		       ws ? flavour_names[atomic_load_explicit(&v->flavour, memory_order_relaxed)] : "",
		       ws ? (now - ws) / MS : 0LL, ws && since && ws < since ? " (began before the items)" : "", state,
		       wchan, cpu, waiting);
	}
	for (int i = 0; i < NPRODUCERS; i++) {
		struct actor *a = &crew->producers[i];
		pid_t tid = atomic_load_explicit(&a->tid, memory_order_relaxed);
		state = '?';
		wchan[0] = '\0';
		if (stress_task_stat(tid, &state, NULL))
			task_wchan(tid, wchan, sizeof wchan);
		task_times(tid, &cpu, &waiting);
		printf("  producer p%d tid %d %s %d: %s, %s, state %c, wchan %s, %lld ms on a CPU and %lld ms waiting "
		       "for one in all\n",
		       i, (int)tid, a->prio ? "FIFO" : "OTHER", a->prio,
		       atomic_load_explicit(&a->done, memory_order_acquire) ? "finished" : "running",
		       step_names[atomic_load_explicit(&a->step, memory_order_relaxed)], state, wchan, cpu, waiting);
	}
	fflush(stdout);
	stress_fail("%s: %s", ch->k->name, what);
}

/* One look at the channel: fails on a lost wake-up or on items (or, while
 * producers run, posts) that stand still too long. */
static void watchdog(struct channel *ch, struct crew *crew, bool producers_running)
{
	struct moment now = stress_moment_now();
	struct moment since = read_moment(&ch->items_since);
	if (since.wall_ns == 0) {
		if (producers_running && stress_lasted(read_moment(&ch->last_change), now, STUCK_MS))
			describe(ch, crew, "nothing posted for a long time: a producer is stuck");
		return;
	}
	if (!stress_lasted(since, now, LOST_MS))
		return;
	bool culprit = false;
	for (int i = 0; i < NWAITERS; i++) {
		int64_t ws = atomic_load_explicit(&ch->view[i].wait_since, memory_order_acquire);
		culprit |= ws != 0 && ws < since.wall_ns;
	}
	if (read_moment(&ch->items_since).wall_ns != since.wall_ns)
		return; /* consumed meanwhile */
	if (culprit && atomic_load_explicit(&ch->notifying, memory_order_acquire) == 0 &&
	    stress_lasted(read_moment(&ch->last_notify), now, LOST_MS))
		describe(ch, crew,
			 "LOST WAKE-UP: items pending while a waiter sleeps in a wait that began before they were "
			 "posted");
	if (stress_lasted(since, now, STUCK_MS))
		describe(ch, crew, "STUCK: items pending and not consumed");
}

/* Runs the watchdog until every one of the n actors in set is done;
 * fails after limit_ms. */
static void watch_until_done(struct channel *ch, struct crew *crew, struct actor *set, int n, bool producers_running,
			     int limit_ms, const char *what)
{
	struct moment start = stress_moment_now();
	for (;;) {
		bool all = true;
		for (int i = 0; i < n; i++)
			all &= atomic_load_explicit(&set[i].done, memory_order_acquire);
		if (all)
			return;
		watchdog(ch, crew, producers_running);
		if (stress_lasted(start, stress_moment_now(), limit_ms))
			describe(ch, crew, what);
		nap_us(2000);
	}
}

/* ---- an episode ---- */

/* SCHED_OTHER threads take a PP mutex only under rtpthread. */
static int actor_prio(const struct mutex_kind *k, int prio)
{
	return prio == 0 && k->protocol == PTHREAD_PRIO_PROTECT && !rtpthread ? 1 : fifo ? prio : 0;
}

static void episode(struct channel *ch, double seconds, uint64_t stream)
{
	const struct mutex_kind *k = ch->k;
	struct crew crew;
	int64_t start = now_ns(CLOCK_MONOTONIC), total = (int64_t)(seconds * 1e9);
	publish(&ch->last_change, stress_moment_now()); /* for the stuck-producer check */
	for (int i = 0; i < NWAITERS; i++) {
		struct actor *a = &crew.waiters[i];
		*a = (struct actor){ .ch = ch, .index = i, .prio = actor_prio(k, waiter_prio[i]) };
		rng_seed(&a->rng, stream * 16 + (uint64_t)i);
		if (pthread_create(&a->thread, NULL, waiter_main, a) != 0)
			stress_fail("pthread_create failed");
	}
	for (int i = 0; i < NPRODUCERS; i++) {
		struct actor *a = &crew.producers[i];
		*a = (struct actor){ .ch = ch, .index = i, .prio = actor_prio(k, producer_prio[i]) };
		rng_seed(&a->rng, stream * 16 + 8 + (uint64_t)i);
		if (pthread_create(&a->thread, NULL, producer_main, a) != 0)
			stress_fail("pthread_create failed");
	}

	/* Mixed waits, then untimed ones, then the drain. */
	while (now_ns(CLOCK_MONOTONIC) - start < total * 6 / 10) {
		watchdog(ch, &crew, true);
		nap_us(2000);
	}
	atomic_store_explicit(&ch->untimed_only, true, memory_order_release);
	while (now_ns(CLOCK_MONOTONIC) - start < total) {
		watchdog(ch, &crew, true);
		nap_us(2000);
	}
	atomic_store_explicit(&ch->stop_producers, true, memory_order_release);
	watch_until_done(ch, &crew, crew.producers, NPRODUCERS, false, JOIN_MS, "a producer did not stop");
	for (int i = 0; i < NPRODUCERS; i++)
		pthread_join(crew.producers[i].thread, NULL);
	while (atomic_load_explicit(&ch->items_pub, memory_order_acquire) != 0) {
		watchdog(ch, &crew, false);
		nap_us(1000);
	}

	unsigned long main_entries = 0;
	ch_lock(ch);
	enter(ch, &main_entries);
	ch->stop = true;
	leave(ch);
	ch_broadcast(ch);
	ch_unlock(ch);
	watch_until_done(ch, &crew, crew.waiters, NWAITERS, false, JOIN_MS,
			 "a waiter did not return within 2 s of the final broadcast");
	unsigned long entries = main_entries;
	for (int i = 0; i < NWAITERS; i++) {
		pthread_join(crew.waiters[i].thread, NULL);
		entries += crew.waiters[i].entries;
	}
	for (int i = 0; i < NPRODUCERS; i++)
		entries += crew.producers[i].entries;
	if (ch->counter != entries)
		stress_fail("%s: %lu critical sections counted inside, %lu by the threads", k->name, ch->counter,
			    entries);
	count(&st_episodes, 1);
}

/* ---- the priority-order phase ---- */

struct order_actor {
	struct channel *ch;
	int index, prio;
	pthread_t thread;
};

static void *order_waiter(void *arg)
{
	struct order_actor *a = arg;
	struct channel *ch = a->ch;
	stress_set_priority(a->prio);
	atomic_store_explicit(&ch->view[a->index].tid, gettid(), memory_order_release);
	ch_lock(ch);
	ch->registered++;
	atomic_store_explicit(&ch->registered_pub, ch->registered, memory_order_release);
	while (ch->tickets == 0) {
		int r = ch_wait(ch, F_WAIT, NULL);
		if (r != 0)
			stress_fail("%s: order phase: wait returned %s", ch->k->name, strerror(r));
		if (ch->tickets == 0)
			atomic_fetch_add_explicit(&ch->spurious_order, 1, memory_order_relaxed);
	}
	ch->tickets--;
	ch->order[ch->woken++] = a->index;
	atomic_store_explicit(&ch->woken_pub, ch->woken, memory_order_release);
	ch_unlock(ch);
	return NULL;
}

/* Polls cond for up to 2 s (on both clocks). */
#define WAIT_FOR(cond, ...)                                     \
	do {                                                    \
		struct moment start_ = stress_moment_now();            \
		while (!(cond)) {                               \
			if (stress_lasted(start_, stress_moment_now(), 2000)) \
				stress_fail(__VA_ARGS__);       \
			nap_us(100);                            \
		}                                               \
	} while (0)

/* Asleep in the kernel: 'S' in a futex wait, seen twice 200 us apart. */
static bool asleep_in_futex(pid_t tid)
{
	for (int i = 0; i < 2; i++) {
		char state, wchan[64];
		if (i)
			nap_us(200);
		if (!stress_task_stat(tid, &state, NULL) || state != 'S')
			return false;
		task_wchan(tid, wchan, sizeof wchan);
		if (!strstr(wchan, "futex"))
			return false;
	}
	return true;
}

static void order_phase(struct channel *ch, struct rng *rng)
{
	const struct mutex_kind *k = ch->k;
	struct order_actor actors[ORDER_WAITERS];
	int start_order[ORDER_WAITERS];
	for (int i = 0; i < ORDER_WAITERS; i++)
		start_order[i] = i;
	for (int i = ORDER_WAITERS - 1; i > 0; i--) {
		int j = (int)rng_below(rng, (uint32_t)i + 1), t = start_order[i];
		start_order[i] = start_order[j];
		start_order[j] = t;
	}

	/* Start them one by one, each asleep before the next: their order in
	 * the queue is then their start order. */
	for (int n = 0; n < ORDER_WAITERS; n++) {
		int i = start_order[n];
		actors[i] = (struct order_actor){ .ch = ch, .index = i, .prio = order_prio[i] };
		if (pthread_create(&actors[i].thread, NULL, order_waiter, &actors[i]) != 0)
			stress_fail("pthread_create failed");
		WAIT_FOR(atomic_load_explicit(&ch->registered_pub, memory_order_acquire) == n + 1 &&
			     asleep_in_futex(atomic_load_explicit(&ch->view[i].tid, memory_order_acquire)),
			 "%s: order phase: waiter %d (FIFO %d) did not block in the wait", k->name, i, order_prio[i]);
	}

	/* Expected: highest priority first, start order among equals. */
	int expected[ORDER_WAITERS], ne = 0;
	for (int prio = 99; prio > 0; prio--)
		for (int n = 0; n < ORDER_WAITERS; n++)
			if (order_prio[start_order[n]] == prio)
				expected[ne++] = start_order[n];

	for (int s = 0; s < ORDER_WAITERS; s++) {
		bool held = rng_below(rng, 2);
		ch_lock(ch);
		ch->tickets++;
		if (held)
			ch_signal(ch);
		ch_unlock(ch);
		if (!held)
			ch_signal(ch);
		WAIT_FOR(atomic_load_explicit(&ch->woken_pub, memory_order_acquire) == s + 1,
			 "%s: order phase: signal %d (%s) woke nobody within 2 s", k->name, s + 1,
			 held ? "held" : "without the mutex");
	}
	for (int i = 0; i < ORDER_WAITERS; i++)
		pthread_join(actors[i].thread, NULL);

	bool in_order = memcmp(ch->order, expected, sizeof expected) == 0;
	int spurious = atomic_load_explicit(&ch->spurious_order, memory_order_relaxed);
	count(&st_order_kinds, 1);
	if (in_order && spurious == 0)
		return;
	count(&st_out_of_order, 1);
	if (!rtpthread)
		return; /* NPTL promises no order */
	char got[128], want[128];
	int gl = 0, wl = 0;
	for (int i = 0; i < ORDER_WAITERS; i++) {
		gl += snprintf(got + gl, sizeof got - (size_t)gl, " w%d/%d", ch->order[i], order_prio[ch->order[i]]);
		wl += snprintf(want + wl, sizeof want - (size_t)wl, " w%d/%d", expected[i], order_prio[expected[i]]);
	}
	stress_fail("%s: order phase: signals woke (waiter/priority)%s; expected%s; %d spurious return(s)", k->name,
		    got, want, spurious);
}

/* ---- main ---- */

int main(void)
{
	stress_start("stress_cond", 8);
	rtpthread = strcmp(stress_library(), "rtpthread") == 0;
	fifo = stress_fifo_or_note("PP kinds and the priority-order phase are left out");
	if (fifo)
		stress_set_priority(MAIN_PRIO);
	make_kinds();
	stress_start_run_clock();

	struct channel *shared = mmap(NULL, sizeof *shared, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	static struct channel private_channel;
	struct channel *private = &private_channel;
	if (shared == MAP_FAILED)
		stress_fail("mmap: %s", strerror(errno));

	struct rng rng;
	rng_seed(&rng, 1000);
	int order[MAX_KINDS];
	for (int i = 0; i < nkinds; i++)
		order[i] = i;
	/* An episode per kind and pass: an equal share of STRESS_DURATION, at least
	 * 80 ms (the first pass always runs whole), at most 2 s (long runs
	 * make more passes, each in a new order). */
	double slice = stress_duration() / nkinds;
	slice = slice < 0.08 ? 0.08 : slice > 2.0 ? 2.0 : slice;
	uint64_t stream = 0;
	for (int pass = 0; pass == 0 || stress_running(); pass++) {
		for (int i = nkinds - 1; i > 0; i--) {
			int j = (int)rng_below(&rng, (uint32_t)i + 1), t = order[i];
			order[i] = order[j];
			order[j] = t;
		}
		for (int n = 0; n < nkinds && (pass == 0 || stress_running()); n++) {
			const struct mutex_kind *k = &kinds[order[n]];
			struct channel *ch = k->pshared ? shared : private;
			channel_init(ch, k);
			if (pass == 0 && fifo)
				order_phase(ch, &rng);
			episode(ch, slice, ++stream);
			channel_destroy(ch);
		}
	}
	for (int i = 0; i < nkinds; i++) {
		if (kinds[i].api != API_STATIC)
			continue;
		int r = pthread_cond_destroy(&static_conds[kinds[i].initializer]);
		if (r == 0)
			r = pthread_mutex_destroy(&static_mutexes[kinds[i].initializer]);
		if (r != 0)
			stress_fail("%s: destroy at the end returned %s", kinds[i].name, strerror(r));
	}

	unsigned long posted = total(&st_posted), consumed = total(&st_consumed);
	if (posted != consumed)
		stress_fail("%lu items posted, %lu consumed", posted, consumed);
	printf("stress_cond: %d kinds, %lu episodes, %lu items posted and consumed in %lu posts (%lu signals, %lu "
	       "broadcasts, %lu without the mutex, %lu signals with nothing posted), %lu waits (%lu timed, %lu "
	       "timeouts, %lu returns to nothing), %lu "
	       "unheld-mutex EPERM checks, priority order: %lu kinds checked, %lu out of order%s, 0 violations\n",
	       nkinds, total(&st_episodes), posted, total(&st_posts), total(&st_signals), total(&st_broadcasts),
	       total(&st_unheld), total(&st_empty), total(&st_waits), total(&st_timed), total(&st_timeouts),
	       total(&st_nothing), total(&st_eperm), total(&st_order_kinds), total(&st_out_of_order),
	       rtpthread ? "" : " (NPTL: not asserted)");
	return 0;
}
