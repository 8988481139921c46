/*
 * A plain glibc program that calls every mutex, condition, barrier and C11
 * mtx/cnd function once (for tests/integration/bindings.sh, which runs it
 * under LD_DEBUG=bindings and LD_PRELOAD), then asks dlvsym for versioned
 * definitions and prints where each one lives:
 *   dlvsym NAME@VERSION PATH
 * Exit status: 0 if every call returned what it should, else 1.
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <threads.h>
#include <time.h>

#include "testlib.h"

static int failures;

#define EXPECT(call, want)                                                          \
	do {                                                                        \
		int got_ = (call);                                                  \
		if (got_ != (want)) {                                               \
			fprintf(stderr, "FAIL: %s = %d, expected %d\n", #call, got_, (want)); \
			failures++;                                                 \
		}                                                                   \
	} while (0)

/* ---- condition wait with a predicate, signalled from another thread ---- */

static pthread_mutex_t cm = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int ready;

static void *signaller(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&cm);
	ready = 1;
	pthread_cond_signal(&cv);
	pthread_mutex_unlock(&cm);
	return NULL;
}

static mtx_t cm11;
static cnd_t cv11;
static int ready11;

static int signaller11(void *arg)
{
	(void)arg;
	mtx_lock(&cm11);
	ready11 = 1;
	cnd_broadcast(&cv11);
	mtx_unlock(&cm11);
	return 0;
}

static pthread_barrier_t barrier;

static void *barrier_thread(void *arg)
{
	(void)arg;
	int r = pthread_barrier_wait(&barrier);
	return (void *)(long)(r == 0 || r == PTHREAD_BARRIER_SERIAL_THREAD);
}

static void mutexes(void)
{
	pthread_mutexattr_t a;
	pthread_mutex_t m;
	int v;
	struct timespec dl;

	EXPECT(pthread_mutexattr_init(&a), 0);
	EXPECT(pthread_mutexattr_settype(&a, PTHREAD_MUTEX_RECURSIVE), 0);
	EXPECT(pthread_mutexattr_gettype(&a, &v), 0);
	EXPECT(v, PTHREAD_MUTEX_RECURSIVE);
	EXPECT(pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_PRIVATE), 0);
	EXPECT(pthread_mutexattr_getpshared(&a, &v), 0);
	EXPECT(pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST), 0);
	EXPECT(pthread_mutexattr_getrobust(&a, &v), 0);
	EXPECT(v, PTHREAD_MUTEX_ROBUST);
	EXPECT(pthread_mutexattr_setprotocol(&a, PTHREAD_PRIO_INHERIT), 0);
	EXPECT(pthread_mutexattr_getprotocol(&a, &v), 0);
	EXPECT(v, PTHREAD_PRIO_INHERIT);
	EXPECT(pthread_mutexattr_setprioceiling(&a, 10), 0);
	EXPECT(pthread_mutexattr_getprioceiling(&a, &v), 0);
	EXPECT(v, 10);
	EXPECT(pthread_mutex_init(&m, &a), 0);
	EXPECT(pthread_mutexattr_destroy(&a), 0);
	EXPECT(pthread_mutex_lock(&m), 0);
	EXPECT(pthread_mutex_trylock(&m), 0);
	dl = deadline_in_ms(CLOCK_REALTIME, 1000);
	EXPECT(pthread_mutex_timedlock(&m, &dl), 0);
	dl = deadline_in_ms(CLOCK_MONOTONIC, 1000);
	EXPECT(pthread_mutex_clocklock(&m, CLOCK_MONOTONIC, &dl), 0);
	EXPECT(pthread_mutex_consistent(&m), EINVAL);
	for (int i = 0; i < 4; i++)
		EXPECT(pthread_mutex_unlock(&m), 0);
	EXPECT(pthread_mutex_getprioceiling(&m, &v), EINVAL);
	EXPECT(pthread_mutex_setprioceiling(&m, 10, &v), EINVAL);
	EXPECT(pthread_mutex_destroy(&m), 0);
}

