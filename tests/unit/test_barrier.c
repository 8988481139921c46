/*
 * pthread_barrier_* tests.  A plain POSIX program: built linked against
 * librtpthread and as a plain glibc program run under LD_PRELOAD.
 *
 * Tests named strict_* check behaviour glibc 2.36 does not have (EBUSY
 * from destroy while a thread is blocked: glibc hangs; EINVAL from a
 * destroyed barrier; the 2^22 - 1 count limit; an attribute word that is
 * neither 0 nor 1).  They run when rtpthread is loaded, or when
 * RTPTHREAD_TEST_STRICT=1 forces them, and otherwise pass with a message.
 *
 * Every thread except the test's main thread reports problems through
 * counters that the main thread checks, never through ck_assert.
 */
#include <check.h>
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "testlib.h"

#define SERIAL PTHREAD_BARRIER_SERIAL_THREAD

static bool strict_enabled(const char *test)
{
	const char *force = getenv("RTPTHREAD_TEST_STRICT");
	if (dlsym(RTLD_DEFAULT, "rtpthread_version") != NULL || (force && strcmp(force, "1") == 0))
		return true;
	fprintf(stderr, "%s: skipped: stricter than glibc, rtpthread not loaded\n", test);
	return false;
}

/* What each test thread gets: the test's shared state and its index. */
struct spawn {
	void *arg;
	unsigned index;
};

/* Creates nthreads threads running fn(&spawns[i]), stack_size 0 = default. */
static void start_threads(pthread_t *threads, struct spawn *spawns, unsigned nthreads,
			  void *(*fn)(void *), void *arg, size_t stack_size)
{
	pthread_attr_t attr;
	ck_assert_int_eq(pthread_attr_init(&attr), 0);
	if (stack_size)
		ck_assert_int_eq(pthread_attr_setstacksize(&attr, stack_size), 0);
	for (unsigned i = 0; i < nthreads; i++) {
		spawns[i] = (struct spawn){arg, i};
		ck_assert_int_eq(pthread_create(&threads[i], &attr, fn, &spawns[i]), 0);
	}
	pthread_attr_destroy(&attr);
}

static void join_threads(pthread_t *threads, unsigned nthreads)
{
	for (unsigned i = 0; i < nthreads; i++)
		ck_assert_int_eq(pthread_join(threads[i], NULL), 0);
}

/*
 * Rounds: nthreads threads pass one barrier nrounds times with no delay
 * between rounds.  Before each wait a thread writes its slot for the round
 * and counts itself in arrived[round]; after it, it checks that all
 * nthreads arrived (nobody left early) and that it sees every slot (the
 * barrier orders memory).  Slots are double-buffered by round parity: a
 * thread can be at most one round ahead of the slowest reader.
 */
struct rounds {
	pthread_barrier_t barrier;
	unsigned nthreads;
	unsigned nrounds;
	bool stagger; /* some threads yield before arriving or after leaving */
	atomic_uint *arrived;
	atomic_uint *serial;
	unsigned *slots[2]; /* plain memory: only the barrier orders it */
	atomic_uint bad_rc, early, stale;
};

static void *rounds_thread(void *p)
{
	struct spawn *s = p;
	struct rounds *t = s->arg;
	unsigned id = s->index;

	for (unsigned r = 0; r < t->nrounds; r++) {
		unsigned *slots = t->slots[r % 2];
		slots[id] = r + 1;
		atomic_fetch_add_explicit(&t->arrived[r], 1, memory_order_relaxed);
		if (t->stagger && id % 8 == 1)
			sched_yield();

		int rc = pthread_barrier_wait(&t->barrier);
		if (rc == SERIAL)
			atomic_fetch_add_explicit(&t->serial[r], 1, memory_order_relaxed);
		else if (rc != 0)
			atomic_fetch_add(&t->bad_rc, 1);

		/* Relaxed and plain loads: the barrier itself must order these. */
		if (atomic_load_explicit(&t->arrived[r], memory_order_relaxed) != t->nthreads)
			atomic_fetch_add(&t->early, 1);
		for (unsigned j = 0; j < t->nthreads; j++)
			if (slots[j] != r + 1) {
				atomic_fetch_add(&t->stale, 1);
				break;
			}
		if (t->stagger && id % 8 == 0)
			sched_yield();
	}
	return NULL;
}

