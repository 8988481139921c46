/*
 * Mutexes without a priority protocol: NORMAL, RECURSIVE, ERRORCHECK and
 * ADAPTIVE_NP, their static initializers, the timed variants, C11 mtx_*
 * and process-shared mutexes across fork.
 */
#include <sys/single_threaded.h>
#include <threads.h>

#include "testutil.h"

static const int types[] = { PTHREAD_MUTEX_NORMAL, PTHREAD_MUTEX_RECURSIVE, PTHREAD_MUTEX_ERRORCHECK,
			     PTHREAD_MUTEX_ADAPTIVE_NP };
#define NTYPES 4

static void init_type(pthread_mutex_t *m, int type, bool pshared)
{
	pthread_mutexattr_t a;
	ck_assert_int_eq(pthread_mutexattr_init(&a), 0);
	ck_assert_int_eq(pthread_mutexattr_settype(&a, type), 0);
	if (pshared)
		ck_assert_int_eq(pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED), 0);
	ck_assert_int_eq(pthread_mutex_init(m, &a), 0);
	ck_assert_int_eq(pthread_mutexattr_destroy(&a), 0);
}

static int lock_unlock_fn(void *m)
{
	int r = pthread_mutex_lock(m);
	if (r == 0)
		r = pthread_mutex_unlock(m) ? 99 : 0;
	return r;
}

/* ---- static initializers ---- */

START_TEST(test_static_normal)
{
	pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
	ck_assert_int_eq(pthread_mutex_lock(&m), 0);
	ck_assert_int_eq(other_trylock(&m), EBUSY);
	ck_assert_int_eq(pthread_mutex_trylock(&m), EBUSY);
	ck_assert_int_eq(pthread_mutex_unlock(&m), 0);
	ck_assert_int_eq(other_trylock(&m), 0);
	ck_assert_int_eq(pthread_mutex_trylock(&m), 0);
	ck_assert_int_eq(pthread_mutex_unlock(&m), 0);
	ck_assert_int_eq(pthread_mutex_destroy(&m), 0);
}
END_TEST

START_TEST(test_static_recursive)
{
	pthread_mutex_t m = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;
	ck_assert_int_eq(pthread_mutex_lock(&m), 0);
	ck_assert_int_eq(pthread_mutex_lock(&m), 0);
	ck_assert_int_eq(pthread_mutex_trylock(&m), 0);
	ck_assert_int_eq(other_trylock(&m), EBUSY);
	ck_assert_int_eq(pthread_mutex_unlock(&m), 0);
	ck_assert_int_eq(pthread_mutex_unlock(&m), 0);
	ck_assert_int_eq(other_trylock(&m), EBUSY);
	ck_assert_int_eq(pthread_mutex_unlock(&m), 0);
	ck_assert_int_eq(other_trylock(&m), 0);
	ck_assert_int_eq(pthread_mutex_unlock(&m), EPERM);
	ck_assert_int_eq(pthread_mutex_destroy(&m), 0);
}
END_TEST

START_TEST(test_static_errorcheck)
{
	pthread_mutex_t m = PTHREAD_ERRORCHECK_MUTEX_INITIALIZER_NP;
	ck_assert_int_eq(pthread_mutex_lock(&m), 0);
	ck_assert_int_eq(pthread_mutex_lock(&m), EDEADLK);
	ck_assert_int_eq(pthread_mutex_trylock(&m), EBUSY);
	ck_assert_int_eq(other_unlock(&m), EPERM);
	ck_assert_int_eq(other_trylock(&m), EBUSY);
	ck_assert_int_eq(pthread_mutex_unlock(&m), 0);
	ck_assert_int_eq(pthread_mutex_unlock(&m), EPERM);
	ck_assert_int_eq(other_trylock(&m), 0);
	ck_assert_int_eq(pthread_mutex_destroy(&m), 0);
}
END_TEST

START_TEST(test_static_adaptive)
{
	static pthread_mutex_t m = PTHREAD_ADAPTIVE_MUTEX_INITIALIZER_NP;
	ck_assert_int_eq(pthread_mutex_lock(&m), 0);
	ck_assert_int_eq(other_trylock(&m), EBUSY);
	ck_assert_int_eq(pthread_mutex_unlock(&m), 0);
	check_exclusion(&m, 4, 5000, false, false);
	ck_assert_int_eq(pthread_mutex_destroy(&m), 0);
}
END_TEST

/* ---- basic semantics per type ---- */

START_TEST(test_trylock)
{
	int type = types[_i];
	pthread_mutex_t m;
	init_type(&m, type, false);
	ck_assert_int_eq(pthread_mutex_trylock(&m), 0);
	ck_assert_int_eq(other_trylock(&m), EBUSY);
	if (type == PTHREAD_MUTEX_RECURSIVE) {
		ck_assert_int_eq(pthread_mutex_trylock(&m), 0);
		ck_assert_int_eq(pthread_mutex_unlock(&m), 0);
	} else {
		ck_assert_int_eq(pthread_mutex_trylock(&m), EBUSY);
	}
	ck_assert_int_eq(other_trylock(&m), EBUSY);
	ck_assert_int_eq(pthread_mutex_unlock(&m), 0);
	ck_assert_int_eq(other_trylock(&m), 0);
	ck_assert_int_eq(run_in_thread(lock_unlock_fn, &m), 0);
	ck_assert_int_eq(pthread_mutex_destroy(&m), 0);
}
END_TEST

