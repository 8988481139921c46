/*
 * Condition-variable torture: SCHED_FIFO waiters at several priorities,
 * producers that signal or broadcast with and without the mutex, a
 * "pester" thread that hits the waiters with a no-op signal every
 * 50-500 us, deadlines that expire just as the wake-up arrives, and
 * waiters cancelled in the middle of it all and replaced by new ones.
 *
 * One run per mutex kind (normal, robust, recursive, PI, robust PI,
 * recursive PI, errorcheck PI on a private condition; normal, PI and
 * robust PI with a process-shared condition and mutex), each once with the
 * pester's handler installed with SA_RESTART and once without.
 *
 * The protocol.  items (under the mutex) counts what was posted and not
 * yet consumed.  A producer posts only when items is 0 (1 item, sometimes
 * 2 or 3), then signals once per item or broadcasts, holding the mutex or
 * not (the main thread posts the same way next to some of its cancels).
 * A waiter: lock; while (items == 0) wait; consume one; unlock.  So
 * nothing is posted while items are pending: a wake-up that is lost
 * leaves items > 0 with every waiter asleep and nobody to wake them.
 *
 *   lost wake-up   The main thread watches: items > 0 continuously for more
 *                  than 1 s, the last signal/broadcast more than 1 s ago,
 *                  while a waiter sits in a wait that began before the
 *                  items were posted (so one of those wake-ups was owed to
 *                  it or to another sleeper of that time) fails the test.
 *                  A timed waiter cannot hide this for ever: the run
 *                  alternates between a phase of mixed waits (wait,
 *                  timedwait, clockwait on either clock, with deadlines
 *                  0-2 ms after the next post is due) and a phase of
 *                  untimed waits only, where nothing but a wake-up ends a
 *                  wait.  A cancelled waiter is replaced only while no
 *                  item is pending, so a replacement cannot cover a
 *                  wake-up the cancelled one swallowed either: a waiter
 *                  that times out or is cancelled and takes a wake-up with
 *                  it shows up as a lost wake-up.
 *   stuck          items > 0 for 3 s whatever the waiters do, no post for
 *                  3 s, a cancelled waiter that has not exited 2 s later,
 *                  a mutex the main thread cannot get within 2 s, a thread
 *                  that does not finish within 2 s when told to: all fail
 *                  with a description (waiters, their kernel state, the
 *                  condition's words); nothing waits without a deadline.
 *   stall          the main thread (the watchdog above) itself makes no
 *                  progress for STALL_MS: a thread above every other
 *                  reports what each thread was last doing (its phase),
 *                  its kernel state, and the run, then fails the test,
 *                  well before the harness's timeout would kill it.
 *   destroy        after the run, with every waiter joined,
 *                  pthread_cond_destroy returns 0 within 100 ms.
 *   exclusion      a non-atomic counter incremented in every critical
 *                  section (and an occupancy count) must add up.
 *   errors         every call returns what POSIX allows (never EINTR);
 *                  spurious returns (0 with items == 0) are allowed: they
 *                  are counted and printed.
 *
 * STRESS_DURATION (seconds, default 20) is the time budget for the whole file,
 * shared equally among the runs (`make stress DURATION=600` runs it long,
 * linked and preloaded).  The random choices come from a seed that
 * is printed; STRESS_SEED=N repeats them (the interleavings differ).
 * SCHED_FIFO is needed: without it every run is skipped, unless CI=true,
 * where that is a failure.
 *
 * Under an emulator (TESTS_EMULATOR set, as make test-aarch64 does for
 * qemu-user) every thread runs SCHED_OTHER instead.  qemu-user's
 * translator takes spin locks of its own (chaining one translated block
 * to another, for one), and a waiter of higher priority that spins on
 * one while a lower one holds it, preempted, keeps that holder off the
 * CPU for good once such spinners fill every CPU: the run then hangs in
 * qemu, not in the library.  Time sharing lets the holder run.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <sys/mman.h>
#include <unistd.h>

#include "testutil.h"

#define DEFAULT_DURATION 20.0
#define SIG_PESTER SIGUSR2

enum {
	NWAIT = 6,		/* waiter slots */
	NPROD = 2,		/* producers */
	MAX_CANCELLING = 2,	/* waiters cancelled and not yet joined */
	PESTER_PRIO = 45,	/* above every waiter */
	MAIN_PRIO = 50,		/* the watchdog, above everything */
	PRODUCER_PRIO = 22,	/* producer 1; producer 0 is SCHED_OTHER */
	STALL_PRIO = 60,	/* the stall watchdog, above the main thread */
};

static const int waiter_prio[NWAIT] = { 10, 15, 20, 25, 30, 35 };

#define MS (1000000LL)
#define LOST_MS 1000	/* items pending with a waiter asleep since before them */
#define STUCK_MS 3000	/* no progress at all */
#define JOIN_MS 2000	/* a thread told to finish */
#define DESTROY_MS 100	/* pthread_cond_destroy with no waiter left */

/*
 * The stall watchdog.  The main thread's own calls are bounded (its
 * longest, a timed join or lock, JOIN_MS), and it changes phase at least
 * every millisecond while it watches; STALL_MS without a change is a hang
 * of the main thread itself.  It must be reported before Check's timeout
 * (run_budget() + HARNESS_SLACK_S from the start of the run) kills the
 * process, also if the hang begins at the end of the run's tail (after
 * the budget: the producers' join, the drain, the pester's join, the
 * final joins, the destroy), with time left to print.
 */
#define STALL_MS 8000
#define HARNESS_SLACK_S 30
#define TAIL_MS (JOIN_MS + STUCK_MS + 2000 + JOIN_MS + JOIN_MS + DESTROY_MS)
_Static_assert(TAIL_MS + STALL_MS + 5000 <= HARNESS_SLACK_S * 1000,
	       "a stall at the end of the tail is reported at least 5 s before Check's timeout");
#define STALL_TICK_MS 50      /* how often the stall watchdog looks */
#define STALL_STEP_MAX_MS 200 /* the longest tick it counts (see stall_main) */

static double total_seconds = DEFAULT_DURATION;
static unsigned long long base_seed;

/* ---- random numbers (per thread, from the seed) ---- */

