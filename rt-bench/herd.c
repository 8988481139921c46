/*
 * herd: 32 threads wait on one condvar; the main thread broadcasts with the
 * mutex held, then waits until every waiter has taken the mutex, checked
 * in and is waiting again.  A condvar that wakes everybody at once makes
 * them all run into the held mutex and sleep again (the thundering herd);
 * one that requeues them onto the mutex wakes them one by one.
 *
 * usage: herd [-n waiters] [-r rounds] [-d max-seconds]
 * Reports us per round and context switches per round (getrusage, all
 * threads).  scripts/bench counts futex calls from outside (perf or strace,
 * two round counts, the difference divided).
 */
#include "common.h"

#include <pthread.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <unistd.h>

/* All protected by mutex. */
static pthread_mutex_t mutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t wake = PTHREAD_COND_INITIALIZER;	/* main -> waiters */
static pthread_cond_t back = PTHREAD_COND_INITIALIZER;	/* last waiter -> main */
static long nwaiters, checked_in;
static unsigned long round_no;
static int stop;

static void *waiter(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&mutex);
	while (!stop) {
		if (++checked_in == nwaiters)
			pthread_cond_signal(&back);
		unsigned long mine = round_no;
		while (round_no == mine && !stop)
			pthread_cond_wait(&wake, &mutex);
	}
	pthread_mutex_unlock(&mutex);
	return NULL;
}

int main(int argc, char **argv)
{
	long rounds = 1000000;
	double seconds = 2;
	int c;

	nwaiters = 32;
	while ((c = getopt(argc, argv, "n:r:d:")) != -1) {
		switch (c) {
		case 'n': nwaiters = arg_long(optarg, "waiters"); break;
		case 'r': rounds = arg_long(optarg, "rounds"); break;
		case 'd': seconds = arg_double(optarg, "seconds"); break;
		default:
			fprintf(stderr, "usage: herd [-n waiters] [-r rounds] [-d max-seconds]\n");
			return 2;
		}
	}
	if (nwaiters < 1)
		nwaiters = 1;
	printf("# workload herd: %ld waiters\n", nwaiters);
	report_impl("pthread_cond_broadcast");

	pthread_t *th = calloc((size_t)nwaiters, sizeof(*th));
	for (long i = 0; i < nwaiters; i++)
		if (pthread_create(&th[i], small_stack(), waiter, NULL)) {
			printf("# pthread_create failed\n");
			return 1;
		}

	struct rusage r0, r1;
	uint64_t t0 = 0, t1, deadline = 0;
	long done = -1;		/* round -1 is everybody arriving */

	pthread_mutex_lock(&mutex);
	for (;;) {
		while (checked_in < nwaiters)
			pthread_cond_wait(&back, &mutex);
		if (++done == 0) {
			getrusage(RUSAGE_SELF, &r0);
			t0 = now_ns();
			deadline = t0 + (uint64_t)(seconds * 1e9);
		}
		if (done >= rounds || now_ns() >= deadline)
			break;
		checked_in = 0;
		round_no++;
		/* With the mutex held, as in the classic herd. */
		pthread_cond_broadcast(&wake);
	}
	t1 = now_ns();
	getrusage(RUSAGE_SELF, &r1);
	stop = 1;
	pthread_cond_broadcast(&wake);
	pthread_mutex_unlock(&mutex);
	for (long i = 0; i < nwaiters; i++)
		pthread_join(th[i], NULL);
	free(th);

	printf("# %ld rounds in %.3f s\n", done, (double)(t1 - t0) / 1e9);
	double d = done ? (double)done : 1;
	long cs = (r1.ru_nvcsw - r0.ru_nvcsw) + (r1.ru_nivcsw - r0.ru_nivcsw);
	metric("us/round", (double)(t1 - t0) / 1e3 / d);
	metric("ctxsw/round", (double)cs / d);
	/* Voluntary switches alone: the times a thread blocked, which the
	 * library decides; the involuntary ones come from other load too. */
	metric("sleeps/round", (double)(r1.ru_nvcsw - r0.ru_nvcsw) / d);
	return 0;
}
