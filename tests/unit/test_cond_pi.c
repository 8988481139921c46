/*
 * Condition waits with a priority-inheritance mutex: a waiter that a
 * signal or broadcast has moved onto the mutex and that then runs a signal
 * handler, reaches its deadline or is cancelled before it gets the mutex
 * must still return as woken (or pass its wake-up on), and the condition
 * may be destroyed and unmapped right after the move while the mover
 * holds the mutex.  Also: a PI mutex whose owner died without clean-up
 * (ESRCH from the kernel) is taken over, not spun on.
 *
 * Each case holds the mutex in the main thread while it signals, so the
 * kernel queues the waiter on the mutex's rt_mutex; only then does the
 * handler, deadline or cancellation hit it.  Waiters run SCHED_FIFO where
 * allowed (required under CI=true), so that which waiter a signal picks
 * is known.
 */
#include <dlfcn.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/resource.h>

#include "testutil.h"

struct pikind {
	const char *name;
	int type;
	bool robust;
};

static const struct pikind pikinds[] = {
	{ "pi", PTHREAD_MUTEX_NORMAL, false },
	{ "pi robust", PTHREAD_MUTEX_NORMAL, true },
	{ "pi recursive", PTHREAD_MUTEX_RECURSIVE, false },
	{ "pi errorcheck", PTHREAD_MUTEX_ERRORCHECK, false },
};
#define NPIKINDS 4

static void init_pi_mutex(pthread_mutex_t *m, const struct pikind *k)
{
	pthread_mutexattr_t a;
	ck_assert_int_eq(pthread_mutexattr_init(&a), 0);
	ck_assert_int_eq(pthread_mutexattr_settype(&a, k->type), 0);
	ck_assert_int_eq(pthread_mutexattr_setprotocol(&a, PTHREAD_PRIO_INHERIT), 0);
	if (k->robust)
		ck_assert_int_eq(pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST), 0);
	ck_assert_int_eq(pthread_mutex_init(m, &a), 0);
	pthread_mutexattr_destroy(&a);
}

static void noop_handler(int sig)
{
	(void)sig;
}

static void install_handler(bool restart)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = noop_handler;
	sa.sa_flags = restart ? SA_RESTART : 0;
	sigemptyset(&sa.sa_mask);
	ck_assert_int_eq(sigaction(SIGUSR1, &sa, NULL), 0);
}

struct waiter {
	pthread_cond_t *c;
	pthread_mutex_t *m;
	long timeout_ms; /* < 0: untimed */
	int prio;	 /* SCHED_FIFO priority, 0: SCHED_OTHER */
	_Atomic pid_t tid;
	_Atomic int result; /* -1 while waiting */
	_Atomic int predicate;
	_Atomic int *go;
	struct timespec deadline; /* a timed waiter's, written under m before it waits */
};

static void waiter_unlock(void *p)
{
	struct waiter *w = p;
	pthread_mutex_unlock(w->m);
}

static void *waiter_main(void *p)
{
	struct waiter *w = p;
	atomic_store(&w->tid, test_gettid());
	pthread_mutex_lock(w->m);
	w->deadline = deadline_in_ms(CLOCK_REALTIME, w->timeout_ms);
	int r = 0;
	pthread_cleanup_push(waiter_unlock, w);
	/* predicate loop: the only legal way to wait; a spurious return
	 * goes round again, so a missing wake-up shows as no return */
	while (!atomic_load(w->go) && r == 0)
		r = w->timeout_ms < 0 ? pthread_cond_wait(w->c, w->m)
				      : pthread_cond_timedwait(w->c, w->m, &w->deadline);
	if (r == 0 && atomic_load(w->go) > 0)
		atomic_fetch_sub(w->go, 1); /* consume one item */
	pthread_cleanup_pop(0);
	atomic_store(&w->result, r);
	pthread_mutex_unlock(w->m);
	return NULL;
}

