/*
 * Cancellation of condition waiters, racing the signals meant for them.
 *
 * Eight conditions, one for each mutex kind (NORMAL, ERRORCHECK, PI,
 * PI ERRORCHECK) with a private and a process-shared condition, each
 * with WAITERS consumer threads and a driver thread that runs rounds:
 *
 *   1. wait until every consumer is blocked in its wait (each marks
 *      itself under the mutex just before waiting; the driver's lock
 *      then proves it has released the mutex inside the wait);
 *   2. post one item (sometimes two) and signal once per item, or
 *      broadcast, with the mutex held or after the unlock;
 *   3. cancel one consumer at random: before the signal (mutex held),
 *      right after it, after the unlock, or 0-100 us later;
 *   4. every item must be consumed within STUCK_MS (of wall time and of
 *      the run clock, common.h: a machine too busy to run these
 *      SCHED_OTHER threads is not a lost wake-up).  Nothing else can
 *      wake a consumer (waits are untimed or 10 s away, and no new
 *      consumer starts during a round), so an item left over means the
 *      cancelled waiter swallowed the wake-up that POSIX says it must
 *      leave to the others;
 *   5. join the cancelled consumer (PTHREAD_CANCELED, its cleanup
 *      handler ran) and start a replacement.
 *
 * Consumers can be cancelled only inside the wait (cancellation is
 * disabled everywhere else).  Their cleanup handler checks what POSIX
 * promises, that the wait took the mutex back before the handlers run:
 * nobody else is in the critical section, trylock fails (EBUSY, or
 * EDEADLK from an owner check), and the unlock returns 0 (ERRORCHECK and
 * PI mutexes refuse an unlock by a thread that does not own them).
 * Waits return 0 only.  Barrier waits and mutex locks are not
 * cancellation points and are not tried.
 *
 * At the end a broadcast releases every consumer, and destroy of every
 * condition and mutex returns 0, within STUCK_MS.  A failure names the
 * step and shows every thread of the group: asleep in a futex (a lost
 * wake-up or cancellation) or waiting for a CPU.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common.h"

#define WAITERS 3
#define STUCK_MS 3000

enum cancel_when { BEFORE_SIGNAL, AFTER_SIGNAL, AFTER_UNLOCK, LATER, NWHEN };
static const char *const when_names[NWHEN] = { "before the signal", "just after the signal",
						"after the unlock", "0-100 us after the unlock" };

struct group;

struct waiter {
	struct group *g;
	pthread_t handle;
	_Atomic pid_t tid;
	_Atomic int blocked;	 /* marked under the mutex just before waiting */
	_Atomic int cleanup_ran; /* its cancellation cleanup handler ran */
	uint64_t stream;	 /* of its rng */
};

struct group {
	const char *name;
	int type, protocol;
	bool pshared;
	pthread_mutex_t m;
	pthread_cond_t c;
	/* under m */
	pid_t inside; /* TID of the thread in the critical section, 0 if none */
	int items;
	bool stop;
	_Atomic uint64_t posted, consumed, waits;
	uint64_t rounds, by_when[NWHEN];
	struct waiter w[WAITERS];
	pthread_t driver;
	/* for the watchdog */
	_Atomic pid_t driver_tid;
	const char *_Atomic step;
	/* When the step began on both clocks (wall 0: no step is timed).  A
	 * torn pair only delays a report: both must have passed the limit. */
	_Atomic int64_t step_wall, step_run;
};

static struct group groups[] = {
	{ .name = "NORMAL, private", .type = PTHREAD_MUTEX_NORMAL, .protocol = PTHREAD_PRIO_NONE },
	{ .name = "ERRORCHECK, private", .type = PTHREAD_MUTEX_ERRORCHECK, .protocol = PTHREAD_PRIO_NONE },
	{ .name = "PI, private", .type = PTHREAD_MUTEX_NORMAL, .protocol = PTHREAD_PRIO_INHERIT },
	{ .name = "PI ERRORCHECK, private", .type = PTHREAD_MUTEX_ERRORCHECK, .protocol = PTHREAD_PRIO_INHERIT },
	{ .name = "NORMAL, pshared", .type = PTHREAD_MUTEX_NORMAL, .protocol = PTHREAD_PRIO_NONE, .pshared = true },
	{ .name = "ERRORCHECK, pshared", .type = PTHREAD_MUTEX_ERRORCHECK, .protocol = PTHREAD_PRIO_NONE,
	  .pshared = true },
	{ .name = "PI, pshared", .type = PTHREAD_MUTEX_NORMAL, .protocol = PTHREAD_PRIO_INHERIT, .pshared = true },
	{ .name = "PI ERRORCHECK, pshared", .type = PTHREAD_MUTEX_ERRORCHECK, .protocol = PTHREAD_PRIO_INHERIT,
	  .pshared = true },
};
#define NGROUPS (int)(sizeof groups / sizeof groups[0])