START_TEST(test_recursion_count)
{
	pthread_mutex_t m;
	init_type(&m, PTHREAD_MUTEX_RECURSIVE, false);
	struct timespec dl = deadline_in_ms(CLOCK_REALTIME, 1000);
	ck_assert_int_eq(pthread_mutex_lock(&m), 0);
	ck_assert_int_eq(pthread_mutex_trylock(&m), 0);
	ck_assert_int_eq(pthread_mutex_timedlock(&m, &dl), 0);
	dl = deadline_in_ms(CLOCK_MONOTONIC, 1000);
	ck_assert_int_eq(pthread_mutex_clocklock(&m, CLOCK_MONOTONIC, &dl), 0);
	ck_assert_int_eq(pthread_mutex_lock(&m), 0);
	for (int depth = 5; depth > 0; depth--) {
		ck_assert_msg(other_trylock(&m) == EBUSY, "free at depth %d", depth);
		ck_assert_int_eq(pthread_mutex_destroy(&m), EBUSY);
		ck_assert_int_eq(pthread_mutex_unlock(&m), 0);
	}
	ck_assert_int_eq(other_trylock(&m), 0);
	ck_assert_int_eq(pthread_mutex_unlock(&m), EPERM);
	ck_assert_int_eq(pthread_mutex_destroy(&m), 0);
}
END_TEST

START_TEST(test_errorcheck_relock)
{
	pthread_mutex_t m;
	init_type(&m, PTHREAD_MUTEX_ERRORCHECK, false);
	ck_assert_int_eq(pthread_mutex_lock(&m), 0);
	ck_assert_int_eq(pthread_mutex_lock(&m), EDEADLK);
	struct timespec dl = deadline_in_ms(CLOCK_REALTIME, 5000);
	int64_t t0 = now_ns(CLOCK_MONOTONIC);
	ck_assert_int_eq(pthread_mutex_timedlock(&m, &dl), EDEADLK);
	dl = deadline_in_ms(CLOCK_MONOTONIC, 5000);
	ck_assert_int_eq(pthread_mutex_clocklock(&m, CLOCK_MONOTONIC, &dl), EDEADLK);
	ck_assert_int_lt(now_ns(CLOCK_MONOTONIC) - t0, 1000000000LL);
	ck_assert_int_eq(other_trylock(&m), EBUSY);
	ck_assert_int_eq(pthread_mutex_unlock(&m), 0);
	ck_assert_int_eq(other_trylock(&m), 0);
	ck_assert_int_eq(pthread_mutex_destroy(&m), 0);
}
END_TEST

/* ERRORCHECK and RECURSIVE: only the owner may unlock. */
START_TEST(test_nonowner_unlock_eperm)
{
	int type = _i ? PTHREAD_MUTEX_RECURSIVE : PTHREAD_MUTEX_ERRORCHECK;
	pthread_mutex_t m;
	init_type(&m, type, false);
	struct holder h;
	holder_start(&h, &m);
	ck_assert_int_eq(h.lock_result, 0);
	ck_assert_int_eq(pthread_mutex_unlock(&m), EPERM);
	ck_assert_int_eq(other_unlock(&m), EPERM);
	ck_assert_int_eq(pthread_mutex_trylock(&m), EBUSY);
	holder_finish(&h);
	ck_assert_int_eq(h.unlock_result, 0);
	ck_assert_int_eq(pthread_mutex_unlock(&m), EPERM); /* free */
	ck_assert_int_eq(pthread_mutex_trylock(&m), 0);
	ck_assert_int_eq(pthread_mutex_unlock(&m), 0);
	ck_assert_int_eq(pthread_mutex_destroy(&m), 0);
}
END_TEST

/*
 * NORMAL (and ADAPTIVE): any thread may unlock, and that releases the
 * mutex and wakes a blocked locker, as glibc does; ptsematest uses mutexes
 * as semaphores this way.
 */
START_TEST(test_normal_nonowner_unlock)
{
	pthread_mutex_t m;
	if (_i == 0)
		init_type(&m, PTHREAD_MUTEX_NORMAL, false);
	else if (_i == 1)
		m = (pthread_mutex_t)PTHREAD_MUTEX_INITIALIZER;
	else
		init_type(&m, PTHREAD_MUTEX_ADAPTIVE_NP, false);

	/* Held by us, released by another thread while one waits. */
	ck_assert_int_eq(pthread_mutex_lock(&m), 0);
	struct call waiter;
	call_start(&waiter, lock_unlock_fn, &m);
	ck_assert(wait_task_sleeping(waiter.tid, 5000));
	sleep_ms(20);
	ck_assert_msg(!atomic_load(&waiter.done), "waiter got a held mutex");
	ck_assert_int_eq(other_unlock(&m), 0);
	ck_assert_msg(call_done_within(&waiter, 5000), "non-owner unlock did not wake the waiter");
	ck_assert_int_eq(call_join(&waiter), 0);

	/* Held by another thread, released by us. */
	struct holder h;
	holder_start(&h, &m);
	ck_assert_int_eq(pthread_mutex_unlock(&m), 0);
	ck_assert_int_eq(pthread_mutex_trylock(&m), 0);
	ck_assert_int_eq(pthread_mutex_unlock(&m), 0);
	holder_finish(&h); /* unlocks a free mutex */
	ck_assert_int_eq(h.unlock_result, 0);
	ck_assert_int_eq(other_trylock(&m), 0);
	ck_assert_int_eq(pthread_mutex_destroy(&m), 0);
}
END_TEST

