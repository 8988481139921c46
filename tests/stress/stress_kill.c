/*
 * Process death: worker processes share a robust, process-shared mutex and
 * the data it protects; the parent SIGKILLs one of them at a random
 * moment (inside lock and unlock too), reaps it and forks a replacement,
 * over and over.
 *
 * The protected data carries an intent record, so that a death in the
 * middle of a critical section leaves a state the next owner can detect
 * and repair:
 *
 *   update   write the intent (the values before the update), mark it
 *            valid, update counter, done[slot] (and the item counts),
 *            clear the intent.
 *   repair   an owner that gets EOWNERDEAD rolls a valid intent back,
 *            then calls pthread_mutex_consistent.
 *
 * Invariants, checked at every acquisition: counter equals the sum of
 * done[] (every slot's committed sections), items equals posted minus
 * consumed, and an acquisition that returns 0 finds no section left
 * unfinished (nobody inside, no valid intent): a death while holding
 * must be reported as EOWNERDEAD.
 *
 * Each worker records where it is (outside, locking, holding, unlocking,
 * waiting, signalling) before and after every call.  After reaping the
 * victim the parent tells the others to park outside the mutex, waits
 * until they have, starts a replacement, and takes the mutex itself,
 * counting the EOWNERDEAD results since the previous kill: exactly one
 * if the victim died holding the mutex, none if it died outside, either
 * inside a lock, unlock or condition wait (the kill may land before or
 * after the word changed hands).  No acquisition ever returns
 * ENOTRECOVERABLE, since every EOWNERDEAD is repaired.
 *
 * A worker that cannot park within QUIET_MS sleeps on a lost wake-up
 * (see stuck_worker): nobody contends for the mutex while the others are
 * parked, so nothing else can wake it.
 *
 * Phases, each running for its share of STRESS_DURATION and at least its
 * min_kills (1000 kills in all): robust NORMAL, robust RECURSIVE
 * (sections relock up to twice), robust PI, robust PI ERRORCHECK (a
 * relock must say EDEADLK), then a producer/consumer over two
 * process-shared conditions with a robust and a robust PI mutex, where
 * the victim is often waiting on a condition or in the middle of
 * signalling one (not run under NPTL, which hangs there: see main).
 * The parent often spins until the victim is inside one of those calls,
 * or may just have been woken in its lock, before it kills.  A phase ends
 * with every worker told to stop: each must exit 0, and then counter
 * equals the sum of done[], and the sections workers saw through to
 * their unlock add up to counter but for at most one per kill (a victim
 * killed after its commit and before its unlock returned).
 *
 * Waits are timed (COND_WAIT_MS): a victim that dies just after taking a
 * condition's wake-up, or between a signal's update and its wake-up,
 * loses that wake-up for everybody (POSIX says nothing of process death
 * there), and the survivors must not hang on it.  Those timeouts are
 * counted and reported.
 *
 * A watchdog fails the run, describing every worker, if a kill round or
 * the end of a phase does not finish within ROUND_LIMIT_S.
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
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common.h"

#define NWORKERS 3
#define CAPACITY 1	     /* items the cond phases' queue holds */
#define COND_WAIT_MS 20	     /* a survivor's longest sleep on a lost wake-up */
#define ROUND_LIMIT_S 10     /* a kill round, or a phase's end, must finish within this */
#define LOCK_LIMIT_S 5	     /* the parent's timedlock after a kill */
#define QUIET_MS 2000	     /* a worker must park (or exit) within this once told to */
#define QUIET_MS_NPTL 200    /* the same under NPTL, where one that does not is only counted */

enum where { OUTSIDE, LOCKING, HOLDING, UNLOCKING, WAITING, SIGNALLING_HELD, SIGNALLING_FREE, NWHERE };
static const char *const where_names[NWHERE] = { "outside", "locking", "holding", "unlocking", "waiting",
						  "signalling (mutex held)", "signalling (mutex free)" };

/* What a death at `where` must do to the mutex: -1 either way. */
static int ownerdead_expected(int where)
{
	switch (where) {
	case HOLDING:
	case SIGNALLING_HELD:
		return 1;
	case OUTSIDE:
	case SIGNALLING_FREE:
		return 0;
	default:
		return -1;
	}
}

struct intent {
	int valid;
	int slot;
	uint64_t counter, done, posted, consumed;
	int64_t items;
};

/* Protected by the mutex.  Accessed through a volatile pointer: a kill
 * may land between any two stores, and each must be in memory in program
 * order when it does. */
