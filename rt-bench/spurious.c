/*
 * spurious: how often a condition wait returns with nothing to do.  P
 * producers each put one item at a time into a counter under the mutex
 * and signal; C consumers take items, waiting with a deadline while there
 * are none; a signal thread sends SIGUSR1 to a consumer at random every
 * 50 microseconds (the handler has SA_RESTART).  A return of 0 from the
 * wait that finds no item is spurious: POSIX allows it, but each one
 * costs the waiter a relock and another trip through the kernel.  One
 * that comes after the deadline had passed (a wait that timed out and
 * still returned 0) is also counted apart.  So is a wait passed over: it
 * ended with nothing (timed out, or returned 0 finding nothing) while a
 * waiter that began to wait after it had returned 0 and taken an item,
 * an inversion of the order of arrival.
 *
 * By default the producers pause 20 us every 16 items: items come faster
 * than one consumer takes them, so most returns that find nothing are
 * items another consumer took first, which every implementation allows
 * alike.  -i us makes each producer pause that long after every
 * item: a trickle, where a consumer finds nothing only if its wait
 * returned 0 for a signal that went to another consumer, or with its
 * deadline passed.  -q turns the signal storm off.  -P makes the mutex a
 * priority-inheritance one (condition waits then take the PI path).  -s
 * makes the condition and the mutex process-shared (the condition then
 * serves its waiters in groups instead of queueing them).
 *
 * usage: spurious [-c consumers] [-p producers] [-n items] [-t deadline-us]
 *                 [-i pause-us] [-q] [-P] [-s]
 * Reports spurious returns per 1000 waits, how many of those came after
 * the deadline had passed (a wait that timed out and returned 0), waits
 * passed over per 1000 items (per item served, not per wait: a library
 * that waits less would otherwise count more), waits per item, and the
 * number of handler runs per 1000 waits (the storm's strength, for
 * comparison).
 */
#include "common.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static pthread_mutex_t mutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static long items;		/* (mutex) */
static long produced_all;	/* (mutex): every producer is done */
static atomic_long waits, spurious, late, passed_over, handled;

/* A consumer's wait in progress, for the order of arrival (mutex). */
struct turn {
	long ticket;	/* its place in the order of arrival */
	bool waiting;
	bool passed;	/* a later waiter was served meanwhile */
};
static struct turn *turns;
static long consumers, next_ticket;

/* A wait that returned 0 is served: each wait that began before it and
 * is still in progress has been passed, unless it too ends with an item. */
static void served(const struct turn *t)
{
	for (long i = 0; i < consumers; i++)
		if (turns[i].waiting && turns[i].ticket < t->ticket)
			turns[i].passed = true;
}

static atomic_int stop_storm;
static long deadline_ns = 2000000;	/* -t: each wait's deadline */
static long pause_ns;			/* -i: a producer's pause after every item */

static void on_signal(int sig)
{
	(void)sig;
	atomic_fetch_add_explicit(&handled, 1, memory_order_relaxed);
}