/*
 * The owner of a NORMAL mutex locks it again and another thread unlocks
 * it: the second lock returns once the mutex is released, as in glibc
 * (it waits on the lock word like any locker).  ptsematest's sender and
 * receiver each do exactly this every cycle.
 */
struct relock {
	pthread_mutex_t *m;
	int how; /* second lock: 0 lock, 1 timedlock, 2 clocklock MONOTONIC */
	_Atomic int first_done;
	int first, second;
};

static int relock_fn(void *p)
{
	struct relock *r = p;
	struct timespec dl;
	r->first = pthread_mutex_lock(r->m);
	atomic_store(&r->first_done, 1);
	switch (r->how) {
	case 0:
		r->second = pthread_mutex_lock(r->m);
		break;
	case 1:
		dl = deadline_in_ms(CLOCK_REALTIME, 20000);
		r->second = pthread_mutex_timedlock(r->m, &dl);
		break;
	default:
		dl = deadline_in_ms(CLOCK_MONOTONIC, 20000);
		r->second = pthread_mutex_clocklock(r->m, CLOCK_MONOTONIC, &dl);
		break;
	}
	return 0;
}

START_TEST(test_normal_relock_released_by_other)
{
	pthread_mutex_t m;
	if (_i / 3 == 0)
		init_type(&m, PTHREAD_MUTEX_NORMAL, false);
	else if (_i / 3 == 1)
		m = (pthread_mutex_t)PTHREAD_MUTEX_INITIALIZER;
	else
		init_type(&m, PTHREAD_MUTEX_ADAPTIVE_NP, false);
	struct relock r = { .m = &m, .how = _i % 3, .first = -1, .second = -1 };
	atomic_init(&r.first_done, 0);
	struct call c;
	call_start(&c, relock_fn, &r);
	ck_assert(wait_flag(&r.first_done, 1, 5000));
	ck_assert_int_eq(r.first, 0);
	ck_assert(wait_task_sleeping(c.tid, 5000));
	sleep_ms(20);
	ck_assert_msg(!atomic_load(&c.done), "relock of a held NORMAL mutex returned %d", r.second);
	ck_assert_int_eq(pthread_mutex_unlock(&m), 0); /* not the owner */
	ck_assert_msg(call_done_within(&c, 5000), "unlock by another thread did not release the owner's relock");
	ck_assert_int_eq(call_join(&c), 0);
	ck_assert_int_eq(r.second, 0);
	ck_assert_int_eq(other_trylock(&m), EBUSY); /* held by the (exited) relocker */
	ck_assert_int_eq(pthread_mutex_unlock(&m), 0);
	ck_assert_int_eq(other_trylock(&m), 0);
	ck_assert_int_eq(pthread_mutex_destroy(&m), 0);
}
END_TEST

/* ptsematest in miniature: two default mutexes used as semaphores by a
 * sender and a receiver thread, each unlocking what the other locked. */
struct sema_pair {
	pthread_mutex_t testmutex, syncmutex;
	int cycles;
	_Atomic int sent, received;
	int errors;
};

static void *sema_sender(void *p)
{
	struct sema_pair *s = p;
	for (int i = 0; i < s->cycles; i++) {
		s->errors += pthread_mutex_lock(&s->syncmutex) != 0;
		s->errors += pthread_mutex_unlock(&s->testmutex) != 0;
		atomic_fetch_add(&s->sent, 1);
	}
	return NULL;
}

static void *sema_receiver(void *p)
{
	struct sema_pair *s = p;
	for (int i = 0; i < s->cycles; i++) {
		s->errors += pthread_mutex_lock(&s->testmutex) != 0;
		atomic_fetch_add(&s->received, 1);
		s->errors += pthread_mutex_unlock(&s->syncmutex) != 0;
	}
	return NULL;
}