struct data {
	uint64_t counter;
	uint64_t done[NWORKERS];
	int64_t items;
	uint64_t posted, consumed;
	pid_t owner; /* the process inside a section, 0 if none */
	struct intent intent;
	uint64_t ownerdead; /* EOWNERDEAD results, repaired */
	uint64_t rollbacks; /* valid intents rolled back */
};

struct shared {
	pthread_mutex_t m;
	pthread_cond_t nonempty, space;
	struct data d;
	_Atomic int where[NWORKERS];
	_Atomic int64_t where_since[NWORKERS]; /* when where was last set */
	_Atomic int started[NWORKERS];
	_Atomic uint64_t finished[NWORKERS]; /* sections seen through to unlock */
	_Atomic int stop;		     /* workers: exit */
	_Atomic int pause;		     /* workers: park outside the mutex */
	_Atomic int parked[NWORKERS];
	_Atomic uint64_t timeouts;	     /* cond waits that returned ETIMEDOUT */
	_Atomic uint64_t timeouts_ready;     /* ... with their predicate already true */
	_Atomic uint64_t wait_ownerdead;     /* cond waits that returned EOWNERDEAD */
	_Atomic int failed;
	char why[512];
};

struct phase {
	const char *name;
	int type;
	int protocol;
	bool cond;
	int min_kills;
};

static const struct phase phases[] = {
	{ "robust NORMAL", PTHREAD_MUTEX_NORMAL, PTHREAD_PRIO_NONE, false, 170 },
	{ "robust RECURSIVE", PTHREAD_MUTEX_RECURSIVE, PTHREAD_PRIO_NONE, false, 170 },
	{ "robust PI", PTHREAD_MUTEX_NORMAL, PTHREAD_PRIO_INHERIT, false, 170 },
	{ "robust PI ERRORCHECK", PTHREAD_MUTEX_ERRORCHECK, PTHREAD_PRIO_INHERIT, false, 170 },
	{ "cond + robust", PTHREAD_MUTEX_NORMAL, PTHREAD_PRIO_NONE, true, 160 },
	{ "cond + robust PI", PTHREAD_MUTEX_NORMAL, PTHREAD_PRIO_INHERIT, true, 160 },
};
#define NPHASES (int)(sizeof phases / sizeof phases[0])

static struct shared *s;
static const struct phase *phase;
static pid_t me;	   /* this process's PID, the owner mark of its sections */
static pid_t parent_pid;

static pid_t pids[NWORKERS];
static void __attribute__((format(printf, 1, 2), noreturn)) parent_fail(const char *fmt, ...);

/* ---- failures ---- */

/* In a worker: leave the reason for the parent, and exit 1.  In the
 * parent (which checks the data as workers do): fail the run. */
static void __attribute__((format(printf, 1, 2), noreturn)) worker_fail(const char *fmt, ...)
{
	char msg[400];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	if (me == parent_pid)
		parent_fail("parent: %s", msg);
	int expected = 0;
	if (atomic_compare_exchange_strong(&s->failed, &expected, 1)) {
		snprintf(s->why, sizeof s->why, "process %d: %s", (int)me, msg);
		atomic_store(&s->failed, 2);
	}
	_exit(1);
}

static void kill_workers(void)
{
	for (int i = 0; i < NWORKERS; i++)
		if (pids[i] > 0)
			kill(pids[i], SIGKILL);
}

/* The state of every worker, for a failure report. */
static void describe(char *buf, size_t size)
{
	size_t n = (size_t)snprintf(buf, size, "mutex word 0x%x, inside: %d, intent %s;", (unsigned)s->m.__data.__lock,
				    (int)s->d.owner, s->d.intent.valid ? "valid" : "clear");
	for (int i = 0; i < NWORKERS && n < size; i++) {
		if (pids[i] == 0)
			n += (size_t)snprintf(buf + n, size - n, " worker %d reaped (died %s);", i,
					      where_names[atomic_load(&s->where[i])]);
		else
			n += (size_t)snprintf(buf + n, size - n, " worker %d (pid %d) %s%s;", i, (int)pids[i],
					      where_names[atomic_load(&s->where[i])],
					      atomic_load(&s->started[i]) ? "" : ", not started");
	}
}

