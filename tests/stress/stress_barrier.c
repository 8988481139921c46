/*
 * Barrier stress: phases of many rounds, each phase on a barrier
 * initialized for a different count (1..MAX_THREADS, every count in
 * turn), private or process-shared (in a MAP_SHARED mapping), used by
 * that many threads at mixed priorities (SCHED_OTHER and SCHED_FIFO
 * 5-40).  Arrivals are staggered at random so that a different thread
 * is last each round.
 *
 * Checked in every round q, by every thread:
 *   no early pass  before waiting, a thread stores q in its slot of
 *                  round[] and counts itself in arrivals.  After the wait
 *                  every slot holds q or q + 1 (a faster thread may
 *                  already be on its way to the next round, but nobody
 *                  can be behind), and arrivals lies in
 *                  [(q + 1) * count, (q + 2) * count].
 *   one serial     the wait returns 0 or PTHREAD_BARRIER_SERIAL_THREAD;
 *                  the serial thread of round q counts itself in
 *                  serials[q % RING] and must find it 0; after passing
 *                  round q + 1 every thread finds exactly 1 there.
 *                  Thread 0 clears the entry after round q + 2, when
 *                  every thread has checked it.
 *   end of phase   the serial thread of the last round destroys the
 *                  barrier at once, while the others may still be on
 *                  their way out (allowed by glibc and rtpthread alike):
 *                  0.  The main thread then initializes the same memory
 *                  for the next phase's count.
 *   hang           a thread whose round stands still for STUCK_MS (in
 *                  wall time and on the run clock, below) fails the run,
 *                  with every thread's round and kernel state.
 *
 * A phase ends at a round every thread agrees on: the serial thread of
 * round q, seeing the phase's time up, sets stop_at = q + 2; every
 * thread passes round q + 1 only after that store (the serial thread
 * makes it before arriving there), and stops after round stop_at - 1.
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
#include <unistd.h>

enum {
	MAX_THREADS = 16,
	MAIN_PRIO = 45,	  /* the watchdog: above every thread */
	STUCK_MS = 5000,
	RING = 4,
};

static const int thread_prio[MAX_THREADS] = { 0, 10, 20, 0, 30, 40, 0, 15, 25, 0, 35, 5, 0, 12, 22, 32 };

#define MS 1000000LL

static bool fifo;

/* Everything the threads of a phase share; in a MAP_SHARED mapping for
 * process-shared phases. */
struct phase {
	pthread_barrier_t barrier;
	int count;
	bool pshared;
	int64_t end_ns;
	/* Orders: each thread's stores before its wait are seen by every
	 * thread after the wait only through the barrier, which is what is
	 * under test, so they are release and the loads acquire: a library
	 * that lets a thread through early shows stale values, not a data
	 * race. */
	_Atomic long round[MAX_THREADS];
	_Atomic long arrivals;
	_Atomic int serials[RING];
	_Atomic long stop_at; /* 0 until the last round is decided */
	_Atomic int destroyed;
};

struct worker {
	struct phase *ph;
	int index, prio;
	struct rng rng;
	pthread_t thread;
	_Atomic pid_t tid;
	_Atomic long progress; /* rounds passed */
	_Atomic bool in_wait, done;
	long serial_rounds;
};

static struct worker workers[MAX_THREADS];
static unsigned long st_rounds, st_waits, st_serials; /* the main thread's */

