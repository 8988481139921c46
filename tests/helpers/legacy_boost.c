/*
 * A legacy program: its mutexes never ask for a protocol (for
 * tests/integration/protocol_default.sh).  Prints, for each way it makes
 * a mutex, whether the owner was boosted while a higher-priority thread
 * waited, read from /proc, and whether a condition wait with that mutex
 * still works:
 *   static boosted=1 cond=ok prio=30
 * Kinds: static (PTHREAD_MUTEX_INITIALIZER), init-null (pthread_mutex_init
 * with NULL attributes), recursive (a recursive attribute, no protocol),
 * c11 (mtx_init(mtx_plain)), none (setprotocol(PTHREAD_PRIO_NONE): asked
 * for no protocol, so never boosted).
 * The owner runs SCHED_FIFO 10 on CPU 0, the waiter SCHED_FIFO 30 on
 * CPU 0 too, so that the waiter only runs once the owner sleeps.
 * Exit 0 if it ran (the script judges the output), 77 without SCHED_FIFO.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <threads.h>
#include <time.h>
#include <unistd.h>

#include "testlib.h"

static pthread_mutex_t static_mutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t dynamic_mutex;
static mtx_t c11_mutex;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;

static int (*lock)(void *);
static int (*unlock)(void *);
static void *mutex;
static _Atomic int waiter_tid, waiter_has_lock;

static int plain_lock(void *m) { return pthread_mutex_lock(m); }
static int plain_unlock(void *m) { return pthread_mutex_unlock(m); }
static int c11_lock(void *m) { return mtx_lock(m) == thrd_success ? 0 : EINVAL; }
static int c11_unlock(void *m) { return mtx_unlock(m) == thrd_success ? 0 : EINVAL; }

static void *waiter_main(void *arg)
{
	(void)arg;
	fifo_on_cpu(0, 30);
	atomic_store(&waiter_tid, (int)gettid());
	lock(mutex);
	atomic_store(&waiter_has_lock, 1);
	unlock(mutex);
	return NULL;
}

/* The owner (this thread, FIFO 10) holds the mutex while the FIFO 30
 * waiter blocks on it; returns the owner's priority seen meanwhile (the
 * kernel's prio field: 99 - rt priority for FIFO, so convert). */
static int owner_priority_while_waited(void)
{
	atomic_store(&waiter_tid, 0);
	atomic_store(&waiter_has_lock, 0);
	lock(mutex);
	pthread_t w;
	pthread_create(&w, NULL, waiter_main, NULL);
	/* Wait until the waiter is asleep (state S) on the mutex: at most 2 s. */
	int64_t end = now_ms() + 2000;
	while (atomic_load(&waiter_tid) == 0 && now_ms() < end)
		sleep_ms(1);
	wait_task_sleeping(atomic_load(&waiter_tid), (long)(end - now_ms()));
	long prio = 0; /* -1 - rt priority */
	task_stat_field(gettid(), 18, &prio);
	unlock(mutex);
	pthread_join(w, NULL);
	return prio < 0 ? (int)(-1 - prio) : 0;
}

static void *cond_signaller(void *arg)
{
	(void)arg;
	sleep_ms(20);
	lock(mutex);
	atomic_store(&waiter_has_lock, 2);
	pthread_cond_signal(&cond);
	unlock(mutex);
	return NULL;
}

/* A condition wait with the mutex: woken, with the mutex held after. */
static const char *cond_round_trip(void)
{
	if (lock == c11_lock)
		return "ok"; /* C11: cnd_t is tested with mtx_t below */
	atomic_store(&waiter_has_lock, 0);
	lock(mutex);
	pthread_t s;
	pthread_create(&s, NULL, cond_signaller, NULL);
	struct timespec deadline;
	clock_gettime(CLOCK_REALTIME, &deadline);
	deadline.tv_sec += 5;
	int r = 0;
	while (atomic_load(&waiter_has_lock) != 2 && r == 0)
		r = pthread_cond_timedwait(&cond, mutex, &deadline);
	unlock(mutex);
	pthread_join(s, NULL);
	return r == 0 && atomic_load(&waiter_has_lock) == 2 ? "ok" : "failed";
}

static const char *c11_cond_round_trip(void)
{
	cnd_t c;
	if (cnd_init(&c) != thrd_success)
		return "failed";
	struct timespec deadline;
	clock_gettime(CLOCK_REALTIME, &deadline);
	deadline.tv_nsec = 0;
	deadline.tv_sec += 1;
	mtx_lock(&c11_mutex);
	int r = cnd_timedwait(&c, &c11_mutex, &deadline); /* nobody signals: times out */
	mtx_unlock(&c11_mutex);
	cnd_destroy(&c);
	return r == thrd_timedout ? "ok" : "failed";
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: %s static|init-null|recursive|c11|none\n", argv[0]);
		return 2;
	}
	require_fifo();
	fifo_on_cpu(0, 10);
	const char *kind = argv[1];
	lock = plain_lock;
	unlock = plain_unlock;
	pthread_mutexattr_t a;
	pthread_mutexattr_init(&a);
	if (strcmp(kind, "static") == 0) {
		mutex = &static_mutex;
	} else if (strcmp(kind, "init-null") == 0) {
		pthread_mutex_init(&dynamic_mutex, NULL);
		mutex = &dynamic_mutex;
	} else if (strcmp(kind, "recursive") == 0) {
		pthread_mutexattr_settype(&a, PTHREAD_MUTEX_RECURSIVE);
		pthread_mutex_init(&dynamic_mutex, &a);
		mutex = &dynamic_mutex;
	} else if (strcmp(kind, "none") == 0) {
		pthread_mutexattr_setprotocol(&a, PTHREAD_PRIO_NONE);
		pthread_mutex_init(&dynamic_mutex, &a);
		mutex = &dynamic_mutex;
	} else if (strcmp(kind, "c11") == 0) {
		mtx_init(&c11_mutex, mtx_plain);
		mutex = &c11_mutex;
		lock = c11_lock;
		unlock = c11_unlock;
	} else {
		fprintf(stderr, "unknown kind %s\n", kind);
		return 2;
	}
	int prio = owner_priority_while_waited();
	const char *cond_result = lock == c11_lock ? c11_cond_round_trip() : cond_round_trip();
	printf("%s boosted=%d cond=%s prio=%d\n", kind, prio == 30, cond_result, prio);
	return 0;
}
