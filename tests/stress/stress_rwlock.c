/*
 * Reader-writer lock stress: phases, each on one lock of one kind (prefer
 * reader, prefer writer, prefer writer non-recursive), private or
 * process-shared (in a MAP_SHARED mapping), used by MAX_THREADS threads
 * (more than the lock's ten reader slots, so that readers are also counted
 * anonymously) at mixed priorities (SCHED_OTHER and SCHED_FIFO 5-40, some
 * equal: the non-recursive kind puts writers before readers there).
 * Each thread picks at random: rdlock, tryrdlock, timedrdlock,
 * clockrdlock, wrlock, trywrlock, timedwrlock or clockwrlock (timed ones
 * with deadlines of 0-2 ms), and, holding a read lock where the kind
 * allows it, a second read lock (which must not deadlock behind a waiting
 * writer); it holds the lock for a random short time.
 *
 * Checked:
 *   exclusion  a counter of the threads inside: readers add 1, writers
 *              WRITER; a reader must see no WRITER after adding, a writer
 *              exactly WRITER.  A writer also bumps a plain data word
 *              twice, which readers must always find even.
 *   results    0, or EBUSY for try, ETIMEDOUT for timed: nothing else.
 *   hang       a thread that makes no progress for STUCK_MS (in wall time
 *              and on the run clock) fails the run, with every thread's
 *              kernel state.
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
	MAX_THREADS = 14,
	MAIN_PRIO = 45, /* the watchdog: above every thread */
	STUCK_MS = 5000,
	WRITER = 1 << 20,
};

static const int thread_prio[MAX_THREADS] = { 0, 10, 20, 0, 20, 40, 0, 20, 25, 0, 25, 5, 0, 10 };

#define MS 1000000LL

static bool fifo;

struct phase {
	pthread_rwlock_t rw;
	int kind;
	bool pshared;
	int64_t end_ns;
	_Atomic int inside;
	volatile long data;
	_Atomic long reads, writes, rereads, busy, timeouts;
};

struct worker {
	pthread_t thread;
	struct phase *ph;
	int index, prio;
	struct rng rng;
	_Atomic pid_t tid;
	_Atomic long progress;
	_Atomic bool done;
};

static struct worker workers[MAX_THREADS];

static const char *kind_name(int kind)
{
	return kind == PTHREAD_RWLOCK_PREFER_READER_NP	   ? "prefer-reader"
	       : kind == PTHREAD_RWLOCK_PREFER_WRITER_NP ? "prefer-writer"
							 : "prefer-writer-nonrecursive";
}

static void check(struct phase *ph, bool ok, const char *what, int r)
{
	if (!ok)
		stress_fail("%s%s: %s (result %s)", kind_name(ph->kind), ph->pshared ? " pshared" : "", what,
			    strerror(r));
}

static void hold(struct worker *w)
{
	unsigned p = rng_below(&w->rng, 16);
	if (p == 0)
		nap_us(rng_below(&w->rng, 100));
	else if (p < 4)
		spin_ns(rng_below(&w->rng, 2000));
}