static void check_round(struct worker *w, long q)
{
	struct phase *ph = w->ph;
	for (int j = 0; j < ph->count; j++) {
		long r = atomic_load_explicit(&ph->round[j], memory_order_acquire);
		if (r != q && r != q + 1)
			stress_fail("count %d%s: t%d passed round %ld while t%d is at round %ld", ph->count,
				    ph->pshared ? " pshared" : "", w->index, q, j, r);
	}
	long a = atomic_load_explicit(&ph->arrivals, memory_order_acquire);
	if (a < (q + 1) * ph->count || a > (q + 2) * ph->count)
		stress_fail("count %d%s: t%d passed round %ld with %ld arrivals (expected %ld..%ld)", ph->count,
			    ph->pshared ? " pshared" : "", w->index, q, a, (q + 1) * ph->count, (q + 2) * ph->count);
	if (q > 0) {
		int s = atomic_load_explicit(&ph->serials[(q - 1) % RING], memory_order_acquire);
		if (s != 1)
			stress_fail("count %d%s: round %ld had %d serial thread(s)", ph->count,
				    ph->pshared ? " pshared" : "", q - 1, s);
	}
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct phase *ph = w->ph;
	stress_set_priority(w->prio);
	atomic_store_explicit(&w->tid, gettid(), memory_order_relaxed);
	for (long q = 0;; q++) {
		/* Stagger the arrivals: a different thread comes last. */
		unsigned pause = rng_below(&w->rng, 8);
		if (pause == 0)
			nap_us(rng_below(&w->rng, 200));
		else if (pause == 1 && w->prio == 0)
			sched_yield();

		atomic_store_explicit(&ph->round[w->index], q, memory_order_release);
		atomic_fetch_add_explicit(&ph->arrivals, 1, memory_order_acq_rel);
		atomic_store_explicit(&w->in_wait, true, memory_order_relaxed);
		int r = pthread_barrier_wait(&ph->barrier);
		atomic_store_explicit(&w->in_wait, false, memory_order_relaxed);
		if (r != 0 && r != PTHREAD_BARRIER_SERIAL_THREAD)
			stress_fail("count %d: pthread_barrier_wait returned %s", ph->count, strerror(r));
		check_round(w, q);

		if (r == PTHREAD_BARRIER_SERIAL_THREAD) {
			int before = atomic_fetch_add_explicit(&ph->serials[q % RING], 1, memory_order_acq_rel);
			if (before != 0)
				stress_fail("count %d%s: round %ld had %d serial thread(s) before t%d", ph->count,
					    ph->pshared ? " pshared" : "", q, before, w->index);
			w->serial_rounds++;
			long stop = atomic_load_explicit(&ph->stop_at, memory_order_acquire);
			if (stop == 0 && now_ns(CLOCK_MONOTONIC) > ph->end_ns)
				atomic_store_explicit(&ph->stop_at, q + 2, memory_order_release);
		}
		/* Round q - 2's entry: every thread checked it after passing
		 * round q - 1, before arriving at round q. */
		if (w->index == 0 && q >= 2)
			atomic_store_explicit(&ph->serials[(q - 2) % RING], 0, memory_order_release);
		atomic_store_explicit(&w->progress, q + 1, memory_order_relaxed);

		long stop = atomic_load_explicit(&ph->stop_at, memory_order_acquire);
		if (stop != 0 && q + 1 == stop) {
			if (r == PTHREAD_BARRIER_SERIAL_THREAD) {
				int e = pthread_barrier_destroy(&ph->barrier);
				if (e != 0)
					stress_fail("count %d%s: destroy right after the last round returned %s",
						    ph->count, ph->pshared ? " pshared" : "", strerror(e));
				atomic_store_explicit(&ph->destroyed, 1, memory_order_release);
			}
			break;
		}
		if (stop != 0 && q + 1 > stop)
			stress_fail("count %d: t%d went past the last round %ld", ph->count, w->index, stop - 1);
	}
	atomic_store_explicit(&w->done, true, memory_order_release);
	return NULL;
}

static void describe_stuck(int count, const struct moment *since, struct moment now, int stuck)
{
	printf("FAIL: barrier of count %d: t%d made no progress for %d ms (%lld ms on the run clock):\n", count, stuck,
	       STUCK_MS, (long long)((now.run_ns - since[stuck].run_ns) / MS));
	for (int i = 0; i < count; i++) {
		struct worker *w = &workers[i];
		pid_t tid = atomic_load_explicit(&w->tid, memory_order_relaxed);
		char state;
		long long cpu, waiting;
		if (!stress_task_stat(tid, &state, NULL))
			state = '?';
		task_times(tid, &cpu, &waiting);
		printf("  t%d tid %d %s %d: %s, passed %ld rounds, %s, stuck for %lld ms, state %c, %lld ms on a CPU "
		       "and %lld ms waiting for one in all\n",
		       i, (int)tid, w->prio ? "FIFO" : "OTHER", w->prio,
		       atomic_load_explicit(&w->done, memory_order_relaxed) ? "finished" : "running",
		       atomic_load_explicit(&w->progress, memory_order_relaxed),
		       atomic_load_explicit(&w->in_wait, memory_order_relaxed) ? "in pthread_barrier_wait"
									       : "outside the wait",
		       (long long)((now.wall_ns - since[i].wall_ns) / MS), state, cpu, waiting);
	}
	stress_fail("barrier hang");
}

/* Waits for every thread of the phase to finish, failing if one stands
 * still for STUCK_MS. */
static void watch(int count)
{
	long last[MAX_THREADS];
	struct moment since[MAX_THREADS], now = stress_moment_now();
	for (int i = 0; i < count; i++) {
		last[i] = -1;
		since[i] = now;
	}
	for (;;) {
		bool all_done = true;
		now = stress_moment_now();
		for (int i = 0; i < count; i++) {
			struct worker *w = &workers[i];
			if (atomic_load_explicit(&w->done, memory_order_acquire))
				continue;
			all_done = false;
			long p = atomic_load_explicit(&w->progress, memory_order_relaxed);
			if (p != last[i]) {
				last[i] = p;
				since[i] = now;
			} else if (stress_lasted(since[i], now, STUCK_MS)) {
				describe_stuck(count, since, now, i);
			}
		}
		if (all_done)
			return;
		nap_us(5000);
	}
}

