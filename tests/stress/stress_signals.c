/*
 * Signal handlers must be invisible: a thread blocked in a mutex lock, a
 * timed lock, a condition wait or a barrier wait that runs a handler
 * goes back to what it was doing, and the call returns what it would
 * have returned without the signal.
 *
 * One thread sends SIGUSR1 (handler installed with SA_RESTART) or
 * SIGUSR2 (without) every 20-500 us, with pthread_kill or tgkill, to a
 * thread picked at random (a class of threads below, then one of it).
 * The handler only counts.  Meanwhile, all at once:
 *
 *   lock       NORMAL, PI, robust and PP mutexes (PP: SCHED_FIFO lockers
 *              below the ceiling), three threads each, holding them long
 *              enough that the others sleep in the kernel.  lock returns
 *              0, never EINTR; an occupancy count proves exclusion, and
 *              the sections add up at the end.
 *   timedlock  NORMAL and PI mutexes, deadlines 0-300 us away (some
 *              already past) on CLOCK_REALTIME (timedlock) and
 *              CLOCK_MONOTONIC (clocklock): 0 or ETIMEDOUT only, and
 *              ETIMEDOUT never before the deadline.
 *   cond       a producer and two consumers per condition: NORMAL and PI
 *              mutexes, private and process-shared conditions.  Waits are
 *              untimed, timed far away, or timed 0-2 ms away: 0 or
 *              ETIMEDOUT only, ETIMEDOUT never early.  A return 0 with
 *              nothing to consume when no signal or broadcast was even in
 *              progress since the wait began is a spurious wake-up:
 *              allowed by POSIX, counted and reported, and under
 *              rtpthread, whose waits do not return without a wake-up,
 *              at most one in 10,000 waits.  Every post is followed by a
 *              signal or broadcast, so an item left unconsumed for
 *              STUCK_MS (the queue is FIFO by count: item k is the k-th
 *              consumed) is a lost wake-up.
 *   barrier    three threads: every wait returns 0 or SERIAL_THREAD, all
 *              three have arrived when any is released, and every round
 *              has exactly one serial thread.
 *
 * A watchdog fails the run if a locker, producer or barrier thread makes
 * no progress for STUCK_MS, naming it.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common.h"

#define STUCK_MS 3000
#define CEILING 10	 /* PP mutexes */
#define PP_PRIO 5	 /* their lockers */
#define LOCKERS 3	 /* per mutex */
#define CONSUMERS 2	 /* per condition */
#define CAPACITY 2	 /* items a condition's queue holds */
#define POST_RING 4	 /* post times kept per condition: more than CAPACITY */
#define BARRIER_N 3
#define MAX_THREADS 64

/* ---- threads and the signals sent to them ---- */

struct thread {
	pthread_t handle;
	_Atomic pid_t tid;
	const char *role;
	_Atomic uint64_t progress; /* loops done */
	bool watched;		   /* must progress (not a consumer) */
	_Atomic bool exited;
	void *(*fn)(void *);
};

enum { LOCKERS_CLASS, TIMED_CLASS, COND_CLASS, BARRIER_CLASS, NCLASSES };

static struct thread threads[MAX_THREADS];
static int nthreads;
static int class_first[NCLASSES], class_count[NCLASSES]; /* threads are started class by class */
static _Atomic int stop;	 /* workers: finish */
static _Atomic int stop_signals; /* the signaller: finish */
static _Atomic uint64_t handled, sent;

static void on_signal(int sig)
{
	(void)sig;
	atomic_fetch_add_explicit(&handled, 1, memory_order_relaxed);
}

static void install_handlers(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESTART;
	sigaction(SIGUSR1, &sa, NULL);
	sa.sa_flags = 0;
	sigaction(SIGUSR2, &sa, NULL);
}

