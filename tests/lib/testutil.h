/*
 * Helpers shared by the tests.  Tests are plain POSIX programs: they see
 * rtpthread only through <pthread.h> and <threads.h>, so each one runs
 * unchanged against the library (linked or preloaded) and against glibc.
 *
 * The Check helpers are static inline here; time, /proc and scheduling
 * come from the test library (testlib.h), shared with the helper and
 * stress programs.
 */
#ifndef RTPTHREAD_TESTUTIL_H
#define RTPTHREAD_TESTUTIL_H

#include <check.h>
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <threads.h>
#include <time.h>
#include <unistd.h>

#include "testlib.h"

/* ---- which library ---- */

/* True when rtpthread is in the process (linked or preloaded), or when
 * RTPTHREAD_TEST_STRICT=1 asks to hold glibc to the library's promises:
 * tests of behaviour NPTL does not promise skip otherwise. */
static inline bool library_loaded(void)
{
	const char *force = getenv("RTPTHREAD_TEST_STRICT");
	return dlsym(RTLD_DEFAULT, "rtpthread_version") != NULL || (force && strcmp(force, "1") == 0);
}

/* ---- threads and scheduling ---- */

/* Print why a test does not run and return from it: a skip passes. */
#define SKIP_TEST(...)                                                   \
	do {                                                             \
		printf("SKIP: %s: ", __func__);                          \
		printf(__VA_ARGS__);                                     \
		printf("\n");                                            \
		fflush(stdout);                                          \
		return;                                                  \
	} while (0)

/* Whether the kernel walks this thread's robust list when it dies, the
 * only way an owner's death is reported (EOWNERDEAD).  qemu-user returns
 * ENOSYS to set_robust_list and get_robust_list: it cannot hand the guest's
 * list to the kernel. */
static inline bool robust_list_available(void)
{
	void *head;
	size_t len;
	return syscall(SYS_get_robust_list, 0, &head, &len) == 0;
}

#define REQUIRE_ROBUST_LIST()                                                                            \
	do {                                                                                             \
		if (!robust_list_available())                                                            \
			SKIP_TEST("no robust list (get_robust_list: ENOSYS, as under qemu-user): "        \
				  "an owner's death cannot be reported");                                \
	} while (0)

/* Back to SCHED_OTHER (nice unchanged). */
static inline void set_other(void)
{
	struct sched_param param = { .sched_priority = 0 };
	ck_assert_int_eq(pthread_setschedparam(pthread_self(), SCHED_OTHER, &param), 0);
}

/* Pin the calling thread to one CPU. */
static inline void pin_cpu(int cpu)
{
	ck_assert(try_pin_cpu(cpu));
}

/* Effective real-time priority (PI boosts included), 0 for a task that
 * runs as SCHED_OTHER/BATCH/IDLE and is not boosted. */
static inline int task_rt_prio(pid_t tid)
{
	struct task_sched s;
	ck_assert_msg(task_sched_read(tid, &s), "cannot read /proc stat of task %d", (int)tid);
	return s.prio < 0 ? (int)(-1 - s.prio) : 0;
}

static inline int task_policy(pid_t tid)
{
	struct task_sched s;
	ck_assert_msg(task_sched_read(tid, &s), "cannot read /proc stat of task %d", (int)tid);
	return (int)s.policy;
}

/* Waits (up to ms) until task tid's effective RT priority is prio (read
 * again after the last nap, as wait_task_sleeping does). */
static inline bool wait_task_rt_prio(pid_t tid, int prio, long ms)
{
	int64_t end = now_ns(CLOCK_MONOTONIC) + ms * 1000000LL;
	for (;;) {
		if (task_rt_prio(tid) == prio)
			return true;
		if (now_ns(CLOCK_MONOTONIC) >= end)
			return false;
		sleep_ms(1);
	}
}

/* Own effective RT priority and policy. */
static inline int self_rt_prio(void)
{
	return task_rt_prio(test_gettid());
}

static inline int self_policy(void)
{
	return task_policy(test_gettid());
}