static uint64_t splitmix64(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

static uint32_t seed_for(int run, unsigned salt)
{
	uint32_t s = (uint32_t)splitmix64(base_seed ^ ((uint64_t)run << 40) ^ ((uint64_t)salt << 8));
	return s ? s : 1;
}

static uint32_t rnd(uint32_t *s)
{
	uint32_t x = *s;
	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	return *s = x;
}

/* ---- the mutex kinds ---- */

struct kind {
	const char *name;
	int type;
	int protocol;
	bool robust;
	bool pshared; /* process-shared condition and mutex */
};

static const struct kind kinds[] = {
	{ "normal", PTHREAD_MUTEX_NORMAL, PTHREAD_PRIO_NONE, false, false },
	{ "pi", PTHREAD_MUTEX_NORMAL, PTHREAD_PRIO_INHERIT, false, false },
	{ "pi robust", PTHREAD_MUTEX_NORMAL, PTHREAD_PRIO_INHERIT, true, false },
	{ "pi recursive", PTHREAD_MUTEX_RECURSIVE, PTHREAD_PRIO_INHERIT, false, false },
	{ "pi errorcheck", PTHREAD_MUTEX_ERRORCHECK, PTHREAD_PRIO_INHERIT, false, false },
	{ "pshared normal", PTHREAD_MUTEX_NORMAL, PTHREAD_PRIO_NONE, false, true },
	{ "pshared pi", PTHREAD_MUTEX_NORMAL, PTHREAD_PRIO_INHERIT, false, true },
	{ "robust", PTHREAD_MUTEX_NORMAL, PTHREAD_PRIO_NONE, true, false },
	{ "recursive", PTHREAD_MUTEX_RECURSIVE, PTHREAD_PRIO_NONE, false, false },
	{ "pshared pi robust", PTHREAD_MUTEX_NORMAL, PTHREAD_PRIO_INHERIT, true, true },
};
#define NKINDS ((int)(sizeof kinds / sizeof kinds[0]))
#define NRUNS (2 * NKINDS) /* each kind with and without SA_RESTART */

static double run_budget(void)
{
	double s = total_seconds / NRUNS;
	return s < 0.3 ? 0.3 : s;
}

/* ---- shared state ---- */

enum flavour { F_WAIT, F_TIMEDWAIT, F_CLOCK_MONO, F_CLOCK_REAL, NFLAVOURS };

static const char *const flavour_names[NFLAVOURS] = {
	"pthread_cond_wait",
	"pthread_cond_timedwait",
	"pthread_cond_clockwait(MONOTONIC)",
	"pthread_cond_clockwait(REALTIME)",
};

/* where an unexpected return code came from */
enum site { S_LOCK = 1, S_UNLOCK, S_TRYLOCK, S_WAIT, S_TIMEOUT_UNTIMED, S_SIGNAL, S_BROADCAST, S_CANCEL_UNLOCK };

static const char *const site_names[] = {
	"?", "pthread_mutex_lock", "pthread_mutex_unlock", "pthread_mutex_trylock (recursive relock)",
	"a wait", "pthread_cond_wait (ETIMEDOUT from an untimed wait)", "pthread_cond_signal",
	"pthread_cond_broadcast", "pthread_mutex_unlock in the cancellation cleanup",
};

/*
 * What each thread last began, for the stall report: each thread stores
 * its own phase (relaxed: only reported, nothing is synchronized by it)
 * before every call that may block, and counts the changes, so that the
 * stall watchdog can tell how long a thread has been in its phase.
 */
enum phase {
	PH_START, PH_LOCK, PH_TRYLOCK, PH_CS, PH_WAIT, PH_UNLOCK, PH_SIGNAL, PH_BROADCAST, PH_SLEEP, PH_YIELD,
	PH_KILL, PH_CANCEL, PH_TRYJOIN, PH_CREATE, PH_WATCH, PH_JOIN, PH_DESTROY, PH_CLEANUP, PH_DONE, NPHASES
};

static const char *const phase_names[NPHASES] = {
	"starting",
	"pthread_mutex_lock",
	"pthread_mutex_trylock",
	"in the critical section (no call)",
	"a wait on the condition",
	"pthread_mutex_unlock",
	"pthread_cond_signal",
	"pthread_cond_broadcast",
	"sleeping (nanosleep)",
	"sched_yield",
	"tgkill (pester signal)",
	"pthread_cancel",
	"pthread_tryjoin_np",
	"pthread_create (a replacement waiter)",
	"checking the run (no call)",
	"pthread_timedjoin_np",
	"pthread_cond_destroy",
	"the cancellation cleanup's pthread_mutex_unlock",
	"returned",
};

struct who {
	_Atomic pid_t tid;	     /* set by the thread; kept after it exits */
	_Atomic int phase;	     /* enum phase */
	_Atomic unsigned long steps; /* phase changes (one writer at a time) */
};

/* The who records: the main thread, the waiter slots, the producers, the pester. */
enum { WHO_MAIN, WHO_WAITER, WHO_PRODUCER = WHO_WAITER + NWAIT, WHO_PESTER = WHO_PRODUCER + NPROD, NWHO };

/* The calling thread's record (none: phase does nothing). */
static _Thread_local struct who *self_who;

static void phase(enum phase p)
{
	struct who *w = self_who;
	if (!w)
		return;
	atomic_store_explicit(&w->phase, (int)p, memory_order_relaxed);
	atomic_store_explicit(&w->steps, atomic_load_explicit(&w->steps, memory_order_relaxed) + 1,
			      memory_order_relaxed);
}

static void who_start(struct who *w)
{
	self_who = w;
	atomic_store_explicit(&w->tid, test_gettid(), memory_order_relaxed);
	phase(PH_START);
}

struct torture;

struct slot {
	struct torture *t;
	int index;
	int prio;
	uint32_t rng;		    /* the waiter thread's */
	long entries;		    /* the waiter thread's; read after joining it */
	pthread_t thread;	    /* main thread: */
	bool live;		    /*   started, not joined */
	bool cancelling;	    /*   pthread_cancel sent, not joined */
	int64_t cancel_ns;	    /*   when */
	_Atomic pid_t tid;	    /* 0: no thread (or it is leaving) */
	_Atomic int64_t wait_since; /* CLOCK_MONOTONIC start of its current wait, 0 outside */
	_Atomic int flavour;
};

struct producer {
	struct torture *t;
	int id;
	uint32_t rng;
	pthread_t thread;
};

struct torture {
	pthread_mutex_t m;
	pthread_cond_t c;
	const struct kind *k;
	bool restart;
	clockid_t cond_clock;
	int run;

	/* under m */
	int items;
	int stop;
	volatile long counter; /* non-atomic on purpose */

	/* read by the watchdog without the mutex */
	_Atomic int items_pub;
	_Atomic int64_t items_since;	/* items became > 0 (0: items == 0) */
	_Atomic int64_t last_change;	/* items last changed */
	_Atomic int notifying;		/* posts whose signal/broadcast has not returned yet */
	_Atomic int64_t last_notify_ns; /* the last signal/broadcast returned */
	_Atomic int last_notify_how;	/* bit 0 broadcast, bit 1 without the mutex, bit 2 by main */
	_Atomic int64_t next_post_ns;	/* when a producer will next try to post */
	_Atomic int untimed_only;	/* phase: waits without a deadline only */
	_Atomic int stop_producers, stop_pester, stop_stall;
	int64_t start_ns; /* CLOCK_MONOTONIC when the run began */

	_Atomic int inside, overlaps;
	_Atomic int errors, first_error; /* site * 1000 + return code */
	_Atomic long entries_total;
	long main_entries;

	/* statistics */
	_Atomic long posted, consumed, posts, signals, broadcasts, unheld;
	_Atomic long waits[NFLAVOURS];
	_Atomic long timeouts, spurious;
	_Atomic long cancels, cancelled_in_wait, replaced;
	_Atomic long pester_sent;

	struct slot slots[NWAIT];
	struct producer producers[NPROD];
	pthread_t pester;
	uint32_t pester_rng;
	pthread_t stall;
	struct who who[NWHO];
};

static _Atomic long pester_handled;

/* Does nothing but count (a lock-free atomic: async-signal-safe). */
static void pester_handler(int sig)
{
	(void)sig;
	atomic_fetch_add_explicit(&pester_handled, 1, memory_order_relaxed);
}

static void t_error(struct torture *t, enum site site, int r)
{
	int zero = 0;
	atomic_fetch_add(&t->errors, 1);
	atomic_compare_exchange_strong(&t->first_error, &zero, (int)site * 1000 + r);
}

static void cs_enter(struct torture *t, long *entries)
{
	if (atomic_fetch_add(&t->inside, 1) != 0)
		atomic_fetch_add(&t->overlaps, 1);
	long c = t->counter;
	for (int k = 0; k < 4; k++)
		__asm__ volatile("" ::: "memory");
	t->counter = c + 1;
	(*entries)++;
}

static void cs_leave(struct torture *t)
{
	atomic_fetch_sub(&t->inside, 1);
}

static void t_lock(struct torture *t)
{
	phase(PH_LOCK);
	int r = pthread_mutex_lock(&t->m);
	if (r == EOWNERDEAD) {
		t_error(t, S_LOCK, r);
		pthread_mutex_consistent(&t->m);
	} else if (r != 0) {
		t_error(t, S_LOCK, r);
	}
	phase(PH_CS);
}

static void t_unlock(struct torture *t)
{
	phase(PH_UNLOCK);
	int r = pthread_mutex_unlock(&t->m);
	if (r != 0)
		t_error(t, S_UNLOCK, r);
}

/* items = n, under m, with the watchdog's view kept in step */
static void set_items(struct torture *t, int n)
{
	int old = t->items;
	int64_t now = now_ns(CLOCK_MONOTONIC);
	t->items = n;
	atomic_store(&t->items_pub, n);
	if (old == 0 && n > 0)
		atomic_store(&t->items_since, now);
	else if (n == 0)
		atomic_store(&t->items_since, 0);
	atomic_store(&t->last_change, now);
}

/* Post k items (under m); the caller notifies, then notify_done. */
static void post_locked(struct torture *t, int k)
{
	atomic_fetch_add(&t->notifying, 1);
	set_items(t, t->items + k);
	atomic_fetch_add(&t->posted, k);
	atomic_fetch_add(&t->posts, 1);
}

static void notify(struct torture *t, bool broadcast, int k)
{
	int r;
	phase(broadcast ? PH_BROADCAST : PH_SIGNAL);
	if (broadcast) {
		atomic_fetch_add(&t->broadcasts, 1);
		if ((r = pthread_cond_broadcast(&t->c)) != 0)
			t_error(t, S_BROADCAST, r);
		return;
	}
	for (int i = 0; i < k; i++) {
		atomic_fetch_add(&t->signals, 1);
		if ((r = pthread_cond_signal(&t->c)) != 0)
			t_error(t, S_SIGNAL, r);
	}
}

static void notify_done(struct torture *t, int how)
{
	if (how & 2)
		atomic_fetch_add(&t->unheld, 1);
	atomic_store(&t->last_notify_how, how);
	atomic_store(&t->last_notify_ns, now_ns(CLOCK_MONOTONIC));
	atomic_fetch_sub(&t->notifying, 1);
}

static struct timespec ns_to_ts(int64_t ns)
{
	struct timespec ts = { .tv_sec = (time_t)(ns / NSEC_PER_SEC), .tv_nsec = (long)(ns % NSEC_PER_SEC) };
	return ts;
}

/* A deadline on clock 0-2 ms after the next post is due (or after now),
 * now and then one already past. */
static struct timespec wait_deadline(struct torture *t, uint32_t *rng, clockid_t clock)
{
	int64_t now_m = now_ns(CLOCK_MONOTONIC);
	int64_t next = atomic_load(&t->next_post_ns);
	int64_t base = next > now_m && next - now_m < 3 * MS ? next : now_m;
	int64_t target = rnd(rng) % 16 == 0 ? now_m - 100000 : base + (int64_t)(rnd(rng) % 2001) * 1000;
	int64_t now_c = clock == CLOCK_MONOTONIC ? now_m : now_ns(clock);
	return ns_to_ts(now_c + (target - now_m));
}

/* ---- waiters ---- */

/* Cancelled in the wait: the mutex is ours again. */
static void waiter_cancelled(void *arg)
{
	struct slot *s = arg;
	struct torture *t = s->t;
	cs_enter(t, &s->entries);
	atomic_store(&s->wait_since, 0);
	atomic_fetch_add(&t->cancelled_in_wait, 1);
	cs_leave(t);
	atomic_store(&s->tid, 0);
	phase(PH_CLEANUP);
	int r = pthread_mutex_unlock(&t->m);
	if (r != 0)
		t_error(t, S_CANCEL_UNLOCK, r);
}

static int do_wait(struct torture *t, struct slot *s, enum flavour f)
{
	struct timespec dl;
	switch (f) {
	case F_WAIT:
		return pthread_cond_wait(&t->c, &t->m);
	case F_TIMEDWAIT:
		dl = wait_deadline(t, &s->rng, t->cond_clock);
		return pthread_cond_timedwait(&t->c, &t->m, &dl);
	case F_CLOCK_MONO:
		dl = wait_deadline(t, &s->rng, CLOCK_MONOTONIC);
		return pthread_cond_clockwait(&t->c, &t->m, CLOCK_MONOTONIC, &dl);
	default:
		dl = wait_deadline(t, &s->rng, CLOCK_REALTIME);
		return pthread_cond_clockwait(&t->c, &t->m, CLOCK_REALTIME, &dl);
	}
}

/* Cancellation is enabled only inside the wait, whose cleanup handler
 * unlocks the mutex. */
static void *waiter_main(void *arg)
{
	struct slot *s = arg;
	struct torture *t = s->t;
	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL);
	who_start(&t->who[WHO_WAITER + s->index]);
	atomic_store(&s->tid, test_gettid());
	for (;;) {
		t_lock(t);
		cs_enter(t, &s->entries);
		while (t->items == 0 && !t->stop) {
			enum flavour f = F_WAIT;
			if (!atomic_load(&t->untimed_only) && rnd(&s->rng) % 2)
				f = (enum flavour)(1 + rnd(&s->rng) % 3);
			atomic_fetch_add(&t->waits[f], 1);
			atomic_store(&s->flavour, (int)f);
			atomic_store(&s->wait_since, now_ns(CLOCK_MONOTONIC));
			cs_leave(t);
			int r;
			pthread_cleanup_push(waiter_cancelled, s);
			pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, NULL);
			phase(PH_WAIT);
			r = do_wait(t, s, (enum flavour)atomic_load(&s->flavour));
			pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL);
			pthread_cleanup_pop(0);
			phase(PH_CS);
			cs_enter(t, &s->entries);
			atomic_store(&s->wait_since, 0);
			if (r == ETIMEDOUT && atomic_load(&s->flavour) != F_WAIT)
				atomic_fetch_add(&t->timeouts, 1);
			else if (r == ETIMEDOUT)
				t_error(t, S_TIMEOUT_UNTIMED, r);
			else if (r != 0)
				t_error(t, S_WAIT, r);
			else if (t->items == 0 && !t->stop)
				atomic_fetch_add(&t->spurious, 1);
		}
		if (t->items == 0) { /* stop */
			cs_leave(t);
			t_unlock(t);
			break;
		}
		set_items(t, t->items - 1);
		atomic_fetch_add(&t->consumed, 1);
		cs_leave(t);
		t_unlock(t);
		if (rnd(&s->rng) % 4 == 0) {
			phase(PH_YIELD);
			sched_yield();
		}
	}
	atomic_store(&s->tid, 0);
	phase(PH_DONE);
	return NULL;
}

