/*
 * spurious: how often a condition wait returns with nothing to do.  P
 * producers each put one item at a time into a counter under the mutex
 * and signal; C consumers take items, waiting with a deadline while there
 * are none; a signal thread sends SIGUSR1 to a consumer at random every
 * 50 microseconds (the handler has SA_RESTART).  A return from the wait that finds no item while the
 * deadline has not passed is spurious: POSIX allows it, but each one costs
 * the waiter a relock and another trip through the kernel.
 *
 * usage: spurious [-c consumers] [-p producers] [-n items] [-t deadline-us]
 * Reports spurious returns per 1000 waits, waits per item, and the number
 * of handler runs per 1000 waits (the storm's strength, for comparison).
 */
#include "common.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static pthread_mutex_t mutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static long items;		/* (mutex) */
static long produced_all;	/* (mutex): every producer is done */
static atomic_long waits, spurious, handled;
static atomic_int stop_storm;
static long deadline_ns = 2000000;	/* -t: each wait's deadline */

static void on_signal(int sig)
{
	(void)sig;
	atomic_fetch_add_explicit(&handled, 1, memory_order_relaxed);
}

static void *consumer(void *arg)
{
	(void)arg;
	long w = 0, s = 0;
	pthread_mutex_lock(&mutex);
	for (;;) {
		while (items == 0 && !produced_all) {
			struct timespec deadline;
			clock_gettime(CLOCK_REALTIME, &deadline);
			deadline.tv_nsec += deadline_ns;
			deadline.tv_sec += deadline.tv_nsec / 1000000000;
			deadline.tv_nsec %= 1000000000;
			int r = pthread_cond_timedwait(&cond, &mutex, &deadline);
			w++;
			if (r == 0 && items == 0 && !produced_all)
				s++;
		}
		if (items == 0)
			break;
		items--;
	}
	pthread_mutex_unlock(&mutex);
	atomic_fetch_add(&waits, w);
	atomic_fetch_add(&spurious, s);
	return NULL;
}

struct producer {
	long count;
};

static void *producer(void *arg)
{
	const struct producer *p = arg;
	for (long i = 0; i < p->count; i++) {
		pthread_mutex_lock(&mutex);
		items++;
		pthread_mutex_unlock(&mutex);
		pthread_cond_signal(&cond);
		/* Let consumers fall asleep now and then. */
		if ((i & 15) == 0)
			sleep_ns(20000);
	}
	return NULL;
}

struct storm {
	pthread_t *targets;
	long n;
};

/* Ends: stop_storm, set by main once the producers are done. */
static void *storm(void *arg)
{
	const struct storm *st = arg;
	unsigned seed = 1;
	while (!atomic_load(&stop_storm)) {
		pthread_kill(st->targets[rand_r(&seed) % st->n], SIGUSR1);
		sleep_ns(50000);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	long nc = 4, np = 2, n = 200000;
	int c;
	while ((c = getopt(argc, argv, "c:p:n:t:")) != -1) {
		switch (c) {
		case 'c': nc = arg_long(optarg, "consumers"); break;
		case 'p': np = arg_long(optarg, "producers"); break;
		case 'n': n = arg_long(optarg, "items"); break;
		case 't': deadline_ns = arg_long(optarg, "deadline-us") * 1000; break;
		default:
			fprintf(stderr, "usage: spurious [-c consumers] [-p producers] [-n items] [-t deadline-us]\n");
			return 2;
		}
	}
	if (nc < 1)
		nc = 1;
	if (np < 1)
		np = 1;
	printf("# workload spurious: %ld consumers, %ld producers, %ld items, SIGUSR1 storm\n", nc, np, n);
	report_impl("pthread_cond_timedwait");

	struct sigaction sa = { .sa_handler = on_signal };
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESTART;
	sigaction(SIGUSR1, &sa, NULL);

	pthread_t *cons = calloc((size_t)nc, sizeof(*cons));
	pthread_t *prod = calloc((size_t)np, sizeof(*prod));
	struct producer *pp = calloc((size_t)np, sizeof(*pp));
	if (!cons || !prod || !pp)
		return 1;
	for (long i = 0; i < nc; i++)
		if (pthread_create(&cons[i], small_stack(), consumer, NULL))
			return 1;
	struct storm st = { cons, nc };
	pthread_t storm_thread;
	if (pthread_create(&storm_thread, small_stack(), storm, &st))
		return 1;
	for (long i = 0; i < np; i++) {
		pp[i].count = n / np;
		if (pthread_create(&prod[i], small_stack(), producer, &pp[i]))
			return 1;
	}
	for (long i = 0; i < np; i++)
		pthread_join(prod[i], NULL);
	pthread_mutex_lock(&mutex);
	produced_all = 1;
	pthread_mutex_unlock(&mutex);
	pthread_cond_broadcast(&cond);
	for (long i = 0; i < nc; i++)
		pthread_join(cons[i], NULL);
	atomic_store(&stop_storm, 1);
	pthread_join(storm_thread, NULL);

	double w = (double)atomic_load(&waits);
	metric("spurious/1000 waits", w ? 1000.0 * (double)atomic_load(&spurious) / w : 0);
	metric("waits/item", w / (double)n);
	metric("handlers/1000 waits", w ? 1000.0 * (double)atomic_load(&handled) / w : 0);
	free(cons);
	free(prod);
	free(pp);
	return 0;
}
