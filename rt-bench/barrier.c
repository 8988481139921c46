/*
 * barrier: round latency of pthread_barrier_wait with 2, 8 and 32
 * SCHED_FIFO threads (priority 50, not pinned).  One round's latency is
 * from the last thread's arrival to the last thread's return: how long the
 * barrier takes to release everybody once it may.  Every thread takes a
 * timestamp before and after the wait and keeps the per-round maximum of
 * each; thread 0 collects the previous round.
 *
 * usage: barrier [-d seconds]   (split evenly over 2, 8 and 32 threads)
 *
 * Rotating slots keep this free of locks: round k uses slot k % 3, which
 * thread 0 reads and clears after round k + 1 (everybody has left round k
 * and arrived at k + 1) and nobody touches again before round k + 3.
 *
 * The threads keep both cores busy, so they pause between bursts
 * (common.h).  Thread 0 alone decides, and tells the others through a
 * word it writes before arriving and they read after leaving; two words,
 * by round parity, so thread 0 never overwrites one not yet read.
 */
#include "common.h"

#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

#define PRIO 50

/* bursts_next() values: 0 go on, UINT64_MAX stop, else sleep until then. */
static _Atomic uint64_t order[2];
static _Atomic uint64_t arrived[3], left[3];	/* per-round maxima, ns */
static pthread_barrier_t barrier;
static struct bursts bursts;
static struct hist hist;
static atomic_int barrier_error;
static atomic_int give_up;	/* a thread could not be created */

static void store_max(_Atomic uint64_t *p, uint64_t v)
{
	uint64_t old = atomic_load(p);

	while (old < v && !atomic_compare_exchange_weak(p, &old, v))
		;
}

static void *member(void *arg)
{
	int first = arg == NULL;

	set_fifo(PRIO);
	bursts_wait_start(&bursts);
	/* Without all members, waiting would block for ever. */
	if (atomic_load(&give_up))
		return NULL;
	for (unsigned long k = 0;; k++) {
		if (first)
			atomic_store(&order[k & 1], bursts_next(&bursts));
		store_max(&arrived[k % 3], now_ns());
		int e = pthread_barrier_wait(&barrier);
		store_max(&left[k % 3], now_ns());
		if (e != 0 && e != PTHREAD_BARRIER_SERIAL_THREAD)
			atomic_store(&barrier_error, e);
		/* Round 0 is start-up: keep rounds from 2 on. */
		if (first && k >= 2) {
			unsigned long p = (k - 1) % 3;
			hist_add(&hist, atomic_load(&left[p]) - atomic_load(&arrived[p]));
			atomic_store(&left[p], 0);
			atomic_store(&arrived[p], 0);
		}
		uint64_t o = atomic_load(&order[k & 1]);
		if (o == UINT64_MAX)
			break;
		if (o)
			sleep_until_ns(o);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	static const int counts[] = { 2, 8, 32 };
	double seconds = 3;
	int c;

	while ((c = getopt(argc, argv, "d:")) != -1) {
		switch (c) {
		case 'd': seconds = arg_double(optarg, "seconds"); break;
		default:
			fprintf(stderr, "usage: barrier [-d seconds]\n");
			return 2;
		}
	}
	printf("# workload barrier\n");
	report_impl("pthread_barrier_wait");
	lock_memory();
	report_throttling();

	for (int k = 0; k < 3; k++) {
		int n = counts[k];
		pthread_t th[32];
		char prefix[32];

		hist_init(&hist);
		for (int i = 0; i < 3; i++) {
			atomic_store(&arrived[i], 0);
			atomic_store(&left[i], 0);
		}
		int e = pthread_barrier_init(&barrier, NULL, (unsigned int)n);
		if (e) {
			printf("# pthread_barrier_init: %s\n", strerror(e));
			return 1;
		}
		bursts_init(&bursts, seconds / 3);
		int made = 0;
		while (made < n && pthread_create(&th[made], small_stack(), member,
						  made ? &th[made] : NULL) == 0)
			made++;
		if (made < n) {
			atomic_store(&give_up, 1);
			printf("# only %d of %d threads created: no result\n", made, n);
		}
		for (int i = 0; i < made; i++)
			pthread_join(th[i], NULL);
		pthread_barrier_destroy(&barrier);
		snprintf(prefix, sizeof(prefix), "%d thr ", n);
		hist_report(&hist, prefix, "us", 1000);
	}
	if (atomic_load(&barrier_error))
		printf("# pthread_barrier_wait returned %s\n",
		       strerror(atomic_load(&barrier_error)));
	report_sched();
	return 0;
}