/* ---- consumers ---- */

static void enter(struct group *g, const char *what)
{
	if (g->inside != 0)
		stress_fail("%s: %s, but thread %d is in the critical section", g->name, what, (int)g->inside);
	g->inside = gettid();
}

static void leave(struct group *g)
{
	if (g->inside != gettid())
		stress_fail("%s: thread %d got into the critical section of thread %d", g->name, (int)g->inside,
			    (int)gettid());
	g->inside = 0;
}

/* Runs when the consumer is cancelled in its wait: the wait has taken
 * the mutex back for it. */
static void consumer_cancelled(void *p)
{
	struct waiter *w = p;
	struct group *g = w->g;
	enter(g, "cancellation cleanup runs with the mutex supposedly held");
	int r = pthread_mutex_trylock(&g->m);
	if (r == 0)
		stress_fail("%s: cancellation cleanup: the mutex was free (trylock took it)", g->name);
	if (r != EBUSY && r != EDEADLK)
		stress_fail("%s: cancellation cleanup: trylock: %s", g->name, strerror(r));
	leave(g);
	atomic_store(&w->blocked, 0);
	r = pthread_mutex_unlock(&g->m);
	if (r != 0)
		stress_fail("%s: cancellation cleanup: unlock: %s (not the owner?)", g->name, strerror(r));
	atomic_store(&w->cleanup_ran, 1);
}

/* Untimed, timed (CLOCK_REALTIME) or clocked (CLOCK_MONOTONIC); the
 * deadlines are far beyond any round, so that no timeout wakes anybody. */
static void wait_once(struct group *g, struct rng *rng)
{
	uint32_t how = rng_below(rng, 3);
	clockid_t clock = how == 1 ? CLOCK_REALTIME : CLOCK_MONOTONIC;
	struct timespec dl = deadline_in_ns(clock, 10 * 1000000000LL);
	int r = how == 0   ? pthread_cond_wait(&g->c, &g->m)
		: how == 1 ? pthread_cond_timedwait(&g->c, &g->m, &dl)
			   : pthread_cond_clockwait(&g->c, &g->m, clock, &dl);
	if (r != 0)
		stress_fail("%s: %s: %s", g->name,
			    how == 0   ? "pthread_cond_wait"
			    : how == 1 ? "pthread_cond_timedwait"
				       : "pthread_cond_clockwait",
			    strerror(r));
	atomic_fetch_add(&g->waits, 1);
}

static void *consumer_main(void *p)
{
	struct waiter *w = p;
	struct group *g = w->g;
	struct rng rng;
	rng_seed(&rng, w->stream);
	atomic_store(&w->tid, gettid());
	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL);
	for (bool done = false; !done;) {
		int r = pthread_mutex_lock(&g->m);
		if (r != 0)
			stress_fail("%s: consumer lock: %s", g->name, strerror(r));
		enter(g, "lock returned");
		pthread_cleanup_push(consumer_cancelled, w);
		while (g->items == 0 && !g->stop) {
			leave(g);
			atomic_store(&w->blocked, 1);
			pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, NULL);
			wait_once(g, &rng);
			pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL);
			atomic_store(&w->blocked, 0);
			enter(g, "a wait returned");
		}
		if (g->items > 0) {
			g->items--;
			atomic_fetch_add(&g->consumed, 1);
		} else {
			done = true; /* stopped, nothing left */
		}
		pthread_cleanup_pop(0);
		leave(g);
		r = pthread_mutex_unlock(&g->m);
		if (r != 0)
			stress_fail("%s: consumer unlock: %s", g->name, strerror(r));
	}
	return NULL;
}

static _Atomic uint64_t streams;

static void start_consumer(struct waiter *w)
{
	atomic_store(&w->tid, 0);
	atomic_store(&w->blocked, 0);
	atomic_store(&w->cleanup_ran, 0);
	w->stream = atomic_fetch_add(&streams, 1) + 1;
	int r = pthread_create(&w->handle, NULL, consumer_main, w);
	if (r != 0)
		stress_fail("pthread_create: %s", strerror(r));
}

/* ---- the driver of a group's rounds ---- */

static void step(struct group *g, const char *what)
{
	struct moment now = stress_moment_now();
	atomic_store(&g->step, what);
	atomic_store(&g->step_run, now.run_ns);
	atomic_store(&g->step_wall, now.wall_ns);
}