static void __attribute__((format(printf, 1, 2), noreturn)) parent_fail(const char *fmt, ...)
{
	char msg[512], state[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	describe(state, sizeof state);
	kill_workers();
	stress_fail("%s: %s [%s]", phase ? phase->name : "setup", msg, state);
}

/* In the parent: a worker that exited on its own failed; say why. */
static void check_workers_ok(void)
{
	if (atomic_load(&s->failed) == 2)
		parent_fail("worker: %s", s->why);
}

/* ---- the critical section ---- */

/* Record where this worker is.  The fences keep the store in program
 * order with the calls and data stores around it, so that what the parent
 * reads after the death is where the kill landed. */
static void set_where(int slot, int where)
{
	atomic_signal_fence(memory_order_seq_cst);
	atomic_store_explicit(&s->where_since[slot], now_ns(CLOCK_MONOTONIC), memory_order_relaxed);
	atomic_store_explicit(&s->where[slot], where, memory_order_relaxed);
	atomic_signal_fence(memory_order_seq_cst);
}

static void check_invariants(const char *what)
{
	volatile struct data *d = &s->d;
	uint64_t sum = 0;
	for (int i = 0; i < NWORKERS; i++)
		sum += d->done[i];
	if (d->counter != sum)
		worker_fail("%s: counter %llu, but the slots committed %llu sections", what,
			    (unsigned long long)d->counter, (unsigned long long)sum);
	if (d->items != (int64_t)(d->posted - d->consumed) || d->items < 0 || d->items > CAPACITY)
		worker_fail("%s: %lld items, but %llu posted and %llu consumed", what, (long long)d->items,
			    (unsigned long long)d->posted, (unsigned long long)d->consumed);
}

/*
 * After an acquisition (lock or condition wait) that returned r: repair
 * what a dead owner left, check the data, and mark the section ours.
 */
static void section_enter(int r, const char *what)
{
	volatile struct data *d = &s->d;
	if (r == EOWNERDEAD) {
		if (d->intent.valid) {
			int slot = d->intent.slot;
			d->counter = d->intent.counter;
			d->done[slot] = d->intent.done;
			d->items = d->intent.items;
			d->posted = d->intent.posted;
			d->consumed = d->intent.consumed;
			d->intent.valid = 0;
			d->rollbacks++;
		}
		d->owner = 0;
		d->ownerdead++;
		int c = pthread_mutex_consistent(&s->m);
		if (c != 0)
			worker_fail("%s: EOWNERDEAD, then pthread_mutex_consistent: %s", what, strerror(c));
	} else if (r != 0) {
		worker_fail("%s: %s", what, strerror(r));
	} else if (d->owner != 0 || d->intent.valid) {
		worker_fail("%s returned 0, but process %d left its section unfinished (intent %s): a death while "
			    "holding went unreported",
			    what, (int)d->owner, d->intent.valid ? "valid" : "clear");
	}
	check_invariants(what);
	d->owner = me;
}

/* Before releasing the mutex (unlock or wait): nobody else got in. */
static void section_leave(const char *what)
{
	volatile struct data *d = &s->d;
	if (d->owner != me)
		worker_fail("%s: process %d is inside the section this process holds", what, (int)d->owner);
	d->owner = 0;
}

/* One committed update: an intent, the stores, the intent cleared.  A
 * pause between the stores widens the window a kill can land in. */
static void section_update(int slot, int item, struct rng *rng)
{
	volatile struct data *d = &s->d;
	d->intent.slot = slot;
	d->intent.counter = d->counter;
	d->intent.done = d->done[slot];
	d->intent.items = d->items;
	d->intent.posted = d->posted;
	d->intent.consumed = d->consumed;
	d->intent.valid = 1;
	d->counter = d->counter + 1;
	spin_ns(rng_below(rng, 3000));
	d->done[slot] = d->done[slot] + 1;
	if (item > 0) {
		d->items = d->items + 1;
		d->posted = d->posted + 1;
	} else if (item < 0) {
		d->items = d->items - 1;
		d->consumed = d->consumed + 1;
	}
	d->intent.valid = 0;
}

static void worker_lock(int slot)
{
	set_where(slot, LOCKING);
	int r = pthread_mutex_lock(&s->m);
	set_where(slot, HOLDING);
	section_enter(r, "pthread_mutex_lock");
}

static void worker_unlock(int slot)
{
	section_leave("unlock");
	set_where(slot, UNLOCKING);
	int r = pthread_mutex_unlock(&s->m);
	set_where(slot, OUTSIDE);
	if (r != 0)
		worker_fail("pthread_mutex_unlock: %s", strerror(r));
}

/* At the top of a worker's loop, outside the mutex: exit if told to
 * stop, wait while told to pause.  parked is cleared before pause is
 * read again (both seq_cst), so that the parent never sees a worker
 * parked that is on its way to the mutex. */
static void park_or_exit(int slot)
{
	for (;;) {
		if (atomic_load(&s->stop))
			_exit(0);
		if (!atomic_load(&s->pause))
			return;
		atomic_store(&s->parked[slot], 1);
		while (atomic_load(&s->pause) && !atomic_load(&s->stop)) {
			struct timespec t = { 0, 20000 };
			nanosleep(&t, NULL);
		}
		atomic_store(&s->parked[slot], 0);
	}
}

/* ---- mutex phases ---- */

static void __attribute__((noreturn)) mutex_worker(int slot, struct rng *rng)
{
	for (;;) {
		park_or_exit(slot);
		worker_lock(slot);
		int extra = 0;
		if (phase->type == PTHREAD_MUTEX_RECURSIVE) {
			extra = (int)rng_below(rng, 3);
			for (int i = 0; i < extra; i++) {
				int r = pthread_mutex_lock(&s->m);
				if (r != 0)
					worker_fail("recursive relock %d: %s", i + 1, strerror(r));
			}
		} else if (phase->type == PTHREAD_MUTEX_ERRORCHECK && rng_below(rng, 4) == 0) {
			int r = pthread_mutex_lock(&s->m);
			if (r != EDEADLK)
				worker_fail("errorcheck relock: %s, expected EDEADLK", strerror(r));
		}
		section_update(slot, 0, rng);
		for (int i = 0; i < extra; i++) {
			int r = pthread_mutex_unlock(&s->m);
			if (r != 0)
				worker_fail("recursive unlock %d: %s", i + 1, strerror(r));
		}
		worker_unlock(slot);
		atomic_fetch_add(&s->finished[slot], 1);
		spin_ns(rng_below(rng, 3000));
	}
}

/* ---- condition phases ---- */

/* Wait on c until the queue allows this worker's step (pred): true with
 * the mutex held and the section entered; false, with the mutex
 * released, if told to pause or stop meanwhile. */
static bool cond_wait_until(int slot, pthread_cond_t *c, bool (*pred)(void))
{
	while (!pred()) {
		if (atomic_load(&s->stop) || atomic_load(&s->pause)) {
			worker_unlock(slot);
			return false;
		}
		section_leave("cond wait");
		struct timespec dl = deadline_in_ns(CLOCK_MONOTONIC, COND_WAIT_MS * 1000000LL);
		set_where(slot, WAITING);
		int r = pthread_cond_timedwait(c, &s->m, &dl);
		set_where(slot, HOLDING);
		if (r == ETIMEDOUT) {
			struct timespec now;
			clock_gettime(CLOCK_MONOTONIC, &now);
			if (now.tv_sec < dl.tv_sec || (now.tv_sec == dl.tv_sec && now.tv_nsec < dl.tv_nsec))
				worker_fail("pthread_cond_timedwait: ETIMEDOUT before its deadline");
			atomic_fetch_add(&s->timeouts, 1);
			if (pred())
				atomic_fetch_add(&s->timeouts_ready, 1);
			r = 0;
		} else if (r == EOWNERDEAD) {
			atomic_fetch_add(&s->wait_ownerdead, 1);
		}
		section_enter(r, "pthread_cond_timedwait");
	}
	return true;
}

static bool has_space(void)
{
	return s->d.items < CAPACITY;
}

static bool has_item(void)
{
	return s->d.items > 0;
}

/* Slot 0 produces, the others consume; each signals the other side, at
 * random with the mutex held or after the unlock, and sometimes by
 * broadcast. */
static void __attribute__((noreturn)) cond_worker(int slot, struct rng *rng)
{
	bool producer = slot == 0;
	pthread_cond_t *mine = producer ? &s->space : &s->nonempty;
	pthread_cond_t *theirs = producer ? &s->nonempty : &s->space;
	for (;;) {
		park_or_exit(slot);
		worker_lock(slot);
		if (!cond_wait_until(slot, mine, producer ? has_space : has_item))
			continue;
		section_update(slot, producer ? 1 : -1, rng);
		bool held = rng_below(rng, 2) == 0, all = rng_below(rng, 4) == 0;
		if (held) {
			set_where(slot, SIGNALLING_HELD);
			all ? pthread_cond_broadcast(theirs) : pthread_cond_signal(theirs);
			set_where(slot, HOLDING);
		}
		worker_unlock(slot);
		if (!held) {
			set_where(slot, SIGNALLING_FREE);
			all ? pthread_cond_broadcast(theirs) : pthread_cond_signal(theirs);
			set_where(slot, OUTSIDE);
		}
		atomic_fetch_add(&s->finished[slot], 1);
		spin_ns(rng_below(rng, 3000));
	}
}

/* ---- the parent ---- */

static uint64_t forks; /* rng stream of each worker */

static void start_worker(int slot)
{
	atomic_store(&s->where[slot], OUTSIDE);
	atomic_store(&s->where_since[slot], now_ns(CLOCK_MONOTONIC));
	atomic_store(&s->started[slot], 0);
	atomic_store(&s->parked[slot], 0);
	uint64_t stream = ++forks;
	pid_t pid = fork();
	if (pid < 0)
		parent_fail("fork: %s", strerror(errno));
	if (pid == 0) {
		/* Never outlive a parent that failed. */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent_pid)
			_exit(1);
		me = getpid();
		struct rng rng;
		rng_seed(&rng, stream);
		atomic_store(&s->started[slot], 1);
		if (phase->cond)
			cond_worker(slot, &rng);
		mutex_worker(slot, &rng);
	}
	pids[slot] = pid;
}