/* 0, EBUSY or ETIMEDOUT; anything else fails the run. */
static int take(struct worker *w, bool write, int how)
{
	struct phase *ph = w->ph;
	clockid_t clock = rng_below(&w->rng, 2) ? CLOCK_MONOTONIC : CLOCK_REALTIME;
	struct timespec d = deadline_in_ns(how == 2 ? CLOCK_REALTIME : clock, rng_below(&w->rng, 2000) * 1000);
	int r;
	switch (how) {
	case 0: r = write ? pthread_rwlock_wrlock(&ph->rw) : pthread_rwlock_rdlock(&ph->rw); break;
	case 1: r = write ? pthread_rwlock_trywrlock(&ph->rw) : pthread_rwlock_tryrdlock(&ph->rw); break;
	case 2: r = write ? pthread_rwlock_timedwrlock(&ph->rw, &d) : pthread_rwlock_timedrdlock(&ph->rw, &d); break;
	default:
		r = write ? pthread_rwlock_clockwrlock(&ph->rw, clock, &d)
			  : pthread_rwlock_clockrdlock(&ph->rw, clock, &d);
		break;
	}
	check(ph, r == 0 || (how == 1 && r == EBUSY) || (how >= 2 && r == ETIMEDOUT), write ? "wrlock" : "rdlock",
	      r);
	if (r == EBUSY)
		atomic_fetch_add_explicit(&ph->busy, 1, memory_order_relaxed);
	if (r == ETIMEDOUT)
		atomic_fetch_add_explicit(&ph->timeouts, 1, memory_order_relaxed);
	return r;
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct phase *ph = w->ph;
	stress_set_priority(w->prio);
	atomic_store_explicit(&w->tid, gettid(), memory_order_relaxed);
	while (now_ns(CLOCK_MONOTONIC) < ph->end_ns) {
		bool write = rng_below(&w->rng, 8) == 0;
		int how = (int)rng_below(&w->rng, 4);
		if (take(w, write, how) == 0) {
			if (write) {
				int v = atomic_fetch_add_explicit(&ph->inside, WRITER, memory_order_relaxed) + WRITER;
				check(ph, v == WRITER, "a writer is not alone", 0);
				ph->data = ph->data + 1;
				hold(w);
				ph->data = ph->data + 1;
				atomic_fetch_sub_explicit(&ph->inside, WRITER, memory_order_relaxed);
				atomic_fetch_add_explicit(&ph->writes, 1, memory_order_relaxed);
			} else {
				int v = atomic_fetch_add_explicit(&ph->inside, 1, memory_order_relaxed) + 1;
				check(ph, v < WRITER, "a reader is inside with a writer", 0);
				check(ph, ph->data % 2 == 0, "a reader sees a write half done", 0);
				hold(w);
				/* Re-reading while holding: never a deadlock but
				 * with the non-recursive kind, whose readers wait
				 * for a waiting writer (as glibc). */
				if (ph->kind != PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP &&
				    rng_below(&w->rng, 4) == 0) {
					int r = pthread_rwlock_rdlock(&ph->rw);
					check(ph, r == 0, "re-reading", r);
					check(ph, ph->data % 2 == 0, "a re-reader sees a write half done", 0);
					check(ph, pthread_rwlock_unlock(&ph->rw) == 0, "unlock of the re-read", 0);
					atomic_fetch_add_explicit(&ph->rereads, 1, memory_order_relaxed);
				}
				atomic_fetch_sub_explicit(&ph->inside, 1, memory_order_relaxed);
				atomic_fetch_add_explicit(&ph->reads, 1, memory_order_relaxed);
			}
			int r = pthread_rwlock_unlock(&ph->rw);
			check(ph, r == 0, "unlock", r);
		}
		atomic_fetch_add_explicit(&w->progress, 1, memory_order_relaxed);
		if (rng_below(&w->rng, 4) == 0)
			nap_us(rng_below(&w->rng, 50));
	}
	atomic_store_explicit(&w->done, true, memory_order_release);
	return NULL;
}

static void watch(struct phase *ph)
{
	long last[MAX_THREADS];
	struct moment since[MAX_THREADS], now = stress_moment_now();
	for (int i = 0; i < MAX_THREADS; i++) {
		last[i] = -1;
		since[i] = now;
	}
	for (;;) {
		bool all_done = true;
		now = stress_moment_now();
		for (int i = 0; i < MAX_THREADS; i++) {
			struct worker *w = &workers[i];
			if (atomic_load_explicit(&w->done, memory_order_acquire))
				continue;
			all_done = false;
			long p = atomic_load_explicit(&w->progress, memory_order_relaxed);
			if (p != last[i]) {
				last[i] = p;
				since[i] = now;
			} else if (stress_lasted(since[i], now, STUCK_MS)) {
				printf("FAIL: %s%s: t%d made no progress for %d ms; lock words:", kind_name(ph->kind),
				       ph->pshared ? " pshared" : "", i, STUCK_MS);
				const unsigned *words = (const unsigned *)&ph->rw;
				for (unsigned k = 0; k < sizeof ph->rw / sizeof *words; k++)
					printf(" %x", words[k]);
				printf("\n");
				for (int j = 0; j < MAX_THREADS; j++) {
					char label[32];
					snprintf(label, sizeof label, "t%d prio %d", j, workers[j].prio);
					stress_print_task(label, atomic_load_explicit(&workers[j].tid, memory_order_relaxed));
				}
				stress_fail("rwlock hang");
			}
		}
		if (all_done)
			return;
		nap_us(5000);
	}
}

