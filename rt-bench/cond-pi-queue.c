/*
 * cond-pi-queue: what one wait on a condition used with a PI mutex costs
 * its waiter when many other waiters are already queued at its priority.
 * A library that queues waiters in priority order must not walk them:
 * the walk runs under the condition's lock, where a high-priority
 * signaller waits behind it.
 *
 * The main thread's waits time out (a short deadline): the measured
 * thread is the newest of its priority, so a signal would go to an older
 * waiter first.  Each sample is the thread's own CPU time
 * (CLOCK_THREAD_CPUTIME_ID) from just before pthread_cond_timedwait to
 * just after it returns: the queueing, the unlock, the kernel's sleep
 * and wake-up, the leave and the relock, not the time asleep.
 *
 * usage: cond-pi-queue [-n waiters] [-s samples]
 * Reports the median and p90 CPU time of a wait with 1 other waiter
 * queued and with n (default 5000), in microseconds.
 */
#include "common.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>

static pthread_mutex_t mutex;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int stop;		/* under mutex */
static atomic_long inside;	/* waiters that have called pthread_cond_wait */

static void *waiter(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&mutex);
	atomic_fetch_add(&inside, 1);
	while (!stop)
		pthread_cond_wait(&cond, &mutex);
	pthread_mutex_unlock(&mutex);
	return NULL;
}

static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* Every started waiter has queued once main holds the mutex and counts
 * them all (each counts itself before its wait releases the mutex). */
static void wait_all_queued(long n)
{
	for (;;) {
		pthread_mutex_lock(&mutex);
		if (atomic_load(&inside) >= n)
			return; /* holding the mutex */
		pthread_mutex_unlock(&mutex);
		sleep_ns(1000000);
	}
}

static void measure(long queued, long samples)
{
	uint64_t *cpu = calloc((size_t)samples, sizeof(*cpu));
	wait_all_queued(queued);
	for (long i = 0; i < samples; i++) {
		struct timespec deadline;
		clock_gettime(CLOCK_REALTIME, &deadline);
		deadline.tv_nsec += 20000;
		if (deadline.tv_nsec >= 1000000000) {
			deadline.tv_sec++;
			deadline.tv_nsec -= 1000000000;
		}
		uint64_t t0 = thread_cpu_ns();
		int r = pthread_cond_timedwait(&cond, &mutex, &deadline);
		cpu[i] = thread_cpu_ns() - t0;
		if (r != ETIMEDOUT && r != 0) {
			printf("# pthread_cond_timedwait: %d\n", r);
			exit(1);
		}
	}
	pthread_mutex_unlock(&mutex);
	qsort(cpu, (size_t)samples, sizeof(*cpu), cmp_u64);
	char name[64];
	snprintf(name, sizeof name, "cpu us/wait median, %ld queued", queued);
	metric(name, (double)cpu[samples / 2] / 1e3);
	snprintf(name, sizeof name, "cpu us/wait p90, %ld queued", queued);
	metric(name, (double)cpu[samples * 9 / 10] / 1e3);
	free(cpu);
}

int main(int argc, char **argv)
{
	long nwaiters = 5000, samples = 200;
	int c;
	while ((c = getopt(argc, argv, "n:s:")) != -1) {
		switch (c) {
		case 'n': nwaiters = arg_long(optarg, "waiters"); break;
		case 's': samples = arg_long(optarg, "samples"); break;
		default:
			fprintf(stderr, "usage: cond-pi-queue [-n waiters] [-s samples]\n");
			return 2;
		}
	}
	if (nwaiters < 2)
		nwaiters = 2;
	if (samples < 10)
		samples = 10;
	printf("# workload cond-pi-queue: timed-out waits with 1 and %ld waiters queued (PI mutex)\n", nwaiters);
	report_impl("pthread_cond_timedwait");

	pthread_mutexattr_t a;
	pthread_mutexattr_init(&a);
	pthread_mutexattr_setprotocol(&a, PTHREAD_PRIO_INHERIT);
	pthread_mutex_init(&mutex, &a);
	pthread_mutexattr_destroy(&a);

	pthread_t *th = calloc((size_t)nwaiters, sizeof(*th));
	long started = 0;
	for (long target = 1; target <= nwaiters; target = target == 1 ? nwaiters : nwaiters + 1) {
		for (; started < target; started++)
			if (pthread_create(&th[started], small_stack(), waiter, NULL)) {
				printf("# pthread_create failed after %ld threads\n", started);
				return 1;
			}
		measure(target, samples);
	}
	pthread_mutex_lock(&mutex);
	stop = 1;
	pthread_cond_broadcast(&cond);
	pthread_mutex_unlock(&mutex);
	for (long i = 0; i < started; i++)
		pthread_join(th[i], NULL);
	free(th);
	return 0;
}