/* Watchdog: the main thread bumps progress after every round; a round
 * that takes longer than ROUND_LIMIT_S, in wall time and on the run clock
 * (common.h: a machine too busy to run us is not a hang), is a hang. */
static _Atomic uint64_t progress;
static _Atomic int watchdog_stage; /* 0: kill round, 1: end of phase */

static void *watchdog_main(void *arg)
{
	(void)arg;
	uint64_t seen = atomic_load(&progress);
	struct moment since = stress_moment_now();
	for (;;) {
		struct timespec tick = { 0, 100 * 1000000L };
		nanosleep(&tick, NULL);
		uint64_t now = atomic_load(&progress);
		if (now != seen) {
			seen = now;
			since = stress_moment_now();
		} else if (stress_lasted(since, stress_moment_now(), ROUND_LIMIT_S * 1000)) {
			parent_fail("hang: %s did not finish within %d s",
				    atomic_load(&watchdog_stage) ? "stopping the workers" : "a kill round", ROUND_LIMIT_S);
		}
	}
	return NULL;
}

/* Until the worker runs its loop: started, and not parked any more. */
static void wait_started(int slot)
{
	while (!atomic_load(&s->started[slot]) || atomic_load(&s->parked[slot])) {
		check_workers_ok();
		struct timespec t = { 0, 20000 };
		nanosleep(&t, NULL);
	}
}