/* Spin until an atomic int reaches a value, giving up after ms. */
static inline bool wait_flag(const _Atomic int *flag, int value, long ms)
{
	int64_t end = now_ns(CLOCK_MONOTONIC) + ms * 1000000LL;
	while (atomic_load(flag) != value) {
		if (now_ns(CLOCK_MONOTONIC) >= end)
			return false;
		sched_yield();
		struct timespec ts = { 0, 200000 };
		nanosleep(&ts, NULL);
	}
	return true;
}

/* Creates a thread with an explicit policy and priority (SCHED_OTHER: prio
 * 0), pinned to cpu unless cpu < 0. */
static inline void start_thread_sched(pthread_t *t, int policy, int prio, int cpu, void *(*fn)(void *),
				      void *arg)
{
	pthread_attr_t a;
	struct sched_param sp = { .sched_priority = prio };
	ck_assert_int_eq(pthread_attr_init(&a), 0);
	ck_assert_int_eq(pthread_attr_setinheritsched(&a, PTHREAD_EXPLICIT_SCHED), 0);
	ck_assert_int_eq(pthread_attr_setschedpolicy(&a, policy), 0);
	ck_assert_int_eq(pthread_attr_setschedparam(&a, &sp), 0);
	if (cpu >= 0) {
		cpu_set_t cpus;
		CPU_ZERO(&cpus);
		CPU_SET(cpu, &cpus);
		ck_assert_int_eq(pthread_attr_setaffinity_np(&a, sizeof cpus, &cpus), 0);
	}
	ck_assert_int_eq(pthread_create(t, &a, fn, arg), 0);
	pthread_attr_destroy(&a);
}

/*
 * Lockers blocked on a mutex are released highest priority first: four
 * SCHED_FIFO lockers (10, 30, 20, 15, started in that order) block on m,
 * which the caller holds, running SCHED_FIFO above them on one CPU (so a
 * woken one cannot be overtaken); after the unlock they must acquire it
 * in the order 30, 20, 15, 10.
 */
struct lock_order {
	pthread_mutex_t *m;
	_Atomic int next;
	int seen[4];
};

struct lock_order_waiter {
	struct lock_order *o;
	int prio;
	_Atomic pid_t tid;
	int result;
};

static inline void *lock_order_waiter_main(void *p)
{
	struct lock_order_waiter *w = p;
	atomic_store(&w->tid, test_gettid());
	w->result = pthread_mutex_lock(w->o->m);
	w->o->seen[atomic_fetch_add(&w->o->next, 1)] = w->prio;
	if (w->result == 0)
		w->result = pthread_mutex_unlock(w->o->m);
	return NULL;
}

static inline void check_lock_order(pthread_mutex_t *m)
{
	struct lock_order o = { .m = m };
	static const int prios[] = { 10, 30, 20, 15 };
	struct lock_order_waiter w[4];
	pthread_t t[4];
	ck_assert_int_eq(pthread_mutex_lock(m), 0);
	for (int i = 0; i < 4; i++) {
		w[i].o = &o;
		w[i].prio = prios[i];
		atomic_init(&w[i].tid, 0);
		start_thread_sched(&t[i], SCHED_FIFO, prios[i], 0, lock_order_waiter_main, &w[i]);
		while (atomic_load(&w[i].tid) == 0)
			sleep_ms(1);
		ck_assert(wait_task_sleeping(w[i].tid, 5000));
	}
	ck_assert_int_eq(pthread_mutex_unlock(m), 0);
	for (int i = 0; i < 4; i++) {
		ck_assert_int_eq(pthread_join(t[i], NULL), 0);
		ck_assert_int_eq(w[i].result, 0);
	}
	ck_assert_int_eq(atomic_load(&o.next), 4);
	ck_assert_msg(o.seen[0] == 30 && o.seen[1] == 20 && o.seen[2] == 15 && o.seen[3] == 10,
		      "acquired in order %d %d %d %d (expected 30 20 15 10)", o.seen[0], o.seen[1], o.seen[2],
		      o.seen[3]);
}

/* ---- a thread that runs a function and reports its int result ---- */

struct call {
	pthread_t thread;
	int (*fn)(void *);
	void *arg;
	_Atomic int started;
	_Atomic int done;
	_Atomic pid_t tid;
	int result;
};

