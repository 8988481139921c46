/*
 * Mutex torture: every kind of mutex at once, locked at random by threads
 * at mixed priorities, with every step checked.
 *
 * Kinds: NORMAL, RECURSIVE, ERRORCHECK, ADAPTIVE_NP x PRIO_NONE, INHERIT,
 * PROTECT (ceilings 42-50) x robust or not x private or process-shared
 * (the shared ones in a MAP_SHARED mapping): 48, plus glibc's four static
 * initializers and C11 mtx_t (plain, timed, recursive, timed|recursive).
 *
 * Threads: NTHREADS workers, some SCHED_OTHER and some SCHED_FIFO 5-40.
 * Each picks a kind and an operation at random: lock, trylock,
 * timedlock (CLOCK_REALTIME), clocklock on either clock (deadlines
 * 0-500 us away, or already past), or an unlock of a mutex it does not
 * hold.  Three picks in four go to the HOT_KINDS kinds of the moment,
 * which move on every HOT_MS, so that the threads meet on the same
 * mutexes; critical sections are short, a few sleep, so that waiters
 * pile up.  One in eight takes a second mutex inside, always of a higher
 * kind index (one lock order for everybody: no deadlock), and releases
 * the two in either order.  SCHED_FIFO workers sleep after every
 * operation so that the SCHED_OTHER ones get the CPUs too (2 cores).
 *
 * Checked at every step:
 *   exclusion    the locker swaps its TID into the kind's owner field
 *                and must find 0, bumps an occupancy count that must have
 *                been 0, and finds its TID still there before unlocking;
 *                a plain counter incremented inside must equal the sum of
 *                every worker's sections of that kind at the end.
 *   results      lock 0; trylock 0 or EBUSY; timed 0 or ETIMEDOUT.
 *   owner        RECURSIVE relocks (any operation) return 0 and unlock
 *                that many times; ERRORCHECK relocks return EDEADLK
 *                (trylock EBUSY); NORMAL/ADAPTIVE owner trylock EBUSY.
 *   non-owner    unlock returns EPERM for every kind that checks the
 *                owner (RECURSIVE, ERRORCHECK, robust, PI; PP too in
 *                rtpthread) and leaves the mutex alone.
 *   priority     a thread runs at its own priority raised to the
 *                ceilings of the PP mutexes it holds, also after changing
 *                its own priority there with pthread_setschedprio, and
 *                after releasing either of two (effective priority from
 *                /proc/self/task/TID/stat; at least that with a PI mutex
 *                among them).
 *   end          every mutex unlocked, trylock + unlock by the main
 *                thread 0, destroy 0.
 *   hang         a worker whose progress count stands still for STUCK_MS
 *                (in wall time and on the run clock, see the watchdog)
 *                fails the run, naming the stuck workers, their
 *                operation, kind and kernel state.
 *
 * Before the random phase, a PI phase: for every PI kind, a low-priority
 * owner must be boosted to the priority of a SCHED_FIFO waiter blocked on
 * it (directly and through a chain of two PI mutexes), and drop back on
 * unlock.
 *
 * Where NPTL legitimately differs, the check follows stress_library():
 *   - NPTL refuses robust + PP at init (ENOTSUP): those kinds run only
 *     under rtpthread.
 *   - NPTL refuses a PP lock from a SCHED_OTHER thread (EINVAL): under
 *     NPTL only SCHED_FIFO workers take PP mutexes.
 *   - Owner trylock of ERRORCHECK: rtpthread EBUSY for every protocol;
 *     NPTL EDEADLK for PI, PP and robust ones.  Owner trylock of a
 *     NORMAL PP mutex: NPTL EAGAIN.
 *   - Non-owner unlock of a NORMAL/ADAPTIVE PP mutex: rtpthread EPERM,
 *     NPTL releases it: only tried under rtpthread.
 *   - NPTL leaves a PP ceiling raised after a failed PP lock (an owner's
 *     trylock, a timeout), so its priorities depend on the past: they
 *     are checked only under rtpthread.
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
	NTHREADS = 8,
	/* PP ceilings, spread over the kinds: above every worker (POSIX
	 * refuses a locker above the ceiling), and different so that a
	 * thread holding two runs at the higher one. */
	CEILING_MIN = 42,
	CEILING_MAX = 50,
	MAIN_PRIO = 41,	  /* the watchdog: above the workers, not above a ceiling */
	STUCK_MS = 5000,
	HOT_KINDS = 2, /* kinds most operations go to at any moment */
	HOT_MS = 20,   /* how long they stay hot */
	MAX_KINDS = 64,
};

