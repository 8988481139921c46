/*
 * pp-syscalls: cost of a priority-protect (PP) lock/unlock pair when the
 * priority really changes: the thread runs SCHED_FIFO at 10, the mutex
 * ceiling is 20, so every lock raises the priority and every unlock drops
 * it.  NPTL spends two sched_setscheduler calls per pair on that.
 *
 * usage: pp-syscalls [-d seconds] [-n pairs]
 *   -d: time-bounded run, reports ns per pair.
 *   -n: exactly n pairs (bounded by -d too), for counting syscalls from
 *       outside: scripts/bench runs it under strace with two values of n
 *       and divides the difference.
 */
#include "common.h"

#include <math.h>
#include <pthread.h>
#include <string.h>
#include <unistd.h>

#define PRIO 10
#define CEILING 20

int main(int argc, char **argv)
{
	double seconds = 2;
	long exact = -1;
	int c;

	while ((c = getopt(argc, argv, "d:n:")) != -1) {
		switch (c) {
		case 'd': seconds = arg_double(optarg, "seconds"); break;
		case 'n': exact = arg_long(optarg, "pairs"); break;
		default:
			fprintf(stderr, "usage: pp-syscalls [-d seconds] [-n pairs]\n");
			return 2;
		}
	}
	printf("# workload pp-syscalls\n");
	report_impl("pthread_mutex_lock");
	pin_cpu(0);
	set_fifo(PRIO);
	report_sched();

	pthread_mutexattr_t ma;
	pthread_mutex_t m;
	pthread_mutexattr_init(&ma);
	pthread_mutexattr_setprotocol(&ma, PTHREAD_PRIO_PROTECT);
	pthread_mutexattr_setprioceiling(&ma, CEILING);
	int e = pthread_mutex_init(&m, &ma);
	if (e == 0) {
		/* One probe pair: NPTL refuses PP for a SCHED_OTHER caller. */
		e = pthread_mutex_lock(&m);
		if (e == 0)
			pthread_mutex_unlock(&m);
	}
	if (e) {
		printf("# PP mutex unusable: %s\n", strerror(e));
		metric("ns/pair", NAN);
		return 0;
	}

	/* Blocks of 100 pairs, clock read between blocks only. */
	uint64_t pairs = 0, t0 = now_ns(), end = t0 + (uint64_t)(seconds * 1e9), t;
	do {
		for (int i = 0; i < 100 && (exact < 0 || (long)pairs < exact); i++) {
			pthread_mutex_lock(&m);
			pthread_mutex_unlock(&m);
			pairs++;
		}
		t = now_ns();
	} while (t < end && (exact < 0 || (long)pairs < exact));
	pthread_mutex_destroy(&m);
	printf("# %llu pairs\n", (unsigned long long)pairs);
	metric("ns/pair", pairs ? (double)(t - t0) / (double)pairs : NAN);
	return 0;
}
