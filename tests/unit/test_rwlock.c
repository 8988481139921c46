/*
 * pthread_rwlock_*: every kind (prefer reader, prefer writer, prefer
 * writer non-recursive), private and process-shared; the timed and clock
 * variants; error codes; re-reading while a writer waits; writer
 * preference; and priority inheritance both ways (a writer boosted by the
 * readers and writers queued behind it, readers boosted by the writer that
 * waits for them), with an L/M/H inversion on one CPU; the order of
 * real-time waiters at the unlock (priority, then arrival).
 */
#include "testutil.h"

/* Loop index _i: kind = _i % 3, pshared = _i / 3. */
#define NVARIANTS 6

static const int kinds[3] = { PTHREAD_RWLOCK_PREFER_READER_NP, PTHREAD_RWLOCK_PREFER_WRITER_NP,
			      PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP };

static void init_rw(pthread_rwlock_t *rw, int kind, bool pshared)
{
	pthread_rwlockattr_t a;
	ck_assert_int_eq(pthread_rwlockattr_init(&a), 0);
	ck_assert_int_eq(pthread_rwlockattr_setkind_np(&a, kind), 0);
	if (pshared)
		ck_assert_int_eq(pthread_rwlockattr_setpshared(&a, PTHREAD_PROCESS_SHARED), 0);
	ck_assert_int_eq(pthread_rwlock_init(rw, &a), 0);
	ck_assert_int_eq(pthread_rwlockattr_destroy(&a), 0);
}

/* Pins the test to CPU 0 and runs it as SCHED_FIFO 50, above everything it
 * creates; false (skip) if real-time priority is refused. */
static bool rt_setup(void)
{
	if (!rt_available())
		return false;
	pin_cpu(0);
	ck_assert(try_fifo(50));
	return true;
}

static int tryrdlock_fn(void *rw)
{
	int r = pthread_rwlock_tryrdlock(rw);
	if (r == 0)
		pthread_rwlock_unlock(rw);
	return r;
}

static int trywrlock_fn(void *rw)
{
	int r = pthread_rwlock_trywrlock(rw);
	if (r == 0)
		pthread_rwlock_unlock(rw);
	return r;
}

static int rd_unlock_fn(void *rw)
{
	int r = pthread_rwlock_rdlock(rw);
	return r ? r : pthread_rwlock_unlock(rw);
}

static int wr_unlock_fn(void *rw)
{
	int r = pthread_rwlock_wrlock(rw);
	return r ? r : pthread_rwlock_unlock(rw);
}

/* ---- attributes and initializers ---- */

START_TEST(test_rwlockattr)
{
	pthread_rwlockattr_t a;
	int v = -1;
	ck_assert_int_eq(pthread_rwlockattr_init(&a), 0);
	ck_assert_int_eq(pthread_rwlockattr_getkind_np(&a, &v), 0);
	ck_assert_int_eq(v, PTHREAD_RWLOCK_PREFER_READER_NP);
	ck_assert_int_eq(pthread_rwlockattr_getpshared(&a, &v), 0);
	ck_assert_int_eq(v, PTHREAD_PROCESS_PRIVATE);
	for (int k = 0; k < 3; k++) {
		ck_assert_int_eq(pthread_rwlockattr_setkind_np(&a, kinds[k]), 0);
		ck_assert_int_eq(pthread_rwlockattr_getkind_np(&a, &v), 0);
		ck_assert_int_eq(v, kinds[k]);
	}
	ck_assert_int_eq(pthread_rwlockattr_setkind_np(&a, 3), EINVAL);
	ck_assert_int_eq(pthread_rwlockattr_setkind_np(&a, -1), EINVAL);
	ck_assert_int_eq(pthread_rwlockattr_setpshared(&a, PTHREAD_PROCESS_SHARED), 0);
	ck_assert_int_eq(pthread_rwlockattr_getpshared(&a, &v), 0);
	ck_assert_int_eq(v, PTHREAD_PROCESS_SHARED);
	ck_assert_int_eq(pthread_rwlockattr_setpshared(&a, 2), EINVAL);
	ck_assert_int_eq(pthread_rwlockattr_getpshared(&a, &v), 0);
	ck_assert_int_eq(v, PTHREAD_PROCESS_SHARED);
	ck_assert_int_eq(pthread_rwlockattr_destroy(&a), 0);
}
END_TEST

START_TEST(test_static_initializers)
{
	pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;
	pthread_rwlock_t nr = PTHREAD_RWLOCK_WRITER_NONRECURSIVE_INITIALIZER_NP;
	ck_assert_int_eq(sizeof rw, 56);
	pthread_rwlock_t *both[2] = { &rw, &nr };
	for (int i = 0; i < 2; i++) {
		ck_assert_int_eq(pthread_rwlock_rdlock(both[i]), 0);
		ck_assert_int_eq(run_in_thread(trywrlock_fn, both[i]), EBUSY);
		ck_assert_int_eq(pthread_rwlock_unlock(both[i]), 0);
		ck_assert_int_eq(pthread_rwlock_wrlock(both[i]), 0);
		ck_assert_int_eq(run_in_thread(tryrdlock_fn, both[i]), EBUSY);
		ck_assert_int_eq(pthread_rwlock_unlock(both[i]), 0);
	}
	/* The non-recursive initializer is a writer-preferring lock: a new
	 * reader stays out while a writer waits. */
	ck_assert_int_eq(pthread_rwlock_rdlock(&nr), 0);
	struct call w;
	call_start(&w, wr_unlock_fn, &nr);
	ck_assert(wait_task_sleeping(atomic_load(&w.tid), 5000));
	ck_assert_int_eq(run_in_thread(tryrdlock_fn, &nr), EBUSY);
	ck_assert_int_eq(pthread_rwlock_unlock(&nr), 0);
	ck_assert_int_eq(call_join(&w), 0);
	ck_assert_int_eq(pthread_rwlock_destroy(&rw), 0);
	ck_assert_int_eq(pthread_rwlock_destroy(&nr), 0);
}
END_TEST

