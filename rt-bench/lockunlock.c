/*
 * pi-lockunlock / normal-lockunlock: two SCHED_FIFO threads, priorities 98
 * and 99, pinned to two different cores, lock and unlock one mutex in a
 * loop.  The priority-99 thread times each lock+unlock pair with the TSC.
 *
 * usage: lockunlock [-t pi|normal] [-d seconds] [-i us] [-H histogram-file]
 *                   [-S slow-pairs-file]
 *
 * -i us: an interrupting thread at priority 99 on the priority-98
 * thread's core takes that core for us microseconds every millisecond,
 * as an interrupt handler or a higher-priority task would, and now and
 * then while that thread holds the mutex.
 *
 * "longest slow run" is the longest run of consecutive timed pairs that
 * took over 4 us each.  A lone slow pair is an interrupt or a VM exit; a
 * long run of them is a convoy: the two threads hand the mutex to each
 * other through the kernel on every pair, two system calls each, until
 * their timing breaks it.
 *
 * -S file: the timer value at the start and the length of each slow
 * timed pair (up to SLOW_MAX), one "start cycles" line each, for
 * scripts/tail-trace to set beside a trace of the same run.
 *
 * Both threads spin, so the loop runs in bursts (common.h) to stay under
 * the real-time throttling budget.
 */
#include "common.h"

#include <pthread.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static pthread_mutex_t mutex;
static struct bursts bursts;
static struct hist hist;
static _Atomic unsigned long pairs; /* by both threads: to count futex calls per pair */
static _Atomic int done;		/* the timed thread is done: the interrupter stops */
static uint64_t slow_pair;		/* cycles: 4 us */
static unsigned long longest_slow_run;	/* written by the timed thread only */
static double interrupt_us;

#define SLOW_MAX 65536
static struct slow_pair {
	uint64_t start, length;
} slow_pairs[SLOW_MAX];			/* written by the timed thread only */
static unsigned int slow_count;

struct worker {
	int prio, cpu, timed;
};

static void *interrupt(void *arg)
{
	const struct worker *w = arg;
	uint64_t busy = (uint64_t)(interrupt_us * 1000);

	set_fifo(w->prio);
	pin_cpu(w->cpu);
	bursts_wait_start(&bursts);
	while (!atomic_load_explicit(&done, memory_order_relaxed)) {
		sleep_ns(1000000);
		uint64_t t = now_ns();
		while (now_ns() - t < busy)
			;
	}
	return NULL;
}

static void *run(void *arg)
{
	const struct worker *w = arg;
	int drop = 1;		/* the first pair is cache-cold */
	unsigned long slow_run = 0;

	set_fifo(w->prio);
	pin_cpu(w->cpu);
	bursts_wait_start(&bursts);
	for (unsigned long i = 1;; i++) {
		/* Look at the clock every 64 pairs, outside the timed part. */
		if ((i & 63) == 0) {
			int r = bursts_check(&bursts);
			if (r < 0) {
				atomic_fetch_add(&pairs, i);
				if (w->timed)
					atomic_store(&done, 1);
				break;
			}
			if (r > 0)
				drop = 1;
		}
		uint64_t t0 = timer_start();
		pthread_mutex_lock(&mutex);
		pthread_mutex_unlock(&mutex);
		uint64_t t1 = timer_end();
		if (w->timed && !drop) {
			hist_add(&hist, t1 - t0);
			slow_run = t1 - t0 > slow_pair ? slow_run + 1 : 0;
			if (slow_run && slow_count < SLOW_MAX)
				slow_pairs[slow_count++] = (struct slow_pair){ t0, t1 - t0 };
			if (slow_run > longest_slow_run)
				longest_slow_run = slow_run;
		}
		drop = 0;
	}
	return NULL;
}

static int write_slow_pairs(const char *path)
{
	FILE *f = fopen(path, "w");

	if (!f) {
		printf("# cannot write %s: %s\n", path, strerror(errno));
		return -1;
	}
	fprintf(f, "# start_%s length_%s (pairs over 4 us, the first %d)\n", TIMER_UNIT, TIMER_UNIT, SLOW_MAX);
	for (unsigned int k = 0; k < slow_count; k++)
		fprintf(f, "%llu %llu\n", (unsigned long long)slow_pairs[k].start,
			(unsigned long long)slow_pairs[k].length);
	return fclose(f);
}

int main(int argc, char **argv)
{
	const char *type = "pi", *histfile = NULL, *slowfile = NULL;
	double seconds = 2;
	int c;

	while ((c = getopt(argc, argv, "t:d:i:H:S:")) != -1) {
		switch (c) {
		case 't': type = optarg; break;
		case 'd': seconds = arg_double(optarg, "seconds"); break;
		case 'i': interrupt_us = arg_double(optarg, "interrupt us"); break;
		case 'H': histfile = optarg; break;
		case 'S': slowfile = optarg; break;
		default:
			fprintf(stderr, "usage: lockunlock [-t pi|normal] [-d seconds] [-i us] [-H file] [-S file]\n");
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
	slow_pair = (uint64_t)(4 * timer_mhz());
	if (interrupt_us > 0)
		printf("# interrupted: %.0f us of every ms on the low-priority thread's core\n", interrupt_us);

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

	struct worker hi = { 99, 0, 1 }, lo = { 98, 1, 0 }, irq = { 99, 1, 0 };
	pthread_t th[3];
	int n = interrupt_us > 0 ? 3 : 2;
	bursts_init(&bursts, seconds);
	if (pthread_create(&th[0], small_stack(), run, &hi) ||
	    pthread_create(&th[1], small_stack(), run, &lo) ||
	    (n == 3 && pthread_create(&th[2], small_stack(), interrupt, &irq))) {
		printf("# pthread_create failed\n");
		return 1;
	}
	for (int k = 0; k < n; k++)
		pthread_join(th[k], NULL);

	report_sched();
	printf("# pairs %lu\n", atomic_load(&pairs));
	hist_report(&hist, "", TIMER_UNIT, 1);
	metric("longest slow run pairs", (double)longest_slow_run);
	if (histfile)
		hist_write(&hist, histfile, TIMER_UNIT);
	if (slowfile && write_slow_pairs(slowfile) != 0)
		return 1;
	pthread_mutex_destroy(&mutex);
	return 0;
}
