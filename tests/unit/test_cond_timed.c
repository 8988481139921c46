/*
 * A timed wait whose deadline falls just as a signal sent without the
 * mutex arrives must not take another waiter's wake-up with it.
 *
 * Each round, one at a time (orchestrated with raw futexes):
 *   A (CPU 1, SCHED_FIFO 10)  the only waiter: pthread_cond_clockwait
 *                             with deadline D; afterwards takes an item
 *                             if any.
 *   P (CPU 1, SCHED_FIFO 20)  wakes at D + delta, preempting A on its CPU
 *                             right in A's timeout path: items++ under the
 *                             mutex, unlock, pthread_cond_signal WITHOUT
 *                             the mutex; lets C run and keeps A off its
 *                             CPU until C is inside its wait.
 *   C (CPU 0, SCHED_FIFO 10)  takes P's item without waiting, then waits
 *                             (items is 0 again) with a 400 ms deadline.
 *   check (main thread)       items++, unlock, pthread_cond_signal: C
 *                             must be woken by it.
 * delta is steered so that P's preemption lands around A's timeout (A
 * returning 0 means P came too early, ETIMEDOUT too late).
 *
 * The check does not time C: a loaded machine can keep a woken thread
 * off the CPU for any time.  C was woken if the kernel no longer has it
 * asleep ('S' in /proc) once the signal returned, or if it consumed the
 * item before its deadline; still asleep without the item is the lost
 * wake-up.  A round in which C returned only at its deadline (which is
 * there so that a lost wake-up does not block C for ever) is not judged.
 *
 * The failure this catches: a timed-out waiter that looks for a wake-up
 * and then, in a second step, takes itself off the pending count can take
 * off C's registration instead of its own (the signal counted A's between
 * the two steps, and C registered after it), so the next signal finds
 * nobody pending and C sleeps with an item posted.  The library's waiter
 * leaves in one step under the condition's lock, which a signal takes
 * too: it leaves the queue unless a signal claimed its record first
 * (src/cond_seq.c); on a process-shared condition, its group
 * (src/cond_state.h: group_leave).
 *
 * STRESS_DURATION (default 3) bounds the run; a loss that
 * happens shows within about a thousand rounds (a second or two).
 */
#include <limits.h>
#include <linux/futex.h>
#include <sys/prctl.h>

#include "testutil.h"

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER; /* NORMAL, private */
static pthread_cond_t cv; /* private, CLOCK_MONOTONIC */
static int items;				      /* under m */

static _Atomic int round_no, stop;
static _Atomic int a_done, p_done, go_c, c_waiting, c_consumed;
static int a_result, c_result;
static _Atomic pid_t c_tid;
static long long deadline_c, c_returned; /* C's, monotonic ns; read once c_consumed moved */
static struct timespec deadline_a, wake_p; /* written before round_no moves */
static bool rt;
static long long lead_ns = 300000; /* -l: D is this far after the round starts */

static long long mono_ns(void)
{
	return now_ns(CLOCK_MONOTONIC);
}

static struct timespec ts_of(long long ns)
{
	struct timespec t = { ns / 1000000000LL, ns % 1000000000LL };
	return t;
}

/* Orchestration on raw futexes (independent of the library under test). */
static void publish(_Atomic int *w, int v)
{
	atomic_store(w, v);
	syscall(SYS_futex, w, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}

/* Waits until *w >= v (or stop); false on timeout_ms. */
static int await(_Atomic int *w, int v, long timeout_ms)
{
	long long end = mono_ns() + timeout_ms * 1000000LL;
	for (;;) {
		int cur = atomic_load(w);
		if (cur >= v || atomic_load(&stop))
			return 1;
		long long left = end - mono_ns();
		if (left <= 0)
			return 0;
		if (left > 10000000)
			left = 10000000;
		struct timespec rel = ts_of(left);
		syscall(SYS_futex, w, FUTEX_WAIT_PRIVATE, cur, &rel, NULL, 0);
	}
}

static void pin(int cpu, int prio)
{
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	pthread_setaffinity_np(pthread_self(), sizeof set, &set);
	prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
	if (rt && prio)
		try_fifo(prio);
}

static void *thread_a(void *arg)
{
	(void)arg;
	pin(1, 10);
	for (int k = 1;; k++) {
		await(&round_no, k, 1000000);
		if (atomic_load(&stop))
			return NULL;
		pthread_mutex_lock(&m);
		int r = 0;
		if (items == 0)
			r = pthread_cond_clockwait(&cv, &m, CLOCK_MONOTONIC, &deadline_a);
		if (items > 0)
			items--;
		a_result = r;
		pthread_mutex_unlock(&m);
		publish(&a_done, k);
	}
}

static void *thread_p(void *arg)
{
	(void)arg;
	pin(1, 20);
	for (int k = 1;; k++) {
		await(&round_no, k, 1000000);
		if (atomic_load(&stop))
			return NULL;
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &wake_p, NULL);
		pthread_mutex_lock(&m);
		items++;
		pthread_mutex_unlock(&m);
		pthread_cond_signal(&cv); /* without the mutex */
		publish(&go_c, k);
		/* Keep A (same CPU, lower priority) off the CPU until C is in
		 * its wait; bounded, in case A holds the mutex C needs. */
		long long end = mono_ns() + 2000000;
		while (atomic_load(&c_waiting) < k && mono_ns() < end)
			;
		if (atomic_load(&c_waiting) >= k) {
			pthread_mutex_lock(&m); /* C released it inside the wait */
			pthread_mutex_unlock(&m);
		}
		publish(&p_done, k);
	}
}