/* ---- semantics and errors, every kind ---- */

START_TEST(test_basic)
{
	pthread_rwlock_t rw;
	init_rw(&rw, kinds[_i % 3], _i / 3);
	/* Several readers at once, the same thread twice. */
	ck_assert_int_eq(pthread_rwlock_rdlock(&rw), 0);
	ck_assert_int_eq(pthread_rwlock_tryrdlock(&rw), 0);
	ck_assert_int_eq(run_in_thread(rd_unlock_fn, &rw), 0);
	ck_assert_int_eq(run_in_thread(tryrdlock_fn, &rw), 0);
	ck_assert_int_eq(pthread_rwlock_trywrlock(&rw), EBUSY);
	ck_assert_int_eq(run_in_thread(trywrlock_fn, &rw), EBUSY);
	ck_assert_int_eq(pthread_rwlock_unlock(&rw), 0);
	ck_assert_int_eq(run_in_thread(trywrlock_fn, &rw), EBUSY);
	ck_assert_int_eq(pthread_rwlock_unlock(&rw), 0);
	/* One writer, which excludes everyone. */
	ck_assert_int_eq(pthread_rwlock_wrlock(&rw), 0);
	ck_assert_int_eq(pthread_rwlock_rdlock(&rw), EDEADLK);
	ck_assert_int_eq(pthread_rwlock_wrlock(&rw), EDEADLK);
	ck_assert_int_eq(pthread_rwlock_tryrdlock(&rw), EBUSY);
	ck_assert_int_eq(pthread_rwlock_trywrlock(&rw), EBUSY);
	ck_assert_int_eq(run_in_thread(tryrdlock_fn, &rw), EBUSY);
	ck_assert_int_eq(run_in_thread(trywrlock_fn, &rw), EBUSY);
	struct timespec past = { 0, 0 };
	ck_assert_int_eq(pthread_rwlock_timedrdlock(&rw, &past), EDEADLK);
	ck_assert_int_eq(pthread_rwlock_timedwrlock(&rw, &past), EDEADLK);
	ck_assert_int_eq(pthread_rwlock_unlock(&rw), 0);
	ck_assert_int_eq(run_in_thread(wr_unlock_fn, &rw), 0);
	ck_assert_int_eq(pthread_rwlock_trywrlock(&rw), 0);
	ck_assert_int_eq(pthread_rwlock_unlock(&rw), 0);
	/* A free lock is taken whatever the deadline says of the past. */
	ck_assert_int_eq(pthread_rwlock_timedrdlock(&rw, &past), 0);
	ck_assert_int_eq(pthread_rwlock_unlock(&rw), 0);
	ck_assert_int_eq(pthread_rwlock_clockwrlock(&rw, CLOCK_MONOTONIC, &past), 0);
	ck_assert_int_eq(pthread_rwlock_unlock(&rw), 0);
	ck_assert_int_eq(pthread_rwlock_destroy(&rw), 0);
}
END_TEST

/* glibc checks the clock and the timespec before looking at the lock. */
START_TEST(test_bad_deadline)
{
	pthread_rwlock_t rw;
	init_rw(&rw, kinds[_i % 3], _i / 3);
	struct timespec bad = { 0, 1000000000 }, neg = { 0, -1 }, ok = { 0, 0 };
	ck_assert_int_eq(pthread_rwlock_timedrdlock(&rw, &bad), EINVAL);
	ck_assert_int_eq(pthread_rwlock_timedwrlock(&rw, &neg), EINVAL);
	ck_assert_int_eq(pthread_rwlock_clockrdlock(&rw, CLOCK_MONOTONIC, &bad), EINVAL);
	ck_assert_int_eq(pthread_rwlock_clockwrlock(&rw, CLOCK_REALTIME, &neg), EINVAL);
	ck_assert_int_eq(pthread_rwlock_clockrdlock(&rw, CLOCK_PROCESS_CPUTIME_ID, &ok), EINVAL);
	ck_assert_int_eq(pthread_rwlock_clockwrlock(&rw, CLOCK_THREAD_CPUTIME_ID, &ok), EINVAL);
	ck_assert_int_eq(pthread_rwlock_clockrdlock(&rw, 12345, &ok), EINVAL);
	/* Nothing was taken. */
	ck_assert_int_eq(run_in_thread(trywrlock_fn, &rw), 0);
	ck_assert_int_eq(pthread_rwlock_destroy(&rw), 0);
}
END_TEST

/* The unlock of a lock the caller does not hold: EPERM here (glibc
 * corrupts its counts and returns 0). */