static inline void *call_main(void *p)
{
	struct call *c = p;
	atomic_store(&c->tid, test_gettid());
	atomic_store(&c->started, 1);
	c->result = c->fn(c->arg);
	atomic_store(&c->done, 1);
	return NULL;
}

static inline void call_start(struct call *c, int (*fn)(void *), void *arg)
{
	c->fn = fn;
	c->arg = arg;
	atomic_init(&c->started, 0);
	atomic_init(&c->done, 0);
	atomic_init(&c->tid, 0);
	c->result = -1;
	ck_assert_int_eq(pthread_create(&c->thread, NULL, call_main, c), 0);
	ck_assert(wait_flag(&c->started, 1, 5000));
}

static inline int call_join(struct call *c)
{
	ck_assert_int_eq(pthread_join(c->thread, NULL), 0);
	return c->result;
}

/* Runs fn(arg) in a new thread and returns its result. */
static inline int run_in_thread(int (*fn)(void *), void *arg)
{
	struct call c;
	call_start(&c, fn, arg);
	return call_join(&c);
}

/* Whether c finished, waiting up to ms for it. */
static inline bool call_done_within(struct call *c, long ms)
{
	return wait_flag(&c->done, 1, ms);
}

/* ---- a thread that holds a mutex until told to let go ---- */

struct holder {
	pthread_mutex_t *m;
	pthread_t thread;
	sem_t go;
	int sched_prio;     /* set before locking: > 0 SCHED_FIFO at it, < 0 SCHED_OTHER, 0 inherit */
	bool exit_holding;  /* pthread_exit without unlocking when told to go */
	bool linger;        /* after unlocking, stay alive until told to go again */
	_Atomic int locked; /* 1 once lock returned */
	_Atomic int unlocked;
	_Atomic pid_t tid;
	int lock_result;
	int unlock_result;
};

static inline void sem_wait_intr(sem_t *s)
{
	while (sem_wait(s) == -1 && errno == EINTR)
		;
}

static inline void *holder_main(void *p)
{
	struct holder *h = p;
	atomic_store(&h->tid, test_gettid());
	if (h->sched_prio > 0 && !try_fifo(h->sched_prio))
		h->lock_result = EPERM;
	else if (h->sched_prio < 0)
		set_other();
	if (h->lock_result != EPERM)
		h->lock_result = pthread_mutex_lock(h->m);
	atomic_store(&h->locked, 1);
	sem_wait_intr(&h->go);
	if (h->exit_holding)
		pthread_exit(NULL);
	h->unlock_result = pthread_mutex_unlock(h->m);
	atomic_store(&h->unlocked, 1);
	if (h->linger)
		sem_wait_intr(&h->go);
	return NULL;
}

/* Starts a thread (see sched_prio) that locks m and holds it; returns once
 * its lock returned (check lock_result). */
static inline void holder_start_prio(struct holder *h, pthread_mutex_t *m, int sched_prio, bool linger)
{
	h->m = m;
	h->sched_prio = sched_prio;
	h->exit_holding = false;
	h->linger = linger;
	h->lock_result = -1;
	h->unlock_result = -1;
	atomic_init(&h->locked, 0);
	atomic_init(&h->unlocked, 0);
	atomic_init(&h->tid, 0);
	ck_assert_int_eq(sem_init(&h->go, 0, 0), 0);
	ck_assert_int_eq(pthread_create(&h->thread, NULL, holder_main, h), 0);
	ck_assert_msg(wait_flag(&h->locked, 1, 5000), "holder did not get the mutex");
}

static inline void holder_start(struct holder *h, pthread_mutex_t *m)
{
	holder_start_prio(h, m, 0, false);
}

/* A lingering holder: unlock now, and wait until it did. */
static inline void holder_unlock(struct holder *h)
{
	ck_assert_int_eq(sem_post(&h->go), 0);
	ck_assert_msg(wait_flag(&h->unlocked, 1, 5000), "holder did not unlock");
}

/* Lets the holder unlock (or exit holding, if exit_holding) and joins it. */
static inline void holder_finish(struct holder *h)
{
	ck_assert_int_eq(sem_post(&h->go), 0);
	ck_assert_int_eq(pthread_join(h->thread, NULL), 0);
	sem_destroy(&h->go);
}