static void waiter_start(pthread_t *t, struct waiter *w)
{
	atomic_store(&w->result, -1);
	atomic_store(&w->tid, 0);
	if (w->prio > 0)
		start_thread_sched(t, SCHED_FIFO, w->prio, -1, waiter_main, w);
	else
		ck_assert_int_eq(pthread_create(t, NULL, waiter_main, w), 0);
	int64_t end = now_ns(CLOCK_MONOTONIC) + 10000 * 1000000LL;
	while (atomic_load(&w->tid) == 0 && now_ns(CLOCK_MONOTONIC) < end)
		sleep_ms(1);
	ck_assert_msg(atomic_load(&w->tid) != 0, "waiter did not start");
	/* A timed waiter may reach its deadline before we see it asleep; the
	 * caller finds that out (moved_in_time). */
	for (;;) {
		if (task_state(atomic_load(&w->tid)) == 'S')
			return;
		if (atomic_load(&w->result) != -1) {
			ck_assert_msg(w->timeout_ms >= 0, "an untimed waiter returned without a signal");
			return;
		}
		ck_assert_msg(now_ns(CLOCK_MONOTONIC) < end, "waiter did not block");
		sleep_ms(1);
	}
}

static bool waiter_returned_within(struct waiter *w, long ms)
{
	int64_t end = now_ns(CLOCK_MONOTONIC) + ms * 1000000LL;
	while (atomic_load(&w->result) == -1) {
		if (now_ns(CLOCK_MONOTONIC) >= end)
			return false;
		sleep_ms(1);
	}
	return true;
}

static void join_within(pthread_t t, void **ret, long ms, const char *what)
{
	struct timespec dl = deadline_in_ms(CLOCK_REALTIME, ms);
	int r = pthread_timedjoin_np(t, ret, &dl);
	ck_assert_msg(r == 0, "%s did not finish within %ld ms (%s)", what, ms, strerror(r));
}

/*
 * A timed waiter fixes its deadline before it waits, and a loaded machine
 * may take any time from there to the signal that moves it.  An attempt
 * whose move did not come before the deadline proves nothing: it runs
 * again with twice the timeout.
 */
#define TIMEOUT_FIRST_MS 150
#define TIMEOUT_ATTEMPTS 6

/* Called right after the move, with the mutex held: whether it came
 * before w's deadline (the kernel had not timed w out). */
static bool moved_in_time(const struct waiter *w)
{
	return now_ns(CLOCK_REALTIME) < ts_to_ns(&w->deadline);
}

static void sleep_until(clockid_t clock, const struct timespec *t)
{
	while (clock_nanosleep(clock, TIMER_ABSTIME, t, NULL) == EINTR)
		;
}

static void with_timeouts(const struct pikind *k, bool (*attempt)(const struct pikind *, long))
{
	long ms = TIMEOUT_FIRST_MS;
	for (int i = 0; i < TIMEOUT_ATTEMPTS; i++, ms *= 2) {
		if (attempt(k, ms))
			return;
		printf("%s: the move came after the timed waiter's %ld ms deadline: again\n", k->name, ms);
		fflush(stdout);
	}
	ck_abort_msg("%s: the timed waiter's deadline passed before the move %d times (up to %ld ms)", k->name,
		     TIMEOUT_ATTEMPTS, ms / 2);
}

/* Voluntary context switches of one of our threads: one more each time
 * it wakes from a sleep and sleeps again.  -1 if unreadable. */
static long task_voluntary_switches(pid_t tid)
{
	char path[64], line[128];
	long n = -1;
	snprintf(path, sizeof path, "/proc/self/task/%d/status", (int)tid);
	FILE *f = fopen(path, "r");
	if (!f)
		return -1;
	while (n < 0 && fgets(line, sizeof line, f))
		if (sscanf(line, "voluntary_ctxt_switches: %ld", &n) != 1)
			n = -1;
	fclose(f);
	return n;
}

/* Waits (up to 5 s) until w, which had made `switches` voluntary context
 * switches, has woken and sleeps again, or has returned (left to the
 * caller to judge). */
static void wait_woken_and_asleep(struct waiter *w, long switches, const char *what)
{
	pid_t tid = atomic_load(&w->tid);
	int64_t end = now_ns(CLOCK_MONOTONIC) + 5000 * 1000000LL;
	while (atomic_load(&w->result) == -1 && !(task_voluntary_switches(tid) > switches && task_state(tid) == 'S')) {
		ck_assert_msg(now_ns(CLOCK_MONOTONIC) < end, "%s", what);
		sleep_ms(1);
	}
}

