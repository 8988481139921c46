/*
 * What the priority-protect bookkeeping may and may not do on a real-time
 * path.  glibc's pthread_setschedparam is looked up once, at load: a
 * dlsym while a PI mutex is held at real-time priority would take the
 * dynamic linker's lock, which has no priority inheritance.  A thread's
 * first PP lock allocates nothing: the registry's thread-specific slot
 * lives in storage that exists before the lock.
 *
 * This file defines dlsym, malloc, calloc and realloc: they count calls
 * and forward to glibc's, so every caller in the process (the library
 * included) goes through them.
 */
#include <dlfcn.h>

#include "testutil.h"

static _Atomic long dlsym_calls;
/* Per thread: only the allocations of the thread under test count. */
static __thread long allocations;

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);

/* ASan finds the functions it intercepts with dlsym before anything else
 * runs and replaces the allocator: built with it, nothing is counted. */
#ifndef __SANITIZE_ADDRESS__
#define COUNT_CALLS 1

/* RTLD_NEXT is resolved by the caller's address, which here would be this
 * executable's, so the next object would be the library itself when it is
 * linked or preloaded.  Every caller that asks for RTLD_NEXT here wants
 * glibc's definition, so take it from libc.so.6 directly. */
void *dlsym(void *restrict handle, const char *restrict name)
{
	static void *(*real)(void *, const char *);
	static void *libc;
	atomic_fetch_add(&dlsym_calls, 1);
	if (!real)
		real = (void *(*)(void *, const char *))dlvsym(RTLD_DEFAULT, "dlsym", "GLIBC_2.34");
	if (!real)
		real = (void *(*)(void *, const char *))dlvsym(RTLD_DEFAULT, "dlsym", "GLIBC_2.2.5");
	if (handle == RTLD_NEXT) {
		if (!libc)
			libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
		handle = libc;
	}
	return real(handle, name);
}

void *malloc(size_t n)
{
	allocations++;
	return __libc_malloc(n);
}

void *calloc(size_t n, size_t size)
{
	allocations++;
	return __libc_calloc(n, size);
}

void *realloc(void *p, size_t n)
{
	allocations++;
	return __libc_realloc(p, n);
}
#endif

/* ---- no dlsym after load ---- */

static void init_kind(pthread_mutex_t *m, int protocol, int ceiling)
{
	pthread_mutexattr_t a;
	ck_assert_int_eq(pthread_mutexattr_init(&a), 0);
	ck_assert_int_eq(pthread_mutexattr_setprotocol(&a, protocol), 0);
	if (protocol == PTHREAD_PRIO_PROTECT)
		ck_assert_int_eq(pthread_mutexattr_setprioceiling(&a, ceiling), 0);
	ck_assert_int_eq(pthread_mutex_init(m, &a), 0);
	ck_assert_int_eq(pthread_mutexattr_destroy(&a), 0);
}

/* setschedparam and setschedprio, on the caller and on another thread,
 * while a PI mutex is held and with PP mutexes held or not: no dlsym. */
static void *parked_main(void *arg)
{
	sem_wait(arg);
	return NULL;
}

START_TEST(test_setschedparam_no_dlsym)
{
#ifndef COUNT_CALLS
	SKIP_TEST("built with ASan: dlsym calls are not counted");
#endif
	if (!rt_available())
		SKIP_TEST("SCHED_FIFO refused");
	pthread_mutex_t pi, pp;
	init_kind(&pi, PTHREAD_PRIO_INHERIT, 0);
	init_kind(&pp, PTHREAD_PRIO_PROTECT, 20);
	sem_t park;
	sem_init(&park, 0, 0);
	pthread_t other;
	ck_assert_int_eq(pthread_create(&other, NULL, parked_main, &park), 0);

	long before = atomic_load(&dlsym_calls);
	struct sched_param sp = { .sched_priority = 10 };
	ck_assert_int_eq(pthread_mutex_lock(&pi), 0);
	for (int i = 0; i < 50; i++) {
		sp.sched_priority = 10 + i % 5;
		ck_assert_int_eq(pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp), 0);
		ck_assert_int_eq(pthread_setschedprio(pthread_self(), 11), 0);
		ck_assert_int_eq(pthread_setschedparam(other, SCHED_FIFO, &sp), 0);
		ck_assert_int_eq(pthread_mutex_lock(&pp), 0);
		ck_assert_int_eq(pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp), 0);
		ck_assert_int_eq(pthread_mutex_unlock(&pp), 0);
	}
	ck_assert_int_eq(pthread_mutex_unlock(&pi), 0);
	long after = atomic_load(&dlsym_calls);

	sem_post(&park);
	ck_assert_int_eq(pthread_join(other, NULL), 0);
	set_other();
	ck_assert_msg(after == before, "%ld dlsym calls during 250 priority changes", after - before);
	ck_assert_int_eq(pthread_mutex_destroy(&pi), 0);
	ck_assert_int_eq(pthread_mutex_destroy(&pp), 0);
}
END_TEST

/* ---- no allocation at a thread's first PP lock ---- */

struct first_lock {
	pthread_mutex_t *m;
	long allocations;
	int lock, unlock;
};

static void *first_lock_main(void *arg)
{
	struct first_lock *f = arg;
	long before = allocations;
	f->lock = pthread_mutex_lock(f->m);
	f->unlock = pthread_mutex_unlock(f->m);
	f->allocations = allocations - before;
	return NULL;
}

START_TEST(test_first_pp_lock_allocates_nothing)
{
	if (!rt_available())
		SKIP_TEST("SCHED_FIFO refused");
#ifndef COUNT_CALLS
	SKIP_TEST("built with ASan: allocations are not counted");
#endif
	if (!library_loaded())
		SKIP_TEST("NPTL allocates its ceiling table at a thread's first PP lock");
	pthread_mutex_t pp;
	init_kind(&pp, PTHREAD_PRIO_PROTECT, 20);
	/* Several threads: each one's first PP lock, and new keys of the
	 * program's own taken first so the library's is not simply key 0. */
	pthread_key_t keys[8];
	for (int i = 0; i < 8; i++)
		ck_assert_int_eq(pthread_key_create(&keys[i], NULL), 0);
	for (int i = 0; i < 4; i++) {
		struct first_lock f = { .m = &pp, .allocations = -1 };
		pthread_t t;
		ck_assert_int_eq(pthread_create(&t, NULL, first_lock_main, &f), 0);
		ck_assert_int_eq(pthread_join(t, NULL), 0);
		ck_assert_int_eq(f.lock, 0);
		ck_assert_int_eq(f.unlock, 0);
		ck_assert_msg(f.allocations == 0, "thread %d: %ld allocations in its first PP lock", i,
			      f.allocations);
	}
	for (int i = 0; i < 8; i++)
		pthread_key_delete(keys[i]);
	ck_assert_int_eq(pthread_mutex_destroy(&pp), 0);
}
END_TEST

static Suite *priority_suite(void)
{
	Suite *s = suite_create("priority");
	TCase *tc = tcase_create("real_time_paths");
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_setschedparam_no_dlsym);
	tcase_add_test(tc, test_first_pp_lock_allocates_nothing);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return run_suite(priority_suite());
}
