/*
 * A known contention pattern for tests/integration/stats.sh, read back
 * through rtpthread_mutex_stats (found with dlsym: this is a plain glibc
 * program run under LD_PRELOAD):
 *   held      held 100 ms while 3 threads block on it: contended 3, max
 *             wait at least 50 ms
 *   free      locked 1000 times by one thread: never listed
 *   pi        PI, held by a FIFO 10 thread while a FIFO 30 thread blocks:
 *             contended 1, 1 PI boost, top priority 30
 *   plain     the same with a default mutex: contended 1, top priority
 *             30, no boost but under protocol=report (inheritance would
 *             have bounded that wait): 1
 *   robust    a thread exits holding it; the next lock: owner died 1
 *   cond      3 waiters on a condition with it, one broadcast with the
 *             mutex held: requeued (moved onto the mutex) 3
 * Prints "NAME contended=N boosts=N top=N requeued=N died=N maxms=N" per
 * mutex (all 0 when not listed).  Exit 0 if it ran, 77 without the API
 * or SCHED_FIFO.
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../../include/rtpthread.h"
#include "testlib.h"

static pthread_mutex_t held = PTHREAD_MUTEX_INITIALIZER, free_mutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t pi, plain, robust, cond_mutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static _Atomic int inside;
static int go;

static void *lock_once(void *m)
{
	atomic_fetch_add(&inside, 1);
	pthread_mutex_lock(m);
	pthread_mutex_unlock(m);
	return NULL;
}

static void *exit_holding(void *m)
{
	pthread_mutex_lock(m);
	return NULL;
}

static void *cond_waiter(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&cond_mutex);
	atomic_fetch_add(&inside, 1);
	while (!go)
		pthread_cond_wait(&cond, &cond_mutex);
	pthread_mutex_unlock(&cond_mutex);
	return NULL;
}

static void *high_waiter(void *m)
{
	fifo_on_cpu(0, 30);
	pthread_mutex_lock(m);
	pthread_mutex_unlock(m);
	return NULL;
}

/* Waits until n threads counted themselves in, then a little more for
 * them to block (the counts only need them asleep before the release). */
static void wait_inside(int n)
{
	while (atomic_load(&inside) < n)
		sleep_ms(1);
	sleep_ms(50);
	atomic_store(&inside, 0);
}

static void print(const char *name, const void *m, const struct rtpthread_mutex_stats *s, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		if (s[i].mutex == m) {
			printf("%s contended=%llu boosts=%llu top=%d requeued=%llu died=%llu maxms=%llu\n", name,
			       s[i].contended, s[i].pi_boosts, s[i].top_priority, s[i].requeued, s[i].owner_died,
			       s[i].wait_max_ns / 1000000);
			return;
		}
	printf("%s contended=0 boosts=0 top=0 requeued=0 died=0 maxms=0\n", name);
}

int main(void)
{
	unsigned (*read_stats)(struct rtpthread_mutex_stats *, unsigned) =
		(unsigned (*)(struct rtpthread_mutex_stats *, unsigned))dlsym(RTLD_DEFAULT, "rtpthread_mutex_stats");
	if (!read_stats) {
		printf("SKIP: rtpthread_mutex_stats not found (run under LD_PRELOAD)\n");
		return 77;
	}
	require_fifo();

	pthread_t t[3];
	pthread_mutex_lock(&held);
	for (int i = 0; i < 3; i++)
		pthread_create(&t[i], NULL, lock_once, &held);
	wait_inside(3);
	sleep_ms(50);
	pthread_mutex_unlock(&held);
	for (int i = 0; i < 3; i++)
		pthread_join(t[i], NULL);

	for (int i = 0; i < 1000; i++) {
		pthread_mutex_lock(&free_mutex);
		pthread_mutex_unlock(&free_mutex);
	}

	pthread_mutexattr_t a;
	pthread_mutexattr_init(&a);
	pthread_mutexattr_setprotocol(&a, PTHREAD_PRIO_INHERIT);
	pthread_mutex_init(&pi, &a);
	pthread_mutex_init(&plain, NULL);
	fifo_on_cpu(0, 10);
	pthread_mutex_t *inverted[] = { &pi, &plain };
	for (int i = 0; i < 2; i++) {
		pthread_mutex_lock(inverted[i]);
		pthread_create(&t[0], NULL, high_waiter, inverted[i]);
		sleep_ms(50); /* the waiter, above us on our CPU, ran and blocked */
		pthread_mutex_unlock(inverted[i]);
		pthread_join(t[0], NULL);
	}
	struct sched_param other = { .sched_priority = 0 };
	pthread_setschedparam(pthread_self(), SCHED_OTHER, &other);

	pthread_mutexattr_init(&a);
	pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
	pthread_mutex_init(&robust, &a);
	pthread_create(&t[0], NULL, exit_holding, &robust);
	pthread_join(t[0], NULL);
	if (pthread_mutex_lock(&robust) == EOWNERDEAD)
		pthread_mutex_consistent(&robust);
	pthread_mutex_unlock(&robust);

	for (int i = 0; i < 3; i++)
		pthread_create(&t[i], NULL, cond_waiter, NULL);
	wait_inside(3);
	pthread_mutex_lock(&cond_mutex);
	go = 1;
	pthread_cond_broadcast(&cond);
	pthread_mutex_unlock(&cond_mutex);
	for (int i = 0; i < 3; i++)
		pthread_join(t[i], NULL);

	struct rtpthread_mutex_stats s[16];
	unsigned n = read_stats(s, 16);
	print("held", &held, s, n);
	print("free", &free_mutex, s, n);
	print("pi", &pi, s, n);
	print("plain", &plain, s, n);
	print("robust", &robust, s, n);
	print("cond", &cond_mutex, s, n);
	return 0;
}