/* near_wrap: start the library's generation 8 rounds before it wraps
 * (its low 32 bits; see src/barrier.c), so the rounds cross the wrap. */
static void run_rounds(unsigned nthreads, unsigned nrounds, bool stagger, size_t stack_size, bool near_wrap)
{
	struct rounds t = {.nthreads = nthreads, .nrounds = nrounds, .stagger = stagger};
	t.arrived = calloc(nrounds, sizeof *t.arrived);
	t.serial = calloc(nrounds, sizeof *t.serial);
	t.slots[0] = calloc(nthreads, sizeof *t.slots[0]);
	t.slots[1] = calloc(nthreads, sizeof *t.slots[1]);
	pthread_t *threads = calloc(nthreads, sizeof *threads);
	struct spawn *spawns = calloc(nthreads, sizeof *spawns);
	ck_assert(t.arrived && t.serial && t.slots[0] && t.slots[1] && threads && spawns);
	ck_assert_int_eq(pthread_barrier_init(&t.barrier, NULL, nthreads), 0);
	if (near_wrap) {
		uint32_t generation = UINT32_MAX - 7;
		memcpy(&t.barrier, &generation, sizeof generation);
	}

	start_threads(threads, spawns, nthreads, rounds_thread, &t, stack_size);
	join_threads(threads, nthreads);

	ck_assert_uint_eq(atomic_load(&t.bad_rc), 0);
	ck_assert_msg(atomic_load(&t.early) == 0, "%u threads left a round before all arrived",
		      atomic_load(&t.early));
	ck_assert_msg(atomic_load(&t.stale) == 0, "%u threads missed a write made before the barrier",
		      atomic_load(&t.stale));
	for (unsigned r = 0; r < nrounds; r++) {
		ck_assert_msg(atomic_load(&t.serial[r]) == 1, "round %u: %u serial threads", r,
			      atomic_load(&t.serial[r]));
		ck_assert_uint_eq(atomic_load(&t.arrived[r]), nthreads);
	}
	ck_assert_int_eq(pthread_barrier_destroy(&t.barrier), 0);
	free(t.arrived);
	free(t.serial);
	free(t.slots[0]);
	free(t.slots[1]);
	free(threads);
	free(spawns);
}

START_TEST(test_one_serial_per_round_64)
{
	run_rounds(64, 2000, false, 0, false);
}
END_TEST

START_TEST(test_immediate_reuse_staggered)
{
	/* Fast threads re-enter while yielding ones have not left yet, and
	 * others arrive late: neither may release or be released early. */
	run_rounds(16, 20000, true, 0, false);
}
END_TEST

START_TEST(test_generation_wraps)
{
	/* Rounds across the generation's wrap (and so across round bits 15
	 * and 0 of the sleepers' futex mask), fast threads re-entering while
	 * slow ones have not left. */
	if (dlsym(RTLD_DEFAULT, "rtpthread_version") == NULL) {
		fprintf(stderr, "test_generation_wraps: skipped: the generation's place is the library's\n");
		return;
	}
	run_rounds(16, 64, true, 0, true);
}
END_TEST

START_TEST(test_thousand_threads)
{
	/* 64 KiB, or the minimum where that is more (128 KiB on aarch64) */
	run_rounds(1000, 20, false, 64 * 1024 < PTHREAD_STACK_MIN ? PTHREAD_STACK_MIN : 64 * 1024, false);
}
END_TEST

START_TEST(test_count_one)
{
	pthread_barrier_t b;
	ck_assert_int_eq(pthread_barrier_init(&b, NULL, 1), 0);
	for (int i = 0; i < 1000; i++)
		ck_assert_int_eq(pthread_barrier_wait(&b), SERIAL);
	ck_assert_int_eq(pthread_barrier_destroy(&b), 0);
}
END_TEST

/*
 * More threads than count (POSIX allows it): 12 threads, count 4.  Each
 * round still releases exactly 4, so departures never exceed the
 * arrivals of completed rounds, and the serial thread count is exact.
 * The threads share a budget of waits rather than each doing a fixed
 * number: three threads left with waits to do could never fill a round.
 */
#define OVER_THREADS 12
#define OVER_COUNT 4
#define OVER_WAITS 36000 /* a multiple of OVER_COUNT */