/* Let go of the mutex by dying: the thread exits still owning it. */
static inline void holder_die(struct holder *h)
{
	h->exit_holding = true;
	holder_finish(h);
}

/* A lock attempt on m, held by another thread, times out: ETIMEDOUT, not
 * before the deadline and not 500 ms after it.  timedlock, or clocklock on
 * clock. */
static inline void check_timeout_duration(pthread_mutex_t *m, bool clocklock, clockid_t clock)
{
	struct holder h;
	holder_start(&h, m);
	struct timespec dl = deadline_in_ms(clock, 150);
	int r = clocklock ? pthread_mutex_clocklock(m, clock, &dl) : pthread_mutex_timedlock(m, &dl);
	int64_t late = now_ns(clock) - ts_to_ns(&dl);
	ck_assert_int_eq(r, ETIMEDOUT);
	ck_assert_msg(late >= 0, "returned %lld ns before the deadline", (long long)-late);
	ck_assert_msg(late < 500000000LL, "returned %lld ms after the deadline", (long long)(late / 1000000));
	holder_finish(&h);
	ck_assert_int_eq(h.unlock_result, 0);
}

/* ---- C11 ---- */

static inline int c11_trylock_fn(void *m)
{
	int r = mtx_trylock(m);
	if (r == thrd_success)
		mtx_unlock(m);
	return r;
}

/* mtx_trylock from another thread (unlocking again if it got it). */
static inline int c11_other_trylock(mtx_t *m)
{
	thrd_t t;
	int r = -1;
	ck_assert_int_eq(thrd_create(&t, c11_trylock_fn, m), thrd_success);
	ck_assert_int_eq(thrd_join(t, &r), thrd_success);
	return r;
}

/* pthread_mutex_trylock from another thread, unlocking again on success
 * (on EOWNERDEAD the thread exits holding it: the owner died again). */
static inline int trylock_fn(void *m)
{
	int r = pthread_mutex_trylock(m);
	if (r == 0)
		pthread_mutex_unlock(m);
	return r;
}

static inline int other_trylock(pthread_mutex_t *m)
{
	return run_in_thread(trylock_fn, m);
}

static inline int unlock_fn(void *m)
{
	return pthread_mutex_unlock(m);
}

/* pthread_mutex_unlock from another thread. */
static inline int other_unlock(pthread_mutex_t *m)
{
	return run_in_thread(unlock_fn, m);
}

/* ---- processes ---- */

#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>

/* Zeroed memory shared with children forked later. */
static inline void *shared_alloc(size_t size)
{
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ck_assert_msg(p != MAP_FAILED, "mmap: %s", strerror(errno));
	return p;
}

static inline void shared_free(void *p, size_t size)
{
	munmap(p, size);
}

/* waitpid with a time limit: the raw wait status, or -1 after killing a
 * child that did not finish within ms. */
static inline int wait_child(pid_t pid, long ms)
{
	int64_t end = now_ns(CLOCK_MONOTONIC) + ms * 1000000LL;
	for (;;) {
		int status;
		pid_t r = waitpid(pid, &status, WNOHANG);
		if (r == pid)
			return status;
		if (r < 0)
			return -1;
		if (now_ns(CLOCK_MONOTONIC) >= end) {
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			return -1;
		}
		sleep_ms(1);
	}
}

/* Asserts that a child exited with status 0 within ms. */
#define ck_assert_child_ok(pid, ms)                                                        \
	do {                                                                               \
		int status_ = wait_child((pid), (ms));                                     \
		ck_assert_msg(status_ != -1, "child %d did not finish in time", (int)(pid)); \
		ck_assert_msg(WIFEXITED(status_) && WEXITSTATUS(status_) == 0,             \
			      "child failed: status 0x%x (exit %d)", status_,              \
			      WIFEXITED(status_) ? WEXITSTATUS(status_) : -1);             \
	} while (0)

/* ---- mutual exclusion under contention ---- */

/*
 * nworkers threads (or processes) each enter the critical section iters
 * times, through lock, trylock, timedlock and clocklock in turn; inside,
 * a non-atomic read-modify-write of a counter and an occupancy count would
 * both go wrong if two ever overlapped.  recursive: also relock once
 * inside (trylock, which must succeed for the owner).
 */
