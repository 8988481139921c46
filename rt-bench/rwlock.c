/*
 * rwlock: the reader-writer lock's costs.
 *
 * - Uncontended: nanoseconds per rdlock+unlock and per wrlock+unlock pair,
 *   one pinned thread, for a private and a process-shared lock.
 * - Reader-heavy throughput: -n threads (default: one per CPU), each
 *   taking the lock for reading 63 times out of 64 and for writing once;
 *   inside, a reader reads a small table and a writer rewrites it.  The
 *   metric is lock+unlock pairs (ops) per second over all threads (more
 *   is better).
 *
 * usage: rwlock [-d seconds] [-n threads]
 */
#include "common.h"

#include <math.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define TABLE 16

static double uncontended(bool write, bool pshared, double seconds)
{
	pthread_rwlockattr_t a;
	pthread_rwlock_t rw;
	pthread_rwlockattr_init(&a);
	if (pshared)
		pthread_rwlockattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
	int e = pthread_rwlock_init(&rw, &a);
	pthread_rwlockattr_destroy(&a);
	if (e) {
		printf("# pthread_rwlock_init: %s\n", strerror(e));
		return NAN;
	}
	/* Blocks of 1000 pairs; the clock is read between blocks only. */
	uint64_t pairs = 0, t0 = now_ns(), end = t0 + (uint64_t)(seconds * 1e9), t;
	do {
		if (write) {
			for (int i = 0; i < 1000; i++) {
				pthread_rwlock_wrlock(&rw);
				pthread_rwlock_unlock(&rw);
			}
		} else {
			for (int i = 0; i < 1000; i++) {
				pthread_rwlock_rdlock(&rw);
				pthread_rwlock_unlock(&rw);
			}
		}
		pairs += 1000;
		t = now_ns();
	} while (t < end);
	pthread_rwlock_destroy(&rw);
	return (double)(t - t0) / (double)pairs;
}

static pthread_rwlock_t shared_lock = PTHREAD_RWLOCK_INITIALIZER;
static volatile long table[TABLE];
static atomic_int go, stop;

struct count {
	uint64_t reads, writes;
	long sum; /* keeps the reads from being optimized away */
} __attribute__((aligned(64)));

static void *worker(void *p)
{
	struct count *c = p;
	unsigned i = 0;
	while (!atomic_load(&go))
		;
	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		if ((++i & 63) == 0) {
			pthread_rwlock_wrlock(&shared_lock);
			for (int k = 0; k < TABLE; k++)
				table[k] = table[k] + 1;
			pthread_rwlock_unlock(&shared_lock);
			c->writes++;
		} else {
			pthread_rwlock_rdlock(&shared_lock);
			long s = 0;
			for (int k = 0; k < TABLE; k++)
				s += table[k];
			pthread_rwlock_unlock(&shared_lock);
			c->sum += s;
			c->reads++;
		}
	}
	return NULL;
}

int main(int argc, char **argv)
{
	double seconds = 2;
	int nthreads = ncpus(), c;
	while ((c = getopt(argc, argv, "d:n:")) != -1) {
		switch (c) {
		case 'd': seconds = arg_double(optarg, "seconds"); break;
		case 'n': nthreads = atoi(optarg); break;
		default:
			fprintf(stderr, "usage: rwlock [-d seconds] [-n threads]\n");
			return 2;
		}
	}
	if (nthreads < 1 || nthreads > 256) {
		fprintf(stderr, "rwlock: -n between 1 and 256\n");
		return 2;
	}
	printf("# workload rwlock\n");
	report_impl("pthread_rwlock_rdlock");

	/* Uncontended: half the time, one pinned thread. */
	pin_cpu(0);
	uncontended(false, false, 0.02); /* warm up */
	double part = seconds / 2 / 4;
	double rd = uncontended(false, false, part), wr = uncontended(true, false, part);
	double rd_sh = uncontended(false, true, part), wr_sh = uncontended(true, true, part);

	/* Reader-heavy throughput: the other half, threads on every CPU. */
	cpu_set_t all;
	CPU_ZERO(&all);
	for (int i = 0; i < ncpus(); i++)
		CPU_SET(i, &all);
	sched_setaffinity(0, sizeof all, &all);
	pthread_t th[256];
	struct count *counts = aligned_alloc(64, sizeof(struct count) * (size_t)nthreads);
	memset(counts, 0, sizeof(struct count) * (size_t)nthreads);
	int made = 0;
	for (int i = 0; i < nthreads; i++)
		if (pthread_create(&th[made], small_stack(), worker, &counts[i]) == 0)
			made++;
	uint64_t t0 = now_ns();
	atomic_store(&go, 1);
	sleep_ns((uint64_t)(seconds / 2 * 1e9));
	atomic_store(&stop, 1);
	uint64_t t1 = now_ns();
	for (int i = 0; i < made; i++)
		pthread_join(th[i], NULL);
	uint64_t reads = 0, writes = 0;
	for (int i = 0; i < made; i++) {
		reads += counts[i].reads;
		writes += counts[i].writes;
	}
	double pairs_per_s = made == nthreads ? (double)(reads + writes) / ((double)(t1 - t0) / 1e9) : NAN;

	report_sched();
	metric("rdlock ns/pair", rd);
	metric("wrlock ns/pair", wr);
	metric("pshared rdlock ns/pair", rd_sh);
	metric("pshared wrlock ns/pair", wr_sh);
	metric("reader-heavy ops/s", pairs_per_s);
	free(counts);
	return 0;
}