struct over {
	pthread_barrier_t barrier;
	atomic_int budget;
	atomic_uint arrivals, departures, serials, bad_rc, early;
};

static void *over_thread(void *p)
{
	struct spawn *s = p;
	struct over *t = s->arg;
	while (atomic_fetch_sub(&t->budget, 1) > 0) {
		atomic_fetch_add(&t->arrivals, 1);
		int rc = pthread_barrier_wait(&t->barrier);
		if (rc == SERIAL)
			atomic_fetch_add(&t->serials, 1);
		else if (rc != 0)
			atomic_fetch_add(&t->bad_rc, 1);
		unsigned departed = atomic_fetch_add(&t->departures, 1) + 1;
		unsigned arrived = atomic_load(&t->arrivals);
		if (departed > arrived / OVER_COUNT * OVER_COUNT)
			atomic_fetch_add(&t->early, 1);
	}
	return NULL;
}

START_TEST(test_more_threads_than_count)
{
	struct over t = {.budget = OVER_WAITS};
	pthread_t threads[OVER_THREADS];
	struct spawn spawns[OVER_THREADS];
	ck_assert_int_eq(pthread_barrier_init(&t.barrier, NULL, OVER_COUNT), 0);
	start_threads(threads, spawns, OVER_THREADS, over_thread, &t, 0);
	join_threads(threads, OVER_THREADS);
	ck_assert_uint_eq(atomic_load(&t.bad_rc), 0);
	ck_assert_msg(atomic_load(&t.early) == 0, "%u departures before their round was complete",
		      atomic_load(&t.early));
	ck_assert_uint_eq(atomic_load(&t.serials), OVER_WAITS / OVER_COUNT);
	ck_assert_int_eq(pthread_barrier_destroy(&t.barrier), 0);
}
END_TEST

/* Process-shared: child processes pass a barrier in MAP_SHARED memory. */
#define SHARED_PROCS 4
#define SHARED_ROUNDS 2000

struct shared_area {
	pthread_barrier_t barrier;
	atomic_uint arrived[SHARED_ROUNDS];
	atomic_uint serial[SHARED_ROUNDS];
};

static int shared_child(struct shared_area *a)
{
	alarm(30); /* a broken barrier must not leave processes behind */
	for (unsigned r = 0; r < SHARED_ROUNDS; r++) {
		atomic_fetch_add_explicit(&a->arrived[r], 1, memory_order_relaxed);
		int rc = pthread_barrier_wait(&a->barrier);
		if (rc == SERIAL)
			atomic_fetch_add_explicit(&a->serial[r], 1, memory_order_relaxed);
		else if (rc != 0)
			return 2;
		if (atomic_load_explicit(&a->arrived[r], memory_order_relaxed) != SHARED_PROCS)
			return 3;
	}
	return 0;
}

START_TEST(test_process_shared)
{
	struct shared_area *a = mmap(NULL, sizeof *a, PROT_READ | PROT_WRITE,
				     MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ck_assert(a != MAP_FAILED);
	pthread_barrierattr_t attr;
	int pshared = -1;
	ck_assert_int_eq(pthread_barrierattr_init(&attr), 0);
	ck_assert_int_eq(pthread_barrierattr_getpshared(&attr, &pshared), 0);
	ck_assert_int_eq(pshared, PTHREAD_PROCESS_PRIVATE);
	ck_assert_int_eq(pthread_barrierattr_setpshared(&attr, PTHREAD_PROCESS_SHARED), 0);
	ck_assert_int_eq(pthread_barrierattr_getpshared(&attr, &pshared), 0);
	ck_assert_int_eq(pshared, PTHREAD_PROCESS_SHARED);
	ck_assert_int_eq(pthread_barrier_init(&a->barrier, &attr, SHARED_PROCS), 0);
	ck_assert_int_eq(pthread_barrierattr_destroy(&attr), 0);

	pid_t pids[SHARED_PROCS];
	for (int i = 0; i < SHARED_PROCS; i++) {
		pids[i] = fork();
		ck_assert(pids[i] >= 0);
		if (pids[i] == 0)
			_exit(shared_child(a));
	}
	for (int i = 0; i < SHARED_PROCS; i++) {
		int status;
		ck_assert_int_eq(waitpid(pids[i], &status, 0), pids[i]);
		ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
			      "child %d: status 0x%x", i, status);
	}
	for (unsigned r = 0; r < SHARED_ROUNDS; r++)
		ck_assert_msg(atomic_load(&a->serial[r]) == 1, "round %u: %u serial processes", r,
			      atomic_load(&a->serial[r]));
	ck_assert_int_eq(pthread_barrier_destroy(&a->barrier), 0);
	munmap(a, sizeof *a);
}
END_TEST