static void wake(struct group *g, int n, bool all)
{
	for (int i = 0; i < (all ? 1 : n); i++) {
		int r = all ? pthread_cond_broadcast(&g->c) : pthread_cond_signal(&g->c);
		if (r != 0)
			stress_fail("%s: %s: %s", g->name, all ? "broadcast" : "signal", strerror(r));
	}
}

static void cancel(struct group *g, struct waiter *w)
{
	int r = pthread_cancel(w->handle);
	if (r != 0)
		stress_fail("%s: pthread_cancel: %s", g->name, strerror(r));
}

static void round_once(struct group *g, struct rng *rng)
{
	step(g, "waiting for every consumer to block");
	for (int i = 0; i < WAITERS; i++)
		while (!atomic_load(&g->w[i].blocked))
			nap_us(10);
	int r = pthread_mutex_lock(&g->m);
	if (r != 0)
		stress_fail("%s: driver lock: %s", g->name, strerror(r));
	enter(g, "the driver's lock returned");
	int n = rng_below(rng, 4) ? 1 : 2;
	bool all = rng_below(rng, 4) == 0, held = rng_below(rng, 2);
	enum cancel_when when = (enum cancel_when)rng_below(rng, NWHEN);
	if (!held && when == AFTER_SIGNAL)
		when = AFTER_UNLOCK;
	struct waiter *victim = &g->w[rng_below(rng, WAITERS)];
	g->items += n;
	atomic_fetch_add(&g->posted, (uint64_t)n);
	leave(g);
	if (when == BEFORE_SIGNAL)
		cancel(g, victim);
	if (held) {
		wake(g, n, all);
		if (when == AFTER_SIGNAL)
			cancel(g, victim);
	}
	pthread_mutex_unlock(&g->m);
	if (!held)
		wake(g, n, all);
	if (when == AFTER_UNLOCK)
		cancel(g, victim);
	if (when == LATER) {
		spin_ns(rng_below(rng, 100001));
		cancel(g, victim);
	}
	g->by_when[when]++;

	step(g, "waiting for the items to be consumed (a wake-up lost to the cancellation?)");
	while (atomic_load(&g->consumed) != atomic_load(&g->posted))
		nap_us(10);
	step(g, "joining the cancelled consumer");
	void *result;
	r = pthread_join(victim->handle, &result);
	if (r != 0)
		stress_fail("%s: pthread_join: %s", g->name, strerror(r));
	if (result != PTHREAD_CANCELED)
		stress_fail("%s: a cancelled consumer returned instead", g->name);
	if (!atomic_load(&victim->cleanup_ran))
		stress_fail("%s: a cancelled consumer did not run its cleanup handler", g->name);
	start_consumer(victim);
	g->rounds++;
}

static void *driver_main(void *p)
{
	struct group *g = p;
	struct rng rng;
	rng_seed(&rng, 1000 + (uint64_t)(g - groups));
	atomic_store(&g->driver_tid, gettid());
	while (stress_running())
		round_once(g, &rng);
	step(g, "stopping");
	return NULL;
}

/* ---- watchdog ---- */

static _Atomic int watchdog_done;
static const char *_Atomic stage = "running";
static _Atomic int64_t stage_wall, stage_run; /* as a group's step */

static void set_stage(const char *what)
{
	struct moment now = stress_moment_now();
	atomic_store(&stage, what);
	atomic_store(&stage_run, now.run_ns);
	atomic_store(&stage_wall, now.wall_ns);
}

static void print_group(struct group *g)
{
	printf("  %s: round %llu, %d items under the mutex (read without it), %llu posted, %llu consumed\n",
	       g->name, (unsigned long long)g->rounds, g->items, (unsigned long long)atomic_load(&g->posted),
	       (unsigned long long)atomic_load(&g->consumed));
	stress_print_task("driver", atomic_load(&g->driver_tid));
	for (int k = 0; k < WAITERS; k++) {
		char label[64];
		snprintf(label, sizeof label, "consumer %d (%s)", k,
			 atomic_load(&g->w[k].blocked) ? "marked blocked" : "not marked blocked");
		stress_print_task(label, atomic_load(&g->w[k].tid));
	}
}

