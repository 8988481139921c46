/*
 * uncontended: nanoseconds per lock+unlock pair for each mutex kind, one
 * thread, no contention.  This is the fast path every program pays.
 *
 * usage: uncontended [-d seconds]   (split evenly over the kinds)
 *
 * The figure is the median over blocks of 1000 pairs, each block timed
 * on its own: a tick, an interrupt or the host taking the vCPU lands in
 * a few blocks and moves the median by nothing, where a mean over the run
 * takes all of it.
 *
 * PP needs a SCHED_FIFO caller (NPTL returns EINVAL otherwise): "pp-below"
 * runs at priority 10 under a ceiling of 20, so every lock raises the
 * priority and every unlock drops it; "pp-at" runs at 20, the ceiling, so
 * no change is needed.  Without RT priority those two report nan.
 */
#include "common.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CEILING 20
#define BLOCK_PAIRS 1000
#define MAX_BLOCKS (1 << 17)

static double block_ns[MAX_BLOCKS];

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

struct kind {
	const char *name;
	int type, protocol, robust, pshared;
	int prio;		/* SCHED_FIFO priority, 0 = SCHED_OTHER */
};

static const struct kind kinds[] = {
	{ "normal", PTHREAD_MUTEX_NORMAL, PTHREAD_PRIO_NONE, 0, 0, 0 },
	{ "recursive", PTHREAD_MUTEX_RECURSIVE, PTHREAD_PRIO_NONE, 0, 0, 0 },
	{ "errorcheck", PTHREAD_MUTEX_ERRORCHECK, PTHREAD_PRIO_NONE, 0, 0, 0 },
	{ "adaptive", PTHREAD_MUTEX_ADAPTIVE_NP, PTHREAD_PRIO_NONE, 0, 0, 0 },
	{ "pi", PTHREAD_MUTEX_NORMAL, PTHREAD_PRIO_INHERIT, 0, 0, 0 },
	{ "pp-below", PTHREAD_MUTEX_NORMAL, PTHREAD_PRIO_PROTECT, 0, 0, CEILING - 10 },
	{ "pp-at", PTHREAD_MUTEX_NORMAL, PTHREAD_PRIO_PROTECT, 0, 0, CEILING },
	{ "robust", PTHREAD_MUTEX_NORMAL, PTHREAD_PRIO_NONE, 1, 0, 0 },
	{ "pshared", PTHREAD_MUTEX_NORMAL, PTHREAD_PRIO_NONE, 0, 1, 0 },
};
#define NKINDS (sizeof(kinds) / sizeof(kinds[0]))

/* Returns ns per pair, or nan if the mutex could not be used. */
static double measure(const struct kind *k, double seconds)
{
	pthread_mutexattr_t ma;
	pthread_mutex_t m;
	int e;

	if (k->prio ? !set_fifo(k->prio) : !set_other()) {
		printf("# %s: could not set the scheduling policy\n", k->name);
		return NAN;
	}
	pthread_mutexattr_init(&ma);
	pthread_mutexattr_settype(&ma, k->type);
	pthread_mutexattr_setprotocol(&ma, k->protocol);
	if (k->protocol == PTHREAD_PRIO_PROTECT)
		pthread_mutexattr_setprioceiling(&ma, CEILING);
	if (k->robust)
		pthread_mutexattr_setrobust(&ma, PTHREAD_MUTEX_ROBUST);
	if (k->pshared)
		pthread_mutexattr_setpshared(&ma, PTHREAD_PROCESS_SHARED);
	e = pthread_mutex_init(&m, &ma);
	pthread_mutexattr_destroy(&ma);
	if (e) {
		printf("# %s: pthread_mutex_init: %s\n", k->name, strerror(e));
		return NAN;
	}
	e = pthread_mutex_lock(&m);
	if (e) {
		printf("# %s: pthread_mutex_lock: %s\n", k->name, strerror(e));
		pthread_mutex_destroy(&m);
		return NAN;
	}
	pthread_mutex_unlock(&m);

	/* The clock is read between blocks only. */
	size_t blocks = 0;
	uint64_t t = now_ns(), end = t + (uint64_t)(seconds * 1e9);
	do {
		uint64_t start = t;
		for (int i = 0; i < BLOCK_PAIRS; i++) {
			pthread_mutex_lock(&m);
			pthread_mutex_unlock(&m);
		}
		t = now_ns();
		block_ns[blocks++] = (double)(t - start) / BLOCK_PAIRS;
	} while (t < end && blocks < MAX_BLOCKS);
	pthread_mutex_destroy(&m);
	qsort(block_ns, blocks, sizeof block_ns[0], cmp_double);
	return block_ns[blocks / 2];
}

int main(int argc, char **argv)
{
	double seconds = 2;
	int c;

	while ((c = getopt(argc, argv, "d:")) != -1) {
		switch (c) {
		case 'd': seconds = arg_double(optarg, "seconds"); break;
		default:
			fprintf(stderr, "usage: uncontended [-d seconds]\n");
			return 2;
		}
	}
	printf("# workload uncontended\n");
	report_impl("pthread_mutex_lock");
	/* One pinned thread: the time cannot include a migration. */
	pin_cpu(0);

	/* Warm up (caches, frequency, page faults) before the first kind. */
	measure(&kinds[0], 0.02);

	double ns[NKINDS];
	for (unsigned int i = 0; i < NKINDS; i++)
		ns[i] = measure(&kinds[i], seconds / NKINDS);
	set_other();
	report_sched();
	for (unsigned int i = 0; i < NKINDS; i++) {
		char name[64];
		snprintf(name, sizeof(name), "%s ns/pair", kinds[i].name);
		metric(name, ns[i]);
	}
	return 0;
}