/* Set under an emulator: see the top. */
static bool emulated;

/* A thread of the run: policy and prio, or SCHED_OTHER if emulated. */
static void start_torture_thread(pthread_t *thread, int policy, int prio, void *(*fn)(void *), void *arg)
{
	if (emulated) {
		policy = SCHED_OTHER;
		prio = 0;
	}
	start_thread_sched(thread, policy, prio, -1, fn, arg);
}

static void start_waiter(struct torture *t, int i)
{
	struct slot *s = &t->slots[i];
	s->rng = seed_for(t->run, 100 + (unsigned)atomic_load(&t->replaced) * NWAIT + (unsigned)i);
	s->entries = 0;
	s->cancelling = false;
	atomic_store(&s->tid, 0);
	atomic_store(&s->wait_since, 0);
	phase(PH_CREATE);
	start_torture_thread(&s->thread, SCHED_FIFO, s->prio, waiter_main, s);
	s->live = true;
}

/* ---- producers ---- */

static void *producer_main(void *arg)
{
	struct producer *p = arg;
	struct torture *t = p->t;
	long entries = 0;
	who_start(&t->who[WHO_PRODUCER + p->id]);
	while (!atomic_load(&t->stop_producers)) {
		int64_t pause = 50000 + (int64_t)(rnd(&p->rng) % 450001);
		atomic_store(&t->next_post_ns, now_ns(CLOCK_MONOTONIC) + pause);
		struct timespec ts = ns_to_ts(pause);
		phase(PH_SLEEP);
		clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, NULL);
		t_lock(t);
		int depth = 1;
		if (t->k->type == PTHREAD_MUTEX_RECURSIVE && rnd(&p->rng) % 2) {
			phase(PH_TRYLOCK);
			int r = pthread_mutex_trylock(&t->m);
			if (r == 0)
				depth = 2;
			else
				t_error(t, S_TRYLOCK, r);
		}
		cs_enter(t, &entries);
		if (t->items != 0 || atomic_load(&t->stop_producers)) {
			cs_leave(t);
			while (depth-- > 0)
				t_unlock(t);
			continue;
		}
		int k = rnd(&p->rng) % 4 == 0 ? 2 + (int)(rnd(&p->rng) % 2) : 1;
		post_locked(t, k);
		/* bit 0 broadcast (one time in four), bit 1 without the mutex */
		int how = (rnd(&p->rng) % 4 == 0 ? 1 : 0) | (rnd(&p->rng) % 2 ? 2 : 0);
		if (!(how & 2))
			notify(t, how & 1, k);
		cs_leave(t);
		while (depth-- > 0)
			t_unlock(t);
		if (how & 2)
			notify(t, how & 1, k);
		notify_done(t, how);
	}
	atomic_fetch_add(&t->entries_total, entries);
	phase(PH_DONE);
	return NULL;
}