START_TEST(test_init_errors)
{
	pthread_barrier_t b;
	pthread_barrierattr_t attr;
	ck_assert_int_eq(pthread_barrier_init(&b, NULL, 0), EINVAL);
	ck_assert_int_eq(pthread_barrier_init(&b, NULL, UINT_MAX), EINVAL);
	ck_assert_int_eq(pthread_barrier_init(&b, NULL, UINT_MAX / 2), EINVAL);

	ck_assert_int_eq(pthread_barrierattr_init(&attr), 0);
	ck_assert_int_eq(pthread_barrierattr_setpshared(&attr, 42), EINVAL);
	ck_assert_int_eq(pthread_barrierattr_setpshared(&attr, -1), EINVAL);
	int pshared = -1;
	ck_assert_int_eq(pthread_barrierattr_getpshared(&attr, &pshared), 0);
	ck_assert_int_eq(pshared, PTHREAD_PROCESS_PRIVATE);
	ck_assert_int_eq(pthread_barrier_init(&b, &attr, 0), EINVAL);
	ck_assert_int_eq(pthread_barrier_init(&b, &attr, 3), 0);
	ck_assert_int_eq(pthread_barrier_destroy(&b), 0);
	ck_assert_int_eq(pthread_barrierattr_destroy(&attr), 0);
}
END_TEST

START_TEST(strict_count_limit_and_bad_attr)
{
	if (!strict_enabled("strict_count_limit_and_bad_attr"))
		return;
	pthread_barrier_t b;
	ck_assert_int_eq(pthread_barrier_init(&b, NULL, (1u << 22) - 1), 0);
	ck_assert_int_eq(pthread_barrier_destroy(&b), 0);
	ck_assert_int_eq(pthread_barrier_init(&b, NULL, 1u << 22), EINVAL);

	/* An attribute word that setpshared can never produce. */
	pthread_barrierattr_t attr;
	int bogus = 42;
	ck_assert_int_eq(pthread_barrierattr_init(&attr), 0);
	memcpy(&attr, &bogus, sizeof bogus);
	ck_assert_int_eq(pthread_barrier_init(&b, &attr, 2), EINVAL);
}
END_TEST

START_TEST(strict_destroyed_barrier)
{
	if (!strict_enabled("strict_destroyed_barrier"))
		return;
	pthread_barrier_t b;
	ck_assert_int_eq(pthread_barrier_init(&b, NULL, 1), 0);
	ck_assert_int_eq(pthread_barrier_wait(&b), SERIAL);
	ck_assert_int_eq(pthread_barrier_destroy(&b), 0);
	ck_assert_int_eq(pthread_barrier_wait(&b), EINVAL);
	ck_assert_int_eq(pthread_barrier_destroy(&b), EINVAL);
	ck_assert_int_eq(pthread_barrier_init(&b, NULL, 1), 0);
	ck_assert_int_eq(pthread_barrier_wait(&b), SERIAL);
	ck_assert_int_eq(pthread_barrier_destroy(&b), 0);
}
END_TEST

/* Garbage bytes (never initialized, or overwritten): EINVAL from destroy
 * and wait at once, never EBUSY and never a sleep nobody ends. */
static void *garbage_waiter(void *b)
{
	return (void *)(intptr_t)pthread_barrier_wait(b);
}