START_TEST(test_semaphore_pattern)
{
	struct sema_pair *s = calloc(1, sizeof *s);
	s->cycles = 2000;
	ck_assert_int_eq(pthread_mutex_init(&s->testmutex, NULL), 0);
	ck_assert_int_eq(pthread_mutex_init(&s->syncmutex, NULL), 0);
	ck_assert_int_eq(pthread_mutex_lock(&s->testmutex), 0);
	pthread_t r, t;
	ck_assert_int_eq(pthread_create(&r, NULL, sema_receiver, s), 0);
	ck_assert_int_eq(pthread_create(&t, NULL, sema_sender, s), 0);
	int64_t end = now_ns(CLOCK_MONOTONIC) + 10 * NSEC_PER_SEC;
	while (atomic_load(&s->received) < s->cycles && now_ns(CLOCK_MONOTONIC) < end)
		sleep_ms(5);
	ck_assert_msg(atomic_load(&s->received) == s->cycles, "stuck after %d of %d cycles (sent %d)",
		      atomic_load(&s->received), s->cycles, atomic_load(&s->sent));
	ck_assert_int_eq(pthread_join(r, NULL), 0);
	ck_assert_int_eq(pthread_join(t, NULL), 0);
	ck_assert_int_eq(s->errors, 0);
	/* ptsematest's exit: unlock both (maybe free), destroy (glibc may say
	 * EBUSY after unlocks of a free mutex; ptsematest ignores it). */
	ck_assert_int_eq(pthread_mutex_unlock(&s->testmutex), 0);
	ck_assert_int_eq(pthread_mutex_unlock(&s->syncmutex), 0);
	pthread_mutex_destroy(&s->testmutex);
	pthread_mutex_destroy(&s->syncmutex);
	free(s);
}
END_TEST

START_TEST(test_unlock_free_normal)
{
	pthread_mutex_t m;
	init_type(&m, _i ? PTHREAD_MUTEX_ADAPTIVE_NP : PTHREAD_MUTEX_NORMAL, false);
	ck_assert_int_eq(pthread_mutex_unlock(&m), 0);
	ck_assert_int_eq(pthread_mutex_unlock(&m), 0);
	ck_assert_int_eq(pthread_mutex_lock(&m), 0);
	ck_assert_int_eq(other_trylock(&m), EBUSY);
	ck_assert_int_eq(pthread_mutex_unlock(&m), 0);
	ck_assert_int_eq(other_trylock(&m), 0);
	ck_assert_int_eq(pthread_mutex_destroy(&m), 0);
}
END_TEST

/* ---- destroy ---- */

START_TEST(test_destroy_busy)
{
	int type = types[_i];
	pthread_mutex_t m;
	init_type(&m, type, false);
	ck_assert_int_eq(pthread_mutex_lock(&m), 0);
	ck_assert_int_eq(pthread_mutex_destroy(&m), EBUSY);
	if (type == PTHREAD_MUTEX_RECURSIVE) {
		ck_assert_int_eq(pthread_mutex_lock(&m), 0);
		ck_assert_int_eq(pthread_mutex_unlock(&m), 0);
		ck_assert_int_eq(pthread_mutex_destroy(&m), EBUSY);
	}
	/* Still a working, held mutex. */
	ck_assert_int_eq(other_trylock(&m), EBUSY);
	ck_assert_int_eq(pthread_mutex_unlock(&m), 0);

	struct holder h;
	holder_start(&h, &m);
	ck_assert_int_eq(pthread_mutex_destroy(&m), EBUSY);
	holder_finish(&h);
	ck_assert_int_eq(h.unlock_result, 0);
	ck_assert_int_eq(pthread_mutex_destroy(&m), 0);
}
END_TEST

START_TEST(test_use_after_destroy)
{
	int type = types[_i];
	pthread_mutex_t m;
	init_type(&m, type, false);
	ck_assert_int_eq(pthread_mutex_destroy(&m), 0);
	struct timespec rt = deadline_in_ms(CLOCK_REALTIME, 100);
	struct timespec mono = deadline_in_ms(CLOCK_MONOTONIC, 100);
	ck_assert_int_eq(pthread_mutex_lock(&m), EINVAL);
	ck_assert_int_eq(pthread_mutex_trylock(&m), EINVAL);
	ck_assert_int_eq(pthread_mutex_timedlock(&m, &rt), EINVAL);
	ck_assert_int_eq(pthread_mutex_clocklock(&m, CLOCK_MONOTONIC, &mono), EINVAL);
	ck_assert_int_eq(pthread_mutex_unlock(&m), EINVAL);
	/* It can be initialized again. */
	init_type(&m, type, false);
	ck_assert_int_eq(pthread_mutex_lock(&m), 0);
	ck_assert_int_eq(pthread_mutex_unlock(&m), 0);
	ck_assert_int_eq(pthread_mutex_destroy(&m), 0);
}
END_TEST

/* ---- timed locks ---- */

/* A bad timespec is EINVAL only when the call would block; tv_sec < 0 is
 * a deadline in the past. */