static void *signaller_main(void *arg)
{
	(void)arg;
	struct rng rng;
	rng_seed(&rng, 1000);
	pid_t pid = getpid();
	while (!atomic_load(&stop_signals)) {
		/* A class of threads (lockers, timed lockers, condition users,
		 * barrier threads), then one of them: each class is hit as
		 * often, however many threads it has. */
		int class = (int)rng_below(&rng, NCLASSES);
		struct thread *t = &threads[class_first[class] + (int)rng_below(&rng, (uint32_t)class_count[class])];
		int sig = rng_below(&rng, 2) ? SIGUSR1 : SIGUSR2;
		int r;
		if (rng_below(&rng, 2))
			r = pthread_kill(t->handle, sig);
		else
			r = syscall(SYS_tgkill, pid, atomic_load(&t->tid), sig) == 0 ? 0 : errno;
		if (r != 0)
			stress_fail("sending signal %d to %s: %s", sig, t->role, strerror(r));
		atomic_fetch_add(&sent, 1);
		nap_us(20 + rng_below(&rng, 481));
	}
	return NULL;
}

/* ---- lock: one mutex per kind, LOCKERS threads each ---- */

struct lock_group {
	const char *name;
	pthread_mutex_t m;
	_Atomic int inside;
	uint64_t sections; /* under m */
	uint64_t counted[LOCKERS];
	bool pp;
};

static struct lock_group lock_groups[] = {
	{ .name = "NORMAL" }, { .name = "PI" }, { .name = "robust" }, { .name = "PP", .pp = true },
};
#define NLOCK_GROUPS (int)(sizeof lock_groups / sizeof lock_groups[0])

struct worker_arg {
	struct thread *self;
	int group;
	int index;
};

static void section(_Atomic int *inside, const char *what)
{
	if (atomic_fetch_add(inside, 1) != 0)
		stress_fail("%s: two threads inside the critical section", what);
}

static void section_end(_Atomic int *inside, const char *what)
{
	if (atomic_fetch_sub(inside, 1) != 1)
		stress_fail("%s: two threads inside the critical section", what);
}

static void *locker_main(void *p)
{
	struct worker_arg *a = p;
	struct lock_group *g = &lock_groups[a->group];
	atomic_store(&a->self->tid, (pid_t)gettid());
	if (g->pp)
		stress_set_priority(PP_PRIO);
	struct rng rng;
	rng_seed(&rng, (uint64_t)(a->self - threads) + 1);
	while (!atomic_load(&stop)) {
		int r = pthread_mutex_lock(&g->m);
		if (r != 0)
			stress_fail("lock %s: %s", g->name, strerror(r));
		section(&g->inside, g->name);
		/* Hold it long enough for the others to sleep in the kernel. */
		if (rng_below(&rng, 2))
			spin_ns(rng_below(&rng, 20000));
		else
			nap_us(20 + rng_below(&rng, 80));
		g->sections++;
		section_end(&g->inside, g->name);
		r = pthread_mutex_unlock(&g->m);
		if (r != 0)
			stress_fail("unlock %s: %s", g->name, strerror(r));
		g->counted[a->index]++;
		atomic_fetch_add(&a->self->progress, 1);
		/* SCHED_FIFO lockers leave the CPUs to the others. */
		if (g->pp || rng_below(&rng, 4) == 0)
			nap_us(rng_below(&rng, 100));
	}
	return NULL;
}

/* ---- timedlock: NORMAL and PI ---- */

struct timed_group {
	const char *name;
	pthread_mutex_t m;
	_Atomic int inside;
	_Atomic uint64_t taken, timedout;
};

static struct timed_group timed_groups[] = { { .name = "NORMAL" }, { .name = "PI" } };
#define NTIMED_GROUPS (int)(sizeof timed_groups / sizeof timed_groups[0])

static bool before(const struct timespec *a, const struct timespec *b)
{
	return a->tv_sec < b->tv_sec || (a->tv_sec == b->tv_sec && a->tv_nsec < b->tv_nsec);
}