/* Lets w's deadline pass while we hold the mutex it was moved onto, and
 * waits until the deadline has woken it and it sleeps again (on the
 * mutex).  `switches` was counted before the move, and the library leaves
 * a moved waiter asleep until something wakes it: here, the deadline. */
static void deadline_wakes(struct waiter *w, long switches, const char *name)
{
	char what[128];
	snprintf(what, sizeof what, "%s: the moved waiter did not run after its deadline", name);
	sleep_until(CLOCK_REALTIME, &w->deadline);
	wait_woken_and_asleep(w, switches, what);
}

/* Priorities for two waiters, or none: false means skip. */
static bool two_prios(int *hi, int *lo)
{
	if (rt_available()) {
		*hi = 30;
		*lo = 20;
		return true;
	}
	ck_assert_msg(!under_ci(), "SCHED_FIFO refused under CI");
	return false;
}

/*
 * Two waiters, a (higher priority) and b, on a PI condition; the main
 * thread posts one item and signals while holding the mutex, so a is moved
 * onto the mutex's rt_mutex, and keeps the mutex while `meanwhile` hits a.
 * a must not return while the mutex is held; then it must return 0 for
 * that item, and b must still be there for the next one.  `meanwhile`
 * returns false when the attempt proves nothing (see with_timeouts).
 */
struct pair {
	const struct pikind *k;
	pthread_mutex_t m;
	pthread_cond_t c;
	_Atomic int go;
	struct waiter a, b;
	pthread_t ta, tb;
	long a_switches; /* a's voluntary context switches before the move */
};

static void pair_post(struct pair *p, bool unlock)
{
	ck_assert_int_eq(pthread_mutex_lock(&p->m), 0);
	atomic_store(&p->go, 1);
	ck_assert_int_eq(pthread_cond_signal(&p->c), 0);
	if (unlock)
		ck_assert_int_eq(pthread_mutex_unlock(&p->m), 0);
}

/* Lets go of the mutex and checks what each waiter did with the item. */
static void pair_check(struct pair *p)
{
	const struct pikind *k = p->k;
	ck_assert_int_eq(pthread_mutex_unlock(&p->m), 0);
	void *ret;
	join_within(p->ta, &ret, 1000, "the moved waiter");
	if (ret == PTHREAD_CANCELED) {
		/* it passed the wake-up on: b consumes the item */
		ck_assert_msg(waiter_returned_within(&p->b, 1000), "%s: the cancelled waiter swallowed the wake-up",
			      k->name);
	} else {
		/* it was woken (POSIX also lets a cancelled one act on the
		 * signal, as glibc does): it consumed the item */
		ck_assert_msg(atomic_load(&p->a.result) == 0, "%s: the moved waiter returned %s, not 0", k->name,
			      strerror(atomic_load(&p->a.result)));
		ck_assert_int_eq(atomic_load(&p->go), 0);
		ck_assert_msg(atomic_load(&p->b.result) == -1, "%s: one signal woke both", k->name);
		pair_post(p, true);
		ck_assert_msg(waiter_returned_within(&p->b, 1000), "%s: the other waiter missed the next signal",
			      k->name);
	}
	ck_assert_int_eq(atomic_load(&p->b.result), 0);
	join_within(p->tb, NULL, 1000, "the other waiter");
}

/* An attempt that proved nothing: lets both waiters go, whatever the
 * signal did. */
static void pair_abandon(struct pair *p)
{
	atomic_store(&p->go, 2);
	ck_assert_int_eq(pthread_cond_broadcast(&p->c), 0);
	ck_assert_int_eq(pthread_mutex_unlock(&p->m), 0);
	join_within(p->ta, NULL, 1000, "the moved waiter");
	join_within(p->tb, NULL, 1000, "the other waiter");
}

