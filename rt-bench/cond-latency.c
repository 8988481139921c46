/*
 * cond-latency: two priority-90 SCHED_FIFO threads on one core play
 * ping-pong with a condvar.  Each in turn hands the turn over, takes a
 * timestamp, broadcasts and waits; the other, returning from its wait,
 * records the cycles since that timestamp.  So one sample is: broadcast,
 * the waker blocking in pthread_cond_wait (releasing the mutex), the
 * switch, and the waiter reacquiring the mutex.
 *
 * usage: cond-latency [-d seconds] [-H histogram-file]
 *
 * The pair keeps the core busy, so the leader pauses between bursts
 * (common.h); the follower simply stays blocked in its wait meanwhile.
 */
#include "common.h"

#include <pthread.h>
#include <string.h>
#include <unistd.h>

/* All protected by mutex. */
static pthread_mutex_t mutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int turn;		/* whose move it is: 0 leader, 1 follower */
static int done;
static int drop = 2;		/* samples to discard: cold start, pauses */
static uint64_t stamp;		/* timer at entry into the broadcast */
static struct hist hist[2];

static struct bursts bursts;

static void *player(void *arg)
{
	int me = (int)(long)arg;

	set_fifo(90);
	pin_cpu(0);
	bursts_wait_start(&bursts);
	pthread_mutex_lock(&mutex);
	for (unsigned long i = 1;; i++) {
		/* Predicate loop: a spurious wake-up must not count. */
		while (turn != me && !done)
			pthread_cond_wait(&cond, &mutex);
		uint64_t t = timer_end();
		if (done)
			break;
		if (drop)
			drop--;
		else
			hist_add(&hist[me], t - stamp);
		/* Only the leader watches the clock.  It may sleep holding the
		 * mutex: the follower is blocked on the condvar, not on it. */
		if (me == 0 && (i & 15) == 0) {
			int r = bursts_check(&bursts);
			if (r < 0) {
				done = 1;
				pthread_cond_broadcast(&cond);
				break;
			}
			if (r > 0)
				drop = 2;
		}
		turn = !me;
		stamp = timer_start();
		pthread_cond_broadcast(&cond);
	}
	pthread_mutex_unlock(&mutex);
	return NULL;
}

int main(int argc, char **argv)
{
	const char *histfile = NULL;
	double seconds = 2;
	int c;

	while ((c = getopt(argc, argv, "d:H:")) != -1) {
		switch (c) {
		case 'd': seconds = arg_double(optarg, "seconds"); break;
		case 'H': histfile = optarg; break;
		default:
			fprintf(stderr, "usage: cond-latency [-d seconds] [-H file]\n");
			return 2;
		}
	}
	printf("# workload cond-latency\n");
	report_impl("pthread_cond_wait");
	lock_memory();
	report_throttling();
	printf("# timer: %s, %.1f per us\n", TIMER_UNIT, timer_mhz());
	hist_init(&hist[0]);
	hist_init(&hist[1]);

	pthread_t th[2];
	bursts_init(&bursts, seconds);
	for (long i = 0; i < 2; i++)
		if (pthread_create(&th[i], small_stack(), player, (void *)i)) {
			printf("# pthread_create failed\n");
			return 1;
		}
	pthread_join(th[0], NULL);
	pthread_join(th[1], NULL);

	report_sched();
	hist_merge(&hist[0], &hist[1]);
	hist_report(&hist[0], "", TIMER_UNIT, 1);
	if (histfile)
		hist_write(&hist[0], histfile, TIMER_UNIT);
	return 0;
}