static void *timed_main(void *p)
{
	struct worker_arg *a = p;
	struct timed_group *g = &timed_groups[a->group];
	atomic_store(&a->self->tid, (pid_t)gettid());
	struct rng rng;
	rng_seed(&rng, (uint64_t)(a->self - threads) + 1);
	while (!atomic_load(&stop)) {
		clockid_t clock = rng_below(&rng, 2) ? CLOCK_REALTIME : CLOCK_MONOTONIC;
		/* -50..300 us: some deadlines have already passed */
		struct timespec dl = deadline_in_ns(clock, ((int64_t)rng_below(&rng, 351) - 50) * 1000);
		int r = clock == CLOCK_REALTIME ? pthread_mutex_timedlock(&g->m, &dl)
						: pthread_mutex_clocklock(&g->m, clock, &dl);
		if (r == 0) {
			section(&g->inside, g->name);
			nap_us(50 + rng_below(&rng, 350));
			section_end(&g->inside, g->name);
			r = pthread_mutex_unlock(&g->m);
			if (r != 0)
				stress_fail("unlock timed %s: %s", g->name, strerror(r));
			atomic_fetch_add(&g->taken, 1);
		} else if (r == ETIMEDOUT) {
			struct timespec now;
			clock_gettime(clock, &now);
			if (before(&now, &dl))
				stress_fail("%s %s: ETIMEDOUT %ld ns before the deadline",
					    clock == CLOCK_REALTIME ? "timedlock" : "clocklock", g->name,
					    (long)((dl.tv_sec - now.tv_sec) * 1000000000L + dl.tv_nsec - now.tv_nsec));
			atomic_fetch_add(&g->timedout, 1);
		} else {
			stress_fail("%s %s: %s", clock == CLOCK_REALTIME ? "timedlock" : "clocklock", g->name,
				    strerror(r));
		}
		atomic_fetch_add(&a->self->progress, 1);
	}
	return NULL;
}

/* ---- cond: a producer and CONSUMERS consumers per condition ---- */

struct cond_group {
	const char *name;
	bool pi, pshared;
	pthread_mutex_t m;
	pthread_cond_t c;
	int items; /* under m */
	_Atomic uint64_t posted, consumed;	 /* written under m, read by the watchdog */
	/* When item k was posted, at k % POST_RING, on both clocks (a torn
	 * pair only delays a report: both must pass the limit). */
	_Atomic int64_t post_wall[POST_RING], post_run[POST_RING];
	_Atomic uint64_t wakes_started, wakes_done; /* signal and broadcast calls */
	_Atomic uint64_t waits, timedout, spurious;
};

static struct cond_group cond_groups[] = {
	{ .name = "NORMAL mutex, private cond" },
	{ .name = "PI mutex, private cond", .pi = true },
	{ .name = "NORMAL mutex, pshared cond", .pshared = true },
	{ .name = "PI mutex, pshared cond", .pi = true, .pshared = true },
};
#define NCOND_GROUPS (int)(sizeof cond_groups / sizeof cond_groups[0])

static void wake(struct cond_group *g, bool all)
{
	atomic_fetch_add(&g->wakes_started, 1);
	all ? pthread_cond_broadcast(&g->c) : pthread_cond_signal(&g->c);
	atomic_fetch_add(&g->wakes_done, 1);
}

static void *producer_main(void *p)
{
	struct worker_arg *a = p;
	struct cond_group *g = &cond_groups[a->group];
	atomic_store(&a->self->tid, (pid_t)gettid());
	struct rng rng;
	rng_seed(&rng, (uint64_t)(a->self - threads) + 1);
	while (!atomic_load(&stop)) {
		int r = pthread_mutex_lock(&g->m);
		if (r != 0)
			stress_fail("producer lock (%s): %s", g->name, strerror(r));
		bool posted = false;
		if (g->items < CAPACITY) {
			uint64_t k = atomic_load(&g->posted);
			struct moment now = stress_moment_now();
			atomic_store(&g->post_run[k % POST_RING], now.run_ns);
			atomic_store(&g->post_wall[k % POST_RING], now.wall_ns);
			atomic_store(&g->posted, k + 1);
			g->items++;
			posted = true;
		}
		bool held = rng_below(&rng, 2), all = rng_below(&rng, 10) == 0;
		if (posted && held)
			wake(g, all);
		pthread_mutex_unlock(&g->m);
		if (posted && !held)
			wake(g, all);
		atomic_fetch_add(&a->self->progress, 1);
		nap_us(rng_below(&rng, 300));
	}
	return NULL;
}