static void run_phase(struct phase *ph, int kind, bool pshared, double seconds, uint64_t stream)
{
	memset(ph, 0, sizeof *ph);
	pthread_rwlockattr_t a;
	pthread_rwlockattr_init(&a);
	pthread_rwlockattr_setkind_np(&a, kind);
	pthread_rwlockattr_setpshared(&a, pshared ? PTHREAD_PROCESS_SHARED : PTHREAD_PROCESS_PRIVATE);
	int r = pthread_rwlock_init(&ph->rw, &a);
	pthread_rwlockattr_destroy(&a);
	if (r != 0)
		stress_fail("pthread_rwlock_init: %s", strerror(r));
	ph->kind = kind;
	ph->pshared = pshared;
	ph->end_ns = now_ns(CLOCK_MONOTONIC) + (int64_t)(seconds * 1e9);
	for (int i = 0; i < MAX_THREADS; i++) {
		struct worker *w = &workers[i];
		w->ph = ph;
		w->index = i;
		w->prio = fifo ? thread_prio[i] : 0;
		rng_seed(&w->rng, stream * MAX_THREADS + (uint64_t)i);
		atomic_store_explicit(&w->tid, 0, memory_order_relaxed);
		atomic_store_explicit(&w->progress, 0, memory_order_relaxed);
		atomic_store_explicit(&w->done, false, memory_order_relaxed);
		if (pthread_create(&w->thread, NULL, worker_main, w) != 0)
			stress_fail("pthread_create failed");
	}
	watch(ph);
	for (int i = 0; i < MAX_THREADS; i++)
		pthread_join(workers[i].thread, NULL);
	check(ph, atomic_load(&ph->inside) == 0, "threads left inside", 0);
	r = pthread_rwlock_trywrlock(&ph->rw);
	check(ph, r == 0, "the lock is not free at the end", r);
	pthread_rwlock_unlock(&ph->rw);
	check(ph, pthread_rwlock_destroy(&ph->rw) == 0, "destroy", 0);
}

int main(void)
{
	stress_start("stress_rwlock", 8);
	fifo = stress_fifo_or_note(NULL);
	if (fifo)
		stress_set_priority(MAIN_PRIO);
	stress_start_run_clock();

	struct phase *shared = mmap(NULL, sizeof *shared, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	static struct phase private_phase;
	if (shared == MAP_FAILED)
		stress_fail("mmap: %s", strerror(errno));
	static const int kinds[3] = { PTHREAD_RWLOCK_PREFER_READER_NP, PTHREAD_RWLOCK_PREFER_WRITER_NP,
				      PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP };
	/* Six phases per pass; a phase is a sixth of STRESS_DURATION, 50 ms to 2 s. */
	double slice = stress_duration() / 6;
	slice = slice < 0.05 ? 0.05 : slice > 2.0 ? 2.0 : slice;
	long reads = 0, writes = 0, rereads = 0, busy = 0, timeouts = 0;
	int phases = 0;
	for (int pass = 0; pass == 0 || stress_running(); pass++) {
		for (int n = 0; n < 6 && (pass == 0 || stress_running()); n++) {
			struct phase *ph = n % 2 ? shared : &private_phase;
			run_phase(ph, kinds[n / 2], n % 2, slice, (uint64_t)++phases);
			reads += ph->reads;
			writes += ph->writes;
			rereads += ph->rereads;
			busy += ph->busy;
			timeouts += ph->timeouts;
		}
	}
	printf("stress_rwlock: %d phases (3 kinds, private and pshared, %d threads), %ld reads (%ld re-reads), "
	       "%ld writes, %ld EBUSY, %ld ETIMEDOUT, 0 violations\n",
	       phases, MAX_THREADS, reads, rereads, writes, busy, timeouts);
	return 0;
}