struct exclusion {
	pthread_mutex_t *m;
	int iters;
	bool recursive;
	volatile long counter;
	_Atomic int inside;
	_Atomic int errors;
	_Atomic int first_error; /* the first bad return code seen, or 1000 + overlap */
};

static inline void exclusion_error(struct exclusion *x, int code)
{
	int zero = 0;
	atomic_fetch_add(&x->errors, 1);
	atomic_compare_exchange_strong(&x->first_error, &zero, code);
}

static inline int exclusion_acquire(struct exclusion *x, int how)
{
	struct timespec dl;
	int r;
	switch (how) {
	case 0:
		return pthread_mutex_lock(x->m);
	case 1:
		while ((r = pthread_mutex_trylock(x->m)) == EBUSY)
			sched_yield();
		return r;
	case 2:
		dl = deadline_in_ms(CLOCK_REALTIME, 20000);
		return pthread_mutex_timedlock(x->m, &dl);
	default:
		dl = deadline_in_ms(CLOCK_MONOTONIC, 20000);
		return pthread_mutex_clocklock(x->m, CLOCK_MONOTONIC, &dl);
	}
}

static inline void exclusion_worker(struct exclusion *x, int id)
{
	for (int i = 0; i < x->iters; i++) {
		int r = exclusion_acquire(x, (i + id) & 3);
		if (r != 0) {
			exclusion_error(x, r);
			continue;
		}
		if (atomic_fetch_add(&x->inside, 1) != 0)
			exclusion_error(x, 1000);
		if (x->recursive) {
			r = pthread_mutex_trylock(x->m);
			if (r != 0)
				exclusion_error(x, 2000 + r);
		}
		long c = x->counter;
		for (int k = 0; k < (i & 7); k++)
			__asm__ volatile("" ::: "memory");
		x->counter = c + 1;
		atomic_fetch_sub(&x->inside, 1);
		if (x->recursive && (r = pthread_mutex_unlock(x->m)) != 0)
			exclusion_error(x, 3000 + r);
		if ((r = pthread_mutex_unlock(x->m)) != 0)
			exclusion_error(x, 4000 + r);
	}
}

struct exclusion_thread {
	struct exclusion *x;
	int id;
};

static inline void *exclusion_thread_main(void *p)
{
	struct exclusion_thread *t = p;
	exclusion_worker(t->x, t->id);
	return NULL;
}

/* m must be in shared memory (and process-shared) when processes. */
static inline void check_exclusion(pthread_mutex_t *m, int nworkers, int iters, bool recursive,
				   bool processes)
{
	struct exclusion *x = shared_alloc(sizeof *x);
	x->m = m;
	x->iters = iters;
	x->recursive = recursive;
	if (processes) {
		pid_t pids[16];
		ck_assert_int_le(nworkers, 16);
		for (int i = 0; i < nworkers; i++) {
			pids[i] = fork();
			ck_assert_int_ge(pids[i], 0);
			if (pids[i] == 0) {
				exclusion_worker(x, i);
				_exit(0);
			}
		}
		for (int i = 0; i < nworkers; i++)
			ck_assert_child_ok(pids[i], 60000);
	} else {
		pthread_t threads[16];
		struct exclusion_thread args[16];
		ck_assert_int_le(nworkers, 16);
		for (int i = 0; i < nworkers; i++) {
			args[i].x = x;
			args[i].id = i;
			ck_assert_int_eq(pthread_create(&threads[i], NULL, exclusion_thread_main, &args[i]), 0);
		}
		for (int i = 0; i < nworkers; i++)
			ck_assert_int_eq(pthread_join(threads[i], NULL), 0);
	}
	int errors = atomic_load(&x->errors), first = atomic_load(&x->first_error);
	long counter = x->counter;
	shared_free(x, sizeof *x);
	ck_assert_msg(errors == 0, "%d errors in the critical sections, first code %d", errors, first);
	ck_assert_int_eq(counter, (long)nworkers * iters);
}

/* ---- running a suite ---- */

/* Each test file's main: run the suite, nonzero exit on any failure. */
static inline int run_suite(Suite *s)
{
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_ENV);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

#endif