START_TEST(test_timespec_invalid)
{
	int type = types[_i];
	pthread_mutex_t m;
	init_type(&m, type, false);
	struct timespec bad_hi = deadline_in_ms(CLOCK_REALTIME, 1000);
	bad_hi.tv_nsec = 1000000000L;
	struct timespec bad_lo = bad_hi;
	bad_lo.tv_nsec = -1;
	struct timespec past = { .tv_sec = -1, .tv_nsec = 0 };

	struct holder h;
	holder_start(&h, &m);
	int64_t t0 = now_ns(CLOCK_MONOTONIC);
	ck_assert_int_eq(pthread_mutex_timedlock(&m, &bad_hi), EINVAL);
	ck_assert_int_eq(pthread_mutex_timedlock(&m, &bad_lo), EINVAL);
	ck_assert_int_eq(pthread_mutex_clocklock(&m, CLOCK_MONOTONIC, &bad_hi), EINVAL);
	ck_assert_int_eq(pthread_mutex_clocklock(&m, CLOCK_MONOTONIC, &bad_lo), EINVAL);
	ck_assert_int_eq(pthread_mutex_clocklock(&m, CLOCK_REALTIME, &bad_hi), EINVAL);
	ck_assert_int_eq(pthread_mutex_timedlock(&m, &past), ETIMEDOUT);
	ck_assert_int_eq(pthread_mutex_clocklock(&m, CLOCK_MONOTONIC, &past), ETIMEDOUT);
	ck_assert_int_eq(pthread_mutex_clocklock(&m, CLOCK_REALTIME, &past), ETIMEDOUT);
	ck_assert_int_lt(now_ns(CLOCK_MONOTONIC) - t0, 1000000000LL);
	holder_finish(&h);
	ck_assert_int_eq(h.unlock_result, 0);

	/* Free: taken whatever the timespec. */
	ck_assert_int_eq(pthread_mutex_timedlock(&m, &bad_hi), 0);
	ck_assert_int_eq(pthread_mutex_unlock(&m), 0);
	ck_assert_int_eq(pthread_mutex_timedlock(&m, &bad_lo), 0);
	ck_assert_int_eq(pthread_mutex_unlock(&m), 0);
	ck_assert_int_eq(pthread_mutex_clocklock(&m, CLOCK_MONOTONIC, &bad_hi), 0);
	ck_assert_int_eq(pthread_mutex_unlock(&m), 0);
	ck_assert_int_eq(pthread_mutex_timedlock(&m, &past), 0);
	ck_assert_int_eq(pthread_mutex_unlock(&m), 0);
	ck_assert_int_eq(other_trylock(&m), 0);
	ck_assert_int_eq(pthread_mutex_destroy(&m), 0);
}
END_TEST

/* Only CLOCK_REALTIME and CLOCK_MONOTONIC: anything else is EINVAL even
 * on a free mutex, which stays free. */
START_TEST(test_clocklock_bad_clock)
{
	static const clockid_t clocks[] = { CLOCK_PROCESS_CPUTIME_ID, CLOCK_THREAD_CPUTIME_ID,
					    CLOCK_MONOTONIC_RAW, CLOCK_REALTIME_COARSE,
					    CLOCK_MONOTONIC_COARSE, CLOCK_BOOTTIME, CLOCK_TAI,
					    (clockid_t)-1, (clockid_t)12345 };
	pthread_mutex_t m;
	init_type(&m, types[_i], false);
	struct timespec dl = deadline_in_ms(CLOCK_MONOTONIC, 1000);
	for (size_t i = 0; i < sizeof clocks / sizeof clocks[0]; i++) {
		ck_assert_msg(pthread_mutex_clocklock(&m, clocks[i], &dl) == EINVAL, "clock %d accepted",
			      (int)clocks[i]);
		ck_assert_int_eq(other_trylock(&m), 0);
	}
	ck_assert_int_eq(pthread_mutex_destroy(&m), 0);
}
END_TEST

/* ETIMEDOUT, not before the deadline and not much after it, on each clock. */
START_TEST(test_timeout_duration)
{
	int type = types[_i / 3];
	int variant = _i % 3; /* timedlock, clocklock REALTIME, clocklock MONOTONIC */
	clockid_t clock = variant == 2 ? CLOCK_MONOTONIC : CLOCK_REALTIME;
	pthread_mutex_t m;
	init_type(&m, type, false);
	check_timeout_duration(&m, variant != 0, clock);
	/* A timed-out waiter leaves nothing behind. */
	ck_assert_int_eq(run_in_thread(lock_unlock_fn, &m), 0);
	ck_assert_int_eq(pthread_mutex_destroy(&m), 0);
}
END_TEST

/* A NORMAL mutex relocked by its owner deadlocks: the timed variants wait
 * out their deadline. */
START_TEST(test_timedlock_self_normal)
{
	pthread_mutex_t m;
	init_type(&m, PTHREAD_MUTEX_NORMAL, false);
	ck_assert_int_eq(pthread_mutex_lock(&m), 0);
	struct timespec dl = deadline_in_ms(CLOCK_REALTIME, 100);
	ck_assert_int_eq(pthread_mutex_timedlock(&m, &dl), ETIMEDOUT);
	ck_assert_int_ge(now_ns(CLOCK_REALTIME), ts_to_ns(&dl));
	dl = deadline_in_ms(CLOCK_MONOTONIC, 100);
	ck_assert_int_eq(pthread_mutex_clocklock(&m, CLOCK_MONOTONIC, &dl), ETIMEDOUT);
	ck_assert_int_ge(now_ns(CLOCK_MONOTONIC), ts_to_ns(&dl));
	ck_assert_int_eq(other_trylock(&m), EBUSY);
	ck_assert_int_eq(pthread_mutex_unlock(&m), 0);
	ck_assert_int_eq(pthread_mutex_destroy(&m), 0);
}
END_TEST