static bool aimed_at(int where)
{
	return phase->cond ? where != HOLDING && where != OUTSIDE : where == LOCKING || where == UNLOCKING;
}

/* Spin (at most until end) until the victim has been asleep in its lock
 * for a while and another worker's unlock has just returned: the unlock
 * may have woken the victim, which has not taken the word yet. */
static void aim_at_woken_waiter(int slot, int64_t end)
{
	for (;;) {
		if (now_ns(CLOCK_MONOTONIC) >= end)
			return;
		if (atomic_load(&s->where[slot]) != LOCKING ||
		    now_ns(CLOCK_MONOTONIC) - atomic_load(&s->where_since[slot]) < 30000)
			continue;
		for (int i = 0; i < NWORKERS; i++) {
			if (i == slot || atomic_load(&s->where[i]) != UNLOCKING)
				continue;
			while (atomic_load(&s->where[i]) == UNLOCKING && now_ns(CLOCK_MONOTONIC) < end)
				;
			return;
		}
	}
}

/* Let the victim run 0-2000 us: asleep, spinning, spinning until it is
 * inside a call the phase aims at (lock, unlock, wait, signal), or until
 * it may just have been woken in its lock. */
static void delay_before_kill(int slot, struct rng *rng)
{
	int64_t ns = rng_below(rng, 2001) * 1000LL;
	switch (rng_below(rng, 4)) {
	case 0: {
		struct timespec t = { 0, (long)ns };
		nanosleep(&t, NULL);
		break;
	}
	case 1:
		spin_ns(ns);
		break;
	case 2: {
		int64_t end = now_ns(CLOCK_MONOTONIC) + ns;
		while (!aimed_at(atomic_load_explicit(&s->where[slot], memory_order_relaxed)) && now_ns(CLOCK_MONOTONIC) < end)
			;
		break;
	}
	default:
		aim_at_woken_waiter(slot, now_ns(CLOCK_MONOTONIC) + ns);
	}
}