static bool pair_run(const struct pikind *k, long a_timeout_ms, bool (*meanwhile)(struct pair *))
{
	struct pair *p = calloc(1, sizeof *p);
	int hi, lo;
	if (!two_prios(&hi, &lo)) {
		printf("SKIP: %s: SCHED_FIFO refused\n", k->name);
		free(p);
		return true;
	}
	p->k = k;
	init_pi_mutex(&p->m, k);
	ck_assert_int_eq(pthread_cond_init(&p->c, NULL), 0);
	p->a = (struct waiter){ .c = &p->c, .m = &p->m, .timeout_ms = a_timeout_ms, .prio = hi, .go = &p->go };
	p->b = (struct waiter){ .c = &p->c, .m = &p->m, .timeout_ms = -1, .prio = lo, .go = &p->go };
	waiter_start(&p->ta, &p->a);
	waiter_start(&p->tb, &p->b);
	p->a_switches = task_voluntary_switches(atomic_load(&p->a.tid));

	pair_post(p, false); /* a moved onto m, which we hold */
	bool counts = meanwhile(p);
	if (counts) {
		ck_assert_msg(atomic_load(&p->a.result) == -1,
			      "%s: the moved waiter returned while the mutex was held", k->name);
		pair_check(p);
	} else {
		pair_abandon(p);
	}
	ck_assert_int_eq(pthread_cond_destroy(&p->c), 0);
	ck_assert_int_eq(pthread_mutex_destroy(&p->m), 0);
	free(p);
	return counts;
}

/* Signal handlers: the kernel returns EAGAIN without the mutex. */
static bool hit_by_handlers(struct pair *p)
{
	for (int i = 0; i < 3; i++) {
		pthread_kill(p->ta, SIGUSR1);
		sleep_ms(5);
	}
	return true;
}

/* Its deadline passes on the rt_mutex: ETIMEDOUT without the mutex, but
 * the wake-up was its own, so it returns 0. */
static bool deadline_passes(struct pair *p)
{
	if (!moved_in_time(&p->a))
		return false;
	deadline_wakes(&p->a, p->a_switches, p->k->name);
	return true;
}

static bool cancelled(struct pair *p)
{
	ck_assert_int_eq(pthread_cancel(p->ta), 0);
	sleep_ms(20);
	return true;
}

/* _i: kind x (handler with SA_RESTART or not) */
START_TEST(test_moved_then_handler)
{
	install_handler(_i % 2);
	pair_run(&pikinds[_i / 2], -1, hit_by_handlers);
}
END_TEST

static bool moved_then_deadline(const struct pikind *k, long timeout_ms)
{
	return pair_run(k, timeout_ms, deadline_passes);
}

START_TEST(test_moved_then_deadline)
{
	with_timeouts(&pikinds[_i], moved_then_deadline);
}
END_TEST

START_TEST(test_moved_then_cancelled)
{
	pair_run(&pikinds[_i], -1, cancelled);
}
END_TEST

/* Our own voluntary context switches: one each time we slept. */
static long self_voluntary_switches(void)
{
	struct rusage ru;
	ck_assert_int_eq(getrusage(RUSAGE_THREAD, &ru), 0);
	return ru.ru_nvcsw;
}

/* destroy right after a broadcast must not wait for the moved waiters,
 * which wait for the mutex we hold.  Waiting is sleeping or spinning;
 * time a loaded machine keeps us off the CPU is neither. */
static void destroy_without_waiting(pthread_cond_t *c)
{
	long switches = self_voluntary_switches();
	int64_t start = now_ns(CLOCK_MONOTONIC), cpu = now_ns(CLOCK_THREAD_CPUTIME_ID);
	ck_assert_int_eq(pthread_cond_destroy(c), 0);
	int64_t took = now_ns(CLOCK_MONOTONIC) - start;
	cpu = now_ns(CLOCK_THREAD_CPUTIME_ID) - cpu;
	bool slept = self_voluntary_switches() != switches;
	ck_assert_msg(!(slept && took >= 100 * 1000000LL) && cpu < 100 * 1000000LL,
		      "destroy after broadcast waited: %lld ms (%lld ms on the CPU, %s)", (long long)(took / 1000000),
		      (long long)(cpu / 1000000), slept ? "slept" : "never slept");
}

/* A handler in each waiter, which must have run (woken it; it sleeps
 * again) before we go on. */
static void handlers_run(struct waiter *w, const pthread_t *t, int n, const char *name)
{
	long switches[n];
	char what[128];
	for (int i = 0; i < n; i++) {
		switches[i] = task_voluntary_switches(atomic_load(&w[i].tid));
		ck_assert_int_eq(pthread_kill(t[i], SIGUSR1), 0);
	}
	for (int i = 0; i < n; i++) {
		snprintf(what, sizeof what, "%s: waiter %d did not run its handler", name, i);
		wait_woken_and_asleep(&w[i], switches[i], what);
	}
}

