/*
 * pi-lockunlock / normal-lockunlock: two SCHED_FIFO threads, priorities 98
 * and 99, pinned to two different cores, lock and unlock one mutex in a
 * loop.  The priority-99 thread times each lock+unlock pair with the TSC.
 *
 * usage: lockunlock [-t pi|normal] [-d seconds] [-H histogram-file]
 *
 * Both threads spin, so the loop runs in bursts (common.h) to stay under
 * the real-time throttling budget.
 */
#include "common.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static pthread_mutex_t mutex;
static struct bursts bursts;
static struct hist hist;
static _Atomic unsigned long pairs; /* by both threads: to count futex calls per pair */

struct worker {
	int prio, cpu, timed;
};

static void *run(void *arg)
{
	const struct worker *w = arg;
	int drop = 1;		/* the first pair is cache-cold */

	set_fifo(w->prio);
	pin_cpu(w->cpu);
	bursts_wait_start(&bursts);
	for (unsigned long i = 1;; i++) {
		/* Look at the clock every 64 pairs, outside the timed part. */
		if ((i & 63) == 0) {
			int r = bursts_check(&bursts);
			if (r < 0) {
				atomic_fetch_add(&pairs, i);
				break;
			}
			if (r > 0)
				drop = 1;
		}
		uint64_t t0 = timer_start();
		pthread_mutex_lock(&mutex);
		pthread_mutex_unlock(&mutex);
		uint64_t t1 = timer_end();
		if (w->timed && !drop)
			hist_add(&hist, t1 - t0);
		drop = 0;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	const char *type = "pi", *histfile = NULL;
	double seconds = 2;
	int c;

	while ((c = getopt(argc, argv, "t:d:H:")) != -1) {
		switch (c) {
		case 't': type = optarg; break;
		case 'd': seconds = arg_double(optarg, "seconds"); break;
		case 'H': histfile = optarg; break;
		default:
			fprintf(stderr, "usage: lockunlock [-t pi|normal] [-d seconds] [-H file]\n");
			return 2;
		}
	}
	int pi = strcmp(type, "pi") == 0;
	if (!pi && strcmp(type, "normal") != 0) {
		fprintf(stderr, "lockunlock: -t pi or -t normal\n");
		return 2;
	}

	printf("# workload %s-lockunlock\n", type);
	report_impl("pthread_mutex_lock");
	lock_memory();
	report_throttling();
	if (ncpus() < 2)
		printf("# only one CPU: both threads share it\n");
	printf("# timer: %s, %.1f per us\n", TIMER_UNIT, timer_mhz());

	pthread_mutexattr_t ma;
	pthread_mutexattr_init(&ma);
	if (pi)
		pthread_mutexattr_setprotocol(&ma, PTHREAD_PRIO_INHERIT);
	int e = pthread_mutex_init(&mutex, &ma);
	if (e) {
		printf("# pthread_mutex_init: %s\n", strerror(e));
		return 1;
	}
	hist_init(&hist);

	struct worker hi = { 99, 0, 1 }, lo = { 98, 1, 0 };
	pthread_t th[2];
	bursts_init(&bursts, seconds);
	if (pthread_create(&th[0], small_stack(), run, &hi) ||
	    pthread_create(&th[1], small_stack(), run, &lo)) {
		printf("# pthread_create failed\n");
		return 1;
	}
	pthread_join(th[0], NULL);
	pthread_join(th[1], NULL);

	report_sched();
	printf("# pairs %lu\n", atomic_load(&pairs));
	hist_report(&hist, "", TIMER_UNIT, 1);
	if (histfile)
		hist_write(&hist, histfile, TIMER_UNIT);
	pthread_mutex_destroy(&mutex);
	return 0;
}