struct tally {
	uint64_t kills, held, by_where[NWHERE];
	uint64_t stuck; /* NPTL: workers found asleep on a lost wake-up, killed */
};

static bool nptl;

/* The parent takes the mutex (bounded), repairs and checks like a
 * worker, and returns how many EOWNERDEAD results were seen in all. */
static uint64_t parent_check(const char *when)
{
	struct timespec dl = deadline_in_ns(CLOCK_REALTIME, LOCK_LIMIT_S * 1000000000LL);
	int r = pthread_mutex_timedlock(&s->m, &dl);
	if (r == ETIMEDOUT)
		parent_fail("%s: pthread_mutex_timedlock timed out after %d s", when, LOCK_LIMIT_S);
	section_enter(r, when);
	uint64_t ownerdead = s->d.ownerdead;
	section_leave(when);
	r = pthread_mutex_unlock(&s->m);
	if (r != 0)
		parent_fail("%s: pthread_mutex_unlock: %s", when, strerror(r));
	return ownerdead;
}

/*
 * A worker that neither parks nor exits within QUIET_MS, while nobody
 * contends for the mutex, sleeps on a wake-up that was lost: a locker
 * woken by an unlock and killed before it took the word, while another
 * process took the word without the waiters bit, leaves the others
 * asleep on a free mutex until somebody else contends (which is why the
 * parent looks with every worker parked).  NPTL's robust mutexes (glibc
 * 2.36) do exactly that: the worker is killed and counted.  Under
 * rtpthread it fails the run.
 */
static void stuck_worker(int slot, struct tally *t, const char *doing)
{
	int where = atomic_load(&s->where[slot]);
	int64_t ms = (now_ns(CLOCK_MONOTONIC) - atomic_load(&s->where_since[slot])) / 1000000;
	if (!nptl)
		parent_fail("worker %d did not %s: %s for %lld ms, the mutex word 0x%x: asleep on a lost wake-up", slot,
			    doing, where_names[where], (long long)ms, (unsigned)s->m.__data.__lock);
	kill(pids[slot], SIGKILL);
	waitpid(pids[slot], NULL, 0);
	pids[slot] = 0;
	t->stuck++;
	t->kills++;
}

/* How long a worker may take to park or exit.  Under NPTL a stuck one
 * costs only an extra kill, so the wait is kept short. */
static int64_t quiet_ms(void)
{
	return nptl ? QUIET_MS_NPTL : QUIET_MS;
}

/* Wait until every running worker but skip has parked (pause set).
 * Returns how many were stuck (NPTL; killed, their slots empty). */
static int quiesce(struct tally *t, int skip)
{
	int stuck = 0;
	for (int i = 0; i < NWORKERS; i++) {
		if (i == skip || pids[i] == 0)
			continue;
		struct moment start = stress_moment_now();
		while (!atomic_load(&s->parked[i])) {
			check_workers_ok();
			if (stress_lasted(start, stress_moment_now(), (int)quiet_ms())) {
				stuck_worker(i, t, "park");
				stuck++;
				break;
			}
			struct timespec pause = { 0, 20000 };
			nanosleep(&pause, NULL);
		}
	}
	return stuck;
}

/*
 * One kill: the victim dies at a random moment, the others park (a
 * sleeper that cannot is stuck), a replacement starts, and the parent's
 * own lock counts the EOWNERDEAD results of this death.
 */
