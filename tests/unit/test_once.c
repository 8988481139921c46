/*
 * pthread_once and C11 call_once: one run per object under concurrency,
 * the word glibc leaves, cancellation of the initializer, fork while an
 * initializer runs, and priority inheritance (a waiter boosts the
 * initializer: glibc's once has none).
 */
#include <signal.h>
#include <sys/wait.h>

#include "testutil.h"

/* Variant 0 calls pthread_once, variant 1 call_once. */
static void run_once(int variant, pthread_once_t *once, void (*init)(void))
{
	if (variant == 0)
		ck_assert_int_eq(pthread_once(once, init), 0);
	else
		call_once((once_flag *)once, init);
}

_Static_assert(sizeof(pthread_once_t) == sizeof(once_flag), "once_flag is a pthread_once_t");

static _Atomic int runs;

static void count_run(void)
{
	atomic_fetch_add(&runs, 1);
}

START_TEST(test_once_basic)
{
	pthread_once_t once = PTHREAD_ONCE_INIT;
	atomic_store(&runs, 0);
	run_once(_i, &once, count_run);
	run_once(_i, &once, count_run);
	ck_assert_int_eq(atomic_load(&runs), 1);
	/* glibc's "done" value, which glibc's own test (bit 1) reads */
	ck_assert_int_eq(*(int *)&once, 2);
}
END_TEST

/* A word glibc completed (2) is done. */
START_TEST(test_once_glibc_done_word)
{
	pthread_once_t once = 2;
	atomic_store(&runs, 0);
	run_once(_i, &once, count_run);
	ck_assert_int_eq(atomic_load(&runs), 0);
}
END_TEST

START_TEST(test_once_bad_input)
{
	if (!library_loaded())
		SKIP_TEST("glibc crashes on NULL");
	pthread_once_t once = PTHREAD_ONCE_INIT;
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wnonnull" /* what this tests */
	ck_assert_int_eq(pthread_once(NULL, count_run), EINVAL);
	ck_assert_int_eq(pthread_once(&once, NULL), EINVAL);
#pragma GCC diagnostic pop
	ck_assert_int_eq(*(int *)&once, 0);
}
END_TEST

/* init calls pthread_once on its own object: glibc never returns. */
static pthread_once_t recursive_once;
static int recursive_result = -1;

static void recurse(void)
{
	recursive_result = pthread_once(&recursive_once, recurse);
}

START_TEST(test_once_recursive)
{
	if (!library_loaded())
		SKIP_TEST("glibc waits for ever");
	recursive_once = PTHREAD_ONCE_INIT;
	ck_assert_int_eq(pthread_once(&recursive_once, recurse), 0);
	ck_assert_int_eq(recursive_result, EDEADLK);
	ck_assert_int_eq(*(int *)&recursive_once, 2);
}
END_TEST

/* ---- concurrency: 8 threads, 32 objects, initializers that sleep ---- */

#define OBJECTS 32
#define CALLERS 8

static pthread_once_t objects[OBJECTS];
static _Atomic int object_runs[OBJECTS];
static _Atomic int object_ready[OBJECTS];
static _Atomic int go;
static int concurrency_variant;

/* One initializer per object (a function cannot take an argument). */
#define INIT(n)                                                   \
	static void init_##n(void)                                \
	{                                                         \
		atomic_fetch_add(&object_runs[n], 1);             \
		if ((n) % 4 == 0)                                 \
			sleep_ms(2);                              \
		atomic_store_explicit(&object_ready[n], 1, memory_order_relaxed); \
	}
INIT(0) INIT(1) INIT(2) INIT(3) INIT(4) INIT(5) INIT(6) INIT(7) INIT(8) INIT(9) INIT(10) INIT(11) INIT(12)
INIT(13) INIT(14) INIT(15) INIT(16) INIT(17) INIT(18) INIT(19) INIT(20) INIT(21) INIT(22) INIT(23)
INIT(24) INIT(25) INIT(26) INIT(27) INIT(28) INIT(29) INIT(30) INIT(31)
static void (*const inits[OBJECTS])(void) = {
	init_0, init_1, init_2, init_3, init_4, init_5, init_6, init_7, init_8, init_9, init_10,
	init_11, init_12, init_13, init_14, init_15, init_16, init_17, init_18, init_19, init_20,
	init_21, init_22, init_23, init_24, init_25, init_26, init_27, init_28, init_29, init_30, init_31,
};