#define MS 1000000LL

/* Workers' priorities; 0 is SCHED_OTHER. */
static const int worker_prio[NTHREADS] = { 0, 0, 0, 5, 10, 20, 30, 40 };

static bool fifo;      /* SCHED_FIFO allowed */
static bool rtpthread; /* the library under test is loaded */

/* ---- kinds ---- */

/* One mutex and what it protects. */
struct slot {
	pthread_mutex_t pm_storage;
	pthread_mutex_t *pm; /* pm_storage, or a static object */
	mtx_t cm;
	/* The mutex under test orders these; relaxed is enough for the
	 * checks because they rely only on each field's single modification
	 * order: two threads inside at once find each other's values. */
	_Atomic pid_t owner;
	_Atomic int inside;
	unsigned long sections; /* plain: protected by the mutex */
};

static struct mutex_kind kinds[MAX_KINDS];
static struct slot *slots[MAX_KINDS];
static int nkinds;

static pthread_mutex_t static_mutexes[4] = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP,
					     PTHREAD_ERRORCHECK_MUTEX_INITIALIZER_NP,
					     PTHREAD_ADAPTIVE_MUTEX_INITIALIZER_NP };

/* A PP kind's ceiling: spread over the kinds. */
static int ceiling_of(const struct mutex_kind *k)
{
	return CEILING_MIN + (int)(k - kinds) % (CEILING_MAX - CEILING_MIN + 1);
}

static void make_mutex(const struct mutex_kind *k, struct slot *s)
{
	int r = 0;
	s->pm = &s->pm_storage;
	switch (k->api) {
	case API_ATTR:
		r = stress_mutex_init(s->pm, k, ceiling_of(k));
		break;
	case API_STATIC:
		s->pm = &static_mutexes[k->initializer];
		break;
	case API_C11:
		r = mtx_init(&s->cm, k->c11) == thrd_success ? 0 : EINVAL;
		break;
	}
	if (r != 0)
		stress_fail("%s: init: %s", k->name, strerror(r));
}