static void kill_round(struct tally *t, struct rng *rng, uint64_t *ownerdead)
{
	int slot = (int)rng_below(rng, NWORKERS);
	wait_started(slot);
	delay_before_kill(slot, rng);
	pid_t victim = pids[slot];
	kill(victim, SIGKILL);
	int status;
	if (waitpid(victim, &status, 0) != victim)
		parent_fail("waitpid: %s", strerror(errno));
	pids[slot] = 0;
	if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGKILL) {
		check_workers_ok();
		parent_fail("worker %d exited with status 0x%x before the kill", slot, status);
	}
	int where = atomic_load(&s->where[slot]);

	atomic_store(&s->pause, 1);
	if (phase->cond) {
		/* Waiters notice the pause without waiting for their deadline.
		 * Without the mutex: the parent must not contend for it. */
		pthread_cond_broadcast(&s->nonempty);
		pthread_cond_broadcast(&s->space);
	}
	int stuck = quiesce(t, slot);
	for (int i = 0; i < NWORKERS; i++)
		if (pids[i] == 0)
			start_worker(i);
	uint64_t now = parent_check("the parent's lock after a kill");
	atomic_store(&s->pause, 0);

	uint64_t delta = now - *ownerdead;
	*ownerdead = now;
	int expected = ownerdead_expected(where);
	if (!stuck && (delta > 1 || (expected >= 0 && delta != (uint64_t)expected)))
		parent_fail("a worker killed while %s: %llu EOWNERDEAD results, expected %s", where_names[where],
			    (unsigned long long)delta, expected ? "exactly 1" : "none");
	t->kills++;
	t->held += delta;
	t->by_where[where]++;
	check_workers_ok();
}

static void init_objects(void)
{
	memset(&s->d, 0, sizeof s->d);
	pthread_mutexattr_t ma;
	pthread_mutexattr_init(&ma);
	pthread_mutexattr_settype(&ma, phase->type);
	pthread_mutexattr_setprotocol(&ma, phase->protocol);
	pthread_mutexattr_setrobust(&ma, PTHREAD_MUTEX_ROBUST);
	pthread_mutexattr_setpshared(&ma, PTHREAD_PROCESS_SHARED);
	int r = pthread_mutex_init(&s->m, &ma);
	if (r != 0)
		parent_fail("pthread_mutex_init: %s", strerror(r));
	pthread_mutexattr_destroy(&ma);
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setpshared(&ca, PTHREAD_PROCESS_SHARED);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	if (pthread_cond_init(&s->nonempty, &ca) != 0 || pthread_cond_init(&s->space, &ca) != 0)
		parent_fail("pthread_cond_init failed");
	pthread_condattr_destroy(&ca);
	for (int i = 0; i < NWORKERS; i++)
		atomic_store(&s->finished[i], 0);
	atomic_store(&s->stop, 0);
	atomic_store(&s->pause, 0);
	for (int i = 0; i < NWORKERS; i++)
		atomic_store(&s->parked[i], 0);
	atomic_store(&s->timeouts, 0);
	atomic_store(&s->timeouts_ready, 0);
	atomic_store(&s->wait_ownerdead, 0);
}

/* Every worker is told to stop and must exit 0; then the books must
 * balance. */