static int release_later_fn(void *p)
{
	struct holder *h = p;
	sleep_ms(50);
	return sem_post(&h->go);
}

/* A timed lock returns as soon as the owner lets go. */
START_TEST(test_timedlock_acquires)
{
	int type = types[_i / 2];
	clockid_t clock = (_i & 1) ? CLOCK_MONOTONIC : CLOCK_REALTIME;
	pthread_mutex_t m;
	init_type(&m, type, false);
	struct holder h;
	holder_start(&h, &m);
	struct call releaser;
	call_start(&releaser, release_later_fn, &h);
	int64_t t0 = now_ns(CLOCK_MONOTONIC);
	struct timespec dl = deadline_in_ms(clock, 10000);
	ck_assert_int_eq(pthread_mutex_clocklock(&m, clock, &dl), 0);
	ck_assert_int_lt(now_ns(CLOCK_MONOTONIC) - t0, 3000000000LL);
	ck_assert_int_eq(call_join(&releaser), 0);
	ck_assert_int_eq(pthread_join(h.thread, NULL), 0);
	ck_assert_int_eq(h.unlock_result, 0);
	ck_assert_int_eq(pthread_mutex_unlock(&m), 0);
	ck_assert_int_eq(pthread_mutex_destroy(&m), 0);
}
END_TEST

/* ---- a process with one thread, then more ---- */

/* A thread alone locks and unlocks with plain loads and stores; what it
 * leaves must be what threads created afterwards see: free after its
 * unlock, held (at its depth) after its lock, and released to a blocked
 * locker by its unlock once it is not alone.  _i: the four types, then
 * NORMAL with PTHREAD_PRIO_INHERIT. */
START_TEST(test_alone_then_threads)
{
	int type = types[_i % NTYPES];
	pthread_mutex_t m;
	pthread_mutexattr_t a;
	ck_assert_int_eq(pthread_mutexattr_init(&a), 0);
	ck_assert_int_eq(pthread_mutexattr_settype(&a, type), 0);
	if (_i == NTYPES)
		ck_assert_int_eq(pthread_mutexattr_setprotocol(&a, PTHREAD_PRIO_INHERIT), 0);
	ck_assert_int_eq(pthread_mutex_init(&m, &a), 0);
	ck_assert_int_eq(pthread_mutexattr_destroy(&a), 0);
	/* Check runs each test in a child of its own single-threaded runner. */
	ck_assert_msg(__libc_single_threaded, "the test must start with one thread (Check's fork mode)");

	for (int round = 0; round < 3; round++) {
		ck_assert_int_eq(pthread_mutex_lock(&m), 0);
		ck_assert_int_eq(pthread_mutex_trylock(&m), type == PTHREAD_MUTEX_RECURSIVE ? 0 : EBUSY);
		if (type == PTHREAD_MUTEX_RECURSIVE)
			ck_assert_int_eq(pthread_mutex_unlock(&m), 0);
		ck_assert_int_eq(pthread_mutex_unlock(&m), 0);
	}
	ck_assert_int_eq(pthread_mutex_lock(&m), 0);
	if (type == PTHREAD_MUTEX_RECURSIVE)
		ck_assert_int_eq(pthread_mutex_lock(&m), 0);
	ck_assert(__libc_single_threaded);

	ck_assert_int_eq(other_trylock(&m), EBUSY);
	ck_assert(!__libc_single_threaded);
	struct call locker;
	call_start(&locker, lock_unlock_fn, &m);
	ck_assert(wait_task_sleeping(atomic_load(&locker.tid), 5000));
	ck_assert(!call_done_within(&locker, 50));
	if (type == PTHREAD_MUTEX_RECURSIVE) {
		ck_assert_int_eq(pthread_mutex_unlock(&m), 0);
		ck_assert(!call_done_within(&locker, 50));
	}
	ck_assert_int_eq(pthread_mutex_unlock(&m), 0);
	ck_assert_msg(call_done_within(&locker, 5000), "the unlock did not wake the blocked locker");
	ck_assert_int_eq(call_join(&locker), 0);
	ck_assert_int_eq(other_trylock(&m), 0);
	ck_assert_int_eq(pthread_mutex_destroy(&m), 0);
}
END_TEST

/* ---- contention ---- */

START_TEST(test_exclusion)
{
	int type = types[_i];
	pthread_mutex_t m;
	init_type(&m, type, false);
	check_exclusion(&m, 4, 20000, type == PTHREAD_MUTEX_RECURSIVE, false);
	ck_assert_int_eq(pthread_mutex_destroy(&m), 0);
}
END_TEST

/* Blocked lockers are released highest priority first (see testutil.h). */
START_TEST(test_wake_priority_order)
{
	if (!rt_available())
		SKIP_TEST("SCHED_FIFO refused");
	pin_cpu(0);
	ck_assert(try_fifo(50));
	pthread_mutex_t m;
	init_type(&m, types[_i], false);
	check_lock_order(&m);
	ck_assert_int_eq(pthread_mutex_destroy(&m), 0);
}
END_TEST