START_TEST(strict_garbage_barrier)
{
	if (!strict_enabled("strict_garbage_barrier"))
		return;
	static const unsigned char fills[] = { 0xa5, 0xff, 0x01 };
	for (size_t i = 0; i <= sizeof fills; i++) {
		pthread_barrier_t b;
		if (i < sizeof fills) {
			memset(&b, fills[i], sizeof b);
		} else { /* random bytes */
			unsigned x = 12345;
			for (size_t j = 0; j < sizeof b; j++)
				((unsigned char *)&b)[j] = (unsigned char)((x = x * 1103515245u + 12345u) >> 16);
		}
		ck_assert_int_eq(pthread_barrier_destroy(&b), EINVAL);
		pthread_t t;
		void *rc;
		ck_assert_int_eq(pthread_create(&t, NULL, garbage_waiter, &b), 0);
		struct timespec dl;
		clock_gettime(CLOCK_REALTIME, &dl);
		dl.tv_sec += 2;
		ck_assert_msg(pthread_timedjoin_np(t, &rc, &dl) == 0, "wait on garbage (fill %zu) did not return", i);
		ck_assert_int_eq((int)(intptr_t)rc, EINVAL);
	}
}
END_TEST

/* destroy while a thread is blocked in the current round: EBUSY. */
struct blocked {
	pthread_barrier_t barrier;
	atomic_int tid;
	atomic_int rc;
};

static void *blocked_thread(void *p)
{
	struct blocked *t = p;
	atomic_store(&t->tid, (int)syscall(SYS_gettid));
	atomic_store(&t->rc, pthread_barrier_wait(&t->barrier));
	return NULL;
}

/* The state letter of a thread of this process, from /proc. */
static char thread_state(int tid)
{
	char path[64], buf[256];
	snprintf(path, sizeof path, "/proc/self/task/%d/stat", tid);
	FILE *f = fopen(path, "r");
	if (!f)
		return '?';
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = '\0';
	char *close = strrchr(buf, ')');
	return close && close[1] == ' ' ? close[2] : '?';
}

START_TEST(strict_destroy_busy)
{
	if (!strict_enabled("strict_destroy_busy"))
		return;
	struct blocked t = {.rc = 12345};
	pthread_t thread;
	ck_assert_int_eq(pthread_barrier_init(&t.barrier, NULL, 2), 0);
	ck_assert_int_eq(pthread_create(&thread, NULL, blocked_thread, &t), 0);

	/* Sleeping ('S') after publishing its TID means blocked in wait. */
	int waited = 0;
	while (atomic_load(&t.tid) == 0 || thread_state(atomic_load(&t.tid)) != 'S') {
		ck_assert_msg(waited++ < 500, "waiter never blocked");
		sleep_ms(1);
	}
	ck_assert_int_eq(pthread_barrier_destroy(&t.barrier), EBUSY);
	ck_assert_int_eq(pthread_barrier_destroy(&t.barrier), EBUSY);
	ck_assert_int_eq(atomic_load(&t.rc), 12345); /* still blocked */

	int rc = pthread_barrier_wait(&t.barrier);
	ck_assert_int_eq(pthread_join(thread, NULL), 0);
	ck_assert(rc == SERIAL || rc == 0);
	ck_assert(atomic_load(&t.rc) == SERIAL || atomic_load(&t.rc) == 0);
	ck_assert_int_ne(rc, atomic_load(&t.rc)); /* exactly one serial */
	ck_assert_int_eq(pthread_barrier_destroy(&t.barrier), 0);
}
END_TEST

/*
 * destroy right after wait: 8 threads alternate between two barriers.
 * After round i on barrier i % 2, one thread (the serial one, or thread 0)
 * destroys it at once, scribbles over it and initializes it again for
 * round i + 2, while the others may still be leaving round i.  The next
 * round (on the other barrier) needs the destroyer, so nobody reaches the
 * scribbled barrier before it is initialized again.
 */
#define RING_THREADS 8
#define RING_ROUNDS 10000

struct ring {
	pthread_barrier_t barrier[2];
	bool serial_destroys;
	atomic_uint bad_rc, destroy_failed, serials;
};

static void *ring_thread(void *p)
{
	struct spawn *s = p;
	struct ring *t = s->arg;

	for (unsigned i = 0; i < RING_ROUNDS; i++) {
		pthread_barrier_t *b = &t->barrier[i % 2];
		int rc = pthread_barrier_wait(b);
		if (rc != 0 && rc != SERIAL)
			atomic_fetch_add(&t->bad_rc, 1);
		if (rc == SERIAL)
			atomic_fetch_add(&t->serials, 1);
		if (t->serial_destroys ? rc == SERIAL : s->index == 0) {
			if (pthread_barrier_destroy(b) != 0)
				atomic_fetch_add(&t->destroy_failed, 1);
			memset(b, 0xa5, sizeof *b);
			if (pthread_barrier_init(b, NULL, RING_THREADS) != 0)
				atomic_fetch_add(&t->destroy_failed, 1);
		}
	}
	return NULL;
}