static void run_phase(struct phase *ph, int count, bool pshared, double seconds, uint64_t stream)
{
	pthread_barrierattr_t a;
	pthread_barrierattr_init(&a);
	pthread_barrierattr_setpshared(&a, pshared ? PTHREAD_PROCESS_SHARED : PTHREAD_PROCESS_PRIVATE);
	/* The same memory as the phase before, destroyed by it: a new count. */
	int r = pthread_barrier_init(&ph->barrier, &a, (unsigned)count);
	pthread_barrierattr_destroy(&a);
	if (r != 0)
		stress_fail("pthread_barrier_init(count %d%s): %s", count, pshared ? ", pshared" : "", strerror(r));
	ph->count = count;
	ph->pshared = pshared;
	ph->end_ns = now_ns(CLOCK_MONOTONIC) + (int64_t)(seconds * 1e9);
	for (int i = 0; i < MAX_THREADS; i++)
		atomic_store_explicit(&ph->round[i], -1, memory_order_relaxed);
	for (int i = 0; i < RING; i++)
		atomic_store_explicit(&ph->serials[i], 0, memory_order_relaxed);
	atomic_store_explicit(&ph->arrivals, 0, memory_order_relaxed);
	atomic_store_explicit(&ph->stop_at, 0, memory_order_relaxed);
	atomic_store_explicit(&ph->destroyed, 0, memory_order_relaxed);

	for (int i = 0; i < count; i++) {
		struct worker *w = &workers[i];
		w->ph = ph;
		w->index = i;
		w->prio = fifo ? thread_prio[i] : 0;
		rng_seed(&w->rng, stream * MAX_THREADS + (uint64_t)i);
		w->serial_rounds = 0;
		atomic_store_explicit(&w->tid, 0, memory_order_relaxed);
		atomic_store_explicit(&w->progress, 0, memory_order_relaxed);
		atomic_store_explicit(&w->in_wait, false, memory_order_relaxed);
		atomic_store_explicit(&w->done, false, memory_order_relaxed);
		if (pthread_create(&w->thread, NULL, worker_main, w) != 0)
			stress_fail("pthread_create failed");
	}
	watch(count);
	long serials = 0;
	for (int i = 0; i < count; i++) {
		pthread_join(workers[i].thread, NULL);
		serials += workers[i].serial_rounds;
	}
	long rounds = atomic_load_explicit(&ph->stop_at, memory_order_acquire);
	if (serials != rounds)
		stress_fail("count %d%s: %ld serial returns in %ld rounds", count, pshared ? " pshared" : "", serials,
			    rounds);
	long arrivals = atomic_load_explicit(&ph->arrivals, memory_order_acquire);
	if (arrivals != rounds * count)
		stress_fail("count %d: %ld arrivals in %ld rounds", count, arrivals, rounds);
	if (!atomic_load_explicit(&ph->destroyed, memory_order_acquire))
		stress_fail("count %d: the last round's serial thread did not destroy the barrier", count);
	st_rounds += (unsigned long)rounds;
	st_waits += (unsigned long)(rounds * count);
	st_serials += (unsigned long)serials;
}

int main(void)
{
	stress_start("stress_barrier", 8);
	fifo = stress_fifo_or_note(NULL);
	if (fifo)
		stress_set_priority(MAIN_PRIO);

	stress_start_run_clock();

	struct phase *shared = mmap(NULL, sizeof *shared, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	static struct phase private_phase;
	struct phase *private = &private_phase;
	if (shared == MAP_FAILED)
		stress_fail("mmap: %s", strerror(errno));

	/* Every count twice per pass (private and shared), in a random order. */
	struct rng rng;
	rng_seed(&rng, 1000);
	int order[2 * MAX_THREADS];
	for (int i = 0; i < 2 * MAX_THREADS; i++)
		order[i] = i;
	/* A phase: an equal share of STRESS_DURATION, at least 50 ms (the first
	 * pass always runs whole), at most 2 s (long runs make more passes). */
	double slice = stress_duration() / (2 * MAX_THREADS);
	slice = slice < 0.05 ? 0.05 : slice > 2.0 ? 2.0 : slice;
	int phases = 0;
	for (int pass = 0; pass == 0 || stress_running(); pass++) {
		for (int i = 2 * MAX_THREADS - 1; i > 0; i--) {
			int j = (int)rng_below(&rng, (uint32_t)i + 1), t = order[i];
			order[i] = order[j];
			order[j] = t;
		}
		for (int n = 0; n < 2 * MAX_THREADS && (pass == 0 || stress_running()); n++) {
			int count = 1 + order[n] / 2;
			bool pshared = order[n] % 2;
			run_phase(pshared ? shared : private, count, pshared, slice, (uint64_t)++phases);
		}
	}
	printf("stress_barrier: %d phases (counts 1..%d, private and pshared), %lu rounds, %lu waits, %lu serial "
	       "returns, 0 violations\n",
	       phases, MAX_THREADS, st_rounds, st_waits, st_serials);
	return 0;
}