/* Builds every kind; pshared ones in shared memory. */
static void make_kinds(void)
{
	nkinds = stress_mutex_kinds(kinds, MAX_KINDS, fifo, rtpthread);
	struct slot *shared =
	    mmap(NULL, MAX_KINDS * sizeof *shared, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	static struct slot private[MAX_KINDS];
	if (shared == MAP_FAILED)
		stress_fail("mmap: %s", strerror(errno));
	for (int i = 0; i < nkinds; i++) {
		slots[i] = kinds[i].pshared ? &shared[i] : &private[i];
		make_mutex(&kinds[i], slots[i]);
	}
}

/* ---- operations ---- */

enum op {
	OP_LOCK,
	OP_TRYLOCK,
	OP_TIMEDLOCK,  /* pthread_mutex_timedlock / mtx_timedlock: CLOCK_REALTIME */
	OP_CLOCK_MONO, /* pthread_mutex_clocklock(CLOCK_MONOTONIC) */
	OP_CLOCK_REAL, /* pthread_mutex_clocklock(CLOCK_REALTIME) */
	NLOCKOPS,
	OP_UNLOCK = NLOCKOPS,
	OP_FOREIGN_UNLOCK,
	OP_SECTION,
	OP_PACE,
	NOPS
};

static const char *const op_names[NOPS] = {
	"lock",	  "trylock",	      "timedlock",	  "clocklock(MONOTONIC)",    "clocklock(REALTIME)",
	"unlock", "non-owner unlock", "critical section", "sleep between operations"
};

/* A deadline 0-500 us away, one in eight already past. */
static struct timespec random_deadline(struct rng *rng, clockid_t clock)
{
	int64_t ns = rng_below(rng, 8) == 0 ? -MS : (int64_t)rng_below(rng, 500001);
	return deadline_in_ns(clock, ns);
}

/* A C11 mutex without mtx_timed has no timed lock: plain lock instead. */
static enum op effective_op(const struct mutex_kind *k, enum op op)
{
	if (k->api == API_C11 && op >= OP_TIMEDLOCK)
		return (k->c11 & mtx_timed) ? OP_TIMEDLOCK : OP_LOCK;
	return op;
}

static int do_lock(const struct mutex_kind *k, struct slot *s, enum op op, struct rng *rng)
{
	struct timespec dl;
	if (k->api == API_C11) {
		switch (op) {
		case OP_TRYLOCK:
			return stress_from_c11(mtx_trylock(&s->cm));
		case OP_TIMEDLOCK:
			dl = random_deadline(rng, CLOCK_REALTIME);
			return stress_from_c11(mtx_timedlock(&s->cm, &dl));
		default:
			return stress_from_c11(mtx_lock(&s->cm));
		}
	}
	switch (op) {
	case OP_TRYLOCK:
		return pthread_mutex_trylock(s->pm);
	case OP_TIMEDLOCK:
		dl = random_deadline(rng, CLOCK_REALTIME);
		return pthread_mutex_timedlock(s->pm, &dl);
	case OP_CLOCK_MONO:
		dl = random_deadline(rng, CLOCK_MONOTONIC);
		return pthread_mutex_clocklock(s->pm, CLOCK_MONOTONIC, &dl);
	case OP_CLOCK_REAL:
		dl = random_deadline(rng, CLOCK_REALTIME);
		return pthread_mutex_clocklock(s->pm, CLOCK_REALTIME, &dl);
	default:
		return pthread_mutex_lock(s->pm);
	}
}

static int do_unlock(const struct mutex_kind *k, struct slot *s)
{
	return k->api == API_C11 ? stress_from_c11(mtx_unlock(&s->cm)) : pthread_mutex_unlock(s->pm);
}

/* ---- /proc ---- */

static int stat_prio_of(int fifo_prio)
{
	return fifo_prio > 0 ? -1 - fifo_prio : 20;
}

static int own_stat_prio(void)
{
	int prio = 0;
	if (!stress_task_stat(gettid(), NULL, &prio))
		stress_fail("cannot read /proc/self/task/%d/stat", (int)gettid());
	return prio;
}

/* ---- workers ---- */

struct worker {
	int index;
	_Atomic int prio; /* its own priority: changed only by the worker */
	pthread_t thread;
	struct rng rng;
	_Atomic pid_t tid;
	/* For the watchdog (relaxed: it only needs to see them change). */
	_Atomic uint64_t progress;
	_Atomic int op, kind;
	_Atomic bool done;
	/* The worker's own; read by main after joining it. */
	unsigned long per_kind[MAX_KINDS];
	unsigned long sections, nested, busy, timeouts, relocks, owner_checks, foreign_checks, prio_checks, reprios;
};

static struct worker workers[NTHREADS];

/* The first hot kind; the watchdog moves it on every HOT_MS, so that
 * threads meet on the same mutexes and every kind gets its turn. */
static _Atomic int hot;

static int pick_kind(struct rng *rng)
{
	if (rng_below(rng, 4) == 0)
		return (int)rng_below(rng, (uint32_t)nkinds);
	int first = atomic_load_explicit(&hot, memory_order_relaxed);
	return (first + (int)rng_below(rng, HOT_KINDS)) % nkinds;
}

static int base_prio(struct worker *w)
{
	return atomic_load_explicit(&w->prio, memory_order_relaxed);
}

static pid_t tid_of(struct worker *w)
{
	return atomic_load_explicit(&w->tid, memory_order_relaxed);
}

static void set_state(struct worker *w, enum op op, int kind)
{
	atomic_store_explicit(&w->op, op, memory_order_relaxed);
	atomic_store_explicit(&w->kind, kind, memory_order_relaxed);
}

static void enter(struct worker *w, int ki)
{
	struct slot *s = slots[ki];
	pid_t prev = atomic_exchange_explicit(&s->owner, tid_of(w), memory_order_relaxed);
	if (prev != 0)
		stress_fail("%s: w%d (tid %d) locked it while tid %d was inside", kinds[ki].name, w->index,
			    (int)tid_of(w), (int)prev);
	int in = atomic_fetch_add_explicit(&s->inside, 1, memory_order_relaxed);
	if (in != 0)
		stress_fail("%s: w%d entered with %d thread(s) inside", kinds[ki].name, w->index, in);
	s->sections++;
	w->per_kind[ki]++;
	w->sections++;
}

static void check_owner(struct worker *w, int ki, const char *when)
{
	pid_t o = atomic_load_explicit(&slots[ki]->owner, memory_order_relaxed);
	int in = atomic_load_explicit(&slots[ki]->inside, memory_order_relaxed);
	if (o != tid_of(w) || in != 1)
		stress_fail("%s: %s, w%d (tid %d) finds owner %d and %d inside", kinds[ki].name, when, w->index,
			    (int)tid_of(w), (int)o, in);
}

static void leave(struct worker *w, int ki)
{
	struct slot *s = slots[ki];
	check_owner(w, ki, "before unlock");
	atomic_fetch_sub_explicit(&s->inside, 1, memory_order_relaxed);
	atomic_store_explicit(&s->owner, 0, memory_order_relaxed);
}

/* Relocks by the owner: what each type promises. */
static void owner_relocks(struct worker *w, int ki)
{
	const struct mutex_kind *k = &kinds[ki];
	struct slot *s = slots[ki];
	if (k->type == PTHREAD_MUTEX_RECURSIVE) {
		unsigned depth = 1 + rng_below(&w->rng, 3);
		for (unsigned i = 0; i < depth; i++) {
			enum op op = effective_op(k, (enum op)rng_below(&w->rng, NLOCKOPS));
			int r = do_lock(k, s, op, &w->rng);
			if (r != 0)
				stress_fail("%s: owner's %s at depth %u returned %s", k->name, op_names[op], i + 1,
					    strerror(r));
			w->relocks++;
		}
		for (unsigned i = 0; i < depth; i++) {
			int r = do_unlock(k, s);
			if (r != 0)
				stress_fail("%s: inner unlock returned %s", k->name, strerror(r));
			check_owner(w, ki, "after an inner unlock");
		}
		return;
	}
	if (k->type == PTHREAD_MUTEX_ERRORCHECK) {
		enum op op = effective_op(k, (enum op)rng_below(&w->rng, NLOCKOPS));
		int r = do_lock(k, s, op, &w->rng);
		bool ok = op == OP_TRYLOCK ? r == EBUSY || (!rtpthread && r == EDEADLK) : r == EDEADLK;
		if (!ok)
			stress_fail("%s: owner's %s returned %s", k->name, op_names[op], strerror(r));
		w->owner_checks++;
		return;
	}
	/* NORMAL and ADAPTIVE: a relock deadlocks, but a trylock says busy. */
	int r = do_lock(k, s, OP_TRYLOCK, &w->rng);
	bool ok = r == EBUSY ||
		  (!rtpthread && r == EAGAIN && k->protocol == PTHREAD_PRIO_PROTECT && k->type == PTHREAD_MUTEX_NORMAL);
	if (!ok)
		stress_fail("%s: owner's trylock returned %s", k->name, strerror(r));
	w->owner_checks++;
}

/* May w lock kind ki at all?  NPTL refuses PP to SCHED_OTHER callers. */
static bool may_lock(struct worker *w, int ki)
{
	return !(kinds[ki].protocol == PTHREAD_PRIO_PROTECT && base_prio(w) == 0 && !rtpthread);
}

/* The result of a lock operation that is not a relock: true if w got the
 * mutex; a busy trylock or a timeout is counted; anything else fails. */
static bool got_lock(struct worker *w, int ki, enum op op, int r)
{
	if (r == 0)
		return true;
	if (r == EBUSY && op == OP_TRYLOCK)
		w->busy++;
	else if (r == ETIMEDOUT && op >= OP_TIMEDLOCK)
		w->timeouts++;
	else
		stress_fail("%s: %s by w%d returned %s", kinds[ki].name, op_names[op], w->index, strerror(r));
	return false;
}

static bool any_pp(const int *held, int n)
{
	for (int i = 0; i < n; i++)
		if (kinds[held[i]].protocol == PTHREAD_PRIO_PROTECT)
			return true;
	return false;
}

/*
 * Holding the mutexes held[0..n), w must run at its own priority raised to
 * each PP ceiling among them: exactly that, unless one is PI (a waiter may
 * boost it further).  Only under rtpthread: NPTL leaves a ceiling raised
 * after a failed PP lock, so its priority depends on the past.
 */
static void check_priority(struct worker *w, const int *held, int n)
{
	if (!rtpthread)
		return;
	int want = stat_prio_of(base_prio(w));
	bool exact = true;
	for (int i = 0; i < n; i++) {
		const struct mutex_kind *k = &kinds[held[i]];
		if (k->protocol == PTHREAD_PRIO_PROTECT && stat_prio_of(ceiling_of(k)) < want)
			want = stat_prio_of(ceiling_of(k));
		exact &= k->protocol != PTHREAD_PRIO_INHERIT;
	}
	int got = own_stat_prio();
	if (exact ? got != want : got > want)
		stress_fail("w%d (priority %d) holding %s%s%s has stat priority %d, expected %s%d", w->index,
			    base_prio(w), n > 0 ? kinds[held[0]].name : "nothing", n > 1 ? " and " : "",
			    n > 1 ? kinds[held[1]].name : "", got, exact ? "" : "at most ", want);
	w->prio_checks++;
}

/* A SCHED_FIFO worker holding a PP mutex changes its own priority: the
 * ceilings stay in force until the unlocks, which restore the new one. */
static void change_priority(struct worker *w, const int *held, int n)
{
	int prio = 5 + 5 * (int)rng_below(&w->rng, 8); /* 5..40, below every ceiling */
	int r = pthread_setschedprio(pthread_self(), prio);
	if (r != 0)
		stress_fail("%s: pthread_setschedprio(%d) while holding it returned %s", kinds[held[0]].name, prio,
			    strerror(r));
	atomic_store_explicit(&w->prio, prio, memory_order_relaxed);
	w->reprios++;
	check_priority(w, held, n);
}

/* A second mutex while w holds first: one of a higher index, so that every
 * thread locks in the same order and none deadlocks.  Returns its index,
 * or -1 if none was taken. */
static int lock_second(struct worker *w, int first)
{
	if (first + 1 >= nkinds)
		return -1;
	int kj = first + 1 + (int)rng_below(&w->rng, (uint32_t)(nkinds - first - 1));
	if (!may_lock(w, kj))
		return -1;
	enum op op = effective_op(&kinds[kj], (enum op)rng_below(&w->rng, NLOCKOPS));
	set_state(w, op, kj);
	if (!got_lock(w, kj, op, do_lock(&kinds[kj], slots[kj], op, &w->rng)))
		return -1;
	enter(w, kj);
	w->nested++;
	return kj;
}

static void release(struct worker *w, int ki)
{
	leave(w, ki);
	set_state(w, OP_UNLOCK, ki);
	int r = do_unlock(&kinds[ki], slots[ki]);
	if (r != 0)
		stress_fail("%s: unlock by the owner returned %s", kinds[ki].name, strerror(r));
}

/* w has just locked ki. */
static void critical_section(struct worker *w, int ki)
{
	int held[2] = { ki, -1 }, n = 1;
	enter(w, ki);
	set_state(w, OP_SECTION, ki);
	if (rng_below(&w->rng, 4) == 0)
		owner_relocks(w, ki);
	if (rng_below(&w->rng, 8) == 0 && (held[1] = lock_second(w, ki)) >= 0)
		n = 2;
	bool pp = any_pp(held, n);
	if (pp && base_prio(w) > 0 && rng_below(&w->rng, 16) == 0)
		change_priority(w, held, n);
	if (pp && rng_below(&w->rng, 8) == 0)
		check_priority(w, held, n);
	for (unsigned i = rng_below(&w->rng, 1000); i > 0; i--)
		__asm__ volatile("" ::: "memory");
	if (rng_below(&w->rng, 64) == 0)
		nap_us(20 + rng_below(&w->rng, 200)); /* let waiters pile up */

	/* Release in either order: PP raises and robust-list links must come
	 * undone in any order. */
	if (n == 2 && rng_below(&w->rng, 2)) {
		held[0] = held[1];
		held[1] = ki;
	}
	while (n > 0) {
		release(w, held[0]);
		held[0] = held[1];
		n--;
		if (pp && rng_below(&w->rng, 4) == 0)
			check_priority(w, held, n);
	}
}

static void foreign_unlock(struct worker *w, int ki)
{
	const struct mutex_kind *k = &kinds[ki];
	if (!stress_checks_owner(k, rtpthread))
		return;
	set_state(w, OP_FOREIGN_UNLOCK, ki);
	int r = do_unlock(k, slots[ki]);
	if (r != EPERM)
		stress_fail("%s: unlock by w%d, which does not hold it, returned %s", k->name, w->index,
			    r ? strerror(r) : "0");
	w->foreign_checks++;
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	stress_set_priority(base_prio(w));
	atomic_store_explicit(&w->tid, gettid(), memory_order_relaxed);
	while (stress_running()) {
		int ki = pick_kind(&w->rng);
		const struct mutex_kind *k = &kinds[ki];
		if (!may_lock(w, ki))
			continue;
		if (rng_below(&w->rng, 20) == 0) {
			foreign_unlock(w, ki);
		} else {
			enum op op = effective_op(k, (enum op)rng_below(&w->rng, NLOCKOPS));
			set_state(w, op, ki);
			if (got_lock(w, ki, op, do_lock(k, slots[ki], op, &w->rng)))
				critical_section(w, ki);
		}
		atomic_fetch_add_explicit(&w->progress, 1, memory_order_relaxed);
		set_state(w, OP_PACE, ki);
		if (base_prio(w) > 0)
			nap_us(rng_below(&w->rng, 100)); /* SCHED_FIFO: leave CPU time to the others */
		else if (rng_below(&w->rng, 8) == 0)
			sched_yield();
	}
	atomic_store_explicit(&w->done, true, memory_order_release);
	return NULL;
}

/* ---- watchdog ---- */

static void describe_stuck(const struct moment *since, struct moment now, int stuck)
{
	printf("FAIL: w%d made no progress for %d ms (%lld ms on the run clock):\n", stuck, STUCK_MS,
	       (long long)((now.run_ns - since[stuck].run_ns) / MS));
	for (int i = 0; i < NTHREADS; i++) {
		struct worker *w = &workers[i];
		pid_t tid = tid_of(w);
		int ki = atomic_load_explicit(&w->kind, memory_order_relaxed);
		int op = atomic_load_explicit(&w->op, memory_order_relaxed);
		pid_t owner = atomic_load_explicit(&slots[ki]->owner, memory_order_relaxed);
		int owner_index = -1;
		for (int j = 0; j < NTHREADS; j++)
			if (owner != 0 && tid_of(&workers[j]) == owner)
				owner_index = j;
		char label[32];
		snprintf(label, sizeof label, "w%d", i);
		printf("  w%d %s %d: %s, no progress for %lld ms, in %s on %s (owner field: tid %d = w%d)\n", i,
		       base_prio(w) ? "FIFO" : "OTHER", base_prio(w),
		       atomic_load_explicit(&w->done, memory_order_relaxed) ? "finished" : "running",
		       (long long)((now.wall_ns - since[i].wall_ns) / MS), op_names[op], kinds[ki].name, (int)owner,
		       owner_index);
		stress_print_task(label, tid);
	}
	stress_fail("hang");
}

/* Returns once every worker has finished; fails on a worker stuck for
 * STUCK_MS. */
static void watch(void)
{
	uint64_t last[NTHREADS];
	struct moment since[NTHREADS], now = stress_moment_now();
	for (int i = 0; i < NTHREADS; i++) {
		last[i] = UINT64_MAX;
		since[i] = now;
	}
	for (;;) {
		nap_us(HOT_MS * 1000);
		atomic_store_explicit(&hot, (atomic_load_explicit(&hot, memory_order_relaxed) + 1) % nkinds,
				      memory_order_relaxed);
		now = stress_moment_now();
		bool all_done = true;
		int stuck = -1;
		for (int i = 0; i < NTHREADS; i++) {
			struct worker *w = &workers[i];
			if (atomic_load_explicit(&w->done, memory_order_acquire))
				continue;
			all_done = false;
			uint64_t p = atomic_load_explicit(&w->progress, memory_order_relaxed);
			if (p != last[i]) {
				last[i] = p;
				since[i] = now;
			} else if (stress_lasted(since[i], now, STUCK_MS)) {
				stuck = i;
			}
		}
		if (stuck >= 0)
			describe_stuck(since, now, stuck);
		if (all_done)
			return;
	}
}

/* ---- the PI phase ---- */

/*
 * The owner (low priority) locks a.  Without a chain the waiter (high)
 * blocks on a; with one, the blocker (middle) locks b and blocks on a, and
 * the waiter blocks on b.  Either way the owner must be boosted to the
 * waiter's priority while the waiter is blocked (through the blocker,
 * transitively), and be back at its own right after unlocking.
 */
struct boost {
	pthread_mutex_t *a, *b;
	int owner_prio, waiter_prio;
	_Atomic int stage; /* 1: a held; 2: b held by the blocker */
	int boosted_to, after_unlock, waiter_result, blocker_result;
};

enum { BLOCKER_PRIO = 10, WAITER_PRIO = 30 };

static void *boost_owner(void *arg)
{
	struct boost *b = arg;
	stress_set_priority(b->owner_prio);
	int r = pthread_mutex_lock(b->a);
	if (r != 0)
		stress_fail("PI phase: owner's lock returned %s", strerror(r));
	atomic_store_explicit(&b->stage, 1, memory_order_release);
	/* The boost happens when the waiter (or the blocker it waits for)
	 * blocks in the kernel: poll for up to 2 s. */
	int want = stat_prio_of(b->waiter_prio);
	struct moment start = stress_moment_now();
	for (;;) {
		b->boosted_to = own_stat_prio();
		if (b->boosted_to == want || stress_lasted(start, stress_moment_now(), 2000))
			break;
		nap_us(200);
	}
	r = pthread_mutex_unlock(b->a);
	if (r != 0)
		stress_fail("PI phase: owner's unlock returned %s", strerror(r));
	b->after_unlock = own_stat_prio();
	return NULL;
}

static void *boost_blocker(void *arg)
{
	struct boost *b = arg;
	stress_set_priority(BLOCKER_PRIO);
	while (atomic_load_explicit(&b->stage, memory_order_acquire) < 1)
		nap_us(100);
	int r = pthread_mutex_lock(b->b);
	if (r != 0)
		stress_fail("PI phase: blocker's lock of b returned %s", strerror(r));
	atomic_store_explicit(&b->stage, 2, memory_order_release);
	b->blocker_result = pthread_mutex_lock(b->a);
	if (b->blocker_result == 0)
		pthread_mutex_unlock(b->a);
	pthread_mutex_unlock(b->b);
	return NULL;
}

static void *boost_waiter(void *arg)
{
	struct boost *b = arg;
	stress_set_priority(b->waiter_prio);
	while (atomic_load_explicit(&b->stage, memory_order_acquire) < (b->b ? 2 : 1))
		nap_us(100);
	pthread_mutex_t *m = b->b ? b->b : b->a;
	b->waiter_result = pthread_mutex_lock(m);
	if (b->waiter_result == 0)
		pthread_mutex_unlock(m);
	return NULL;
}

static void join_within(pthread_t t, const char *what, const char *kind)
{
	struct moment start = stress_moment_now();
	for (;;) {
		struct timespec dl = deadline_in_ns(CLOCK_REALTIME, 100 * MS);
		int r = pthread_timedjoin_np(t, NULL, &dl);
		if (r == 0)
			return;
		if (r != ETIMEDOUT)
			stress_fail("PI phase, %s: joining the %s: %s", kind, what, strerror(r));
		if (stress_lasted(start, stress_moment_now(), 5000))
			stress_fail("PI phase, %s: the %s did not finish within 5 s", kind, what);
	}
}

static void boost_check(int ki, pthread_mutex_t *chain, int owner_prio)
{
	const struct mutex_kind *k = &kinds[ki];
	struct boost b = { .a = slots[ki]->pm, .b = chain, .owner_prio = owner_prio, .waiter_prio = WAITER_PRIO };
	pthread_t owner, blocker, waiter;
	if (pthread_create(&owner, NULL, boost_owner, &b) || pthread_create(&waiter, NULL, boost_waiter, &b) ||
	    (chain && pthread_create(&blocker, NULL, boost_blocker, &b)))
		stress_fail("pthread_create failed");
	join_within(owner, "owner", k->name);
	join_within(waiter, "waiter", k->name);
	if (chain)
		join_within(blocker, "blocker", k->name);
	const char *how = chain ? " through a chain" : "";
	if (b.boosted_to != stat_prio_of(WAITER_PRIO))
		stress_fail("PI phase, %s: owner (priority %d) stayed at stat priority %d with a FIFO %d waiter "
			    "blocked%s; expected %d",
			    k->name, owner_prio, b.boosted_to, WAITER_PRIO, how, stat_prio_of(WAITER_PRIO));
	if (b.after_unlock != stat_prio_of(owner_prio))
		stress_fail("PI phase, %s: owner at stat priority %d after unlock%s, expected %d", k->name,
			    b.after_unlock, how, stat_prio_of(owner_prio));
	if (b.waiter_result != 0 || (chain && b.blocker_result != 0))
		stress_fail("PI phase, %s: waiter's lock returned %s, blocker's %s", k->name, strerror(b.waiter_result),
			    strerror(b.blocker_result));
}

/* Every PI kind, its owner alternately SCHED_OTHER and FIFO 5; then each
 * through a chain via a private PI mutex.  Returns the checks made. */
static int pi_phase(void)
{
	pthread_mutex_t chain;
	pthread_mutexattr_t a;
	pthread_mutexattr_init(&a);
	pthread_mutexattr_setprotocol(&a, PTHREAD_PRIO_INHERIT);
	if (pthread_mutex_init(&chain, &a) != 0)
		stress_fail("PI phase: cannot make the chain mutex");
	pthread_mutexattr_destroy(&a);
	int checks = 0;
	for (int ki = 0; ki < nkinds; ki++) {
		if (kinds[ki].protocol != PTHREAD_PRIO_INHERIT)
			continue;
		boost_check(ki, NULL, checks % 2 ? 5 : 0);
		boost_check(ki, &chain, checks % 2 ? 0 : 5);
		checks += 2;
	}
	pthread_mutex_destroy(&chain);
	return checks;
}

/* ---- end ---- */

static void final_checks(void)
{
	for (int ki = 0; ki < nkinds; ki++) {
		const struct mutex_kind *k = &kinds[ki];
		struct slot *s = slots[ki];
		unsigned long sum = 0;
		for (int i = 0; i < NTHREADS; i++)
			sum += workers[i].per_kind[ki];
		if (s->sections != sum)
			stress_fail("%s: %lu sections counted inside, %lu by the workers", k->name, s->sections, sum);
		pid_t owner = atomic_load_explicit(&s->owner, memory_order_relaxed);
		int inside = atomic_load_explicit(&s->inside, memory_order_relaxed);
		if (owner != 0 || inside != 0)
			stress_fail("%s: owner field %d, %d inside at the end", k->name, (int)owner, inside);
		int r = do_lock(k, s, OP_TRYLOCK, NULL);
		if (r != 0)
			stress_fail("%s: trylock at the end returned %s", k->name, strerror(r));
		r = do_unlock(k, s);
		if (r != 0)
			stress_fail("%s: unlock at the end returned %s", k->name, strerror(r));
		if (k->api == API_C11) {
			mtx_destroy(&s->cm);
		} else if ((r = pthread_mutex_destroy(s->pm)) != 0) {
			stress_fail("%s: destroy at the end returned %s", k->name, strerror(r));
		}
	}
}

int main(void)
{
	stress_start("stress_mutex", 8);
	rtpthread = strcmp(stress_library(), "rtpthread") == 0;
	fifo = stress_fifo_or_note("PP kinds and the PI phase are left out");
	make_kinds();
	stress_start_run_clock();

	int boosts = 0;
	if (fifo) {
		stress_set_priority(MAIN_PRIO);
		boosts = pi_phase();
	}

	for (int i = 0; i < NTHREADS; i++) {
		struct worker *w = &workers[i];
		w->index = i;
		atomic_store_explicit(&w->prio, fifo ? worker_prio[i] : 0, memory_order_relaxed);
		rng_seed(&w->rng, (uint64_t)i);
		if (pthread_create(&w->thread, NULL, worker_main, w) != 0)
			stress_fail("pthread_create failed");
	}
	watch();
	for (int i = 0; i < NTHREADS; i++)
		pthread_join(workers[i].thread, NULL);
	final_checks();

	unsigned long sections = 0, nested = 0, busy = 0, timeouts = 0, relocks = 0, owner = 0, foreign = 0, prio = 0,
		      reprios = 0;
	for (int i = 0; i < NTHREADS; i++) {
		struct worker *w = &workers[i];
		sections += w->sections;
		busy += w->busy;
		timeouts += w->timeouts;
		relocks += w->relocks;
		owner += w->owner_checks;
		foreign += w->foreign_checks;
		nested += w->nested;
		prio += w->prio_checks;
		reprios += w->reprios;
	}
	printf("stress_mutex: %d kinds, %lu critical sections (%lu holding two mutexes), %lu trylock busy, %lu "
	       "timeouts, %lu recursive relocks, %lu owner relock checks, %lu non-owner unlocks, %lu priority "
	       "checks (%lu priority changes under PP), %d PI boost checks, 0 violations\n",
	       nkinds, sections, nested, busy, timeouts, relocks, owner, foreign, prio, reprios, boosts);
	return 0;
}