static void finish_phase(struct tally *t)
{
	atomic_store(&watchdog_stage, 1);
	atomic_fetch_add(&progress, 1);
	atomic_store(&s->stop, 1);
	if (phase->cond) {
		pthread_cond_broadcast(&s->nonempty);
		pthread_cond_broadcast(&s->space);
	}
	uint64_t stuck_before = t->stuck;
	for (int i = 0; i < NWORKERS; i++) {
		struct moment start = stress_moment_now();
		int status;
		pid_t r;
		while ((r = waitpid(pids[i], &status, WNOHANG)) == 0 &&
		       !stress_lasted(start, stress_moment_now(), (int)quiet_ms())) {
			struct timespec pause = { 0, 100000 };
			nanosleep(&pause, NULL);
		}
		if (r < 0)
			parent_fail("waitpid: %s", strerror(errno));
		if (r == 0) {
			stuck_worker(i, t, "exit");
			continue;
		}
		pids[i] = 0;
		if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
			check_workers_ok();
			parent_fail("worker %d did not stop cleanly: status 0x%x", i, status);
		}
	}
	/* Everybody stopped cleanly: the mutex is free and consistent. */
	if (t->stuck == stuck_before) {
		int r = pthread_mutex_trylock(&s->m);
		if (r != 0)
			parent_fail("after every worker stopped, trylock: %s", strerror(r));
		r = pthread_mutex_unlock(&s->m);
		if (r != 0)
			parent_fail("unlock: %s", strerror(r));
	}
	parent_check("the final check");
	uint64_t finished = 0;
	for (int i = 0; i < NWORKERS; i++)
		finished += atomic_load(&s->finished[i]);
	if (finished > s->d.counter || s->d.counter - finished > t->kills)
		parent_fail("workers saw %llu sections through to the unlock, the counter says %llu, after %llu kills",
			    (unsigned long long)finished, (unsigned long long)s->d.counter,
			    (unsigned long long)t->kills);
	int r = pthread_mutex_destroy(&s->m);
	if (r != 0)
		parent_fail("pthread_mutex_destroy: %s", strerror(r));
	/* The conditions are not destroyed: a waiter killed inside a wait
	 * stays counted in the condition for ever (here as in NPTL, whose
	 * destroy then blocks), and POSIX gives no way to take it out.  The
	 * next phase initializes them again, with no process using them. */
	atomic_store(&watchdog_stage, 0);
	atomic_fetch_add(&progress, 1);
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	stress_start("stress_kill", 8);
	stress_start_run_clock();
	nptl = strcmp(stress_library(), "NPTL") == 0;
	s = mmap(NULL, sizeof *s, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (s == MAP_FAILED)
		stress_fail("mmap: %s", strerror(errno));
	me = parent_pid = getpid();
	pthread_t wd;
	if (pthread_create(&wd, NULL, watchdog_main, NULL) != 0)
		stress_fail("pthread_create failed");

	struct rng rng;
	rng_seed(&rng, 0);
	struct tally all = { 0 };
	uint64_t timeouts = 0;
	int64_t start = now_ns(CLOCK_MONOTONIC);
	for (int p = 0; p < NPHASES; p++) {
		phase = &phases[p];
		if (phase->cond && nptl) {
			/* NPTL (glibc 2.36) hangs here: a process killed in a
			 * signal, broadcast or timed-out wait while it holds
			 * the condition's internal lock (low bits of
			 * __g1_orig_size) leaves it locked, and every later
			 * signal, broadcast and timed-out waiter blocks on it
			 * for ever, the signaller with the mutex held. */
			printf("%s: not run under NPTL (a waiter or signaller killed inside the condition leaves its "
			       "internal lock held)\n",
			       phase->name);
			continue;
		}
		init_objects();
		for (int i = 0; i < NWORKERS; i++)
			start_worker(i);
		int64_t phase_start = now_ns(CLOCK_MONOTONIC);
		int64_t phase_ns = (int64_t)(stress_duration() * 1e9 / NPHASES);
		struct tally t = { 0 };
		uint64_t ownerdead = 0;
		while (t.kills < (uint64_t)phase->min_kills || now_ns(CLOCK_MONOTONIC) - phase_start < phase_ns) {
			kill_round(&t, &rng, &ownerdead);
			atomic_fetch_add(&progress, 1);
		}
		finish_phase(&t);
		printf("%s: %llu kills, %llu while holding (rollbacks %llu); died ", phase->name,
		       (unsigned long long)t.kills, (unsigned long long)t.held, (unsigned long long)s->d.rollbacks);
		const char *sep = "";
		for (int w = 0; w < NWHERE; w++)
			if (t.by_where[w]) {
				printf("%s%s %llu", sep, where_names[w], (unsigned long long)t.by_where[w]);
				sep = ", ";
			}
		if (phase->cond)
			printf("; %llu waits timed out (%llu with the predicate true), %llu returned EOWNERDEAD",
			       (unsigned long long)atomic_load(&s->timeouts),
			       (unsigned long long)atomic_load(&s->timeouts_ready),
			       (unsigned long long)atomic_load(&s->wait_ownerdead));
		if (t.stuck)
			printf("; %llu found asleep on a lost wake-up and killed", (unsigned long long)t.stuck);
		printf("; %llu sections\n", (unsigned long long)s->d.counter);
		all.kills += t.kills;
		all.held += t.held;
		all.stuck += t.stuck;
		for (int w = 0; w < NWHERE; w++)
			all.by_where[w] += t.by_where[w];
		timeouts += atomic_load(&s->timeouts);
	}
	printf("stress_kill: %llu kills (%llu while holding, %llu while waiting, %llu while signalling, %llu inside "
	       "lock or unlock), 0 inconsistencies, %llu timed-out waits",
	       (unsigned long long)all.kills, (unsigned long long)all.held, (unsigned long long)all.by_where[WAITING],
	       (unsigned long long)(all.by_where[SIGNALLING_HELD] + all.by_where[SIGNALLING_FREE]),
	       (unsigned long long)(all.by_where[LOCKING] + all.by_where[UNLOCKING]), (unsigned long long)timeouts);
	if (all.stuck)
		printf(", %llu workers asleep on a lost wake-up (NPTL)", (unsigned long long)all.stuck);
	printf(", %.1f s\n", (double)(now_ns(CLOCK_MONOTONIC) - start) / 1e9);
	return 0;
}