static void run_ring(bool serial_destroys)
{
	struct ring t = {.serial_destroys = serial_destroys};
	pthread_t threads[RING_THREADS];
	struct spawn spawns[RING_THREADS];
	ck_assert_int_eq(pthread_barrier_init(&t.barrier[0], NULL, RING_THREADS), 0);
	ck_assert_int_eq(pthread_barrier_init(&t.barrier[1], NULL, RING_THREADS), 0);
	start_threads(threads, spawns, RING_THREADS, ring_thread, &t, 0);
	join_threads(threads, RING_THREADS);
	ck_assert_uint_eq(atomic_load(&t.bad_rc), 0);
	ck_assert_uint_eq(atomic_load(&t.destroy_failed), 0);
	ck_assert_uint_eq(atomic_load(&t.serials), RING_ROUNDS);
	ck_assert_int_eq(pthread_barrier_destroy(&t.barrier[0]), 0);
	ck_assert_int_eq(pthread_barrier_destroy(&t.barrier[1]), 0);
}

START_TEST(test_destroy_after_wait_by_serial)
{
	run_ring(true);
}
END_TEST

START_TEST(test_destroy_after_wait_by_other)
{
	run_ring(false);
}
END_TEST

/* Signals (handler without SA_RESTART) must not release a waiter early. */
struct signalled {
	pthread_barrier_t barrier;
	atomic_int left;
	atomic_int serials;
	atomic_int bad_rc;
};

static void on_signal(int sig)
{
	(void)sig;
}

static void *signalled_thread(void *p)
{
	struct signalled *t = p;
	int rc = pthread_barrier_wait(&t->barrier);
	if (rc == SERIAL)
		atomic_fetch_add(&t->serials, 1);
	else if (rc != 0)
		atomic_fetch_add(&t->bad_rc, 1);
	atomic_fetch_add(&t->left, 1);
	return NULL;
}

START_TEST(test_signals_do_not_release)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	ck_assert_int_eq(sigaction(SIGUSR1, &sa, NULL), 0);

	struct signalled t = {0};
	pthread_t threads[2];
	ck_assert_int_eq(pthread_barrier_init(&t.barrier, NULL, 3), 0);
	for (int i = 0; i < 2; i++)
		ck_assert_int_eq(pthread_create(&threads[i], NULL, signalled_thread, &t), 0);
	for (int n = 0; n < 300; n++) {
		for (int i = 0; i < 2; i++)
			ck_assert_int_eq(pthread_kill(threads[i], SIGUSR1), 0);
		if (n % 10 == 0)
			sleep_ms(1);
		ck_assert_int_eq(atomic_load(&t.left), 0);
	}
	int rc = pthread_barrier_wait(&t.barrier);
	join_threads(threads, 2);
	ck_assert_int_eq(atomic_load(&t.left), 2);
	ck_assert_int_eq(atomic_load(&t.bad_rc), 0);
	ck_assert_int_eq(atomic_load(&t.serials) + (rc == SERIAL), 1);
	ck_assert_int_eq(pthread_barrier_destroy(&t.barrier), 0);
}
END_TEST

/*
 * SCHED_FIFO threads pinned to one CPU, as in pi_stress.  A waiter that
 * spins instead of sleeping keeps the CPU from the thread it waits for
 * (a lower or equal FIFO priority never runs), so these hang unless wait
 * blocks in the kernel.
 */
static int last_allowed_cpu(void)
{
	cpu_set_t set;
	CPU_ZERO(&set);
	if (sched_getaffinity(0, sizeof set, &set) != 0)
		return 0;
	for (int cpu = CPU_SETSIZE - 1; cpu > 0; cpu--)
		if (CPU_ISSET(cpu, &set))
			return cpu;
	return 0;
}