/*
 * Broadcast, destroy and unmap the condition while holding the mutex,
 * then signal handlers in every moved waiter: no waiter touches the
 * condition again, and all return once the mutex is free.  One waiter is
 * timed, and its deadline wakes it on the mutex before the handlers.
 */
static bool broadcast_destroy_unmap(const struct pikind *k, long timeout_ms)
{
	install_handler(false);
	pthread_mutex_t m;
	_Atomic int go = 0;
	init_pi_mutex(&m, k);
	long page = sysconf(_SC_PAGESIZE);
	pthread_cond_t *c = mmap(NULL, (size_t)page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ck_assert(c != MAP_FAILED);
	ck_assert_int_eq(pthread_cond_init(c, NULL), 0);
	struct waiter w[3];
	pthread_t t[3];
	for (int i = 0; i < 3; i++) {
		w[i] = (struct waiter){ .c = c, .m = &m, .timeout_ms = i == 2 ? timeout_ms : -1, .go = &go };
		waiter_start(&t[i], &w[i]);
	}
	long switches = task_voluntary_switches(atomic_load(&w[2].tid));
	ck_assert_int_eq(pthread_mutex_lock(&m), 0);
	atomic_store(&go, 3);
	ck_assert_int_eq(pthread_cond_broadcast(c), 0);
	bool counts = moved_in_time(&w[2]);
	if (counts) {
		destroy_without_waiting(c);
		ck_assert_int_eq(munmap(c, (size_t)page), 0);
		deadline_wakes(&w[2], switches, k->name);
		handlers_run(w, t, 3, k->name);
		for (int i = 0; i < 3; i++)
			ck_assert_msg(atomic_load(&w[i].result) == -1,
				      "%s: waiter %d returned while the mutex was held", k->name, i);
	}
	ck_assert_int_eq(pthread_mutex_unlock(&m), 0);
	for (int i = 0; i < 3; i++) {
		ck_assert_msg(waiter_returned_within(&w[i], 1000), "%s: waiter %d did not return", k->name, i);
		int r = atomic_load(&w[i].result);
		ck_assert_msg(!counts || r == 0, "%s: waiter %d returned %s, not 0", k->name, i, strerror(r));
		join_within(t[i], NULL, 1000, "waiter");
	}
	if (counts) {
		ck_assert_int_eq(atomic_load(&go), 0);
	} else {
		ck_assert_int_eq(pthread_cond_destroy(c), 0);
		ck_assert_int_eq(munmap(c, (size_t)page), 0);
	}
	return counts;
}

START_TEST(test_broadcast_destroy_unmap)
{
	with_timeouts(&pikinds[_i], broadcast_destroy_unmap);
}
END_TEST

/*
 * A waiter cancelled just as a signal claims it (another waiter queued),
 * then a broadcast, destroy and reuse of the condition while the mutex is
 * held: nobody blocked, so destroy is legal, and the cancelled waiter must
 * not pass its wake-up on into the reused memory.
 */
struct cancel_obj {
	pthread_cond_t c;
	pthread_mutex_t *m;
	_Atomic int waiting; /* waiters that reached the wait, counted under m */
	_Atomic int failed;  /* waits that returned an error */
};

static void unlock_mutex(void *m)
{
	pthread_mutex_unlock(m);
}

static void *cancel_target(void *p)
{
	struct cancel_obj *o = p;
	pthread_mutex_lock(o->m);
	pthread_cleanup_push(unlock_mutex, o->m);
	atomic_fetch_add(&o->waiting, 1);
	if (pthread_cond_wait(&o->c, o->m) != 0)
		atomic_fetch_add(&o->failed, 1);
	pthread_cleanup_pop(1);
	return NULL;
}

START_TEST(test_cancel_signal_destroy_reuse)
{
	pthread_mutex_t m;
	init_pi_mutex(&m, &pikinds[_i]);
	for (int round = 0; round < 30; round++) {
		struct cancel_obj *o = calloc(1, sizeof *o);
		o->m = &m;
		ck_assert_int_eq(pthread_cond_init(&o->c, NULL), 0);
		pthread_t a, b;
		ck_assert_int_eq(pthread_create(&a, NULL, cancel_target, o), 0);
		ck_assert_int_eq(pthread_create(&b, NULL, cancel_target, o), 0);
		/* A waiter that is not inside the wait when we destroy would
		 * wait on the reused memory, and a thread can start later than
		 * any fixed sleep on a busy machine.  Each counts itself
		 * holding m and releases m only inside the wait: once we hold
		 * m, both are queued.  The sleep lets them reach the kernel. */
		ck_assert_msg(wait_flag(&o->waiting, 2, 5000), "%s, round %d: waiters did not start", pikinds[_i].name,
			      round);
		sleep_ms(10);
		ck_assert_int_eq(pthread_mutex_lock(&m), 0);
		ck_assert_int_eq(pthread_cancel(a), 0);
		ck_assert_int_eq(pthread_cond_signal(&o->c), 0);
		ck_assert_int_eq(pthread_cond_broadcast(&o->c), 0);
		ck_assert_int_eq(pthread_cond_destroy(&o->c), 0);
		memset(&o->c, 0x5a, sizeof o->c); /* reused */
		pthread_cond_t reused;
		memcpy(&reused, &o->c, sizeof reused);
		ck_assert_int_eq(pthread_mutex_unlock(&m), 0);
		join_within(a, NULL, 2000, "cancelled waiter");
		join_within(b, NULL, 2000, "other waiter");
		ck_assert_msg(memcmp(&reused, &o->c, sizeof reused) == 0, "%s, round %d: destroyed condition written",
			      pikinds[_i].name, round);
		ck_assert_int_eq(atomic_load(&o->failed), 0);
		free(o);
	}
	ck_assert_int_eq(pthread_mutex_destroy(&m), 0);
}
END_TEST

/* A late waiter must not be moved and returned without a wake-up: after
 * a broadcast, a new waiter stays blocked until it is signalled. */
START_TEST(test_late_waiter_not_woken)
{
	const struct pikind *k = &pikinds[_i];
	pthread_mutex_t m;
	pthread_cond_t c;
	_Atomic int go = 0;
	init_pi_mutex(&m, k);
	ck_assert_int_eq(pthread_cond_init(&c, NULL), 0);
	struct waiter a = { .c = &c, .m = &m, .timeout_ms = -1, .go = &go };
	pthread_t ta;
	waiter_start(&ta, &a);
	ck_assert_int_eq(pthread_mutex_lock(&m), 0);
	atomic_store(&go, 1);
	ck_assert_int_eq(pthread_cond_broadcast(&c), 0);
	ck_assert_int_eq(pthread_mutex_unlock(&m), 0);
	ck_assert(waiter_returned_within(&a, 1000));
	join_within(ta, NULL, 1000, "waiter");

	/* a bare wait (no predicate): a spurious return would show */
	struct timespec dl = deadline_in_ms(CLOCK_REALTIME, 100);
	ck_assert_int_eq(pthread_mutex_lock(&m), 0);
	ck_assert_int_eq(pthread_cond_broadcast(&c), 0);
	ck_assert_int_eq(pthread_cond_timedwait(&c, &m, &dl), ETIMEDOUT);
	ck_assert_int_eq(pthread_mutex_unlock(&m), 0);
	ck_assert_int_eq(pthread_cond_destroy(&c), 0);
}
END_TEST

/* ---- a PI owner that died without clean-up ---- */

static void *exit_at_once(void *p)
{
	*(_Atomic pid_t *)p = test_gettid();
	return NULL;
}

/* A TID that no task has any more. */
static pid_t dead_tid(void)
{
	_Atomic pid_t tid = 0;
	pthread_t t;
	ck_assert_int_eq(pthread_create(&t, NULL, exit_at_once, &tid), 0);
	ck_assert_int_eq(pthread_join(t, NULL), 0);
	char path[64];
	snprintf(path, sizeof path, "/proc/self/task/%d", (int)tid);
	for (int i = 0; i < 1000 && access(path, F_OK) == 0; i++)
		sleep_ms(1);
	return tid;
}

/* The word holds the dead owner's TID, as if it died between taking the
 * word and linking it (robust), or simply died (not robust).  The kernel
 * answers ESRCH; the lock must take it over at once, not spin.  _i: 0
 * robust, 1 not. */
START_TEST(test_dead_owner_taken_over)
{
	if (!library_loaded())
		SKIP_TEST("library behaviour (glibc asserts or blocks for ever)");
	bool robust = _i == 0;
	pthread_mutex_t m;
	init_pi_mutex(&m, &pikinds[robust ? 1 : 0]);
	m.__data.__lock = (int)dead_tid();
	struct timespec dl = deadline_in_ms(CLOCK_REALTIME, 2000);
	int64_t start = now_ns(CLOCK_MONOTONIC);
	int r = pthread_mutex_timedlock(&m, &dl);
	ck_assert_msg(now_ns(CLOCK_MONOTONIC) - start < 500 * 1000000LL, "took %lld ms",
		      (long long)((now_ns(CLOCK_MONOTONIC) - start) / 1000000));
	ck_assert_int_eq(r, robust ? EOWNERDEAD : 0);
	if (robust)
		ck_assert_int_eq(pthread_mutex_consistent(&m), 0);
	ck_assert_int_eq(pthread_mutex_unlock(&m), 0);
	ck_assert_int_eq(pthread_mutex_lock(&m), 0);
	ck_assert_int_eq(pthread_mutex_unlock(&m), 0);
	ck_assert_int_eq(pthread_mutex_destroy(&m), 0);
}
END_TEST

/* The same dead owner met by a condition's move: the waiter gets the
 * mutex (EOWNERDEAD when robust) instead of sleeping for ever. */
struct dead_wait {
	pthread_cond_t *c;
	pthread_mutex_t *m;
	_Atomic pid_t tid;
	_Atomic int result;
};

static void *dead_waiter_main(void *p)
{
	struct dead_wait *d = p;
	pthread_mutex_lock(d->m);
	atomic_store(&d->tid, test_gettid());
	int r = pthread_cond_wait(d->c, d->m);
	atomic_store(&d->result, r);
	if (r == EOWNERDEAD)
		pthread_mutex_consistent(d->m);
	if (r == 0 || r == EOWNERDEAD)
		pthread_mutex_unlock(d->m);
	return NULL;
}

START_TEST(test_dead_owner_at_move)
{
	if (!library_loaded())
		SKIP_TEST("library behaviour (glibc's requeue gives up)");
	bool robust = _i == 0;
	pthread_mutex_t m;
	pthread_cond_t c;
	init_pi_mutex(&m, &pikinds[robust ? 1 : 0]);
	ck_assert_int_eq(pthread_cond_init(&c, NULL), 0);
	struct dead_wait d = { .c = &c, .m = &m, .result = -1 };
	pthread_t t;
	ck_assert_int_eq(pthread_create(&t, NULL, dead_waiter_main, &d), 0);
	while (atomic_load(&d.tid) == 0)
		sleep_ms(1);
	ck_assert(wait_task_sleeping(atomic_load(&d.tid), 2000));
	sleep_ms(10);
	m.__data.__lock = (int)dead_tid(); /* "an owner" took it and died */
	ck_assert_int_eq(pthread_cond_signal(&c), 0);
	join_within(t, NULL, 1000, "waiter moved onto a dead owner's mutex");
	ck_assert_int_eq(atomic_load(&d.result), robust ? EOWNERDEAD : 0);
	ck_assert_int_eq(pthread_cond_destroy(&c), 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("cond_pi");
	TCase *tc = tcase_create("moved");
	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, test_moved_then_handler, 0, NPIKINDS * 2);
	tcase_add_loop_test(tc, test_moved_then_cancelled, 0, NPIKINDS);
	tcase_add_loop_test(tc, test_late_waiter_not_woken, 0, NPIKINDS);
	tcase_add_loop_test(tc, test_cancel_signal_destroy_reuse, 0, NPIKINDS);
	suite_add_tcase(s, tc);
	/* a case of their own, so that CK_RUN_CASE=deadline runs just them */
	tc = tcase_create("deadline");
	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, test_moved_then_deadline, 0, NPIKINDS);
	tcase_add_loop_test(tc, test_broadcast_destroy_unmap, 0, NPIKINDS);
	suite_add_tcase(s, tc);
	tc = tcase_create("dead_owner");
	tcase_set_timeout(tc, 30);
	tcase_add_loop_test(tc, test_dead_owner_taken_over, 0, 2);
	tcase_add_loop_test(tc, test_dead_owner_at_move, 0, 2);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