START_TEST(test_unlock_not_held)
{
	if (!library_loaded())
		SKIP_TEST("glibc does not detect an unlock of a lock not held");
	pthread_rwlock_t rw;
	init_rw(&rw, kinds[_i % 3], _i / 3);
	ck_assert_int_eq(pthread_rwlock_unlock(&rw), EPERM);
	ck_assert_int_eq(pthread_rwlock_wrlock(&rw), 0);
	struct call c;
	call_start(&c, (int (*)(void *))pthread_rwlock_unlock, &rw);
	ck_assert_int_eq(call_join(&c), EPERM);
	ck_assert_int_eq(pthread_rwlock_unlock(&rw), 0);
	ck_assert_int_eq(pthread_rwlock_unlock(&rw), EPERM);
	ck_assert_int_eq(run_in_thread(wr_unlock_fn, &rw), 0);
	ck_assert_int_eq(pthread_rwlock_destroy(&rw), 0);
}
END_TEST

/* A writer that holds a read lock itself would wait for ever (glibc
 * does): the kernel sees the writer wait on its own reader slot. */
START_TEST(test_wrlock_while_reading)
{
	if (!library_loaded())
		SKIP_TEST("glibc deadlocks there");
	pthread_rwlock_t rw;
	init_rw(&rw, kinds[_i % 3], _i / 3);
	ck_assert_int_eq(pthread_rwlock_rdlock(&rw), 0);
	ck_assert_int_eq(pthread_rwlock_wrlock(&rw), EDEADLK);
	struct timespec d = deadline_in_ms(CLOCK_MONOTONIC, 10000);
	ck_assert_int_eq(pthread_rwlock_clockwrlock(&rw, CLOCK_MONOTONIC, &d), EDEADLK);
	/* Nothing was left behind: other readers still enter, a writer
	 * gets in once the read lock is gone. */
	ck_assert_int_eq(run_in_thread(tryrdlock_fn, &rw), 0);
	ck_assert_int_eq(pthread_rwlock_unlock(&rw), 0);
	ck_assert_int_eq(run_in_thread(wr_unlock_fn, &rw), 0);
	ck_assert_int_eq(pthread_rwlock_destroy(&rw), 0);
}
END_TEST

/* ---- timeouts ---- */

struct timed {
	pthread_rwlock_t *rw;
	int op; /* 0 timedrd, 1 timedwr, 2 clockrd, 3 clockwr */
	clockid_t clock;
};

static int timed_fn(void *p)
{
	struct timed *t = p;
	clockid_t clock = t->op < 2 ? CLOCK_REALTIME : t->clock;
	struct timespec d = deadline_in_ms(clock, 100);
	int64_t t0 = now_ns(clock);
	int r;
	switch (t->op) {
	case 0: r = pthread_rwlock_timedrdlock(t->rw, &d); break;
	case 1: r = pthread_rwlock_timedwrlock(t->rw, &d); break;
	case 2: r = pthread_rwlock_clockrdlock(t->rw, clock, &d); break;
	default: r = pthread_rwlock_clockwrlock(t->rw, clock, &d); break;
	}
	if (r == ETIMEDOUT && now_ns(clock) < t0 + 95 * 1000000LL)
		return 1000; /* too early */
	return r;
}

START_TEST(test_timeouts)
{
	pthread_rwlock_t rw;
	init_rw(&rw, kinds[_i % 3], _i / 3);
	clockid_t clocks[2] = { CLOCK_REALTIME, CLOCK_MONOTONIC };
	/* Write-held: every timed lock times out. */
	ck_assert_int_eq(pthread_rwlock_wrlock(&rw), 0);
	for (int op = 0; op < 4; op++)
		for (int c = 0; c < 2; c++) {
			struct timed t = { &rw, op, clocks[c] };
			ck_assert_int_eq(run_in_thread(timed_fn, &t), ETIMEDOUT);
		}
	ck_assert_int_eq(pthread_rwlock_unlock(&rw), 0);
	/* Read-held: timed writers time out, and leave the lock usable. */
	ck_assert_int_eq(pthread_rwlock_rdlock(&rw), 0);
	for (int c = 0; c < 2; c++) {
		struct timed t = { &rw, 1 + 2 * c, clocks[c] };
		ck_assert_int_eq(run_in_thread(timed_fn, &t), ETIMEDOUT);
		ck_assert_int_eq(run_in_thread(rd_unlock_fn, &rw), 0);
	}
	ck_assert_int_eq(pthread_rwlock_unlock(&rw), 0);
	ck_assert_int_eq(run_in_thread(wr_unlock_fn, &rw), 0);
	ck_assert_int_eq(pthread_rwlock_destroy(&rw), 0);
}
END_TEST

/* ---- exclusion under contention ---- */

struct rw_exclusion {
	pthread_rwlock_t *rw;
	int iters;
	_Atomic int readers;
	_Atomic int writers;
	volatile long counter;
	_Atomic int errors;
};

