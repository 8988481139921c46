/*
 * The pre-2002 condition ABI, pthread_cond_*@GLIBC_2.2.5 (x86_64), as old
 * binaries bind it, reached here through dlvsym: with every mutex kind a
 * timed wait times out holding the mutex at its depth again, and a signal
 * wakes a waiter.  glibc's own versions would run its internal mutex code
 * on our words (ERRORCHECK: EPERM).
 */
#include "testutil.h"

#define TYPES 4
#define PROTOCOLS 3
#define KINDS (TYPES * PROTOCOLS * 2)

/* The old object: glibc reads only its first word, a pointer. */
struct old_cond {
	void *words[6];
};

static int (*old_init)(struct old_cond *, const pthread_condattr_t *);
static int (*old_destroy)(struct old_cond *);
static int (*old_timedwait)(struct old_cond *, pthread_mutex_t *, const struct timespec *);
static int (*old_signal)(struct old_cond *);

static bool old_abi_found(void)
{
	old_init = (int (*)(struct old_cond *, const pthread_condattr_t *))dlvsym(RTLD_DEFAULT, "pthread_cond_init",
										  "GLIBC_2.2.5");
	old_destroy = (int (*)(struct old_cond *))dlvsym(RTLD_DEFAULT, "pthread_cond_destroy", "GLIBC_2.2.5");
	old_timedwait = (int (*)(struct old_cond *, pthread_mutex_t *, const struct timespec *))dlvsym(
		RTLD_DEFAULT, "pthread_cond_timedwait", "GLIBC_2.2.5");
	old_signal = (int (*)(struct old_cond *))dlvsym(RTLD_DEFAULT, "pthread_cond_signal", "GLIBC_2.2.5");
	return old_init && old_destroy && old_timedwait && old_signal;
}

struct kind {
	int type, protocol, robust;
};

static struct kind kind_of(int i)
{
	return (struct kind){ i % TYPES, (i / TYPES) % PROTOCOLS, i / (TYPES * PROTOCOLS) };
}

static int depth_of(struct kind k)
{
	return k.type == PTHREAD_MUTEX_RECURSIVE ? 2 : 1;
}

static int lock_deep(pthread_mutex_t *m, struct kind k)
{
	int r = pthread_mutex_lock(m);
	if (r == 0 && depth_of(k) == 2)
		r = pthread_mutex_lock(m);
	return r;
}

static void unlock_deep(pthread_mutex_t *m, struct kind k)
{
	for (int d = 0; d < depth_of(k); d++)
		ck_assert_int_eq(pthread_mutex_unlock(m), 0);
}

struct waiter {
	pthread_mutex_t *m;
	struct old_cond *c;
	struct kind k;
	_Atomic int tid;
	_Atomic int ready;
	int result;
};

static void *waiter_main(void *p)
{
	struct waiter *w = p;
	if (w->k.protocol == PTHREAD_PRIO_PROTECT && !try_fifo(1))
		return NULL;
	ck_assert_int_eq(lock_deep(w->m, w->k), 0);
	atomic_store(&w->tid, test_gettid());
	struct timespec deadline = deadline_in_ms(CLOCK_REALTIME, 10000);
	w->result = ETIMEDOUT;
	/* Ends: ready is set under the mutex before the signal, or the
	 * deadline passes. */
	while (!atomic_load(&w->ready)) {
		w->result = old_timedwait(w->c, w->m, &deadline);
		if (w->result != 0)
			break;
	}
	unlock_deep(w->m, w->k);
	return NULL;
}

START_TEST(test_old_abi_every_kind)
{
#if !defined(__x86_64__)
	SKIP_TEST("the pre-2002 condition ABI is x86_64's only");
#else
	struct kind k = kind_of(_i);
	ck_assert_msg(old_abi_found(), "pthread_cond_*@GLIBC_2.2.5 not found");
	if (k.protocol == PTHREAD_PRIO_PROTECT && !try_fifo(1))
		SKIP_TEST("SCHED_FIFO refused: the PP kinds need it");

	pthread_mutexattr_t a;
	pthread_mutex_t m;
	pthread_mutexattr_init(&a);
	pthread_mutexattr_settype(&a, k.type);
	pthread_mutexattr_setprotocol(&a, k.protocol);
	if (k.protocol == PTHREAD_PRIO_PROTECT)
		pthread_mutexattr_setprioceiling(&a, 10);
	pthread_mutexattr_setrobust(&a, k.robust ? PTHREAD_MUTEX_ROBUST : PTHREAD_MUTEX_STALLED);
	int r = pthread_mutex_init(&m, &a);
	pthread_mutexattr_destroy(&a);
	if (r == ENOTSUP && k.robust && k.protocol == PTHREAD_PRIO_PROTECT)
		SKIP_TEST("robust PP refused");
	ck_assert_int_eq(r, 0);

	struct old_cond c;
	memset(&c, 0xa5, sizeof c);
	ck_assert_int_eq(old_init(&c, NULL), 0);

	/* A time-out returns holding the mutex, exactly as deep. */
	ck_assert_int_eq(lock_deep(&m, k), 0);
	struct timespec soon = deadline_in_ms(CLOCK_REALTIME, 30);
	ck_assert_int_eq(old_timedwait(&c, &m, &soon), ETIMEDOUT);
	ck_assert_int_eq(m.__data.__owner, test_gettid());
	unlock_deep(&m, k);
	if (k.type == PTHREAD_MUTEX_ERRORCHECK || k.type == PTHREAD_MUTEX_RECURSIVE || k.robust)
		ck_assert_int_eq(pthread_mutex_unlock(&m), EPERM);

	/* A signal wakes a waiter. */
	struct waiter w = { .m = &m, .c = &c, .k = k };
	pthread_t t;
	ck_assert_int_eq(pthread_create(&t, NULL, waiter_main, &w), 0);
	int64_t end = now_ns(CLOCK_MONOTONIC) + 5000000000LL;
	while (atomic_load(&w.tid) == 0 && now_ns(CLOCK_MONOTONIC) < end)
		sleep_ms(1);
	ck_assert_msg(atomic_load(&w.tid) != 0, "the waiter never locked the mutex");
	ck_assert(wait_task_sleeping(atomic_load(&w.tid), 5000));
	ck_assert_int_eq(lock_deep(&m, k), 0);
	atomic_store(&w.ready, 1);
	ck_assert_int_eq(old_signal(&c), 0);
	unlock_deep(&m, k);
	ck_assert_int_eq(pthread_join(t, NULL), 0);
	ck_assert_int_eq(w.result, 0);

	ck_assert_int_eq(old_destroy(&c), 0);
	ck_assert_int_eq(pthread_mutex_destroy(&m), 0);
	if (k.protocol == PTHREAD_PRIO_PROTECT)
		set_other();
#endif
}
END_TEST

static Suite *cond_compat_suite(void)
{
	Suite *s = suite_create("cond_compat");
	TCase *tc = tcase_create("old ABI");
	tcase_set_timeout(tc, 30);
	tcase_add_loop_test(tc, test_old_abi_every_kind, 0, KINDS);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return run_suite(cond_compat_suite());
}