/* ---- the pester ---- */

static void *pester_main(void *arg)
{
	struct torture *t = arg;
	pid_t pid = getpid();
	who_start(&t->who[WHO_PESTER]);
	while (!atomic_load(&t->stop_pester)) {
		struct timespec ts = { 0, (50 + (long)(rnd(&t->pester_rng) % 451)) * 1000 };
		phase(PH_SLEEP);
		clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, NULL);
		/* Mostly a waiter that is in a wait, else anybody. */
		int i = (int)(rnd(&t->pester_rng) % NWAIT);
		if (rnd(&t->pester_rng) % 4 != 0)
			for (int j = 0; j < NWAIT; j++) {
				int c = (i + j) % NWAIT;
				if (atomic_load(&t->slots[c].wait_since) != 0) {
					i = c;
					break;
				}
			}
		pid_t tid = atomic_load(&t->slots[i].tid);
		phase(PH_KILL);
		if (tid != 0 && syscall(SYS_tgkill, pid, tid, SIG_PESTER) == 0)
			atomic_fetch_add(&t->pester_sent, 1);
	}
	phase(PH_DONE);
	return NULL;
}

/* ---- the main thread: watchdog, canceller ---- */

struct text {
	char buf[6000];
	size_t used;
};

static void text_add(struct text *x, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void text_add(struct text *x, const char *fmt, ...)
{
	if (x->used >= sizeof x->buf - 1)
		return;
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(x->buf + x->used, sizeof x->buf - x->used, fmt, ap);
	va_end(ap);
	if (n > 0)
		x->used += (size_t)n;
	if (x->used >= sizeof x->buf)
		x->used = sizeof x->buf - 1;
}

static const char *notify_name(int how)
{
	static const char *const names[] = { "signal holding the mutex", "broadcast holding the mutex",
					     "signal without the mutex", "broadcast without the mutex" };
	return names[how & 3];
}

static void who_role(int i, char *out, size_t size)
{
	static const char *const names[] = { "main thread", "waiter w0", "waiter w1", "waiter w2", "waiter w3",
					     "waiter w4", "waiter w5", "producer 0", "producer 1", "pester" };
	_Static_assert(sizeof names / sizeof names[0] == NWHO, "a name per who record");
	if (emulated)
		snprintf(out, size, "%s (SCHED_OTHER: emulated)", names[i]);
	else if (i == WHO_MAIN)
		snprintf(out, size, "main thread (FIFO %d)", MAIN_PRIO);
	else if (i < WHO_PRODUCER)
		snprintf(out, size, "waiter w%d (FIFO %d)", i - WHO_WAITER, waiter_prio[i - WHO_WAITER]);
	else if (i == WHO_PRODUCER)
		snprintf(out, size, "producer 0 (SCHED_OTHER)");
	else if (i < WHO_PESTER)
		snprintf(out, size, "producer %d (FIFO %d)", i - WHO_PRODUCER, PRODUCER_PRIO);
	else
		snprintf(out, size, "pester (FIFO %d)", PESTER_PRIO);
}

/* One thread's role, what it last began and its kernel state. */
static void who_describe(struct torture *t, int i, char *out, size_t size)
{
	char role[64], task[400];
	struct who *w = &t->who[i];
	pid_t tid = atomic_load_explicit(&w->tid, memory_order_relaxed);
	int ph = atomic_load_explicit(&w->phase, memory_order_relaxed);
	who_role(i, role, sizeof role);
	if (tid == 0) {
		snprintf(out, size, "%s: not started", role);
		return;
	}
	task_describe(tid, task, sizeof task);
	snprintf(out, size, "%s: %s; %s", role, phase_names[ph >= 0 && ph < NPHASES ? ph : 0], task);
}

/* The run's state, for a failure message. */
static void describe(struct torture *t, struct text *x)
{
	int64_t now = now_ns(CLOCK_MONOTONIC);
	text_add(x, "\n  waiters:");
	for (int i = 0; i < NWAIT; i++) {
		struct slot *s = &t->slots[i];
		pid_t tid = atomic_load(&s->tid);
		int64_t ws = atomic_load(&s->wait_since);
		text_add(x, "\n    w%d FIFO %d, tid %d (kernel state %c)%s: ", i, s->prio, (int)tid,
			 tid ? task_state(tid) : '-', s->cancelling ? ", cancelled" : "");
		if (!s->live)
			text_add(x, "no thread");
		else if (ws)
			text_add(x, "in %s for %lld ms", flavour_names[atomic_load(&s->flavour) % NFLAVOURS],
				 (long long)((now - ws) / MS));
		else
			text_add(x, "not in a wait");
	}
	int64_t since = atomic_load(&t->items_since), last = atomic_load(&t->last_notify_ns);
	text_add(x, "\n  items %d (pending for %lld ms), %ld posted, %ld consumed; last notify %s%s %lld ms ago, "
		    "%d notify call(s) under way; phase: %s",
		 atomic_load(&t->items_pub), since ? (long long)((now - since) / MS) : 0LL, atomic_load(&t->posted),
		 atomic_load(&t->consumed), notify_name(atomic_load(&t->last_notify_how)),
		 atomic_load(&t->last_notify_how) & 4 ? " (main thread, next to a cancel)" : "",
		 last ? (long long)((now - last) / MS) : -1LL, atomic_load(&t->notifying),
		 atomic_load(&t->untimed_only) ? "untimed waits only" : "mixed waits");
	text_add(x, "\n  %ld pester signals sent (SA_RESTART %s), %ld cancels (%ld in a wait), %ld spurious returns",
		 atomic_load(&t->pester_sent), t->restart ? "on" : "off", atomic_load(&t->cancels),
		 atomic_load(&t->cancelled_in_wait), atomic_load(&t->spurious));
	text_add(x, "\n  condition words:");
	const uint32_t *w = (const uint32_t *)&t->c;
	for (size_t i = 0; i < sizeof t->c / 4; i++)
		text_add(x, " %08x", w[i]);
	text_add(x, "\n  mutex words:");
	w = (const uint32_t *)&t->m;
	for (size_t i = 0; i < sizeof t->m / 4; i++)
		text_add(x, " %08x", w[i]);
	text_add(x, "\n  seed %llu (STRESS_SEED=%llu), run %d", base_seed, base_seed, t->run);
}

static void torture_fail(struct torture *t, struct text *x) __attribute__((noreturn));

static void torture_fail(struct torture *t, struct text *x)
{
	char line[500];
	text_add(x, "\n  each thread: what it last began, its kernel state:");
	for (int i = 0; i < NWHO; i++) {
		who_describe(t, i, line, sizeof line);
		text_add(x, "\n    %s", line);
	}
	describe(t, x);
	printf("FAILURE: %s\n", x->buf);
	fflush(stdout);
	ck_abort_msg("%s", x->buf);
	abort(); /* not reached */
}

static const char *run_name(struct torture *t)
{
	static char name[80];
	snprintf(name, sizeof name, "%s, %s", t->k->name, t->restart ? "SA_RESTART" : "no SA_RESTART");
	return name;
}

static void main_lock(struct torture *t)
{
	struct timespec dl = deadline_in_ms(CLOCK_REALTIME, JOIN_MS);
	phase(PH_LOCK);
	int r = pthread_mutex_timedlock(&t->m, &dl);
	if (r != 0) {
		struct text x = { .used = 0 };
		text_add(&x, "%s: the main thread could not lock the mutex within %d ms: %s", run_name(t), JOIN_MS,
			 strerror(r));
		torture_fail(t, &x);
	}
	phase(PH_CS);
	cs_enter(t, &t->main_entries);
}

static void main_unlock(struct torture *t)
{
	cs_leave(t);
	t_unlock(t);
}

/* producers_running: items == 0 for long means a stuck producer. */
static void watchdog(struct torture *t, bool producers_running)
{
	phase(PH_WATCH);
	int64_t now = now_ns(CLOCK_MONOTONIC);
	int64_t since = atomic_load(&t->items_since);
	struct text x = { .used = 0 };
	if (since == 0) {
		int64_t last = atomic_load(&t->last_change);
		if (producers_running && now - last > STUCK_MS * MS) {
			text_add(&x, "%s: nothing posted or consumed for %lld ms (a producer is stuck?)", run_name(t),
				 (long long)((now - last) / MS));
			torture_fail(t, &x);
		}
		return;
	}
	if (now - since < LOST_MS * MS)
		return;
	int notifying = atomic_load(&t->notifying);
	int64_t last_notify = atomic_load(&t->last_notify_ns);
	int culprit = -1;
	int64_t oldest = INT64_MAX;
	for (int i = 0; i < NWAIT; i++) {
		int64_t ws = atomic_load(&t->slots[i].wait_since);
		if (ws != 0 && ws < since && ws < oldest) {
			oldest = ws;
			culprit = i;
		}
	}
	if (atomic_load(&t->items_since) != since)
		return; /* consumed meanwhile */
	if (culprit >= 0 && notifying == 0 && now - last_notify > LOST_MS * MS) {
		struct slot *s = &t->slots[culprit];
		text_add(&x,
			 "%s: LOST WAKE-UP: %d item(s) available for %lld ms and not consumed, the last %s returned "
			 "%lld ms ago, while waiter w%d (FIFO %d) has been in %s since %lld us before they were "
			 "posted",
			 run_name(t), atomic_load(&t->items_pub), (long long)((now - since) / MS),
			 notify_name(atomic_load(&t->last_notify_how)), (long long)((now - last_notify) / MS), culprit,
			 s->prio, flavour_names[atomic_load(&s->flavour) % NFLAVOURS],
			 (long long)((since - oldest) / 1000));
		torture_fail(t, &x);
	}
	if (now - since > STUCK_MS * MS) {
		text_add(&x, "%s: STUCK: %d item(s) available for %lld ms and not consumed", run_name(t),
			 atomic_load(&t->items_pub), (long long)((now - since) / MS));
		torture_fail(t, &x);
	}
}

static void cancel_slot(struct torture *t, int i)
{
	struct slot *s = &t->slots[i];
	phase(PH_CANCEL);
	int r = pthread_cancel(s->thread);
	ck_assert_msg(r == 0, "pthread_cancel: %s", strerror(r));
	s->cancelling = true;
	s->cancel_ns = now_ns(CLOCK_MONOTONIC);
	atomic_fetch_add(&t->cancels, 1);
}

/* Cancel a waiter that is in a wait, alone or right before or after a
 * post and its signal/broadcast (holding the mutex or not). */
static void cancel_one(struct torture *t, uint32_t *rng)
{
	int cancelling = 0;
	for (int i = 0; i < NWAIT; i++)
		cancelling += t->slots[i].cancelling || !t->slots[i].live;
	if (cancelling >= MAX_CANCELLING)
		return;
	int victim = -1, start = (int)(rnd(rng) % NWAIT);
	for (int j = 0; j < NWAIT && victim < 0; j++) {
		struct slot *s = &t->slots[(start + j) % NWAIT];
		if (s->live && !s->cancelling && atomic_load(&s->wait_since) != 0)
			victim = s->index;
	}
	if (victim < 0)
		return;
	unsigned mode = rnd(rng) % 6;
	if (mode < 2) {
		cancel_slot(t, victim);
		return;
	}
	main_lock(t);
	if (t->items != 0) {
		main_unlock(t);
		cancel_slot(t, victim);
		return;
	}
	bool bc = rnd(rng) % 4 == 0;
	post_locked(t, 1);
	switch (mode) {
	case 2:
		notify(t, bc, 1);
		cancel_slot(t, victim);
		main_unlock(t);
		break;
	case 3:
		cancel_slot(t, victim);
		notify(t, bc, 1);
		main_unlock(t);
		break;
	case 4:
		main_unlock(t);
		cancel_slot(t, victim);
		notify(t, bc, 1);
		break;
	default:
		main_unlock(t);
		notify(t, bc, 1);
		cancel_slot(t, victim);
		break;
	}
	notify_done(t, (bc ? 1 : 0) | (mode >= 4 ? 2 : 0) | 4);
}

/* Join cancelled waiters that have exited; replace them (only while no
 * item is pending) if replace. */
static void reap(struct torture *t, bool replace)
{
	int64_t now = now_ns(CLOCK_MONOTONIC);
	for (int i = 0; i < NWAIT; i++) {
		struct slot *s = &t->slots[i];
		if (!s->live || !s->cancelling)
			continue;
		void *ret;
		phase(PH_TRYJOIN);
		int r = pthread_tryjoin_np(s->thread, &ret);
		if (r == 0) {
			ck_assert_msg(ret == PTHREAD_CANCELED, "%s: cancelled waiter w%d exited without being cancelled",
				      run_name(t), i);
			atomic_fetch_add(&t->entries_total, s->entries);
			s->live = false;
			s->cancelling = false;
			continue;
		}
		ck_assert_msg(r == EBUSY, "pthread_tryjoin_np: %s", strerror(r));
		if (now - s->cancel_ns > JOIN_MS * MS) {
			struct text x = { .used = 0 };
			text_add(&x, "%s: waiter w%d, cancelled %lld ms ago, has not exited", run_name(t), i,
				 (long long)((now - s->cancel_ns) / MS));
			torture_fail(t, &x);
		}
	}
	if (!replace || atomic_load(&t->items_pub) != 0)
		return;
	for (int i = 0; i < NWAIT; i++)
		if (!t->slots[i].live) {
			start_waiter(t, i);
			atomic_fetch_add(&t->replaced, 1);
		}
}

static void join_or_fail(struct torture *t, pthread_t th, void **ret, int64_t deadline_ns, const char *what, int i)
{
	struct timespec dl = ns_to_ts(deadline_ns);
	phase(PH_JOIN);
	int r = pthread_timedjoin_np(th, ret, &dl);
	if (r != 0) {
		struct text x = { .used = 0 };
		text_add(&x, "%s: %s %d did not finish within %d ms of being told to (%s)", run_name(t), what, i,
			 JOIN_MS, strerror(r));
		torture_fail(t, &x);
	}
}

/* ---- the stall watchdog ---- */

/* The stall report goes straight to a file descriptor: vsnprintf and
 * write only, nothing allocated and no stdio lock that a stuck thread of
 * this process might hold. */
static void write_out(int fd, const char *buf, size_t len)
{
	size_t done = 0;
	/* Ends: every turn writes something or gives up (EINTR: again). */
	while (done < len) {
		ssize_t w = write(fd, buf + done, len - done);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return;
		done += (size_t)w;
	}
}

static void report(int fd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void report(int fd, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	if (n > 0)
		write_out(fd, buf, (size_t)n < sizeof buf ? (size_t)n : sizeof buf - 1);
}

/* /proc/sys/kernel/sched_rt_runtime_us, the RT throttling budget ("?"). */
static void rt_runtime(char *out, size_t size)
{
	snprintf(out, size, "?");
	int fd = open("/proc/sys/kernel/sched_rt_runtime_us", O_RDONLY);
	if (fd < 0)
		return;
	ssize_t n = read(fd, out, size - 1);
	close(fd);
	if (n <= 0) {
		snprintf(out, size, "?");
		return;
	}
	out[n] = '\0';
	out[strcspn(out, "\n")] = '\0';
}

/* Every thread and (but for a warm-up) the run's description, to fd. */
static void stall_report(struct torture *t, const int64_t changed[NWHO], int64_t now, int fd, bool warm_up)
{
	char line[500], rt[32];
	long long stalled_ms = (long long)((now - changed[WHO_MAIN]) / MS);
	rt_runtime(rt, sizeof rt);
	report(fd, "\nFAILURE: %s, %s: STALL: the main thread has made no progress for %lld ms (none of its calls "
	       "takes more than %d ms)\n  run %d of %d, %.1f s after its start, budget %.1f s (Check's timeout "
	       "%.1f s); condition clock %s; seed %llu (STRESS_SEED=%llu); sched_rt_runtime_us %s\n"
	       "  each thread: what it last began, how long ago (as seen every %d ms), its kernel state:\n",
	       t->k->name, t->restart ? "SA_RESTART" : "no SA_RESTART", stalled_ms, JOIN_MS, t->run, NRUNS,
	       (double)(now - t->start_ns) / 1e9, run_budget(), run_budget() + HARNESS_SLACK_S,
	       t->cond_clock == CLOCK_MONOTONIC ? "MONOTONIC" : "REALTIME", base_seed, base_seed, rt, STALL_TICK_MS);
	for (int i = 0; i < NWHO; i++) {
		who_describe(t, i, line, sizeof line);
		report(fd, "    %s (its last change %lld ms ago)\n", line, (long long)((now - changed[i]) / MS));
	}
	if (warm_up)
		return; /* describe reads the main thread's plain fields */
	struct text x = { .used = 0 };
	describe(t, &x);
	text_add(&x, "\n");
	write_out(fd, x.buf, x.used);
}

/* The main thread has not changed phase since changed[WHO_MAIN]: report
 * and fail the test. */
static void stall_fail(struct torture *t, const int64_t changed[NWHO], int64_t now) __attribute__((noreturn));

static void stall_fail(struct torture *t, const int64_t changed[NWHO], int64_t now)
{
	long long stalled_ms = (long long)((now - changed[WHO_MAIN]) / MS);
	stall_report(t, changed, now, STDOUT_FILENO, false);
	/* If the report cannot reach Check (its pipe's lock held by a stuck
	 * thread), SIGALRM still ends the process, the report printed. */
	alarm(10);
	const char *fork_mode = getenv("CK_FORK");
	if (fork_mode && strcmp(fork_mode, "no") == 0)
		abort(); /* Check would longjmp onto the main thread's stack from this one */
	ck_abort_msg("%s, %s: STALL: the main thread made no progress for %lld ms (report above)", t->k->name,
		     t->restart ? "SA_RESTART" : "no SA_RESTART", stalled_ms);
	abort(); /* not reached */
}

/*
 * Above every thread of the run, so that no worker keeps it off the CPU.
 * It looks every STALL_TICK_MS and fails the test once the main thread
 * has not changed phase for STALL_MS, both in wall time and on its own
 * count of the time it could run: each tick counts at its real length up
 * to STALL_STEP_MAX_MS, so that a machine that runs nobody (suspended, or
 * a virtual machine descheduled) does not pass for a hang.
 *
 * Once every thread has started it writes the report to /dev/null: under
 * qemu-user, code runs only once translated, and translating takes a lock
 * of qemu's that a stuck thread may hold; the report's code is translated
 * by then.
 */
static void *stall_main(void *arg)
{
	struct torture *t = arg;
	unsigned long seen[NWHO];
	bool warmed_up = false;
	int64_t changed[NWHO], last = now_ns(CLOCK_MONOTONIC), counted = 0, main_counted = 0;
	for (int i = 0; i < NWHO; i++) {
		seen[i] = atomic_load_explicit(&t->who[i].steps, memory_order_relaxed);
		changed[i] = last;
	}
	/* Ends: when the main thread sets stop_stall, or at a stall, which
	 * ends the process. */
	while (!atomic_load(&t->stop_stall)) {
		nap_us(STALL_TICK_MS * 1000);
		int64_t now = now_ns(CLOCK_MONOTONIC), step = now - last;
		last = now;
		counted += step < STALL_STEP_MAX_MS * MS ? step : STALL_STEP_MAX_MS * MS;
		for (int i = 0; i < NWHO; i++) {
			unsigned long steps = atomic_load_explicit(&t->who[i].steps, memory_order_relaxed);
			if (steps != seen[i]) {
				seen[i] = steps;
				changed[i] = now;
				if (i == WHO_MAIN)
					main_counted = counted;
			}
		}
		if (now - changed[WHO_MAIN] > STALL_MS * MS && counted - main_counted > STALL_MS * MS)
			stall_fail(t, changed, now);
		bool started = true;
		for (int i = 0; i < NWHO; i++)
			started &= atomic_load_explicit(&t->who[i].tid, memory_order_relaxed) != 0;
		if (started && !warmed_up) {
			int fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
			if (fd >= 0) {
				stall_report(t, changed, now, fd, true);
				close(fd);
			}
			warmed_up = true;
		}
	}
	return NULL;
}

static int destroy_fn(void *c)
{
	return pthread_cond_destroy(c);
}

static void init_sync(struct torture *t)
{
	const struct kind *k = t->k;
	pthread_mutexattr_t ma;
	ck_assert_int_eq(pthread_mutexattr_init(&ma), 0);
	ck_assert_int_eq(pthread_mutexattr_settype(&ma, k->type), 0);
	ck_assert_int_eq(pthread_mutexattr_setprotocol(&ma, k->protocol), 0);
	if (k->robust)
		ck_assert_int_eq(pthread_mutexattr_setrobust(&ma, PTHREAD_MUTEX_ROBUST), 0);
	if (k->pshared)
		ck_assert_int_eq(pthread_mutexattr_setpshared(&ma, PTHREAD_PROCESS_SHARED), 0);
	ck_assert_int_eq(pthread_mutex_init(&t->m, &ma), 0);
	ck_assert_int_eq(pthread_mutexattr_destroy(&ma), 0);
	pthread_condattr_t ca;
	ck_assert_int_eq(pthread_condattr_init(&ca), 0);
	ck_assert_int_eq(pthread_condattr_setclock(&ca, t->cond_clock), 0);
	if (k->pshared)
		ck_assert_int_eq(pthread_condattr_setpshared(&ca, PTHREAD_PROCESS_SHARED), 0);
	ck_assert_int_eq(pthread_cond_init(&t->c, &ca), 0);
	ck_assert_int_eq(pthread_condattr_destroy(&ca), 0);
}

static void install_pester_handler(bool restart)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = pester_handler;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = restart ? SA_RESTART : 0;
	ck_assert_int_eq(sigaction(SIG_PESTER, &sa, NULL), 0);
}

START_TEST(test_torture)
{
	const struct kind *k = &kinds[_i / 2];
	bool restart = !(_i & 1);
	const char *variant = restart ? "SA_RESTART" : "no SA_RESTART";
	if (!emulated && !rt_available()) {
		if (under_ci())
			ck_abort_msg("%s, %s: SCHED_FIFO refused, and CI=true requires real-time priority", k->name,
				     variant);
		SKIP_TEST("SCHED_FIFO refused (%s, %s)", k->name, variant);
	}
	ck_assert_msg(emulated || try_fifo(MAIN_PRIO), "SCHED_FIFO %d refused", MAIN_PRIO);
	install_pester_handler(restart);
	atomic_store(&pester_handled, 0);

	double secs = run_budget();
	struct torture *t = k->pshared ? shared_alloc(sizeof *t) : calloc(1, sizeof *t);
	ck_assert_ptr_nonnull(t);
	t->k = k;
	t->restart = restart;
	t->run = _i;
	t->cond_clock = ((_i / 2) + _i) & 1 ? CLOCK_MONOTONIC : CLOCK_REALTIME;
	t->pester_rng = seed_for(_i, 1);
	uint32_t rng = seed_for(_i, 2);
	init_sync(t);
	int64_t now = now_ns(CLOCK_MONOTONIC);
	atomic_store(&t->last_change, now);
	t->start_ns = now;
	who_start(&t->who[WHO_MAIN]);
	start_torture_thread(&t->stall, SCHED_FIFO, STALL_PRIO, stall_main, t);

	for (int i = 0; i < NWAIT; i++) {
		t->slots[i].t = t;
		t->slots[i].index = i;
		t->slots[i].prio = waiter_prio[i];
		start_waiter(t, i);
	}
	for (int i = 0; i < NPROD; i++) {
		struct producer *p = &t->producers[i];
		p->t = t;
		p->id = i;
		p->rng = seed_for(_i, 10 + (unsigned)i);
		if (i == 0)
			start_torture_thread(&p->thread, SCHED_OTHER, 0, producer_main, p);
		else
			start_torture_thread(&p->thread, SCHED_FIFO, PRODUCER_PRIO, producer_main, p);
	}
	start_torture_thread(&t->pester, SCHED_FIFO, PESTER_PRIO, pester_main, t);

	/* Run: watch, switch phases, cancel. */
	now = now_ns(CLOCK_MONOTONIC);
	int64_t end = now + (int64_t)(secs * 1e9);
	int64_t next_phase = now + (20 + rnd(&rng) % 180) * MS;
	int64_t next_cancel = now + (2 + rnd(&rng) % 18) * MS;
	long phases = 0;
	while ((now = now_ns(CLOCK_MONOTONIC)) < end) {
		phase(PH_SLEEP);
		sleep_ms(1);
		reap(t, true);
		watchdog(t, true);
		now = now_ns(CLOCK_MONOTONIC);
		if (now >= next_phase) {
			atomic_store(&t->untimed_only, !atomic_load(&t->untimed_only));
			next_phase = now + (20 + rnd(&rng) % 180) * MS;
			phases++;
		}
		if (now >= next_cancel) {
			cancel_one(t, &rng);
			next_cancel = now + (2 + rnd(&rng) % 18) * MS;
		}
	}

	/* Producers stop; what they posted is consumed; the cancelled are
	 * joined (and not replaced). */
	atomic_store(&t->stop_producers, 1);
	int64_t deadline = now_ns(CLOCK_REALTIME) + JOIN_MS * MS;
	for (int i = 0; i < NPROD; i++)
		join_or_fail(t, t->producers[i].thread, NULL, deadline, "producer", i);
	int64_t drain_end = now_ns(CLOCK_MONOTONIC) + (STUCK_MS + 2000) * MS;
	for (;;) {
		reap(t, false);
		watchdog(t, false);
		bool cancelling = false;
		for (int i = 0; i < NWAIT; i++)
			cancelling |= t->slots[i].cancelling;
		if (atomic_load(&t->items_pub) == 0 && !cancelling)
			break;
		if (now_ns(CLOCK_MONOTONIC) > drain_end) {
			struct text x = { .used = 0 };
			text_add(&x, "%s: the last items were not consumed within %d ms of the producers' stop",
				 run_name(t), STUCK_MS + 2000);
			torture_fail(t, &x);
		}
		phase(PH_SLEEP);
		sleep_ms(1);
	}
	atomic_store(&t->stop_pester, 1);
	join_or_fail(t, t->pester, NULL, now_ns(CLOCK_REALTIME) + JOIN_MS * MS, "pester", 0);

	/* One broadcast must release every waiter. */
	main_lock(t);
	t->stop = 1;
	int r = pthread_cond_broadcast(&t->c);
	main_unlock(t);
	ck_assert_int_eq(r, 0);
	deadline = now_ns(CLOCK_REALTIME) + JOIN_MS * MS;
	for (int i = 0; i < NWAIT; i++) {
		struct slot *s = &t->slots[i];
		if (!s->live)
			continue;
		void *ret = NULL;
		struct timespec dl = ns_to_ts(deadline);
		phase(PH_JOIN);
		r = pthread_timedjoin_np(s->thread, &ret, &dl);
		if (r != 0) {
			struct text x = { .used = 0 };
			text_add(&x, "%s: waiter w%d did not return within %d ms of the final broadcast (lost wake-up?)",
				 run_name(t), i, JOIN_MS);
			torture_fail(t, &x);
		}
		ck_assert_msg(ret == NULL, "%s: waiter w%d was cancelled after the run", run_name(t), i);
		atomic_fetch_add(&t->entries_total, s->entries);
		s->live = false;
	}

	/* Nobody waits now: destroy returns at once. */
	struct call dc;
	int64_t t0 = now_ns(CLOCK_MONOTONIC);
	phase(PH_DESTROY);
	call_start(&dc, destroy_fn, &t->c);
	if (!call_done_within(&dc, DESTROY_MS)) {
		struct text x = { .used = 0 };
		text_add(&x, "%s: pthread_cond_destroy with every waiter gone did not return within %d ms", run_name(t),
			 DESTROY_MS);
		torture_fail(t, &x);
	}
	double destroy_ms = (double)(now_ns(CLOCK_MONOTONIC) - t0) / 1e6;
	r = call_join(&dc);
	/* Before the checks below: a failed check (longjmp without CK_FORK)
	 * must not leave it watching a main thread that has moved on. */
	atomic_store(&t->stop_stall, 1);
	ck_assert_int_eq(pthread_join(t->stall, NULL), 0);
	self_who = NULL;
	ck_assert_msg(r == 0, "%s: pthread_cond_destroy returned %d", run_name(t), r);
	ck_assert_int_eq(pthread_mutex_destroy(&t->m), 0);
	atomic_fetch_add(&t->entries_total, t->main_entries);

	long waits = 0;
	for (int f = 0; f < NFLAVOURS; f++)
		waits += atomic_load(&t->waits[f]);
	printf("%-32s %.1f s: %ld items in %ld posts (%ld signals, %ld broadcasts, %ld without the mutex); "
	       "%ld waits (%ld wait, %ld timedwait, %ld clockwait), %ld timeouts, %ld spurious; %ld cancelled "
	       "(%ld in a wait); %ld pester signals sent, %ld handled; %ld phases; destroy %.2f ms\n",
	       run_name(t), secs, atomic_load(&t->posted), atomic_load(&t->posts), atomic_load(&t->signals),
	       atomic_load(&t->broadcasts), atomic_load(&t->unheld), waits, atomic_load(&t->waits[F_WAIT]),
	       atomic_load(&t->waits[F_TIMEDWAIT]),
	       atomic_load(&t->waits[F_CLOCK_MONO]) + atomic_load(&t->waits[F_CLOCK_REAL]),
	       atomic_load(&t->timeouts), atomic_load(&t->spurious), atomic_load(&t->cancels),
	       atomic_load(&t->cancelled_in_wait), atomic_load(&t->pester_sent), atomic_load(&pester_handled),
	       phases, destroy_ms);
	fflush(stdout);

	int errors = atomic_load(&t->errors), first = atomic_load(&t->first_error);
	ck_assert_msg(errors == 0, "%s: %d unexpected return codes, the first from %s: %d (%s)", run_name(t), errors,
		      site_names[first / 1000 < (int)(sizeof site_names / sizeof site_names[0]) ? first / 1000 : 0],
		      first % 1000, strerror(first % 1000));
	ck_assert_msg(atomic_load(&t->overlaps) == 0, "%s: %d mutual-exclusion violations", run_name(t),
		      atomic_load(&t->overlaps));
	ck_assert_msg(t->counter == atomic_load(&t->entries_total),
		      "%s: the counter under the mutex is %ld after %ld critical sections", run_name(t), t->counter,
		      atomic_load(&t->entries_total));
	ck_assert_int_eq(t->items, 0);
	ck_assert_int_eq(atomic_load(&t->posted), atomic_load(&t->consumed));
	ck_assert_int_gt(atomic_load(&t->posted), 0);
	if (k->pshared)
		shared_free(t, sizeof *t);
	else
		free(t);
	set_other();
}
END_TEST

static Suite *cond_torture_suite(void)
{
	Suite *s = suite_create("cond_torture");
	TCase *tc = tcase_create("torture");
	tcase_set_timeout(tc, run_budget() + HARNESS_SLACK_S);
	tcase_add_loop_test(tc, test_torture, 0, NRUNS);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	const char *env = getenv("STRESS_DURATION");
	if (env && atof(env) > 0)
		total_seconds = atof(env);
	env = getenv("STRESS_SEED");
	if (env && *env)
		base_seed = strtoull(env, NULL, 0);
	else
		base_seed = (unsigned long long)(now_ns(CLOCK_REALTIME) ^ ((int64_t)getpid() << 20)) % 1000000000ull;
	emulated = test_emulator() != NULL;
	printf("cond_torture: %d runs, %.1f s each (STRESS_DURATION=%g); seed %llu (STRESS_SEED=%llu repeats it)\n", NRUNS,
	       run_budget(), total_seconds, base_seed, base_seed);
	if (emulated)
		printf("cond_torture: under %s every thread runs SCHED_OTHER (see the top of the source)\n",
		       test_emulator());
	fflush(stdout);
	return run_suite(cond_torture_suite());
}
