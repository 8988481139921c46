/*
 * cond-perf: the shape of glibc's old nptl/cond-perf.c, written anew with a
 * predicate.  N consumers each decrement a counter under mutex 1 (the last
 * one tells the main thread through mutex 2 / condvar 2) and wait on
 * condvar 1.  The main thread, for R rounds, waits for all of them, then
 * broadcasts condvar 1, releasing mutex 1 before the broadcast or, with
 * -k, after it.
 *
 * The original waits with no predicate, so a single spurious wake-up (which
 * POSIX allows) miscounts and hangs it.  Here consumers wait for the round
 * number to change.
 *
 * usage: cond-perf [-n consumers] [-r rounds] [-d max-seconds] [-k]
 * Reports per round: wall, user and sys time (us) and context switches.
 */
#include "common.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

static pthread_mutex_t mut1 = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond1 = PTHREAD_COND_INITIALIZER;
static long ntogo;		/* consumers yet to check in this round (mut1) */
static unsigned long round_no;	/* the predicate: bumped per round (mut1) */
static int stop;		/* (mut1) */

static pthread_mutex_t mut2 = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond2 = PTHREAD_COND_INITIALIZER;
static int alldone;		/* (mut2) */

static void *consumer(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&mut1);
	while (!stop) {
		if (--ntogo == 0) {
			pthread_mutex_lock(&mut2);
			alldone = 1;
			pthread_cond_signal(&cond2);
			pthread_mutex_unlock(&mut2);
		}
		unsigned long mine = round_no;
		while (round_no == mine && !stop)
			pthread_cond_wait(&cond1, &mut1);
	}
	pthread_mutex_unlock(&mut1);
	return NULL;
}

static void wait_all(void)
{
	pthread_mutex_lock(&mut2);
	while (!alldone)
		pthread_cond_wait(&cond2, &mut2);
	alldone = 0;
	pthread_mutex_unlock(&mut2);
}

static double tv_us(struct timeval tv)
{
	return (double)tv.tv_sec * 1e6 + (double)tv.tv_usec;
}

int main(int argc, char **argv)
{
	long n = 10, rounds = 100;
	double seconds = 60;
	int keep = 0, c;

	while ((c = getopt(argc, argv, "n:r:d:k")) != -1) {
		switch (c) {
		case 'n': n = arg_long(optarg, "consumers"); break;
		case 'r': rounds = arg_long(optarg, "rounds"); break;
		case 'd': seconds = arg_double(optarg, "seconds"); break;
		case 'k': keep = 1; break;
		default:
			fprintf(stderr, "usage: cond-perf [-n consumers] [-r rounds] [-d max-seconds] [-k]\n");
			return 2;
		}
	}
	if (n < 1)
		n = 1;
	printf("# workload cond-perf%s: %ld consumers, up to %ld rounds\n",
	       keep ? " -k" : "", n, rounds);
	report_impl("pthread_cond_wait");

	pthread_t *th = calloc((size_t)n, sizeof(*th));
	ntogo = n;
	for (long i = 0; i < n; i++)
		if (pthread_create(&th[i], small_stack(), consumer, NULL)) {
			printf("# pthread_create failed\n");
			return 1;
		}

	wait_all();		/* every consumer has checked in once */
	struct rusage r0, r1;
	getrusage(RUSAGE_SELF, &r0);
	uint64_t t0 = now_ns(), deadline = t0 + (uint64_t)(seconds * 1e9);
	long done_rounds = 0;
	while (done_rounds < rounds && now_ns() < deadline) {
		pthread_mutex_lock(&mut1);
		ntogo = n;
		round_no++;
		if (!keep)
			pthread_mutex_unlock(&mut1);
		pthread_cond_broadcast(&cond1);
		if (keep)
			pthread_mutex_unlock(&mut1);
		wait_all();
		done_rounds++;
	}
	uint64_t t1 = now_ns();
	getrusage(RUSAGE_SELF, &r1);

	pthread_mutex_lock(&mut1);
	stop = 1;
	pthread_cond_broadcast(&cond1);
	pthread_mutex_unlock(&mut1);
	for (long i = 0; i < n; i++)
		pthread_join(th[i], NULL);
	free(th);

	printf("# %ld rounds in %.3f s\n", done_rounds, (double)(t1 - t0) / 1e9);
	double d = done_rounds ? (double)done_rounds : 1;
	long cs = (r1.ru_nvcsw - r0.ru_nvcsw) + (r1.ru_nivcsw - r0.ru_nivcsw);
	metric("wall_us/round", (double)(t1 - t0) / 1e3 / d);
	metric("user_us/round", (tv_us(r1.ru_utime) - tv_us(r0.ru_utime)) / d);
	metric("sys_us/round", (tv_us(r1.ru_stime) - tv_us(r0.ru_stime)) / d);
	metric("ctxsw/round", (double)cs / d);
	/* Voluntary switches alone: the times a thread blocked, which the
	 * library decides; the involuntary ones come from other load too. */
	metric("sleeps/round", (double)(r1.ru_nvcsw - r0.ru_nvcsw) / d);
	return 0;
}