/* ---- C11 ---- */

START_TEST(test_c11_plain)
{
	mtx_t m;
	ck_assert_int_eq(mtx_init(&m, mtx_plain), thrd_success);
	ck_assert_int_eq(mtx_lock(&m), thrd_success);
	ck_assert_int_eq(c11_other_trylock(&m), thrd_busy);
	ck_assert_int_eq(mtx_trylock(&m), thrd_busy);
	ck_assert_int_eq(mtx_unlock(&m), thrd_success);
	ck_assert_int_eq(c11_other_trylock(&m), thrd_success);
	ck_assert_int_eq(mtx_trylock(&m), thrd_success);
	ck_assert_int_eq(mtx_unlock(&m), thrd_success);
	check_exclusion((pthread_mutex_t *)&m, 4, 2000, false, false);
	mtx_destroy(&m);
}
END_TEST

static int c11_hold_fn(void *p)
{
	mtx_t *m = p;
	if (mtx_lock(m) != thrd_success)
		return 1;
	sleep_ms(400);
	return mtx_unlock(m) == thrd_success ? 0 : 2;
}

START_TEST(test_c11_timed)
{
	mtx_t m;
	ck_assert_int_eq(mtx_init(&m, mtx_timed), thrd_success);
	struct timespec dl = deadline_in_ms(CLOCK_REALTIME, 100);
	ck_assert_int_eq(mtx_timedlock(&m, &dl), thrd_success);
	ck_assert_int_eq(mtx_unlock(&m), thrd_success);

	thrd_t t;
	ck_assert_int_eq(thrd_create(&t, c11_hold_fn, &m), thrd_success);
	while (c11_other_trylock(&m) == thrd_success)
		sleep_ms(1);
	dl = deadline_in_ms(CLOCK_REALTIME, 100);
	ck_assert_int_eq(mtx_timedlock(&m, &dl), thrd_timedout);
	int64_t late = now_ns(CLOCK_REALTIME) - ts_to_ns(&dl);
	ck_assert_int_ge(late, 0);
	ck_assert_int_lt(late, 500000000LL);
	dl = deadline_in_ms(CLOCK_REALTIME, 10000);
	ck_assert_int_eq(mtx_timedlock(&m, &dl), thrd_success);
	int r = -1;
	ck_assert_int_eq(thrd_join(t, &r), thrd_success);
	ck_assert_int_eq(r, 0);
	ck_assert_int_eq(mtx_unlock(&m), thrd_success);
	mtx_destroy(&m);
}
END_TEST

START_TEST(test_c11_recursive)
{
	mtx_t m;
	ck_assert_int_eq(mtx_init(&m, _i ? mtx_timed | mtx_recursive : mtx_plain | mtx_recursive), thrd_success);
	ck_assert_int_eq(mtx_lock(&m), thrd_success);
	ck_assert_int_eq(mtx_lock(&m), thrd_success);
	ck_assert_int_eq(mtx_trylock(&m), thrd_success);
	ck_assert_int_eq(c11_other_trylock(&m), thrd_busy);
	ck_assert_int_eq(mtx_unlock(&m), thrd_success);
	ck_assert_int_eq(mtx_unlock(&m), thrd_success);
	ck_assert_int_eq(c11_other_trylock(&m), thrd_busy);
	ck_assert_int_eq(mtx_unlock(&m), thrd_success);
	ck_assert_int_eq(c11_other_trylock(&m), thrd_success);
	mtx_destroy(&m);
}
END_TEST

/* ---- process-shared ---- */

START_TEST(test_pshared_fork_exclusion)
{
	int type = types[_i];
	pthread_mutex_t *m = shared_alloc(sizeof *m);
	init_type(m, type, true);
	check_exclusion(m, 3, 5000, type == PTHREAD_MUTEX_RECURSIVE, true);
	ck_assert_int_eq(pthread_mutex_destroy(m), 0);
	shared_free(m, sizeof *m);
}
END_TEST

/* A child blocks on a mutex the parent holds and is woken by its unlock. */
START_TEST(test_pshared_fork_blocked)
{
	int type = types[_i];
	pthread_mutex_t *m = shared_alloc(sizeof *m);
	init_type(m, type, true);
	ck_assert_int_eq(pthread_mutex_lock(m), 0);
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		if (pthread_mutex_trylock(m) != EBUSY)
			_exit(1);
		if (pthread_mutex_lock(m) != 0)
			_exit(2);
		if (pthread_mutex_unlock(m) != 0)
			_exit(3);
		_exit(0);
	}
	ck_assert(wait_task_sleeping(pid, 5000));
	sleep_ms(10);
	ck_assert_int_eq(pthread_mutex_unlock(m), 0);
	ck_assert_child_ok(pid, 5000);
	ck_assert_int_eq(pthread_mutex_trylock(m), 0);
	ck_assert_int_eq(pthread_mutex_unlock(m), 0);
	ck_assert_int_eq(pthread_mutex_destroy(m), 0);
	shared_free(m, sizeof *m);
}
END_TEST