static int create_fifo(pthread_t *thread, int cpu, int priority, void *(*fn)(void *), void *arg)
{
	pthread_attr_t attr;
	struct sched_param param = {.sched_priority = priority};
	cpu_set_t one;
	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	pthread_attr_init(&attr);
	pthread_attr_setinheritsched(&attr, PTHREAD_EXPLICIT_SCHED);
	pthread_attr_setschedpolicy(&attr, SCHED_FIFO);
	pthread_attr_setschedparam(&attr, &param);
	pthread_attr_setaffinity_np(&attr, sizeof one, &one);
	int rc = pthread_create(thread, &attr, fn, arg);
	pthread_attr_destroy(&attr);
	return rc;
}

static void *do_nothing(void *arg)
{
	return arg;
}

/* False (after a message) when this process may not create FIFO threads. */
static bool fifo_allowed(const char *test)
{
	pthread_t thread;
	int rc = create_fifo(&thread, last_allowed_cpu(), 10, do_nothing, NULL);
	if (rc == EPERM) {
		fprintf(stderr, "%s: skipped: SCHED_FIFO refused (EPERM)\n", test);
		return false;
	}
	ck_assert_int_eq(rc, 0);
	ck_assert_int_eq(pthread_join(thread, NULL), 0);
	return true;
}

/* pi_stress's pattern: every cycle all three pass a barrier of 3, then
 * the low and medium threads a barrier of 2. */
#define FIFO_ROUNDS 20000

struct fifo_group {
	pthread_barrier_t three, two;
	atomic_uint serial_three, serial_two, bad_rc;
};

struct fifo_member {
	struct fifo_group *group;
	bool in_two;
};

static void count_rc(struct fifo_group *g, int rc, atomic_uint *serials)
{
	if (rc == SERIAL)
		atomic_fetch_add(serials, 1);
	else if (rc != 0)
		atomic_fetch_add(&g->bad_rc, 1);
}

static void *fifo_thread(void *p)
{
	struct fifo_member *m = p;
	struct fifo_group *g = m->group;
	for (unsigned i = 0; i < FIFO_ROUNDS; i++) {
		count_rc(g, pthread_barrier_wait(&g->three), &g->serial_three);
		if (m->in_two)
			count_rc(g, pthread_barrier_wait(&g->two), &g->serial_two);
	}
	return NULL;
}

START_TEST(test_fifo_one_cpu_blocks)
{
	if (!fifo_allowed("test_fifo_one_cpu_blocks"))
		return;
	int cpu = last_allowed_cpu();
	struct fifo_group g = {0};
	struct fifo_member members[3] = {{&g, true}, {&g, true}, {&g, false}};
	static const int priorities[3] = {10, 20, 30};
	pthread_t threads[3];
	ck_assert_int_eq(pthread_barrier_init(&g.three, NULL, 3), 0);
	ck_assert_int_eq(pthread_barrier_init(&g.two, NULL, 2), 0);
	for (int i = 0; i < 3; i++)
		ck_assert_int_eq(create_fifo(&threads[i], cpu, priorities[i], fifo_thread, &members[i]), 0);
	join_threads(threads, 3);
	ck_assert_uint_eq(atomic_load(&g.bad_rc), 0);
	ck_assert_uint_eq(atomic_load(&g.serial_three), FIFO_ROUNDS);
	ck_assert_uint_eq(atomic_load(&g.serial_two), FIFO_ROUNDS);
	ck_assert_int_eq(pthread_barrier_destroy(&g.three), 0);
	ck_assert_int_eq(pthread_barrier_destroy(&g.two), 0);
}
END_TEST

/*
 * Wake order: the kernel wakes highest priority first, not in arrival
 * order.  Four FIFO threads on one CPU arrive in the reverse of their
 * priority order: low (10) arrives while medium (20) and high (30) sleep
 * on semaphores; the releaser (5), which runs only once all three sleep,
 * lets medium in, then high, then arrives last.  The released threads
 * must return high, medium, low, releaser; a FIFO wake returns low first.
 */
#define ORDER_ROUNDS 500
#define ORDER_THREADS 4
enum { ORDER_HIGH, ORDER_MEDIUM, ORDER_LOW, ORDER_RELEASER }; /* = expected position */

struct order {
	pthread_barrier_t barrier;
	sem_t let_in[ORDER_THREADS];
	atomic_uint ticket[ORDER_ROUNDS];
	unsigned char position[ORDER_ROUNDS][ORDER_THREADS];
	atomic_uint bad_rc;
};

