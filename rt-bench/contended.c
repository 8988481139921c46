/*
 * contended: operations per second of lock, increment, unlock on one
 * default mutex with 1, 2 and 4 SCHED_OTHER threads.  Thread i is pinned
 * to core i mod ncpus: unpinned, two threads often share a core and take
 * turns by time slice, which measures the scheduler, not the lock (runs
 * differed 2x).  With more threads than cores this also measures how the
 * lock behaves when its owner is preempted.
 *
 * usage: contended [-d seconds]   (split evenly over 1, 2 and 4 threads)
 */
#include "common.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <unistd.h>

static pthread_mutex_t mutex = PTHREAD_MUTEX_INITIALIZER;
static unsigned long counter;	/* protected by mutex */
static atomic_int go, stop;

static void *worker(void *arg)
{
	pin_cpu((int)(long)arg % ncpus());
	while (!atomic_load(&go))
		sched_yield();
	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		pthread_mutex_lock(&mutex);
		counter++;
		pthread_mutex_unlock(&mutex);
	}
	return NULL;
}

static double ops_per_s(int nthreads, double seconds)
{
	pthread_t th[4];
	int made = 0;

	counter = 0;
	atomic_store(&go, 0);
	atomic_store(&stop, 0);
	for (int i = 0; i < nthreads; i++)
		if (pthread_create(&th[made], small_stack(), worker, (void *)(long)i) == 0)
			made++;
	/* The main thread only sleeps: it does not compete for the lock. */
	uint64_t t0 = now_ns();
	atomic_store(&go, 1);
	sleep_ns((uint64_t)(seconds * 1e9));
	atomic_store(&stop, 1);
	uint64_t t1 = now_ns();
	for (int i = 0; i < made; i++)
		pthread_join(th[i], NULL);
	if (made != nthreads)
		printf("# only %d of %d threads created\n", made, nthreads);
	return (double)counter / ((double)(t1 - t0) / 1e9);
}

int main(int argc, char **argv)
{
	static const int counts[] = { 1, 2, 4 };
	double seconds = 2;
	int c;

	while ((c = getopt(argc, argv, "d:")) != -1) {
		switch (c) {
		case 'd': seconds = arg_double(optarg, "seconds"); break;
		default:
			fprintf(stderr, "usage: contended [-d seconds]\n");
			return 2;
		}
	}
	printf("# workload contended\n");
	report_impl("pthread_mutex_lock");
	for (int i = 0; i < 3; i++) {
		char name[32];
		double v = ops_per_s(counts[i], seconds / 3);
		snprintf(name, sizeof(name), "%d thr ops/s", counts[i]);
		metric(name, v);
	}
	return 0;
}