/* After fork the child's thread is the replica of the forking thread
 * (POSIX): it owns what that thread held, with its own TID (unlock works,
 * and so does a relock check), and its own mutexes work normally.  A
 * thread the child creates later owns none of it. */
static void *child_thread_unlock(void *m)
{
	return (void *)(intptr_t)pthread_mutex_unlock(m);
}

START_TEST(test_fork_child_replica_owner)
{
	if (!library_loaded())
		SKIP_TEST("NPTL's fork child gets EPERM unlocking what the forking thread held");
	int type = _i ? PTHREAD_MUTEX_RECURSIVE : PTHREAD_MUTEX_ERRORCHECK;
	pthread_mutex_t m, other, mine;
	init_type(&m, type, false);
	init_type(&other, type, false);
	init_type(&mine, type, false);
	ck_assert_int_eq(pthread_mutex_lock(&m), 0);
	ck_assert_int_eq(pthread_mutex_lock(&other), 0);
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		/* a second thread of the child is not the replica */
		pthread_t t;
		void *r;
		if (pthread_create(&t, NULL, child_thread_unlock, &other) != 0 || pthread_join(t, &r) != 0 ||
		    (intptr_t)r != EPERM)
			_exit(1);
		if (type == PTHREAD_MUTEX_ERRORCHECK && pthread_mutex_lock(&m) != EDEADLK)
			_exit(2);
		if (pthread_mutex_unlock(&m) != 0 || pthread_mutex_trylock(&m) != 0 || pthread_mutex_unlock(&m) != 0)
			_exit(3);
		if ((unsigned)m.__data.__lock != 0)
			_exit(4);
		if (pthread_mutex_lock(&mine) != 0 || pthread_mutex_unlock(&mine) != 0 ||
		    pthread_mutex_unlock(&mine) != EPERM)
			_exit(5);
		_exit(0);
	}
	ck_assert_child_ok(pid, 5000);
	ck_assert_int_eq(pthread_mutex_unlock(&m), 0);
	ck_assert_int_eq(pthread_mutex_unlock(&other), 0);
	ck_assert_int_eq(pthread_mutex_destroy(&m), 0);
	ck_assert_int_eq(pthread_mutex_destroy(&other), 0);
	ck_assert_int_eq(pthread_mutex_destroy(&mine), 0);
}
END_TEST

static Suite *mutex_suite(void)
{
	Suite *s = suite_create("mutex");
	TCase *tc;

	tc = tcase_create("static");
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_static_normal);
	tcase_add_test(tc, test_static_recursive);
	tcase_add_test(tc, test_static_errorcheck);
	tcase_add_test(tc, test_static_adaptive);
	suite_add_tcase(s, tc);

	tc = tcase_create("semantics");
	tcase_set_timeout(tc, 30);
	tcase_add_loop_test(tc, test_trylock, 0, NTYPES);
	tcase_add_test(tc, test_recursion_count);
	tcase_add_test(tc, test_errorcheck_relock);
	tcase_add_loop_test(tc, test_nonowner_unlock_eperm, 0, 2);
	tcase_add_loop_test(tc, test_normal_nonowner_unlock, 0, 3);
	tcase_add_loop_test(tc, test_normal_relock_released_by_other, 0, 9);
	tcase_add_test(tc, test_semaphore_pattern);
	tcase_add_loop_test(tc, test_unlock_free_normal, 0, 2);
	tcase_add_loop_test(tc, test_destroy_busy, 0, NTYPES);
	tcase_add_loop_test(tc, test_use_after_destroy, 0, NTYPES);
	suite_add_tcase(s, tc);

	tc = tcase_create("timed");
	tcase_set_timeout(tc, 30);
	tcase_add_loop_test(tc, test_timespec_invalid, 0, NTYPES);
	tcase_add_loop_test(tc, test_clocklock_bad_clock, 0, NTYPES);
	tcase_add_loop_test(tc, test_timeout_duration, 0, NTYPES * 3);
	tcase_add_test(tc, test_timedlock_self_normal);
	tcase_add_loop_test(tc, test_timedlock_acquires, 0, NTYPES * 2);
	suite_add_tcase(s, tc);

	tc = tcase_create("alone");
	tcase_add_loop_test(tc, test_alone_then_threads, 0, NTYPES + 1);
	suite_add_tcase(s, tc);

	tc = tcase_create("contention");
	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, test_exclusion, 0, NTYPES);
	tcase_add_loop_test(tc, test_wake_priority_order, 0, NTYPES);
	suite_add_tcase(s, tc);

	tc = tcase_create("c11");
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_c11_plain);
	tcase_add_test(tc, test_c11_timed);
	tcase_add_loop_test(tc, test_c11_recursive, 0, 2);
	suite_add_tcase(s, tc);

	tc = tcase_create("pshared");
	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, test_pshared_fork_exclusion, 0, NTYPES);
	tcase_add_loop_test(tc, test_pshared_fork_blocked, 0, NTYPES);
	tcase_add_loop_test(tc, test_fork_child_replica_owner, 0, 2);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return run_suite(mutex_suite());
}