static void conds(void)
{
	pthread_condattr_t a;
	pthread_cond_t c;
	clockid_t clock;
	int v;
	struct timespec dl;
	pthread_t t;

	EXPECT(pthread_condattr_init(&a), 0);
	EXPECT(pthread_condattr_setclock(&a, CLOCK_MONOTONIC), 0);
	EXPECT(pthread_condattr_getclock(&a, &clock), 0);
	EXPECT((int)clock, (int)CLOCK_MONOTONIC);
	EXPECT(pthread_condattr_setpshared(&a, PTHREAD_PROCESS_PRIVATE), 0);
	EXPECT(pthread_condattr_getpshared(&a, &v), 0);
	EXPECT(pthread_cond_init(&c, &a), 0);
	EXPECT(pthread_condattr_destroy(&a), 0);
	EXPECT(pthread_mutex_lock(&cm), 0);
	dl = deadline_in_ms(CLOCK_MONOTONIC, 10);
	EXPECT(pthread_cond_timedwait(&c, &cm, &dl), ETIMEDOUT);
	dl = deadline_in_ms(CLOCK_REALTIME, 10);
	EXPECT(pthread_cond_clockwait(&c, &cm, CLOCK_REALTIME, &dl), ETIMEDOUT);
	EXPECT(pthread_cond_signal(&c), 0);
	EXPECT(pthread_cond_broadcast(&c), 0);
	EXPECT(pthread_cond_destroy(&c), 0);

	EXPECT(pthread_create(&t, NULL, signaller, NULL), 0);
	while (!ready)
		EXPECT(pthread_cond_wait(&cv, &cm), 0);
	EXPECT(pthread_mutex_unlock(&cm), 0);
	EXPECT(pthread_join(t, NULL), 0);
}

static void barriers(void)
{
	pthread_barrierattr_t a;
	pthread_t t;
	void *ok = NULL;
	int v;

	EXPECT(pthread_barrierattr_init(&a), 0);
	EXPECT(pthread_barrierattr_setpshared(&a, PTHREAD_PROCESS_PRIVATE), 0);
	EXPECT(pthread_barrierattr_getpshared(&a, &v), 0);
	EXPECT(v, PTHREAD_PROCESS_PRIVATE);
	EXPECT(pthread_barrier_init(&barrier, &a, 2), 0);
	EXPECT(pthread_barrierattr_destroy(&a), 0);
	EXPECT(pthread_create(&t, NULL, barrier_thread, NULL), 0);
	v = pthread_barrier_wait(&barrier);
	EXPECT(v == 0 || v == PTHREAD_BARRIER_SERIAL_THREAD, 1);
	EXPECT(pthread_join(t, &ok), 0);
	EXPECT(ok != NULL, 1);
	EXPECT(pthread_barrier_destroy(&barrier), 0);
}

static void c11(void)
{
	mtx_t m;
	thrd_t t;
	struct timespec dl;

	EXPECT(mtx_init(&m, mtx_timed | mtx_recursive), thrd_success);
	EXPECT(mtx_lock(&m), thrd_success);
	EXPECT(mtx_trylock(&m), thrd_success);
	dl = deadline_in_ms(CLOCK_REALTIME, 1000);
	EXPECT(mtx_timedlock(&m, &dl), thrd_success);
	for (int i = 0; i < 3; i++)
		EXPECT(mtx_unlock(&m), thrd_success);
	mtx_destroy(&m);

	EXPECT(mtx_init(&cm11, mtx_plain), thrd_success);
	EXPECT(cnd_init(&cv11), thrd_success);
	EXPECT(mtx_lock(&cm11), thrd_success);
	dl = deadline_in_ms(CLOCK_REALTIME, 10);
	EXPECT(cnd_timedwait(&cv11, &cm11, &dl), thrd_timedout);
	EXPECT(cnd_signal(&cv11), thrd_success);
	EXPECT(thrd_create(&t, signaller11, NULL), thrd_success);
	while (!ready11)
		EXPECT(cnd_wait(&cv11, &cm11), thrd_success);
	EXPECT(mtx_unlock(&cm11), thrd_success);
	EXPECT(thrd_join(t, NULL), thrd_success);
	cnd_destroy(&cv11);
	mtx_destroy(&cm11);
}

static void where(const char *name, const char *version)
{
	void *p = dlvsym(RTLD_DEFAULT, name, version);
	Dl_info info;
	if (!p || !dladdr(p, &info) || !info.dli_fname)
		printf("dlvsym %s@%s NOTFOUND\n", name, version);
	else
		printf("dlvsym %s@%s %s\n", name, version, info.dli_fname);
}

int main(void)
{
	mutexes();
	conds();
	barriers();
	c11();
	where("pthread_mutex_trylock", "GLIBC_2.2.5");
	where("pthread_mutex_trylock", "GLIBC_2.34");
	where("pthread_mutex_lock", "GLIBC_2.2.5");
	where("pthread_cond_wait", "GLIBC_2.3.2");
	where("pthread_cond_timedwait", "GLIBC_2.3.2");
	where("pthread_cond_clockwait", "GLIBC_2.30");
	where("pthread_mutex_clocklock", "GLIBC_2.30");
	where("pthread_mutex_consistent", "GLIBC_2.12");
	where("pthread_barrier_wait", "GLIBC_2.2.5");
	where("mtx_lock", "GLIBC_2.28");
	where("cnd_wait", "GLIBC_2.28");
	if (failures)
		fprintf(stderr, "%d call(s) returned the wrong value\n", failures);
	return failures ? 1 : 0;
}