static void *concurrent_caller(void *arg)
{
	intptr_t id = (intptr_t)arg;
	while (!atomic_load(&go))
		;
	for (int k = 0; k < OBJECTS; k++) {
		int n = (int)((k + id * 5) % OBJECTS);
		run_once(concurrency_variant, &objects[n], inits[n]);
		/* relaxed: pthread_once's return orders the initializer's writes */
		if (!atomic_load_explicit(&object_ready[n], memory_order_relaxed))
			return (void *)1;
	}
	return NULL;
}

START_TEST(test_once_concurrent)
{
	concurrency_variant = _i;
	for (int round = 0; round < 20; round++) {
		for (int n = 0; n < OBJECTS; n++) {
			objects[n] = PTHREAD_ONCE_INIT;
			atomic_store(&object_runs[n], 0);
			atomic_store(&object_ready[n], 0);
		}
		atomic_store(&go, 0);
		pthread_t t[CALLERS];
		for (intptr_t i = 0; i < CALLERS; i++)
			ck_assert_int_eq(pthread_create(&t[i], NULL, concurrent_caller, (void *)i), 0);
		atomic_store(&go, 1);
		for (int i = 0; i < CALLERS; i++) {
			void *bad;
			ck_assert_int_eq(pthread_join(t[i], &bad), 0);
			ck_assert_msg(bad == NULL, "a caller returned before the initializer ended");
		}
		for (int n = 0; n < OBJECTS; n++)
			ck_assert_int_eq(atomic_load(&object_runs[n]), 1);
	}
}
END_TEST

/* ---- an initializer that blocks until told, for the tests below ---- */

static pthread_once_t held_once;
static _Atomic int in_init, release_init;
static _Atomic pid_t init_tid;

/* Waits (a cancellation point every ms) until release_init, 10 s at most. */
static void blocking_init(void)
{
	atomic_store(&init_tid, test_gettid());
	atomic_store(&in_init, 1);
	int64_t end = now_ns(CLOCK_MONOTONIC) + 10 * NSEC_PER_SEC;
	while (!atomic_load(&release_init) && now_ns(CLOCK_MONOTONIC) < end) {
		pthread_testcancel();
		sleep_ms(1);
	}
}

static void reset_held(void)
{
	held_once = PTHREAD_ONCE_INIT;
	atomic_store(&in_init, 0);
	atomic_store(&release_init, 0);
	atomic_store(&init_tid, 0);
	atomic_store(&runs, 0);
}

static int held_variant;

static void *blocking_caller(void *arg)
{
	(void)arg;
	run_once(held_variant, &held_once, blocking_init);
	return NULL;
}

struct waiter {
	_Atomic pid_t tid;
	_Atomic int returned;
};

static void *counting_caller(void *arg)
{
	struct waiter *w = arg;
	atomic_store(&w->tid, test_gettid());
	run_once(held_variant, &held_once, count_run);
	atomic_store(&w->returned, 1);
	return NULL;
}

/* The initializer is cancelled while a thread waits: the word goes back
 * to "never run" and the waiter runs its own initializer. */
START_TEST(test_once_cancel_resets)
{
	held_variant = _i;
	reset_held();
	pthread_t a, b;
	ck_assert_int_eq(pthread_create(&a, NULL, blocking_caller, NULL), 0);
	ck_assert(wait_flag(&in_init, 1, 5000));
	struct waiter w = { 0 };
	ck_assert_int_eq(pthread_create(&b, NULL, counting_caller, &w), 0);
	while (atomic_load(&w.tid) == 0)
		sleep_ms(1);
	ck_assert(wait_task_sleeping(w.tid, 5000));
	ck_assert_int_eq(atomic_load(&w.returned), 0);
	ck_assert_int_eq(pthread_cancel(a), 0);
	void *ret;
	ck_assert_int_eq(pthread_join(a, &ret), 0);
	ck_assert(ret == PTHREAD_CANCELED);
	ck_assert_int_eq(pthread_join(b, NULL), 0);
	ck_assert_int_eq(atomic_load(&runs), 1);
	run_once(_i, &held_once, count_run);
	ck_assert_int_eq(atomic_load(&runs), 1);
}
END_TEST

/* Cancelled with nobody waiting: the next call runs the initializer. */
START_TEST(test_once_cancel_alone)
{
	held_variant = _i;
	reset_held();
	pthread_t a;
	ck_assert_int_eq(pthread_create(&a, NULL, blocking_caller, NULL), 0);
	ck_assert(wait_flag(&in_init, 1, 5000));
	ck_assert_int_eq(pthread_cancel(a), 0);
	ck_assert_int_eq(pthread_join(a, NULL), 0);
	run_once(_i, &held_once, count_run);
	ck_assert_int_eq(atomic_load(&runs), 1);
}
END_TEST