static void *consumer_main(void *p)
{
	struct worker_arg *a = p;
	struct cond_group *g = &cond_groups[a->group];
	atomic_store(&a->self->tid, (pid_t)gettid());
	struct rng rng;
	rng_seed(&rng, (uint64_t)(a->self - threads) + 1);
	for (;;) {
		int r = pthread_mutex_lock(&g->m);
		if (r != 0)
			stress_fail("consumer lock (%s): %s", g->name, strerror(r));
		while (g->items == 0 && !atomic_load(&stop)) {
			uint64_t done_before = atomic_load(&g->wakes_done);
			uint32_t how = rng_below(&rng, 10);
			struct timespec dl;
			if (how < 4) {
				r = pthread_cond_wait(&g->c, &g->m);
			} else {
				/* far away, or 0-2 ms */
				dl = deadline_in_ns(CLOCK_REALTIME, how < 7 ? 1000000000LL : rng_below(&rng, 2000001));
				r = pthread_cond_timedwait(&g->c, &g->m, &dl);
			}
			atomic_fetch_add(&g->waits, 1);
			if (r == ETIMEDOUT && how >= 4) {
				struct timespec now;
				clock_gettime(CLOCK_REALTIME, &now);
				if (before(&now, &dl))
					stress_fail("pthread_cond_timedwait (%s): ETIMEDOUT before the deadline", g->name);
				atomic_fetch_add(&g->timedout, 1);
			} else if (r != 0) {
				stress_fail("pthread_cond_%swait (%s): %s", how < 4 ? "" : "timed", g->name, strerror(r));
			} else if (g->items == 0 && atomic_load(&g->wakes_started) == done_before) {
				atomic_fetch_add(&g->spurious, 1);
			}
		}
		if (g->items == 0) { /* stopping */
			pthread_mutex_unlock(&g->m);
			return NULL;
		}
		g->items--;
		atomic_fetch_add(&g->consumed, 1);
		pthread_mutex_unlock(&g->m);
		atomic_fetch_add(&a->self->progress, 1);
	}
}

/* ---- barrier ---- */

static pthread_barrier_t barrier;
static _Atomic uint64_t arrivals;
static _Atomic int serial_of[4]; /* serial threads of round k, at k % 4 */
static _Atomic int barrier_stop[2];
static uint64_t barrier_rounds;

static int barrier_wait_checked(uint64_t round)
{
	atomic_fetch_add(&arrivals, 1);
	int r = pthread_barrier_wait(&barrier);
	if (r != 0 && r != PTHREAD_BARRIER_SERIAL_THREAD)
		stress_fail("pthread_barrier_wait: %s", strerror(r));
	/* Everybody of this round arrived; nobody can be two rounds on. */
	uint64_t n = atomic_load(&arrivals);
	if (n < BARRIER_N * (round + 1) || n > BARRIER_N * (round + 2) - 1)
		stress_fail("barrier round %llu released with %llu arrivals counted (expected %d..%d)",
			    (unsigned long long)round, (unsigned long long)n, (int)(BARRIER_N * (round + 1)),
			    (int)(BARRIER_N * (round + 2) - 1));
	if (r == PTHREAD_BARRIER_SERIAL_THREAD)
		atomic_fetch_add(&serial_of[round % 4], 1);
	return r;
}

/* Each loop is two rounds: in the first, thread 0 checks the serial
 * count of an earlier round; the serial thread of the first decides, for
 * everybody, whether this was the last loop, and the second round
 * publishes the decision. */
static void *barrier_main(void *p)
{
	struct worker_arg *a = p;
	atomic_store(&a->self->tid, (pid_t)gettid());
	struct rng rng;
	rng_seed(&rng, (uint64_t)(a->self - threads) + 1);
	for (uint64_t round = 0;; round += 2) {
		if (rng_below(&rng, 2))
			spin_ns(rng_below(&rng, 50000));
		bool serial = barrier_wait_checked(round) == PTHREAD_BARRIER_SERIAL_THREAD;
		/* Rounds round - 2 and round - 1 are over, and their serial
		 * threads counted themselves before arriving at this one. */
		if (a->index == 0 && round >= 2) {
			for (uint64_t k = round - 2; k < round; k++) {
				int n = atomic_exchange(&serial_of[k % 4], 0);
				if (n != 1)
					stress_fail("barrier round %llu had %d serial threads", (unsigned long long)k, n);
			}
		}
		if (serial)
			atomic_store(&barrier_stop[(round / 2) % 2], atomic_load(&stop));
		barrier_wait_checked(round + 1);
		atomic_fetch_add(&a->self->progress, 1);
		if (atomic_load(&barrier_stop[(round / 2) % 2])) {
			if (a->index == 0)
				barrier_rounds = round + 2;
			return NULL;
		}
	}
}