static void rw_exclusion_worker(struct rw_exclusion *x, int id)
{
	for (int i = 0; i < x->iters; i++) {
		int how = (i + id) % 8;
		if (how == 0 || how == 5) {
			int r = how == 0 ? pthread_rwlock_wrlock(x->rw) : pthread_rwlock_trywrlock(x->rw);
			if (r == EBUSY)
				continue;
			if (r) {
				atomic_fetch_add(&x->errors, 1);
				continue;
			}
			if (atomic_fetch_add(&x->writers, 1) != 0 || atomic_load(&x->readers) != 0)
				atomic_fetch_add(&x->errors, 1);
			x->counter = x->counter + 1;
			atomic_fetch_sub(&x->writers, 1);
		} else {
			struct timespec d = deadline_in_ms(CLOCK_MONOTONIC, 10000);
			int r = how == 1 ? pthread_rwlock_tryrdlock(x->rw)
				: how == 2 ? pthread_rwlock_clockrdlock(x->rw, CLOCK_MONOTONIC, &d)
					   : pthread_rwlock_rdlock(x->rw);
			if (r == EBUSY)
				continue;
			if (r) {
				atomic_fetch_add(&x->errors, 1);
				continue;
			}
			atomic_fetch_add(&x->readers, 1);
			if (atomic_load(&x->writers) != 0)
				atomic_fetch_add(&x->errors, 1);
			atomic_fetch_sub(&x->readers, 1);
		}
		if (pthread_rwlock_unlock(x->rw) != 0)
			atomic_fetch_add(&x->errors, 1);
	}
}

struct rw_worker {
	struct rw_exclusion *x;
	int id;
};

static void *rw_exclusion_thread(void *p)
{
	struct rw_worker *w = p;
	rw_exclusion_worker(w->x, w->id);
	return NULL;
}

START_TEST(test_exclusion)
{
	pthread_rwlock_t rw;
	init_rw(&rw, kinds[_i % 3], false);
	struct rw_exclusion x = { .rw = &rw, .iters = 20000 };
	enum { N = 16 }; /* more threads than slots: anonymous readers too */
	pthread_t t[N];
	struct rw_worker w[N];
	for (int i = 0; i < N; i++) {
		w[i] = (struct rw_worker){ &x, i };
		ck_assert_int_eq(pthread_create(&t[i], NULL, rw_exclusion_thread, &w[i]), 0);
	}
	for (int i = 0; i < N; i++)
		ck_assert_int_eq(pthread_join(t[i], NULL), 0);
	ck_assert_int_eq(atomic_load(&x.errors), 0);
	ck_assert_int_eq(run_in_thread(wr_unlock_fn, &rw), 0);
	ck_assert_int_eq(pthread_rwlock_destroy(&rw), 0);
}
END_TEST

/* Process-shared: processes exclude each other through a lock in shared
 * memory, and one blocks on a lock another holds. */
START_TEST(test_pshared_fork)
{
	struct rw_exclusion *x = shared_alloc(sizeof *x + sizeof(pthread_rwlock_t));
	pthread_rwlock_t *rw = (pthread_rwlock_t *)(x + 1);
	init_rw(rw, kinds[_i % 3], true);
	ck_assert_int_eq(pthread_rwlock_wrlock(rw), 0);
	pid_t blocked = fork();
	if (blocked == 0) {
		if (pthread_rwlock_tryrdlock(rw) != EBUSY || pthread_rwlock_trywrlock(rw) != EBUSY)
			_exit(1);
		if (pthread_rwlock_rdlock(rw) != 0 || pthread_rwlock_unlock(rw) != 0)
			_exit(2);
		_exit(0);
	}
	ck_assert(wait_task_sleeping(blocked, 5000));
	ck_assert_int_eq(pthread_rwlock_unlock(rw), 0);
	ck_assert_child_ok(blocked, 10000);

	x->rw = rw;
	x->iters = 5000;
	enum { N = 4 };
	pid_t pids[N];
	for (int i = 0; i < N; i++) {
		pids[i] = fork();
		if (pids[i] == 0) {
			rw_exclusion_worker(x, i);
			_exit(0);
		}
	}
	for (int i = 0; i < N; i++)
		ck_assert_child_ok(pids[i], 60000);
	ck_assert_int_eq(atomic_load(&x->errors), 0);
	ck_assert_int_eq(pthread_rwlock_trywrlock(rw), 0);
	ck_assert_int_eq(pthread_rwlock_unlock(rw), 0);
	shared_free(x, sizeof *x + sizeof(pthread_rwlock_t));
}
END_TEST

/* ---- preference ---- */

/* A thread that holds a read lock reads again while a writer waits: glibc's
 * reason for preferring readers by default.  PREFER_WRITER_NP lets such a
 * thread in too (glibc prefers readers there altogether). */
START_TEST(test_reread_with_waiting_writer)
{
	pthread_rwlock_t rw;
	init_rw(&rw, kinds[_i % 2], _i / 2);
	ck_assert_int_eq(pthread_rwlock_rdlock(&rw), 0);
	struct call w;
	call_start(&w, wr_unlock_fn, &rw);
	ck_assert(wait_task_sleeping(atomic_load(&w.tid), 5000));
	struct timespec d = deadline_in_ms(CLOCK_REALTIME, 3000);
	ck_assert_int_eq(pthread_rwlock_timedrdlock(&rw, &d), 0);
	ck_assert_int_eq(pthread_rwlock_tryrdlock(&rw), 0);
	ck_assert_int_eq(pthread_rwlock_rdlock(&rw), 0);
	ck_assert(!call_done_within(&w, 50));
	for (int i = 0; i < 4; i++)
		ck_assert_int_eq(pthread_rwlock_unlock(&rw), 0);
	ck_assert_int_eq(call_join(&w), 0);
	ck_assert_int_eq(pthread_rwlock_destroy(&rw), 0);
}
END_TEST