static void *thread_c(void *arg)
{
	(void)arg;
	pin(0, 10);
	atomic_store(&c_tid, test_gettid());
	for (int k = 1;; k++) {
		await(&go_c, k, 1000000);
		if (atomic_load(&stop))
			return NULL;
		pthread_mutex_lock(&m);
		if (items > 0)
			items--; /* P's item, taken without waiting */
		atomic_store(&c_waiting, k);
		deadline_c = mono_ns() + 400000000LL;
		struct timespec dl = ts_of(deadline_c);
		int r = 0;
		while (items == 0 && !atomic_load(&stop)) {
			r = pthread_cond_clockwait(&cv, &m, CLOCK_MONOTONIC, &dl);
			if (r == ETIMEDOUT)
				break;
		}
		c_returned = mono_ns();
		if (items > 0)
			items--;
		c_result = r;
		pthread_mutex_unlock(&m);
		publish(&c_consumed, k);
	}
}

enum c_verdict { C_WOKEN, C_LOST, C_NOT_JUDGED, C_STUCK };

/* Posts an item for C, which is in its wait once A and P are done, and
 * signals without the mutex: what became of C (see the top). */
static enum c_verdict post_for_c(int k)
{
	pthread_mutex_lock(&m);
	items++;
	pthread_mutex_unlock(&m);
	pthread_cond_signal(&cv);
	long long end = mono_ns() + 10000000000LL;
	for (;;) {
		if (atomic_load(&c_consumed) >= k)
			return c_returned < deadline_c ? C_WOKEN : C_NOT_JUDGED;
		/* asleep, and only then not done: asleep in the wait */
		if (task_state(atomic_load(&c_tid)) == 'S' && atomic_load(&c_consumed) < k)
			return C_LOST;
		if (mono_ns() >= end)
			return C_STUCK;
		await(&c_consumed, k, 1);
	}
}

START_TEST(test_timeout_races_unheld_signal)
{
	if (cpu_count() < 2)
		SKIP_TEST("needs two CPUs");
	rt = rt_available();
	ck_assert_msg(rt || !under_ci(), "SCHED_FIFO refused under CI");
	double seconds = 3;
	const char *env = getenv("STRESS_DURATION");
	if (env && atof(env) > 0)
		seconds = atof(env);

	pthread_condattr_t ca;
	ck_assert_int_eq(pthread_condattr_init(&ca), 0);
	ck_assert_int_eq(pthread_condattr_setclock(&ca, CLOCK_MONOTONIC), 0);
	ck_assert_int_eq(pthread_cond_init(&cv, &ca), 0);
	pin(0, 0);

	pthread_t ta, tp, tc;
	ck_assert_int_eq(pthread_create(&ta, NULL, thread_a, NULL), 0);
	ck_assert_int_eq(pthread_create(&tp, NULL, thread_p, NULL), 0);
	ck_assert_int_eq(pthread_create(&tc, NULL, thread_c, NULL), 0);

	long long delta = 20000, step = 100; /* ns */
	long long start = mono_ns();
	long rounds = 0, early = 0, late = 0, lost = 0, not_judged = 0;
	bool stuck = false;
	char what[256] = "";
	srand(1);
	for (int k = 1; mono_ns() - start < (long long)(seconds * 1e9) && lost == 0; k++) {
		long long d = mono_ns() + lead_ns;
		long long jitter = (rand() % 201 - 100); /* +-100 ns dither */
		deadline_a = ts_of(d);
		wake_p = ts_of(d + delta + jitter);
		publish(&round_no, k);
		if (!await(&a_done, k, 3000) || !await(&p_done, k, 3000) || !await(&c_waiting, k, 3000)) {
			snprintf(what, sizeof what, "round %d: a thread is stuck (a_done %d p_done %d c_waiting %d)", k,
				 atomic_load(&a_done), atomic_load(&p_done), atomic_load(&c_waiting));
			stuck = true;
			break;
		}
		enum c_verdict v = post_for_c(k);
		if (v == C_STUCK) {
			snprintf(what, sizeof what, "round %d: the waiter neither slept nor returned in 10 s", k);
			stuck = true;
			break;
		}
		if (v == C_LOST) {
			lost++;
			snprintf(what, sizeof what,
				 "round %d: item posted and signalled, the waiter still asleep in its wait "
				 "(the timed waiter returned %s)",
				 k, a_result == ETIMEDOUT ? "ETIMEDOUT" : a_result == 0 ? "0" : strerror(a_result));
			await(&c_consumed, k, 3000);
		}
		not_judged += v == C_NOT_JUDGED;
		rounds++;
		if (a_result == 0)
			early++, delta += step;
		else
			late++, delta -= step;
		if (delta < 0)
			delta = 0;
	}
	atomic_store(&stop, 1);
	publish(&round_no, INT_MAX);
	publish(&go_c, INT_MAX);
	pthread_mutex_lock(&m);
	items++;
	pthread_mutex_unlock(&m);
	pthread_cond_broadcast(&cv);
	if (!stuck) {
		pthread_join(ta, NULL);
		pthread_join(tp, NULL);
		pthread_join(tc, NULL);
	}
	printf("%ld rounds in %.1f s: the timed waiter returned 0 %ld times, ETIMEDOUT %ld; lost wake-ups: %ld "
	       "(%ld rounds not judged: the waiter returned at its deadline)\n",
	       rounds, (mono_ns() - start) / 1e9, early, late, lost, not_judged);
	ck_assert_msg(!stuck && lost == 0, "%s", what);
	ck_assert_msg(not_judged < rounds, "no round could be judged");
	/* both outcomes of the race were reached: the window was hit */
	ck_assert_int_gt(early, 0);
	ck_assert_int_gt(late, 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("cond_timed");
	TCase *tc = tcase_create("race");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_timeout_races_unheld_signal);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