/* ---- watchdog ---- */

static _Atomic int watchdog_done;

static void print_threads(void)
{
	for (int i = 0; i < nthreads; i++)
		stress_print_task(threads[i].role, atomic_load(&threads[i].tid));
}

/* Limits are on wall time and the run clock (common.h): a machine too
 * busy to run these threads is not a hang or a lost wake-up. */
static void *watchdog_main(void *arg)
{
	(void)arg;
	uint64_t seen[MAX_THREADS];
	struct moment since[MAX_THREADS];
	struct moment now = stress_moment_now();
	for (int i = 0; i < nthreads; i++) {
		seen[i] = atomic_load(&threads[i].progress);
		since[i] = now;
	}
	while (!atomic_load(&watchdog_done)) {
		nap_us(100000);
		now = stress_moment_now();
		for (int i = 0; i < nthreads; i++) {
			uint64_t p = atomic_load(&threads[i].progress);
			if (p != seen[i]) {
				seen[i] = p;
				since[i] = now;
			} else if (threads[i].watched && !atomic_load(&threads[i].exited) &&
				   stress_lasted(since[i], now, STUCK_MS)) {
				printf("FAIL: %s made no progress for %d ms:\n", threads[i].role, STUCK_MS);
				print_threads();
				stress_fail("%s (tid %d) made no progress for %d ms", threads[i].role,
					    (int)atomic_load(&threads[i].tid), STUCK_MS);
			}
		}
		for (int i = 0; i < NCOND_GROUPS; i++) {
			/* The oldest item not consumed yet (the slot is not reused
			 * before it is: POST_RING > CAPACITY). */
			struct cond_group *g = &cond_groups[i];
			uint64_t c = atomic_load(&g->consumed);
			struct moment posted = { atomic_load(&g->post_wall[c % POST_RING]),
						 atomic_load(&g->post_run[c % POST_RING]) };
			if (atomic_load(&g->posted) > c && stress_lasted(posted, now, STUCK_MS)) {
				printf("FAIL: %s: item %llu not consumed:\n", g->name, (unsigned long long)c);
				print_threads();
				stress_fail("%s: item %llu, posted %lld ms ago, is still not consumed (lost wake-up)",
					    g->name, (unsigned long long)c,
					    (long long)(now.wall_ns - posted.wall_ns) / 1000000);
			}
		}
	}
	return NULL;
}

/* ---- setup ---- */

static struct worker_arg args[MAX_THREADS];

static void *thread_main(void *p)
{
	struct worker_arg *a = p;
	void *r = a->self->fn(a);
	atomic_store(&a->self->exited, true);
	return r;
}

static void start(const char *role, void *(*fn)(void *), int group, int index, bool watched)
{
	if (nthreads == MAX_THREADS)
		stress_fail("too many threads");
	struct thread *t = &threads[nthreads];
	t->role = role;
	t->watched = watched;
	t->fn = fn;
	struct worker_arg *a = &args[nthreads];
	a->self = t;
	a->group = group;
	a->index = index;
	int r = pthread_create(&t->handle, NULL, thread_main, a);
	if (r != 0)
		stress_fail("pthread_create: %s", strerror(r));
	nthreads++;
}

static void init_mutex(pthread_mutex_t *m, int protocol, bool robust, bool pshared)
{
	pthread_mutexattr_t a;
	pthread_mutexattr_init(&a);
	pthread_mutexattr_setprotocol(&a, protocol);
	if (protocol == PTHREAD_PRIO_PROTECT)
		pthread_mutexattr_setprioceiling(&a, CEILING);
	if (robust)
		pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
	if (pshared)
		pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
	int r = pthread_mutex_init(m, &a);
	if (r != 0)
		stress_fail("pthread_mutex_init: %s", strerror(r));
	pthread_mutexattr_destroy(&a);
}