static void *watchdog_main(void *arg)
{
	(void)arg;
	while (!atomic_load(&watchdog_done)) {
		nap_us(100000);
		struct moment now = stress_moment_now();
		for (int i = 0; i < NGROUPS; i++) {
			struct group *g = &groups[i];
			struct moment since = { atomic_load(&g->step_wall), atomic_load(&g->step_run) };
			if (since.wall_ns && stress_lasted(since, now, STUCK_MS)) {
				printf("FAIL: %s: %s for %d ms:\n", g->name, atomic_load(&g->step), STUCK_MS);
				print_group(g);
				stress_fail("%s: round %llu: %s", g->name, (unsigned long long)g->rounds,
					    atomic_load(&g->step));
			}
		}
		struct moment since = { atomic_load(&stage_wall), atomic_load(&stage_run) };
		if (since.wall_ns && stress_lasted(since, now, STUCK_MS)) {
			printf("FAIL: %s took more than %d ms:\n", atomic_load(&stage), STUCK_MS);
			for (int i = 0; i < NGROUPS; i++)
				print_group(&groups[i]);
			stress_fail("%s took more than %d ms", atomic_load(&stage), STUCK_MS);
		}
	}
	return NULL;
}

/* ---- main ---- */

static void init_group(struct group *g)
{
	pthread_mutexattr_t ma;
	pthread_mutexattr_init(&ma);
	pthread_mutexattr_settype(&ma, g->type);
	pthread_mutexattr_setprotocol(&ma, g->protocol);
	if (g->pshared)
		pthread_mutexattr_setpshared(&ma, PTHREAD_PROCESS_SHARED);
	if (pthread_mutex_init(&g->m, &ma) != 0)
		stress_fail("%s: pthread_mutex_init failed", g->name);
	pthread_mutexattr_destroy(&ma);
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	if (g->pshared)
		pthread_condattr_setpshared(&ca, PTHREAD_PROCESS_SHARED);
	if (pthread_cond_init(&g->c, &ca) != 0)
		stress_fail("%s: pthread_cond_init failed", g->name);
	pthread_condattr_destroy(&ca);
	for (int i = 0; i < WAITERS; i++) {
		g->w[i].g = g;
		start_consumer(&g->w[i]);
	}
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	stress_start("stress_cancel", 8);
	stress_start_run_clock();
	for (int i = 0; i < NGROUPS; i++)
		init_group(&groups[i]);
	pthread_t watchdog;
	if (pthread_create(&watchdog, NULL, watchdog_main, NULL) != 0)
		stress_fail("pthread_create failed");
	for (int i = 0; i < NGROUPS; i++)
		if (pthread_create(&groups[i].driver, NULL, driver_main, &groups[i]) != 0)
			stress_fail("pthread_create failed");
	for (int i = 0; i < NGROUPS; i++)
		pthread_join(groups[i].driver, NULL);

	set_stage("the final broadcast and joins");
	for (int i = 0; i < NGROUPS; i++) {
		struct group *g = &groups[i];
		atomic_store(&g->step_wall, 0);
		pthread_mutex_lock(&g->m);
		g->stop = true;
		int r = pthread_cond_broadcast(&g->c);
		pthread_mutex_unlock(&g->m);
		if (r != 0)
			stress_fail("%s: final broadcast: %s", g->name, strerror(r));
		for (int k = 0; k < WAITERS; k++)
			pthread_join(g->w[k].handle, NULL);
	}
	set_stage("destroy");
	uint64_t rounds = 0, items = 0, waits = 0, by_when[NWHEN] = { 0 };
	for (int i = 0; i < NGROUPS; i++) {
		struct group *g = &groups[i];
		int r = pthread_cond_destroy(&g->c);
		if (r != 0)
			stress_fail("%s: pthread_cond_destroy: %s", g->name, strerror(r));
		r = pthread_mutex_destroy(&g->m);
		if (r != 0)
			stress_fail("%s: pthread_mutex_destroy: %s", g->name, strerror(r));
		if (atomic_load(&g->consumed) != atomic_load(&g->posted))
			stress_fail("%s: %llu items posted, %llu consumed", g->name,
				    (unsigned long long)atomic_load(&g->posted),
				    (unsigned long long)atomic_load(&g->consumed));
		printf("%s: %llu cancellations, %llu items, %llu waits\n", g->name, (unsigned long long)g->rounds,
		       (unsigned long long)atomic_load(&g->consumed), (unsigned long long)atomic_load(&g->waits));
		rounds += g->rounds;
		items += atomic_load(&g->consumed);
		waits += atomic_load(&g->waits);
		for (int k = 0; k < NWHEN; k++)
			by_when[k] += g->by_when[k];
	}
	atomic_store(&watchdog_done, 1);
	pthread_join(watchdog, NULL);
	printf("stress_cancel: %llu cancellations of blocked waiters (", (unsigned long long)rounds);
	for (int k = 0; k < NWHEN; k++)
		printf("%s%llu %s", k ? ", " : "", (unsigned long long)by_when[k], when_names[k]);
	printf("), %llu items all consumed, %llu waits, %d conditions destroyed\n", (unsigned long long)items,
	       (unsigned long long)waits, NGROUPS);
	return 0;
}