/* fork() while another thread runs the initializer: the child, where that
 * thread does not exist, runs the initializer itself. */
START_TEST(test_once_fork_in_progress)
{
	held_variant = _i;
	reset_held();
	pthread_t a;
	ck_assert_int_eq(pthread_create(&a, NULL, blocking_caller, NULL), 0);
	ck_assert(wait_flag(&in_init, 1, 5000));
	pid_t child = fork();
	ck_assert_int_ge(child, 0);
	if (child == 0) {
		alarm(10);
		run_once(_i, &held_once, count_run);
		run_once(_i, &held_once, count_run);
		_exit(atomic_load(&runs) == 1 ? 0 : 1);
	}
	int status;
	ck_assert_int_eq(waitpid(child, &status, 0), child);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child: status %#x", status);
	atomic_store(&release_init, 1);
	ck_assert_int_eq(pthread_join(a, NULL), 0);
	ck_assert_int_eq(atomic_load(&runs), 0);
}
END_TEST

/* More initializers in progress than the library has slots (1023): a
 * chain of nested pthread_once calls, each initializer calling the next
 * object's, holds one slot per level; the deepest runs without a slot.
 * A waiter and a fork child must still work there. */
#define CHAIN 1030

static pthread_once_t chain[CHAIN];
static int chain_depth;

static void chain_init(void)
{
	int d = ++chain_depth;
	if (d < CHAIN)
		pthread_once(&chain[d], chain_init);
	else
		blocking_init();
}

static void *chain_caller(void *arg)
{
	(void)arg;
	pthread_once(&chain[0], chain_init);
	return NULL;
}

static void *deepest_caller(void *arg)
{
	struct waiter *w = arg;
	atomic_store(&w->tid, test_gettid());
	pthread_once(&chain[CHAIN - 1], count_run);
	atomic_store(&w->returned, 1);
	return NULL;
}

START_TEST(test_once_slots_exhausted)
{
	reset_held();
	held_variant = 0;
	chain_depth = 0;
	for (int i = 0; i < CHAIN; i++)
		chain[i] = PTHREAD_ONCE_INIT;
	pthread_t a, b;
	ck_assert_int_eq(pthread_create(&a, NULL, chain_caller, NULL), 0);
	ck_assert(wait_flag(&in_init, 1, 10000));
	unsigned deepest = (unsigned)*(int *)&chain[CHAIN - 1];
	if (library_loaded())
		ck_assert_msg((deepest & 3) == 1 && (deepest & 0xffc) == 0 && (deepest >> 12) != 0,
			      "the deepest word is %#x, not a slotless one", deepest);
	/* a fork child takes the slotless word over */
	pid_t child = fork();
	ck_assert_int_ge(child, 0);
	if (child == 0) {
		alarm(10);
		pthread_once(&chain[CHAIN - 1], count_run);
		_exit(atomic_load(&runs) == 1 ? 0 : 1);
	}
	int status;
	ck_assert_int_eq(waitpid(child, &status, 0), child);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child: status %#x", status);
	/* a waiter here sleeps until the initializer ends */
	struct waiter w = { 0 };
	ck_assert_int_eq(pthread_create(&b, NULL, deepest_caller, &w), 0);
	while (atomic_load(&w.tid) == 0)
		sleep_ms(1);
	ck_assert(wait_task_sleeping(w.tid, 5000));
	ck_assert_int_eq(atomic_load(&w.returned), 0);
	atomic_store(&release_init, 1);
	ck_assert_int_eq(pthread_join(b, NULL), 0);
	ck_assert_int_eq(pthread_join(a, NULL), 0);
	ck_assert_int_eq(atomic_load(&runs), 0);
	for (int i = 0; i < CHAIN; i++)
		ck_assert_int_eq(*(int *)&chain[i], 2);
}
END_TEST

/* ---- priority inheritance: L/M/H on one CPU ---- */

#define M_SPIN_MS 1000 /* at most: M stops once H is through */

static _Atomic int spin_release;
static _Atomic int64_t high_done_ns;

