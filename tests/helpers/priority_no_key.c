/*
 * The library loaded into a process that has no thread-specific key left
 * (for tests/integration/priority_no_key.sh).  The priority-protect
 * registry then has no key whose destructor could take a thread out of
 * it, so it must keep no thread in it, must not store into a key it never
 * got (the program's key 0 would be overwritten), and PP mutexes and
 * pthread_setschedparam must still work.
 *
 * Usage: priority_no_key LIBRARY.  The library is dlopened after every
 * key is taken, and its functions are called through dlsym.
 * Exit 0 pass, 1 fail, 77 no SCHED_FIFO.
 */
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testlib.h"

static int (*lib_mutexattr_init)(pthread_mutexattr_t *);
static int (*lib_mutexattr_setprotocol)(pthread_mutexattr_t *, int);
static int (*lib_mutexattr_setprioceiling)(pthread_mutexattr_t *, int);
static int (*lib_mutex_init)(pthread_mutex_t *, const pthread_mutexattr_t *);
static int (*lib_mutex_lock)(pthread_mutex_t *);
static int (*lib_mutex_unlock)(pthread_mutex_t *);
static int (*lib_setschedparam)(pthread_t, int, const struct sched_param *);

static pthread_key_t first_key;
static pthread_mutex_t pp;
static int failures;

static void fail(const char *what)
{
	printf("FAIL: %s\n", what);
	failures++;
}

/* The calling thread's rt_priority from /proc (field 40), or -1. */
static int rt_priority(void)
{
	long prio;
	return task_stat_field(gettid(), 40, &prio) ? (int)prio : -1;
}

static void *pp_thread(void *arg)
{
	(void)arg;
	int sentinel;
	pthread_setspecific(first_key, &sentinel);
	if (lib_mutex_lock(&pp) != 0)
		fail("PP lock");
	if (rt_priority() != 20)
		fail("not at the ceiling while holding the PP mutex");
	/* A new base while a ceiling is held: the ceiling stays in force. */
	struct sched_param sp = { .sched_priority = 5 };
	if (lib_setschedparam(pthread_self(), SCHED_FIFO, &sp) != 0)
		fail("setschedparam while holding");
	if (rt_priority() != 20)
		fail("ceiling lost after setschedparam");
	if (lib_mutex_unlock(&pp) != 0)
		fail("PP unlock");
	if (rt_priority() != 5)
		fail("not back at the new base after unlock");
	if (pthread_getspecific(first_key) != &sentinel)
		fail("the program's first key was overwritten");
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: %s LIBRARY\n", argv[0]);
		return 2;
	}
	require_fifo();

	if (pthread_key_create(&first_key, NULL) != 0)
		return fail("first key"), 1;
	int keys = 1;
	pthread_key_t k;
	while (pthread_key_create(&k, NULL) == 0)
		keys++;

	void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		printf("FAIL: dlopen: %s\n", dlerror());
		return 1;
	}
	lib_mutexattr_init = (int (*)(pthread_mutexattr_t *))dlsym(h, "pthread_mutexattr_init");
	lib_mutexattr_setprotocol = (int (*)(pthread_mutexattr_t *, int))dlsym(h, "pthread_mutexattr_setprotocol");
	lib_mutexattr_setprioceiling =
		(int (*)(pthread_mutexattr_t *, int))dlsym(h, "pthread_mutexattr_setprioceiling");
	lib_mutex_init = (int (*)(pthread_mutex_t *, const pthread_mutexattr_t *))dlsym(h, "pthread_mutex_init");
	lib_mutex_lock = (int (*)(pthread_mutex_t *))dlsym(h, "pthread_mutex_lock");
	lib_mutex_unlock = (int (*)(pthread_mutex_t *))dlsym(h, "pthread_mutex_unlock");
	lib_setschedparam =
		(int (*)(pthread_t, int, const struct sched_param *))dlsym(h, "pthread_setschedparam");
	if (!lib_mutexattr_init || !lib_mutexattr_setprotocol || !lib_mutexattr_setprioceiling || !lib_mutex_init ||
	    !lib_mutex_lock || !lib_mutex_unlock || !lib_setschedparam) {
		printf("FAIL: a function is missing from %s\n", argv[1]);
		return 1;
	}

	pthread_mutexattr_t a;
	if (lib_mutexattr_init(&a) || lib_mutexattr_setprotocol(&a, PTHREAD_PRIO_PROTECT) ||
	    lib_mutexattr_setprioceiling(&a, 20) || lib_mutex_init(&pp, &a))
		return fail("PP mutex init"), 1;

	/* Several threads, one after another: each takes its first PP lock
	 * and exits; none may leave anything behind. */
	for (int i = 0; i < 8; i++) {
		pthread_t t;
		if (pthread_create(&t, NULL, pp_thread, NULL) != 0)
			return fail("pthread_create"), 1;
		pthread_join(t, NULL);
	}
	if (failures)
		return 1;
	printf("PASS: %d keys taken before load; PP locks, ceilings and setschedparam work in 8 threads\n", keys);
	return 0;
}