/* Writer preference: while a writer waits, a new reader stays out, and a
 * stream of readers cannot keep the writer out. */
static int reader_stream_fn(void *p)
{
	pthread_rwlock_t *rw = p;
	int64_t end = now_ns(CLOCK_MONOTONIC) + 2 * NSEC_PER_SEC;
	while (now_ns(CLOCK_MONOTONIC) < end) {
		if (pthread_rwlock_tryrdlock(rw) == 0) {
			struct timespec ts = { 0, 2000000 };
			nanosleep(&ts, NULL);
			pthread_rwlock_unlock(rw);
		}
	}
	return 0;
}

START_TEST(test_writer_not_starved)
{
	int kind = kinds[1 + _i % 2];
	if (kind == PTHREAD_RWLOCK_PREFER_WRITER_NP && !library_loaded())
		SKIP_TEST("glibc prefers readers in PREFER_WRITER_NP");
	pthread_rwlock_t rw;
	init_rw(&rw, kind, _i / 2);
	ck_assert_int_eq(pthread_rwlock_rdlock(&rw), 0);
	struct call w;
	call_start(&w, wr_unlock_fn, &rw);
	ck_assert(wait_task_sleeping(atomic_load(&w.tid), 5000));
	ck_assert_int_eq(run_in_thread(tryrdlock_fn, &rw), EBUSY);
	ck_assert_int_eq(pthread_rwlock_unlock(&rw), 0);
	ck_assert_int_eq(call_join(&w), 0);
	/* Overlapping readers all the time; a writer still gets in soon. */
	struct call r1, r2;
	call_start(&r1, reader_stream_fn, &rw);
	call_start(&r2, reader_stream_fn, &rw);
	sleep_ms(50);
	struct timespec d = deadline_in_ms(CLOCK_MONOTONIC, 1000);
	ck_assert_int_eq(pthread_rwlock_clockwrlock(&rw, CLOCK_MONOTONIC, &d), 0);
	ck_assert_int_eq(pthread_rwlock_unlock(&rw), 0);
	call_join(&r1);
	call_join(&r2);
	ck_assert_int_eq(pthread_rwlock_destroy(&rw), 0);
}
END_TEST

/* A writer that times out while it waits for readers gives way: the
 * readers queued behind it get in, with the first reader still inside. */
struct timed_writer {
	pthread_rwlock_t *rw;
	long ms;
};

static int timed_writer_fn(void *p)
{
	struct timed_writer *t = p;
	struct timespec d = deadline_in_ms(CLOCK_MONOTONIC, t->ms);
	int r = pthread_rwlock_clockwrlock(t->rw, CLOCK_MONOTONIC, &d);
	if (r == 0)
		pthread_rwlock_unlock(t->rw);
	return r;
}

START_TEST(test_writer_timeout_lets_readers_in)
{
	pthread_rwlock_t rw;
	init_rw(&rw, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP, _i);
	ck_assert_int_eq(pthread_rwlock_rdlock(&rw), 0);
	struct timed_writer tw = { &rw, 500 };
	struct call w, r;
	call_start(&w, timed_writer_fn, &tw);
	ck_assert(wait_task_sleeping(atomic_load(&w.tid), 5000));
	call_start(&r, rd_unlock_fn, &rw);
	ck_assert(wait_task_sleeping(atomic_load(&r.tid), 5000));
	ck_assert_int_eq(call_join(&w), ETIMEDOUT);
	ck_assert_int_eq(call_join(&r), 0);
	ck_assert_int_eq(pthread_rwlock_unlock(&rw), 0);
	ck_assert_int_eq(run_in_thread(wr_unlock_fn, &rw), 0);
	ck_assert_int_eq(pthread_rwlock_destroy(&rw), 0);
}
END_TEST

/* POSIX's fork child is a replica of the forking thread: it may release
 * what that thread held (the pthread_atfork pattern).  glibc's child
 * takes a write unlock for a read unlock (the TID it recorded is the
 * parent's) and, with the non-recursive kind, keeps the lock busy: the
 * write case is the library's promise only. */
START_TEST(test_fork_child_unlocks)
{
	pthread_rwlock_t rw;
	init_rw(&rw, kinds[_i % 3], false);
	for (int write = 0; write < (library_loaded() ? 2 : 1); write++) {
		ck_assert_int_eq(write ? pthread_rwlock_wrlock(&rw) : pthread_rwlock_rdlock(&rw), 0);
		pid_t pid = fork();
		if (pid == 0) {
			if (pthread_rwlock_unlock(&rw) != 0)
				_exit(1);
			if (pthread_rwlock_trywrlock(&rw) != 0 || pthread_rwlock_unlock(&rw) != 0)
				_exit(2);
			_exit(0);
		}
		ck_assert_child_ok(pid, 10000);
		ck_assert_int_eq(pthread_rwlock_unlock(&rw), 0);
	}
	ck_assert_int_eq(pthread_rwlock_destroy(&rw), 0);
}
END_TEST

/* ---- priority inheritance ---- */

struct holder_rw {
	pthread_rwlock_t *rw;
	bool write;
	sem_t go;
	_Atomic int locked;
	_Atomic pid_t tid;
};