static void *order_thread(void *p)
{
	struct spawn *s = p;
	struct order *t = s->arg;
	for (unsigned r = 0; r < ORDER_ROUNDS; r++) {
		if (s->index == ORDER_HIGH || s->index == ORDER_MEDIUM)
			while (sem_wait(&t->let_in[s->index]) != 0)
				;
		if (s->index == ORDER_RELEASER) {
			sem_post(&t->let_in[ORDER_MEDIUM]);
			sem_post(&t->let_in[ORDER_HIGH]);
		}
		int rc = pthread_barrier_wait(&t->barrier);
		if (rc != 0 && rc != SERIAL)
			atomic_fetch_add(&t->bad_rc, 1);
		t->position[r][s->index] = (unsigned char)atomic_fetch_add(&t->ticket[r], 1);
	}
	return NULL;
}

START_TEST(test_fifo_wake_priority_order)
{
	if (!fifo_allowed("test_fifo_wake_priority_order"))
		return;
	int cpu = last_allowed_cpu();
	static const int priorities[ORDER_THREADS] = {30, 20, 10, 5};
	struct order *t = calloc(1, sizeof *t);
	ck_assert(t != NULL);
	pthread_t threads[ORDER_THREADS];
	struct spawn spawns[ORDER_THREADS];
	ck_assert_int_eq(pthread_barrier_init(&t->barrier, NULL, ORDER_THREADS), 0);
	for (unsigned i = 0; i < ORDER_THREADS; i++)
		ck_assert_int_eq(sem_init(&t->let_in[i], 0, 0), 0);
	for (unsigned i = 0; i < ORDER_THREADS; i++) {
		spawns[i] = (struct spawn){t, i};
		ck_assert_int_eq(create_fifo(&threads[i], cpu, priorities[i], order_thread, &spawns[i]), 0);
	}
	join_threads(threads, ORDER_THREADS);
	ck_assert_uint_eq(atomic_load(&t->bad_rc), 0);
	for (unsigned r = 0; r < ORDER_ROUNDS; r++)
		for (unsigned i = 0; i < ORDER_THREADS; i++)
			ck_assert_msg(t->position[r][i] == i,
				      "round %u: priority %d returned in position %u", r,
				      priorities[i], t->position[r][i]);
	ck_assert_int_eq(pthread_barrier_destroy(&t->barrier), 0);
	free(t);
}
END_TEST

static TCase *tcase(const char *name, int timeout)
{
	TCase *tc = tcase_create(name);
	tcase_set_timeout(tc, timeout);
	return tc;
}

/* Each test gets its tcase's timeout; together they stay under 60 s. */
static Suite *barrier_suite(void)
{
	Suite *s = suite_create("barrier");
	TCase *tc;

	tc = tcase("rounds", 6);
	tcase_add_test(tc, test_one_serial_per_round_64);
	tcase_add_test(tc, test_immediate_reuse_staggered);
	tcase_add_test(tc, test_generation_wraps);
	tcase_add_test(tc, test_thousand_threads);
	tcase_add_test(tc, test_more_threads_than_count);
	suite_add_tcase(s, tc);

	tc = tcase("process_shared", 5);
	tcase_add_test(tc, test_process_shared);
	suite_add_tcase(s, tc);

	tc = tcase("errors", 1);
	tcase_add_test(tc, test_count_one);
	tcase_add_test(tc, test_init_errors);
	tcase_add_test(tc, strict_count_limit_and_bad_attr);
	tcase_add_test(tc, strict_destroyed_barrier);
	tcase_add_test(tc, strict_garbage_barrier);
	tcase_add_test(tc, strict_destroy_busy);
	suite_add_tcase(s, tc);

	tc = tcase("destroy", 5);
	tcase_add_test(tc, test_destroy_after_wait_by_serial);
	tcase_add_test(tc, test_destroy_after_wait_by_other);
	suite_add_tcase(s, tc);

	tc = tcase("signals", 3);
	tcase_add_test(tc, test_signals_do_not_release);
	suite_add_tcase(s, tc);

	tc = tcase("fifo", 4);
	tcase_add_test(tc, test_fifo_one_cpu_blocks);
	tcase_add_test(tc, test_fifo_wake_priority_order);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(barrier_suite());
	srunner_run_all(sr, CK_NORMAL);
	int failures = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failures ? 1 : 0;
}