static void check_destroy(int r, const char *what)
{
	if (r != 0)
		stress_fail("destroy %s: %s", what, strerror(r));
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	stress_start("stress_signals", 8);
	stress_start_run_clock();
	install_handlers();
	bool fifo = stress_fifo_or_note("the PP lockers are left out");

	static char names[MAX_THREADS][48];
	int n = 0;
	class_first[LOCKERS_CLASS] = nthreads;
	init_mutex(&lock_groups[0].m, PTHREAD_PRIO_NONE, false, false);
	init_mutex(&lock_groups[1].m, PTHREAD_PRIO_INHERIT, false, false);
	init_mutex(&lock_groups[2].m, PTHREAD_PRIO_NONE, true, false);
	init_mutex(&lock_groups[3].m, PTHREAD_PRIO_PROTECT, false, false);
	for (int g = 0; g < NLOCK_GROUPS; g++) {
		if (lock_groups[g].pp && !fifo)
			continue;
		for (int i = 0; i < LOCKERS; i++) {
			snprintf(names[n], sizeof names[n], "locker %d of %s", i, lock_groups[g].name);
			start(names[n++], locker_main, g, i, true);
		}
	}
	class_count[LOCKERS_CLASS] = nthreads - class_first[LOCKERS_CLASS];
	class_first[TIMED_CLASS] = nthreads;
	init_mutex(&timed_groups[0].m, PTHREAD_PRIO_NONE, false, false);
	init_mutex(&timed_groups[1].m, PTHREAD_PRIO_INHERIT, false, false);
	for (int g = 0; g < NTIMED_GROUPS; g++)
		for (int i = 0; i < LOCKERS; i++) {
			snprintf(names[n], sizeof names[n], "timed locker %d of %s", i, timed_groups[g].name);
			start(names[n++], timed_main, g, i, true);
		}
	class_count[TIMED_CLASS] = nthreads - class_first[TIMED_CLASS];
	class_first[COND_CLASS] = nthreads;
	for (int g = 0; g < NCOND_GROUPS; g++) {
		struct cond_group *cg = &cond_groups[g];
		init_mutex(&cg->m, cg->pi ? PTHREAD_PRIO_INHERIT : PTHREAD_PRIO_NONE, false, cg->pshared);
		pthread_condattr_t ca;
		pthread_condattr_init(&ca);
		if (cg->pshared)
			pthread_condattr_setpshared(&ca, PTHREAD_PROCESS_SHARED);
		if (pthread_cond_init(&cg->c, &ca) != 0)
			stress_fail("pthread_cond_init failed");
		pthread_condattr_destroy(&ca);
		snprintf(names[n], sizeof names[n], "producer of %s", cg->name);
		start(names[n++], producer_main, g, 0, true);
		for (int i = 0; i < CONSUMERS; i++) {
			snprintf(names[n], sizeof names[n], "consumer %d of %s", i, cg->name);
			start(names[n++], consumer_main, g, i, false);
		}
	}
	class_count[COND_CLASS] = nthreads - class_first[COND_CLASS];
	class_first[BARRIER_CLASS] = nthreads;
	if (pthread_barrier_init(&barrier, NULL, BARRIER_N) != 0)
		stress_fail("pthread_barrier_init failed");
	for (int i = 0; i < BARRIER_N; i++) {
		snprintf(names[n], sizeof names[n], "barrier thread %d", i);
		start(names[n++], barrier_main, 0, i, true);
	}
	class_count[BARRIER_CLASS] = nthreads - class_first[BARRIER_CLASS];
	/* Every thread has published its TID before anything is sent. */
	for (int i = 0; i < nthreads; i++)
		while (atomic_load(&threads[i].tid) == 0)
			nap_us(100);

	pthread_t signaller, watchdog;
	if (pthread_create(&signaller, NULL, signaller_main, NULL) != 0 ||
	    pthread_create(&watchdog, NULL, watchdog_main, NULL) != 0)
		stress_fail("pthread_create failed");
	while (stress_running())
		nap_us(50000);

	/* The signaller stops first: it never targets a thread that left. */
	atomic_store(&stop_signals, 1);
	pthread_join(signaller, NULL);
	atomic_store(&stop, 1);
	for (int g = 0; g < NCOND_GROUPS; g++) {
		pthread_mutex_lock(&cond_groups[g].m);
		wake(&cond_groups[g], true);
		pthread_mutex_unlock(&cond_groups[g].m);
	}
	for (int i = 0; i < nthreads; i++)
		pthread_join(threads[i].handle, NULL);
	atomic_store(&watchdog_done, 1);
	pthread_join(watchdog, NULL);

	uint64_t locks = 0, timed = 0, timedout = 0, waits = 0, wait_timeouts = 0, spurious = 0, items = 0;
	for (int g = 0; g < NLOCK_GROUPS; g++) {
		struct lock_group *lg = &lock_groups[g];
		uint64_t sum = 0;
		for (int i = 0; i < LOCKERS; i++)
			sum += lg->counted[i];
		if (sum != lg->sections)
			stress_fail("%s: %llu sections counted inside, %llu by the lockers", lg->name,
				    (unsigned long long)lg->sections, (unsigned long long)sum);
		locks += sum;
		check_destroy(pthread_mutex_destroy(&lg->m), lg->name);
	}
	for (int g = 0; g < NTIMED_GROUPS; g++) {
		timed += atomic_load(&timed_groups[g].taken) + atomic_load(&timed_groups[g].timedout);
		timedout += atomic_load(&timed_groups[g].timedout);
		check_destroy(pthread_mutex_destroy(&timed_groups[g].m), timed_groups[g].name);
	}
	for (int g = 0; g < NCOND_GROUPS; g++) {
		struct cond_group *cg = &cond_groups[g];
		uint64_t posted = atomic_load(&cg->posted), consumed = atomic_load(&cg->consumed);
		if (posted != consumed + (uint64_t)cg->items)
			stress_fail("%s: %llu posted, %llu consumed, %d left", cg->name, (unsigned long long)posted,
				    (unsigned long long)consumed, cg->items);
		printf("%s: %llu items, %llu waits (%llu timed out, %llu spurious)\n", cg->name,
		       (unsigned long long)consumed, (unsigned long long)atomic_load(&cg->waits),
		       (unsigned long long)atomic_load(&cg->timedout), (unsigned long long)atomic_load(&cg->spurious));
		waits += atomic_load(&cg->waits);
		wait_timeouts += atomic_load(&cg->timedout);
		spurious += atomic_load(&cg->spurious);
		items += consumed;
		check_destroy(pthread_cond_destroy(&cg->c), cg->name);
		check_destroy(pthread_mutex_destroy(&cg->m), cg->name);
	}
	/* POSIX allows spurious wake-ups.  rtpthread returns from a wait
	 * only once a signal or broadcast came after the waiter registered
	 * (a handler's EINTR sends it back to sleep), so a return with no
	 * call even in progress means it lets handlers through.  NPTL's
	 * waiters send replacement signals when they may have taken one
	 * meant for an earlier group; those wake others for nothing, so
	 * under NPTL they are only counted. */
	if (strcmp(stress_library(), "rtpthread") == 0 && spurious * 10000 > waits)
		stress_fail("%llu spurious wake-ups in %llu waits", (unsigned long long)spurious,
			    (unsigned long long)waits);
	check_destroy(pthread_barrier_destroy(&barrier), "barrier");
	printf("stress_signals: %llu signals sent (%llu handled), %llu locks, %llu timed locks (%llu timed out), "
	       "%llu cond waits (%llu timed out, %llu spurious), %llu items, %llu barrier rounds, 0 errors\n",
	       (unsigned long long)atomic_load(&sent), (unsigned long long)atomic_load(&handled),
	       (unsigned long long)locks, (unsigned long long)timed, (unsigned long long)timedout,
	       (unsigned long long)waits, (unsigned long long)wait_timeouts, (unsigned long long)spurious,
	       (unsigned long long)items, (unsigned long long)barrier_rounds);
	return 0;
}