static void *holder_rw_main(void *p)
{
	struct holder_rw *h = p;
	atomic_store(&h->tid, test_gettid());
	int r = h->write ? pthread_rwlock_wrlock(h->rw) : pthread_rwlock_rdlock(h->rw);
	atomic_store(&h->locked, r == 0 ? 1 : -1);
	sem_wait_intr(&h->go);
	if (r == 0)
		pthread_rwlock_unlock(h->rw);
	return NULL;
}

/* Index: bit 0 the holder writes, bit 1 the blocked thread writes, bit 2
 * pshared.  A read holder with a blocked reader is no inversion: skipped. */
START_TEST(test_boost)
{
	bool holder_writes = _i & 1, blocked_writes = _i & 2, pshared = _i & 4;
	if (!holder_writes && !blocked_writes)
		return;
	if (!library_loaded())
		SKIP_TEST("glibc's rwlocks have no priority inheritance");
	if (!rt_setup())
		SKIP_TEST("SCHED_FIFO refused");
	pthread_rwlock_t rw;
	init_rw(&rw, PTHREAD_RWLOCK_PREFER_READER_NP, pshared);
	struct holder_rw h = { .rw = &rw, .write = holder_writes };
	sem_init(&h.go, 0, 0);
	pthread_t low;
	start_thread_sched(&low, SCHED_FIFO, 10, 0, holder_rw_main, &h);
	ck_assert(wait_flag(&h.locked, 1, 5000));
	struct holder_rw b = { .rw = &rw, .write = blocked_writes };
	sem_init(&b.go, 0, 0);
	pthread_t high;
	start_thread_sched(&high, SCHED_FIFO, 30, 0, holder_rw_main, &b);
	ck_assert_msg(wait_task_rt_prio(atomic_load(&h.tid), 30, 5000), "holder not boosted: prio %d",
		      task_rt_prio(atomic_load(&h.tid)));
	sem_post(&h.go);
	ck_assert(wait_flag(&b.locked, 1, 5000));
	sem_post(&b.go);
	pthread_join(low, NULL);
	pthread_join(high, NULL);
	ck_assert_int_eq(pthread_rwlock_destroy(&rw), 0);
}
END_TEST

/* A writer boosts every reader it waits for (up to the slots), and a reader
 * queued behind the writer boosts the readers through it. */
START_TEST(test_boost_chain)
{
	if (!library_loaded())
		SKIP_TEST("glibc's rwlocks have no priority inheritance");
	if (!rt_setup())
		SKIP_TEST("SCHED_FIFO refused");
	pthread_rwlock_t rw;
	init_rw(&rw, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP, false);
	enum { R = 3 };
	struct holder_rw h[R];
	pthread_t t[R];
	for (int i = 0; i < R; i++) {
		h[i] = (struct holder_rw){ .rw = &rw, .write = false };
		sem_init(&h[i].go, 0, 0);
		start_thread_sched(&t[i], SCHED_FIFO, 5 + i, 0, holder_rw_main, &h[i]);
		ck_assert(wait_flag(&h[i].locked, 1, 5000));
	}
	struct holder_rw w = { .rw = &rw, .write = true };
	sem_init(&w.go, 0, 0);
	pthread_t wt;
	start_thread_sched(&wt, SCHED_FIFO, 20, 0, holder_rw_main, &w);
	/* The writer waits for one reader at a time, boosting it. */
	for (int n = 0; n < 5000 && atomic_load(&w.tid) == 0; n++)
		sleep_ms(1);
	ck_assert(wait_task_sleeping(atomic_load(&w.tid), 5000));
	struct holder_rw r = { .rw = &rw, .write = false };
	sem_init(&r.go, 0, 0);
	pthread_t rt;
	start_thread_sched(&rt, SCHED_FIFO, 40, 0, holder_rw_main, &r);
	for (int i = 0; i < R; i++) {
		/* Whichever reader the writer waits on now runs at 40. */
		int64_t end = now_ns(CLOCK_MONOTONIC) + 5 * NSEC_PER_SEC;
		int boosted = -1;
		while (boosted < 0 && now_ns(CLOCK_MONOTONIC) < end) {
			for (int j = 0; j < R; j++)
				if (atomic_load(&h[j].locked) == 1 && task_rt_prio(atomic_load(&h[j].tid)) == 40)
					boosted = j;
			if (boosted < 0)
				sleep_ms(1);
		}
		ck_assert_msg(boosted >= 0, "no reader boosted to 40 (round %d)", i);
		atomic_store(&h[boosted].locked, 2);
		sem_post(&h[boosted].go);
		pthread_join(t[boosted], NULL);
	}
	ck_assert(wait_flag(&w.locked, 1, 5000));
	sem_post(&w.go);
	ck_assert(wait_flag(&r.locked, 1, 5000));
	sem_post(&r.go);
	pthread_join(wt, NULL);
	pthread_join(rt, NULL);
	ck_assert_int_eq(pthread_rwlock_destroy(&rw), 0);
}
END_TEST

/* A SCHED_OTHER waiter sleeps on the lock's state rather than on the
 * writer's rt_mutex: a real-time reader queued beside it still boosts the
 * writer, and both get in once the writer leaves. */