/* L's initializer: burns CPU until released (3 s at most). */
static void spinning_init(void)
{
	atomic_store(&init_tid, test_gettid());
	atomic_store(&in_init, 1);
	int64_t end = now_ns(CLOCK_MONOTONIC) + 3 * NSEC_PER_SEC;
	while (!atomic_load(&spin_release) && now_ns(CLOCK_MONOTONIC) < end)
		;
}

static void *low_main(void *arg)
{
	(void)arg;
	run_once(held_variant, &held_once, spinning_init);
	return NULL;
}

static void *high_main(void *arg)
{
	struct waiter *w = arg;
	atomic_store(&w->tid, test_gettid());
	run_once(held_variant, &held_once, count_run);
	atomic_store(&high_done_ns, now_ns(CLOCK_MONOTONIC));
	return NULL;
}

/* M: a CPU hog above L, until H is through or for M_SPIN_MS. */
static void *medium_main(void *arg)
{
	(void)arg;
	int64_t end = now_ns(CLOCK_MONOTONIC) + M_SPIN_MS * 1000000LL;
	while (atomic_load(&high_done_ns) == 0 && now_ns(CLOCK_MONOTONIC) < end)
		;
	return NULL;
}

/* L (FIFO 10) runs the initializer, H (FIFO 90) waits for it, M (FIFO
 * 50) spins: with inheritance L runs at 90 and H gets through as soon as
 * L is released; without, H waits for M's whole spin.  The bound, 10% of
 * the spin, leaves room for RT throttling (up to 50 ms a second). */
START_TEST(test_once_boost)
{
	if (!rt_available())
		SKIP_TEST("SCHED_FIFO refused");
	if (cpu_count() < 2)
		SKIP_TEST("one CPU: the test's own thread needs another");
	held_variant = _i;
	reset_held();
	atomic_store(&spin_release, 0);
	atomic_store(&high_done_ns, 0);
	pthread_t low, high, medium;
	start_thread_sched(&low, SCHED_FIFO, 10, 0, low_main, NULL);
	ck_assert(wait_flag(&in_init, 1, 5000));
	struct waiter w = { 0 };
	start_thread_sched(&high, SCHED_FIFO, 90, 0, high_main, &w);
	while (atomic_load(&w.tid) == 0)
		sleep_ms(1);
	ck_assert(wait_task_sleeping(w.tid, 5000));
	bool boosted = wait_task_rt_prio(atomic_load(&init_tid), 90, 1000);
	start_thread_sched(&medium, SCHED_FIFO, 50, 0, medium_main, NULL);
	sleep_ms(20);
	int64_t released = now_ns(CLOCK_MONOTONIC);
	atomic_store(&spin_release, 1);
	ck_assert_int_eq(pthread_join(high, NULL), 0);
	ck_assert_int_eq(pthread_join(medium, NULL), 0);
	ck_assert_int_eq(pthread_join(low, NULL), 0);
	int64_t waited = atomic_load(&high_done_ns) - released;
	ck_assert_msg(boosted && waited < M_SPIN_MS * 1000000LL / 10,
		      "priority inversion: initializer boosted to 90: %s; H waited %lld us after its release "
		      "(bound: 10%% of M's %d ms spin)",
		      boosted ? "yes" : "no", (long long)(waited / 1000), M_SPIN_MS);
	ck_assert_int_eq(atomic_load(&runs), 0);
}
END_TEST

static Suite *once_suite(void)
{
	Suite *s = suite_create("once");
	TCase *tc = tcase_create("semantics");
	tcase_set_timeout(tc, 30);
	tcase_add_loop_test(tc, test_once_basic, 0, 2);
	tcase_add_loop_test(tc, test_once_glibc_done_word, 0, 2);
	tcase_add_test(tc, test_once_bad_input);
	tcase_add_test(tc, test_once_recursive);
	tcase_add_loop_test(tc, test_once_concurrent, 0, 2);
	suite_add_tcase(s, tc);

	tc = tcase_create("cancel_fork");
	tcase_set_timeout(tc, 30);
	tcase_add_loop_test(tc, test_once_cancel_resets, 0, 2);
	tcase_add_loop_test(tc, test_once_cancel_alone, 0, 2);
	tcase_add_loop_test(tc, test_once_fork_in_progress, 0, 2);
	tcase_add_test(tc, test_once_slots_exhausted);
	suite_add_tcase(s, tc);

	tc = tcase_create("inheritance");
	tcase_set_timeout(tc, 30);
	tcase_add_loop_test(tc, test_once_boost, 0, 2);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return run_suite(once_suite());
}