static void *consumer(void *arg)
{
	struct turn *t = arg;
	long w = 0, s = 0, l = 0, p = 0;
	pthread_mutex_lock(&mutex);
	for (;;) {
		while (items == 0 && !produced_all) {
			struct timespec deadline;
			clock_gettime(CLOCK_REALTIME, &deadline);
			deadline.tv_nsec += deadline_ns;
			deadline.tv_sec += deadline.tv_nsec / 1000000000;
			deadline.tv_nsec %= 1000000000;
			*t = (struct turn){ .ticket = ++next_ticket, .waiting = true };
			int r = pthread_cond_timedwait(&cond, &mutex, &deadline);
			t->waiting = false;
			w++;
			if (items == 0 && !produced_all && t->passed)
				p++;
			else if (r == 0 && items > 0)
				served(t);
			if (r == 0 && items == 0 && !produced_all) {
				s++;
				struct timespec now;
				clock_gettime(CLOCK_REALTIME, &now);
				if (now.tv_sec > deadline.tv_sec ||
				    (now.tv_sec == deadline.tv_sec && now.tv_nsec >= deadline.tv_nsec))
					l++;
			}
		}
		if (items == 0)
			break;
		items--;
	}
	pthread_mutex_unlock(&mutex);
	atomic_fetch_add(&waits, w);
	atomic_fetch_add(&spurious, s);
	atomic_fetch_add(&late, l);
	atomic_fetch_add(&passed_over, p);
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
		if (pause_ns)
			sleep_ns((uint64_t)pause_ns);
		else if ((i & 15) == 0)
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
	int c, quiet = 0, pi = 0, shared = 0;
	while ((c = getopt(argc, argv, "c:p:n:t:i:qPs")) != -1) {
		switch (c) {
		case 'c': nc = arg_long(optarg, "consumers"); break;
		case 'p': np = arg_long(optarg, "producers"); break;
		case 'n': n = arg_long(optarg, "items"); break;
		case 't': deadline_ns = arg_long(optarg, "deadline-us") * 1000; break;
		case 'i': pause_ns = arg_long(optarg, "pause-us") * 1000; break;
		case 'q': quiet = 1; break;
		case 'P': pi = 1; break;
		case 's': shared = 1; break;
		default:
			fprintf(stderr, "usage: spurious [-c consumers] [-p producers] [-n items] [-t deadline-us]"
				" [-i pause-us] [-q] [-P] [-s]\n");
			return 2;
		}
	}
	if (nc < 1)
		nc = 1;
	if (np < 1)
		np = 1;
	if (pi || shared) {
		pthread_mutexattr_t a;
		pthread_mutexattr_init(&a);
		if ((pi && pthread_mutexattr_setprotocol(&a, PTHREAD_PRIO_INHERIT)) ||
		    (shared && pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED)) ||
		    pthread_mutex_init(&mutex, &a)) {
			printf("# the mutex's attributes: refused\n");
			return 1;
		}
		pthread_mutexattr_destroy(&a);
	}
	if (shared) {
		pthread_condattr_t a;
		pthread_condattr_init(&a);
		if (pthread_condattr_setpshared(&a, PTHREAD_PROCESS_SHARED) || pthread_cond_init(&cond, &a)) {
			printf("# a process-shared condition: refused\n");
			return 1;
		}
		pthread_condattr_destroy(&a);
	}
	printf("# workload spurious: %ld consumers, %ld producers, %ld items, %s, %s, %s mutex%s\n", nc, np, n,
	       pause_ns ? "a pause after every item" : "a pause every 16 items",
	       quiet ? "no signals" : "SIGUSR1 storm", pi ? "PI" : "default",
	       shared ? ", process-shared" : "");
	report_impl("pthread_cond_timedwait");

	struct sigaction sa = { .sa_handler = on_signal };
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESTART;
	sigaction(SIGUSR1, &sa, NULL);

	pthread_t *cons = calloc((size_t)nc, sizeof(*cons));
	pthread_t *prod = calloc((size_t)np, sizeof(*prod));
	struct producer *pp = calloc((size_t)np, sizeof(*pp));
	turns = calloc((size_t)nc, sizeof(*turns));
	if (!cons || !prod || !pp || !turns)
		return 1;
	consumers = nc;
	for (long i = 0; i < nc; i++)
		if (pthread_create(&cons[i], small_stack(), consumer, &turns[i]))
			return 1;
	struct storm st = { cons, nc };
	pthread_t storm_thread;
	if (!quiet && pthread_create(&storm_thread, small_stack(), storm, &st))
		return 1;
	for (long i = 0; i < np; i++) {
		pp[i].count = n / np;
		if (pthread_create(&prod[i], small_stack(), producer, &pp[i]))
			return 1;
	}
	for (long i = 0; i < np; i++)
		pthread_join(prod[i], NULL);
	/* The storm ends before any consumer can exit: pthread_kill of a
	 * thread that has been joined is undefined. */
	atomic_store(&stop_storm, 1);
	if (!quiet)
		pthread_join(storm_thread, NULL);
	pthread_mutex_lock(&mutex);
	produced_all = 1;
	pthread_mutex_unlock(&mutex);
	pthread_cond_broadcast(&cond);
	for (long i = 0; i < nc; i++)
		pthread_join(cons[i], NULL);

	double w = (double)atomic_load(&waits);
	metric("spurious/1000 waits", w ? 1000.0 * (double)atomic_load(&spurious) / w : 0);
	metric("past deadline/1000 waits", w ? 1000.0 * (double)atomic_load(&late) / w : 0);
	metric("passed over/1000 items", 1000.0 * (double)atomic_load(&passed_over) / (double)n);
	metric("waits/item", w / (double)n);
	metric("handlers/1000 waits", w ? 1000.0 * (double)atomic_load(&handled) / w : 0);
	free(cons);
	free(prod);
	free(pp);
	free(turns);
	return 0;
}