START_TEST(test_boost_with_other_waiter)
{
	if (!library_loaded())
		SKIP_TEST("glibc's rwlocks have no priority inheritance");
	if (!rt_setup())
		SKIP_TEST("SCHED_FIFO refused");
	pthread_rwlock_t rw;
	init_rw(&rw, PTHREAD_RWLOCK_PREFER_READER_NP, _i);
	struct holder_rw h = { .rw = &rw, .write = true }, w = { .rw = &rw, .write = true },
			 r = { .rw = &rw, .write = false };
	sem_init(&h.go, 0, 0);
	sem_init(&w.go, 0, 0);
	sem_init(&r.go, 0, 0);
	pthread_t low, other, high;
	start_thread_sched(&low, SCHED_FIFO, 10, 0, holder_rw_main, &h);
	ck_assert(wait_flag(&h.locked, 1, 5000));
	start_thread_sched(&other, SCHED_OTHER, 0, 0, holder_rw_main, &w);
	for (int n = 0; n < 5000 && atomic_load(&w.tid) == 0; n++)
		sleep_ms(1);
	ck_assert(wait_task_sleeping(atomic_load(&w.tid), 5000));
	ck_assert_int_eq(task_rt_prio(atomic_load(&h.tid)), 10);
	start_thread_sched(&high, SCHED_FIFO, 30, 0, holder_rw_main, &r);
	ck_assert_msg(wait_task_rt_prio(atomic_load(&h.tid), 30, 5000), "holder not boosted: prio %d",
		      task_rt_prio(atomic_load(&h.tid)));
	sem_post(&h.go);
	ck_assert(wait_flag(&r.locked, 1, 5000));
	sem_post(&r.go);
	ck_assert(wait_flag(&w.locked, 1, 5000));
	sem_post(&w.go);
	pthread_join(low, NULL);
	pthread_join(other, NULL);
	pthread_join(high, NULL);
	ck_assert_int_eq(pthread_rwlock_destroy(&rw), 0);
}
END_TEST

/*
 * The classic inversion on one CPU: low (10) holds the lock with 100 ms of
 * work left, medium (20) spins for up to 3 s, high (30) blocks on the
 * lock.  With inheritance, low outruns medium and high gets in after about
 * 100 ms; without it, only when medium gives up.  Index as in test_boost.
 */
struct inversion {
	pthread_rwlock_t *rw;
	bool low_writes, high_writes;
	_Atomic int low_locked;
	_Atomic int stop;
	_Atomic int medium_gave_up;
	int low_result, high_result;
	int64_t high_wait_ns;
};

static void *inversion_low(void *p)
{
	struct inversion *v = p;
	v->low_result = v->low_writes ? pthread_rwlock_wrlock(v->rw) : pthread_rwlock_rdlock(v->rw);
	atomic_store(&v->low_locked, 1);
	burn_cpu_ms(100);
	if (v->low_result == 0)
		v->low_result = pthread_rwlock_unlock(v->rw);
	return NULL;
}

static void *inversion_medium(void *p)
{
	struct inversion *v = p;
	int64_t end = now_ns(CLOCK_MONOTONIC) + 3 * NSEC_PER_SEC;
	while (!atomic_load(&v->stop)) {
		if (now_ns(CLOCK_MONOTONIC) > end) {
			atomic_store(&v->medium_gave_up, 1);
			break;
		}
	}
	return NULL;
}

static void *inversion_high(void *p)
{
	struct inversion *v = p;
	int64_t t0 = now_ns(CLOCK_MONOTONIC);
	v->high_result = v->high_writes ? pthread_rwlock_wrlock(v->rw) : pthread_rwlock_rdlock(v->rw);
	v->high_wait_ns = now_ns(CLOCK_MONOTONIC) - t0;
	atomic_store(&v->stop, 1);
	if (v->high_result == 0)
		v->high_result = pthread_rwlock_unlock(v->rw);
	return NULL;
}

START_TEST(test_inversion_avoided)
{
	bool low_writes = _i & 1, high_writes = _i & 2, pshared = _i & 4;
	if (!low_writes && !high_writes)
		return;
	if (!library_loaded())
		SKIP_TEST("glibc's rwlocks have no priority inheritance");
	if (!rt_setup())
		SKIP_TEST("SCHED_FIFO refused");
	pthread_rwlock_t rw;
	init_rw(&rw, PTHREAD_RWLOCK_PREFER_READER_NP, pshared);
	struct inversion v = { .rw = &rw, .low_writes = low_writes, .high_writes = high_writes };
	pthread_t low, medium, high;
	start_thread_sched(&low, SCHED_FIFO, 10, 0, inversion_low, &v);
	ck_assert(wait_flag(&v.low_locked, 1, 5000));
	start_thread_sched(&medium, SCHED_FIFO, 20, 0, inversion_medium, &v);
	start_thread_sched(&high, SCHED_FIFO, 30, 0, inversion_high, &v);
	ck_assert_int_eq(pthread_join(high, NULL), 0);
	ck_assert_int_eq(pthread_join(medium, NULL), 0);
	ck_assert_int_eq(pthread_join(low, NULL), 0);
	ck_assert_int_eq(v.low_result, 0);
	ck_assert_int_eq(v.high_result, 0);
	ck_assert_msg(!atomic_load(&v.medium_gave_up) && v.high_wait_ns < 1500000000LL,
		      "priority inversion: high waited %lld ms", (long long)(v.high_wait_ns / 1000000));
	ck_assert_int_eq(pthread_rwlock_destroy(&rw), 0);
}
END_TEST

/*
 * The order of waiters at the unlock, all SCHED_FIFO on one CPU, the
 * unlocker above them: a reader queues first, then a writer.  The library
 * serves them by priority, then by arrival, with every kind (docs/rwlock.md
 * says why); glibc gives the lock to the writer with its non-recursive
 * kind and to the reader with the default one, whatever the priorities.
 */
struct ordered_waiter {
	pthread_rwlock_t *rw;
	bool write;
	_Atomic int *next;
	int place; /* 1: got the lock first */
	int result;
	_Atomic pid_t tid;
};

static void *ordered_waiter_main(void *p)
{
	struct ordered_waiter *w = p;
	atomic_store(&w->tid, test_gettid());
	w->result = w->write ? pthread_rwlock_wrlock(w->rw) : pthread_rwlock_rdlock(w->rw);
	w->place = atomic_fetch_add(w->next, 1) + 1;
	if (w->result == 0)
		w->result = pthread_rwlock_unlock(w->rw);
	return NULL;
}

static void start_ordered(pthread_t *t, struct ordered_waiter *w, int prio)
{
	start_thread_sched(t, SCHED_FIFO, prio, 0, ordered_waiter_main, w);
	for (int n = 0; n < 5000 && atomic_load(&w->tid) == 0; n++)
		sleep_ms(1);
	ck_assert(wait_task_sleeping(atomic_load(&w->tid), 5000));
}

/* Returns the reader's place (1 or 2). */
static int reader_place(int kind, bool pshared, int reader_prio, int writer_prio)
{
	pthread_rwlock_t rw;
	init_rw(&rw, kind, pshared);
	_Atomic int next = 0;
	struct ordered_waiter r = { .rw = &rw, .write = false, .next = &next },
			      w = { .rw = &rw, .write = true, .next = &next };
	ck_assert_int_eq(pthread_rwlock_wrlock(&rw), 0);
	pthread_t rt, wt;
	start_ordered(&rt, &r, reader_prio);
	start_ordered(&wt, &w, writer_prio);
	ck_assert_int_eq(pthread_rwlock_unlock(&rw), 0);
	pthread_join(rt, NULL);
	pthread_join(wt, NULL);
	ck_assert_int_eq(r.result, 0);
	ck_assert_int_eq(w.result, 0);
	ck_assert_int_eq(r.place + w.place, 3);
	ck_assert_int_eq(pthread_rwlock_destroy(&rw), 0);
	return r.place;
}

/* Index as NVARIANTS. */
START_TEST(test_equal_priority_order)
{
	int kind = kinds[_i % 3];
	if (kind == PTHREAD_RWLOCK_PREFER_WRITER_NP && !library_loaded())
		SKIP_TEST("glibc's PREFER_WRITER_NP order is not the library's to check");
	if (!rt_setup())
		SKIP_TEST("SCHED_FIFO refused");
	int reader = kind == PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP && !library_loaded() ? 2 : 1;
	for (int round = 0; round < 3; round++)
		ck_assert_int_eq(reader_place(kind, _i / 3, 20, 20), reader);
}
END_TEST

/* Priority first: a reader above the writer gets in first, and a writer
 * above the reader does, whichever queued first (glibc orders by kind
 * only). */
START_TEST(test_priority_before_kind)
{
	if (!library_loaded())
		SKIP_TEST("glibc's rwlocks do not order waiters by priority");
	if (!rt_setup())
		SKIP_TEST("SCHED_FIFO refused");
	ck_assert_int_eq(reader_place(PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP, _i, 25, 20), 1);
	ck_assert_int_eq(reader_place(PTHREAD_RWLOCK_PREFER_READER_NP, _i, 20, 25), 2);
}
END_TEST

static Suite *rwlock_suite(void)
{
	Suite *s = suite_create("rwlock");
	TCase *tc = tcase_create("semantics");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_rwlockattr);
	tcase_add_test(tc, test_static_initializers);
	tcase_add_loop_test(tc, test_basic, 0, NVARIANTS);
	tcase_add_loop_test(tc, test_bad_deadline, 0, NVARIANTS);
	tcase_add_loop_test(tc, test_unlock_not_held, 0, NVARIANTS);
	tcase_add_loop_test(tc, test_wrlock_while_reading, 0, NVARIANTS);
	tcase_add_loop_test(tc, test_timeouts, 0, NVARIANTS);
	tcase_add_loop_test(tc, test_exclusion, 0, 3);
	tcase_add_loop_test(tc, test_pshared_fork, 0, 3);
	tcase_add_loop_test(tc, test_reread_with_waiting_writer, 0, 4);
	tcase_add_loop_test(tc, test_writer_not_starved, 0, 4);
	tcase_add_loop_test(tc, test_writer_timeout_lets_readers_in, 0, 2);
	tcase_add_loop_test(tc, test_fork_child_unlocks, 0, 3);
	suite_add_tcase(s, tc);
	TCase *pi = tcase_create("priority");
	tcase_set_timeout(pi, 60);
	tcase_add_loop_test(pi, test_boost, 0, 8);
	tcase_add_test(pi, test_boost_chain);
	tcase_add_loop_test(pi, test_boost_with_other_waiter, 0, 2);
	tcase_add_loop_test(pi, test_inversion_avoided, 0, 8);
	tcase_add_loop_test(pi, test_equal_priority_order, 0, NVARIANTS);
	tcase_add_loop_test(pi, test_priority_before_kind, 0, 2);
	suite_add_tcase(s, pi);
	return s;
}

int main(void)
{
	return run_suite(rwlock_suite());
}
