/*
 * Bad input, one row at a time, for every exported function: each row
 * builds its objects, makes one call with an input that POSIX lets an
 * implementation detect (garbage or destroyed objects, invalid attribute
 * values, clocks and timespecs, a caller that does not own the mutex,
 * counts out of range, objects destroyed while in use, ...) and reports
 * what the call returned.  Where the call could leave a valid object
 * damaged, the row then checks that the object still works.
 * tests/integration/bad_input.sh runs this program on glibc and under
 * LD_PRELOAD and compares the two row by row.
 *
 * Every row runs in a forked child of its own, so that a crash or a hang
 * is a result: the parent kills a child still running at the row's time
 * limit.  Output, after one "# library: ..." line, one line per row:
 *
 *   ROW-ID <TAB> function <TAB> description <TAB> outcome
 *
 * outcome is one of
 *   0, EINVAL, EBUSY, ...        what the call returned (an errno name)
 *   SERIAL                       PTHREAD_BARRIER_SERIAL_THREAD
 *   thrd_success, thrd_error ... a C11 result
 *   void                         a void function returned
 *   n/a                          a function with no bad input to detect
 *   absent                       glibc has no such function (rtpthread's own)
 *   a number                     a count the function returned
 *   SETUP(err)                   the row's objects could not be built (glibc
 *                                has no robust priority-protect mutex)
 *   SKIP                         SCHED_FIFO refused
 *   CRASH(SIGxxx), HANG          the child died, or was still running
 * followed, for rows with a post-condition, by "; state ok" or
 * "; state corrupt (the step that failed)".  The rows of the library's own
 * functions (absent from glibc: nothing to compare with) state the one
 * result the library documents; another is "; state corrupt (expected X)".
 *
 * Usage: bad_input [-j JOBS] [-v] [-l] [ROW-ID...]
 *   -j  children run at once (default 4)   -v  keep the children's stderr
 *   -l  list the rows without running them
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <threads.h>
#include <time.h>
#include <unistd.h>

#include "../../include/rtpthread.h"
#include "testlib.h"

/* A row still running after this is a hang: every call here answers at
 * once or after SHORT_MS, and a post-condition takes a few WAIT_MS steps
 * only when something is already wrong. */
#define ROW_TIMEOUT_MS 1500
#define BASE_PRIO 5	/* SCHED_FIFO rows run here ... */
#define CEILING 10	/* ... below the ceiling of their PP mutexes ... */
#define HIGH_PRIO 20	/* ... except the rows that lock from above it */
#define SHORT_MS 100	/* deadline of a call that is expected to time out */
#define WAIT_MS 1000	/* how long a helper thread may take for one step */

/* ---- rows ---- */

enum result { R_ERRNO, R_THRD, R_BARRIER, R_VOID, R_NONE, R_COUNT };

enum {
	F_FIFO = 1, /* run the row at SCHED_FIFO BASE_PRIO */
	F_HIGH = 2, /* run the row at SCHED_FIFO HIGH_PRIO */
};

struct row {
	const char *id;
	const char *fn;
	const char *desc;
	enum result kind;
	int (*call)(const struct row *);
	/* NULL if the object is fine, NOSTATE if there is nothing to check,
	 * else what failed. */
	const char *(*check)(const struct row *, int res);
	long a, b, c;
	int (*set)(void *, int);
	int (*get)(void *, int *);
	int flags;
	const char *expect; /* the library's own functions: its documented outcome */
};

static const char nostate[] = "";
#define NOSTATE nostate

/* Results that are not the call's own. */
#define RES_SETUP_BASE (-100000)
#define RES_SETUP(e) (RES_SETUP_BASE - (e))
#define RES_SKIP (-200000)
#define RES_HUNG (-300000)   /* a helper thread did not finish its step */
#define RES_ABSENT (-400000) /* the function is the library's own: glibc has none */

static bool res_is_own(int res)
{
	return res > RES_SETUP_BASE;
}

/* ---- small utilities ---- */

static char detail[256];

static const char *fmt(const char *format, ...) __attribute__((format(printf, 1, 2)));
static const char *fmt(const char *format, ...)
{
	va_list ap;
	va_start(ap, format);
	vsnprintf(detail, sizeof detail, format, ap);
	va_end(ap);
	return detail;
}

static const char *errname(int e)
{
	static char buf[32];
	if (e == 0)
		return "0";
	if (e == RES_HUNG)
		return "hang";
	const char *name = e > 0 ? strerrorname_np(e) : NULL;
	if (name)
		return name;
	snprintf(buf, sizeof buf, "%d", e);
	return buf;
}

static const char *thrdname(int r)
{
	switch (r) {
	case thrd_success:
		return "thrd_success";
	case thrd_busy:
		return "thrd_busy";
	case thrd_error:
		return "thrd_error";
	case thrd_nomem:
		return "thrd_nomem";
	case thrd_timedout:
		return "thrd_timedout";
	default:
		return errname(r);
	}
}

/* Versioned names that no header declares (aliases, compat versions). */
static void *sym(const char *name, const char *version)
{
	return dlvsym(RTLD_DEFAULT, name, version);
}

/* The harness waits with raw futexes: the functions under test never
 * coordinate the test itself. */
static long futex(_Atomic uint32_t *word, int op, uint32_t value, const struct timespec *rel)
{
	return syscall(SYS_futex, word, op, value, rel, NULL, 0);
}

/* ---- the row's threads ---- */

static pid_t main_tid;
static int base_policy, base_prio;

/*
 * A helper thread that runs one function at a time on request, so that a
 * row can say "thread A locks m" and wait for the answer with a time
 * limit.  Idle, it sleeps on `posted`.
 */
struct agent {
	pthread_t thread;
	bool started;
	_Atomic uint32_t posted, finished;
	_Atomic pid_t tid;
	int (*fn)(void *);
	void *arg;
	_Atomic int result;
};

static struct agent A, B;

static void *agent_main(void *arg)
{
	struct agent *a = arg;
	atomic_store(&a->tid, gettid());
	uint32_t seen = 0;
	for (;;) {
		uint32_t now;
		while ((now = atomic_load(&a->posted)) == seen)
			futex(&a->posted, FUTEX_WAIT_PRIVATE, seen, NULL);
		seen = now;
		atomic_store(&a->result, a->fn(a->arg));
		atomic_store(&a->finished, seen);
		futex(&a->finished, FUTEX_WAKE_PRIVATE, INT_MAX, NULL);
	}
	return NULL;
}

static void agent_post(struct agent *a, int (*fn)(void *), void *arg)
{
	if (!a->started) {
		if (pthread_create(&a->thread, NULL, agent_main, a) != 0)
			_exit(3);
		a->started = true;
		while (atomic_load(&a->tid) == 0)
			sched_yield();
	}
	a->fn = fn;
	a->arg = arg;
	atomic_fetch_add(&a->posted, 1);
	futex(&a->posted, FUTEX_WAKE_PRIVATE, 1, NULL);
}

/* The result of the posted step, or RES_HUNG after ms. */
static int agent_wait(struct agent *a, long ms)
{
	int64_t end = now_ms() + ms;
	uint32_t want = atomic_load(&a->posted), done;
	while ((done = atomic_load(&a->finished)) != want) {
		if (now_ms() >= end)
			return RES_HUNG;
		struct timespec rel = { 0, 10 * 1000000L };
		futex(&a->finished, FUTEX_WAIT_PRIVATE, done, &rel);
	}
	return atomic_load(&a->result);
}

static int agent_call(struct agent *a, int (*fn)(void *), void *arg)
{
	agent_post(a, fn, arg);
	return agent_wait(a, WAIT_MS);
}

/* Is the thread asleep in futex(2) on a word other than `idle`, or in
 * futex_waitv(2)?  Read from /proc/self/task/TID/syscall: "NR arg0 ...". */
static bool blocked_in_futex(pid_t tid, const void *idle)
{
	char buf[256];
	if (!task_read(tid, "syscall", buf, sizeof buf))
		return false;
	long nr;
	unsigned long arg0;
	if (sscanf(buf, "%ld %lx", &nr, &arg0) != 2)
		return false;
	if (nr == SYS_futex_waitv) /* rtpthread_cond_waitany_np */
		return true;
	return nr == SYS_futex && (const void *)arg0 != idle;
}

static bool wait_blocked_tid(pid_t tid, const void *idle)
{
	for (int i = 0; i < WAIT_MS; i++) {
		if (blocked_in_futex(tid, idle))
			return true;
		sleep_ms(1);
	}
	return false;
}

/* The agent is blocked in the call it was posted. */
static bool wait_blocked(struct agent *a)
{
	return wait_blocked_tid(atomic_load(&a->tid), &a->posted);
}

/* ---- scheduling ---- */

static bool sched_is(pid_t tid, int policy, int prio)
{
	struct sched_param p;
	int pol = sched_getscheduler(tid);
	if (pol < 0 || sched_getparam(tid, &p) != 0)
		return false;
	return (pol & ~SCHED_RESET_ON_FORK) == policy && p.sched_priority == prio;
}

static const char *sched_text(pid_t tid)
{
	static char buf[32];
	struct sched_param p = { 0 };
	int pol = sched_getscheduler(tid);
	sched_getparam(tid, &p);
	snprintf(buf, sizeof buf, "%s/%d", (pol & ~SCHED_RESET_ON_FORK) == SCHED_FIFO ? "FIFO" : "OTHER",
		 p.sched_priority);
	return buf;
}

/* Every thread of the row runs at the priority it started with (a PP
 * ceiling given back, none taken over). */
static const char *priorities_at_base(void)
{
	if (!sched_is(0, base_policy, base_prio))
		return fmt("caller runs at %s after the row", sched_text(0));
	struct agent *agents[] = { &A, &B };
	for (int i = 0; i < 2; i++)
		if (agents[i]->started && !sched_is(agents[i]->tid, base_policy, base_prio))
			return fmt("thread %c runs at %s after the row", "AB"[i], sched_text(agents[i]->tid));
	return NULL;
}

/* ---- objects ---- */

static pthread_mutex_t mx, mx2;
static pthread_cond_t cv;
static pthread_barrier_t bar;
static mtx_t xm;
static cnd_t xc;
static union {
	pthread_mutex_t m;
	pthread_cond_t c;
	pthread_barrier_t b;
	pthread_mutexattr_t ma;
	pthread_condattr_t ca;
	pthread_barrierattr_t ba;
	mtx_t x;
	cnd_t y;
	unsigned char bytes[64];
} junk;

enum pattern { P_VALID, P_DESTROYED, P_FF, P_A5, P_RAND };
static const char *const pattern_tag[] = { "valid", "destroyed", "0xff", "0xa5", "random" };
static const char *const pattern_desc[] = { "valid", "destroyed", "bytes 0xff", "bytes 0xa5", "random bytes" };

/* "destroyed mutex", "mutex of bytes 0xff", ... */
static const char *object_desc(const char *object, enum pattern pat);

/* Uninitialized memory: one byte value, or a fixed pseudo-random sequence. */
static void fill(void *p, size_t n, enum pattern pat)
{
	unsigned char *bytes = p;
	uint64_t x = 0x9e3779b97f4a7c15ull;
	for (size_t i = 0; i < n; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		bytes[i] = pat == P_FF ? 0xff : pat == P_A5 ? 0xa5 : (unsigned char)(x >> 32);
	}
}

/* A mutex kind: type (2 bits) | protocol << 2 | robust << 4. */
enum { P_NONE, P_PI, P_PP };
#define COMBO(type, proto, robust) ((long)(type) | (long)(proto) << 2 | (long)(robust) << 4)
#define C_TYPE(c) ((int)((c)&3))
#define C_PROTO(c) ((int)(((c) >> 2) & 3))
#define C_ROBUST(c) ((int)(((c) >> 4) & 1))
static const char *const type_tag[] = { "NORMAL", "RECURSIVE", "ERRORCHECK", "ADAPTIVE" };
static const char *const proto_tag[] = { "NONE", "PI", "PP" };

static int make_mutex(pthread_mutex_t *m, long combo)
{
	static const int protocols[] = { PTHREAD_PRIO_NONE, PTHREAD_PRIO_INHERIT, PTHREAD_PRIO_PROTECT };
	pthread_mutexattr_t a;
	int e = pthread_mutexattr_init(&a);
	if (!e)
		e = pthread_mutexattr_settype(&a, C_TYPE(combo));
	if (!e)
		e = pthread_mutexattr_setprotocol(&a, protocols[C_PROTO(combo)]);
	if (!e && C_PROTO(combo) == P_PP)
		e = pthread_mutexattr_setprioceiling(&a, CEILING);
	if (!e && C_ROBUST(combo))
		e = pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
	if (!e)
		e = pthread_mutex_init(m, &a);
	pthread_mutexattr_destroy(&a);
	return e;
}

static int make_cond(pthread_cond_t *c, bool pshared, clockid_t clock)
{
	pthread_condattr_t a;
	int e = pthread_condattr_init(&a);
	if (!e && pshared)
		e = pthread_condattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
	if (!e)
		e = pthread_condattr_setclock(&a, clock);
	if (!e)
		e = pthread_cond_init(c, &a);
	pthread_condattr_destroy(&a);
	return e;
}

/* A setup step that must succeed (or give `want`); a step that is itself
 * a setup passes its failure on unchanged. */
#define SETUP_WANT(expr, want)                                                \
	do {                                                                  \
		int e_ = (expr);                                              \
		if (e_ != (want))                                             \
			return e_ <= RES_SETUP_BASE ? e_ : RES_SETUP(e_ ? e_ : EPROTO); \
	} while (0)
#define SETUP(expr) SETUP_WANT(expr, 0)

/* A post-condition step. */
#define WANT(expr, want, what)                                         \
	do {                                                           \
		int got_ = (expr);                                     \
		if (got_ != (want))                                    \
			return fmt("%s: %s", (what), errname(got_));   \
	} while (0)
#define WANT_THRD(expr, want, what)                                    \
	do {                                                           \
		int got_ = (expr);                                     \
		if (got_ != (want))                                    \
			return fmt("%s: %s", (what), thrdname(got_));  \
	} while (0)

/* ---- what the helper threads do ---- */

static int ag_lock(void *m)
{
	return pthread_mutex_lock(m);
}

static int ag_trylock(void *m)
{
	return pthread_mutex_trylock(m);
}

static int ag_unlock(void *m)
{
	return pthread_mutex_unlock(m);
}

static int ag_consistent(void *m)
{
	return pthread_mutex_consistent(m);
}

static int ag_lock_and_exit(void *m)
{
	pthread_mutex_lock(m);
	pthread_exit(NULL);
}

/* Lets the caller block on the mutex first. */
static int ag_unlock_later(void *m)
{
	sleep_ms(50);
	return pthread_mutex_unlock(m);
}

static int ag_cond_wait(void *unused)
{
	(void)unused;
	int e = pthread_mutex_lock(&mx);
	if (e)
		return e;
	int r = pthread_cond_wait(&cv, &mx);
	e = pthread_mutex_unlock(&mx);
	return r ? r : e;
}

/* Signals cv once the main thread sleeps (in its wait). */
static int ag_signal_main(void *unused)
{
	(void)unused;
	if (!wait_blocked_tid(main_tid, NULL))
		return RES_HUNG;
	int e = pthread_mutex_lock(&mx);
	if (e)
		return e;
	pthread_cond_signal(&cv);
	return pthread_mutex_unlock(&mx);
}

static int ag_barrier_wait(void *b)
{
	return pthread_barrier_wait(b);
}

static int ag_mtx_lock(void *m)
{
	return mtx_lock(m);
}

static int ag_mtx_trylock(void *m)
{
	return mtx_trylock(m);
}

static int ag_mtx_unlock(void *m)
{
	return mtx_unlock(m);
}

static int ag_mtx_unlock_later(void *m)
{
	sleep_ms(50);
	return mtx_unlock(m);
}

static int ag_cnd_wait(void *unused)
{
	(void)unused;
	int e = mtx_lock(&xm);
	if (e != thrd_success)
		return e;
	int r = cnd_wait(&xc, &xm);
	e = mtx_unlock(&xm);
	return r != thrd_success ? r : e;
}

static int ag_cnd_signal_main(void *unused)
{
	(void)unused;
	if (!wait_blocked_tid(main_tid, NULL))
		return RES_HUNG;
	int e = mtx_lock(&xm);
	if (e != thrd_success)
		return e;
	cnd_signal(&xc);
	return mtx_unlock(&xm);
}

/* The thread locks m and exits holding it: a dead owner. */
static void agent_exit_holding(struct agent *a, pthread_mutex_t *m)
{
	agent_post(a, ag_lock_and_exit, m);
	pthread_join(a->thread, NULL);
	a->started = false;
	atomic_store(&a->posted, 0);
	atomic_store(&a->finished, 0);
	atomic_store(&a->tid, 0);
}

/* A dead owner, then a locker that gives up on the state: unrecoverable. */
static int make_unrecoverable(pthread_mutex_t *m)
{
	agent_exit_holding(&A, m);
	SETUP_WANT(agent_call(&B, ag_lock, m), EOWNERDEAD);
	SETUP(agent_call(&B, ag_unlock, m));
	return 0;
}

/* ---- shared post-conditions ---- */

/* mx is free: another thread and the caller each lock and unlock it, it
 * can be destroyed, and nobody is left at a PP ceiling. */
static const char *mutex_usable(void)
{
	WANT(agent_call(&B, ag_trylock, &mx), 0, "other thread's trylock");
	WANT(agent_call(&B, ag_unlock, &mx), 0, "other thread's unlock");
	WANT(pthread_mutex_trylock(&mx), 0, "caller's trylock");
	WANT(pthread_mutex_unlock(&mx), 0, "caller's unlock");
	WANT(pthread_mutex_destroy(&mx), 0, "destroy");
	return priorities_at_base();
}

static const char *mtx_usable(void)
{
	WANT_THRD(agent_call(&B, ag_mtx_trylock, &xm), thrd_success, "other thread's mtx_trylock");
	WANT_THRD(agent_call(&B, ag_mtx_unlock, &xm), thrd_success, "other thread's mtx_unlock");
	WANT_THRD(mtx_trylock(&xm), thrd_success, "caller's mtx_trylock");
	WANT_THRD(mtx_unlock(&xm), thrd_success, "caller's mtx_unlock");
	mtx_destroy(&xm);
	return NULL;
}

/* cv still works with mx (free): a waiter is woken by a signal; then both
 * can be destroyed. */
static const char *cond_usable(void)
{
	agent_post(&A, ag_cond_wait, NULL);
	if (!wait_blocked(&A))
		return "a new waiter never blocked";
	WANT(pthread_mutex_lock(&mx), 0, "lock to signal");
	WANT(pthread_cond_signal(&cv), 0, "signal");
	WANT(pthread_mutex_unlock(&mx), 0, "unlock after signal");
	WANT(agent_wait(&A, WAIT_MS), 0, "signalled waiter");
	WANT(pthread_cond_destroy(&cv), 0, "cond destroy");
	WANT(pthread_mutex_destroy(&mx), 0, "mutex destroy");
	return priorities_at_base();
}

static const char *cnd_usable(void)
{
	agent_post(&A, ag_cnd_wait, NULL);
	if (!wait_blocked(&A))
		return "a new waiter never blocked";
	WANT_THRD(mtx_lock(&xm), thrd_success, "mtx_lock to signal");
	WANT_THRD(cnd_signal(&xc), thrd_success, "cnd_signal");
	WANT_THRD(mtx_unlock(&xm), thrd_success, "mtx_unlock after signal");
	WANT_THRD(agent_wait(&A, WAIT_MS), thrd_success, "signalled waiter");
	cnd_destroy(&xc);
	mtx_destroy(&xm);
	return NULL;
}

static const char *barrier_usable(void)
{
	agent_post(&A, ag_barrier_wait, &bar);
	int mine = pthread_barrier_wait(&bar);
	int theirs = agent_wait(&A, WAIT_MS);
	if (!((mine == 0 && theirs == PTHREAD_BARRIER_SERIAL_THREAD) ||
	      (mine == PTHREAD_BARRIER_SERIAL_THREAD && theirs == 0)))
		return fmt("a round of two returned %d and %d", mine, theirs);
	WANT(pthread_barrier_destroy(&bar), 0, "destroy");
	return NULL;
}

/* ================================================================== */
/* Attributes                                                          */
/* ================================================================== */

enum attr_kind { AK_MUTEX, AK_COND, AK_BARRIER, AK_MUTEX_ALIAS };

static int attr_init(enum attr_kind k, void *a)
{
	switch (k) {
	case AK_COND:
		return pthread_condattr_init(a);
	case AK_BARRIER:
		return pthread_barrierattr_init(a);
	default:
		return pthread_mutexattr_init(a);
	}
}

static int attr_destroy(enum attr_kind k, void *a)
{
	switch (k) {
	case AK_COND:
		return pthread_condattr_destroy(a);
	case AK_BARRIER:
		return pthread_barrierattr_destroy(a);
	case AK_MUTEX_ALIAS: {
		int (*f)(pthread_mutexattr_t *) = sym("__pthread_mutexattr_destroy", "GLIBC_2.2.5");
		return f ? f(a) : RES_SETUP(ENOSYS);
	}
	default:
		return pthread_mutexattr_destroy(a);
	}
}

/* An attribute object in the given state (valid ones are fresh defaults). */
static int attr_prepare(enum attr_kind k, enum pattern pat)
{
	if (pat == P_VALID || pat == P_DESTROYED) {
		SETUP(attr_init(k, &junk));
		if (pat == P_DESTROYED)
			SETUP(attr_destroy(k == AK_MUTEX_ALIAS ? AK_MUTEX : k, &junk));
	} else {
		fill(&junk, sizeof junk, pat);
	}
	return 0;
}

/* Typed wrappers: the rows call through one signature.  The _np and __
 * names are found by version, since no header declares them. */
#define SETTER(name, call)                         \
	static int name(void *a, int v)            \
	{                                          \
		return call;                       \
	}
#define GETTER(name, call)                         \
	static int name(void *a, int *v)           \
	{                                          \
		return call;                       \
	}
#define BY_VERSION(type, name, version, ...)                           \
	({                                                             \
		type f_ = sym(name, version);                          \
		f_ ? f_(__VA_ARGS__) : RES_SETUP(ENOSYS);              \
	})
typedef int set_fn(pthread_mutexattr_t *, int);
typedef int get_fn(const pthread_mutexattr_t *, int *);

SETTER(set_mtype, pthread_mutexattr_settype(a, v))
GETTER(get_mtype, pthread_mutexattr_gettype(a, v))
SETTER(set_mtype_alias, BY_VERSION(set_fn *, "__pthread_mutexattr_settype", "GLIBC_2.2.5", a, v))
SETTER(set_mkind_np, BY_VERSION(set_fn *, "pthread_mutexattr_setkind_np", "GLIBC_2.2.5", a, v))
GETTER(get_mkind_np, BY_VERSION(get_fn *, "pthread_mutexattr_getkind_np", "GLIBC_2.2.5", a, v))
SETTER(set_mprotocol, pthread_mutexattr_setprotocol(a, v))
GETTER(get_mprotocol, pthread_mutexattr_getprotocol(a, v))
SETTER(set_mceiling, pthread_mutexattr_setprioceiling(a, v))
GETTER(get_mceiling, pthread_mutexattr_getprioceiling(a, v))
SETTER(set_mpshared, pthread_mutexattr_setpshared(a, v))
GETTER(get_mpshared, pthread_mutexattr_getpshared(a, v))
SETTER(set_mrobust, pthread_mutexattr_setrobust(a, v))
GETTER(get_mrobust, pthread_mutexattr_getrobust(a, v))
SETTER(set_mrobust_np, BY_VERSION(set_fn *, "pthread_mutexattr_setrobust_np", "GLIBC_2.4", a, v))
GETTER(get_mrobust_np, BY_VERSION(get_fn *, "pthread_mutexattr_getrobust_np", "GLIBC_2.4", a, v))
SETTER(set_cclock, pthread_condattr_setclock(a, (clockid_t)v))
GETTER(get_cclock, pthread_condattr_getclock(a, (clockid_t *)v)) /* clockid_t is int */
SETTER(set_cpshared, pthread_condattr_setpshared(a, v))
GETTER(get_cpshared, pthread_condattr_getpshared(a, v))
SETTER(set_bpshared, pthread_barrierattr_setpshared(a, v))
GETTER(get_bpshared, pthread_barrierattr_getpshared(a, v))

static int attr_value_before;

/* a: attr_kind, b: the value, c: the attribute's state (valid/destroyed). */
static int call_attr_set(const struct row *r)
{
	SETUP(attr_prepare((enum attr_kind)r->a, (enum pattern)r->c));
	SETUP(r->get(&junk, &attr_value_before));
	return r->set(&junk, (int)r->b);
}

/* A refused set leaves the attribute as it was. */
static const char *check_attr_set(const struct row *r, int res)
{
	if (res == 0)
		return NOSTATE;
	int now = -12345;
	WANT(r->get(&junk, &now), 0, "get after the refused set");
	if (now != attr_value_before)
		return fmt("value %d became %d", attr_value_before, now);
	return NULL;
}

/* a: attr_kind, c: the attribute's state. */
static int call_attr_get(const struct row *r)
{
	SETUP(attr_prepare((enum attr_kind)r->a, (enum pattern)r->c));
	int v;
	return r->get(&junk, &v);
}

/* destroy(NULL): glibc's attribute destroys touch nothing. */
static int call_attr_destroy_null(const struct row *r)
{
	void *volatile none = NULL; /* declared non-null: hidden from the compiler */
	return attr_destroy((enum attr_kind)r->a, none);
}

static int call_attr_destroy_twice(const struct row *r)
{
	SETUP(attr_prepare((enum attr_kind)r->a, P_DESTROYED));
	return attr_destroy((enum attr_kind)r->a, &junk);
}

/* A function whose every input is acceptable. */
static int call_nothing(const struct row *r)
{
	(void)r;
	return 0;
}

/* rtpthread_mutex_stats(NULL, 8): nowhere to copy to. */
static int call_stats_null(const struct row *r)
{
	(void)r;
	unsigned (*stats)(void *, unsigned) = sym("rtpthread_mutex_stats", "RTPTHREAD_1");
	return stats ? (int)stats(NULL, 8) : RES_ABSENT;
}

/* ================================================================== */
/* Object initialization from bad attributes                           */
/* ================================================================== */

enum init_kind { IK_MUTEX, IK_MUTEX_ALIAS, IK_COND, IK_BARRIER };

/* a: init_kind, b: the attribute's state. */
static int call_init_bad_attr(const struct row *r)
{
	enum init_kind k = (enum init_kind)r->a;
	SETUP(attr_prepare(k == IK_COND ? AK_COND : k == IK_BARRIER ? AK_BARRIER : AK_MUTEX, (enum pattern)r->b));
	switch (k) {
	case IK_MUTEX:
		return pthread_mutex_init(&mx, &junk.ma);
	case IK_MUTEX_ALIAS: {
		int (*f)(pthread_mutex_t *, const pthread_mutexattr_t *) = sym("__pthread_mutex_init", "GLIBC_2.2.5");
		return f ? f(&mx, &junk.ma) : RES_SETUP(ENOSYS);
	}
	case IK_COND:
		return pthread_cond_init(&cv, &junk.ca);
	case IK_BARRIER:
		return pthread_barrier_init(&bar, &junk.ba, 2);
	}
	return RES_SETUP(EPROTO);
}

/* An object made from a destroyed (so default) attribute works. */
static const char *check_init_bad_attr(const struct row *r, int res)
{
	if (res != 0 || r->b != P_DESTROYED)
		return NOSTATE;
	switch ((enum init_kind)r->a) {
	case IK_COND:
		WANT(pthread_mutex_init(&mx, NULL), 0, "mutex init");
		return cond_usable();
	case IK_BARRIER:
		return barrier_usable();
	default:
		return mutex_usable();
	}
}

/* Robust and priority protect together. */
static int call_init_robust_pp(const struct row *r)
{
	(void)r;
	return make_mutex(&mx, COMBO(PTHREAD_MUTEX_NORMAL, P_PP, 1));
}

static const char *check_init_ok(const struct row *r, int res)
{
	(void)r;
	return res == 0 ? mutex_usable() : NOSTATE;
}

/* Init over a mutex the caller holds. */
static int call_init_locked(const struct row *r)
{
	SETUP(make_mutex(&mx, r->a));
	SETUP(pthread_mutex_lock(&mx));
	return pthread_mutex_init(&mx, NULL);
}

/* A PP mutex made from an attribute of bytes 0xa5: protocol PROTECT,
 * ceiling 0x5a5 (1445), far above any priority. */
static int call_lock_ceiling_from_junk(const struct row *r)
{
	(void)r;
	fill(&junk, sizeof junk, P_A5);
	SETUP(pthread_mutex_init(&mx, &junk.ma));
	return pthread_mutex_lock(&mx);
}

static const char *check_lock_ceiling_from_junk(const struct row *r, int res)
{
	(void)r;
	if (res == 0)
		WANT(pthread_mutex_unlock(&mx), 0, "unlock");
	return priorities_at_base();
}

/* ================================================================== */
/* Garbage and destroyed mutexes                                       */
/* ================================================================== */

enum mutex_op {
	MO_LOCK, MO_TRYLOCK, MO_TIMEDLOCK, MO_CLOCKLOCK, MO_UNLOCK, MO_DESTROY, MO_CONSISTENT,
	MO_CONSISTENT_NP, MO_GETCEIL, MO_SETCEIL, MO_ALIAS_LOCK, MO_ALIAS_TRYLOCK, MO_ALIAS_UNLOCK,
	MO_ALIAS_DESTROY, MO_MTX_LOCK, MO_MTX_TRYLOCK, MO_MTX_TIMEDLOCK, MO_MTX_UNLOCK, MO_MTX_DESTROY,
	MO_COND_TIMEDWAIT, MO_CND_TIMEDWAIT, MO_COUNT
};

static const struct {
	const char *tag, *fn;
	enum result kind;
	bool c11;
} mutex_ops[MO_COUNT] = {
	[MO_LOCK] = { "lock", "pthread_mutex_lock", R_ERRNO, false },
	[MO_TRYLOCK] = { "trylock", "pthread_mutex_trylock", R_ERRNO, false },
	[MO_TIMEDLOCK] = { "timedlock", "pthread_mutex_timedlock", R_ERRNO, false },
	[MO_CLOCKLOCK] = { "clocklock", "pthread_mutex_clocklock", R_ERRNO, false },
	[MO_UNLOCK] = { "unlock", "pthread_mutex_unlock", R_ERRNO, false },
	[MO_DESTROY] = { "destroy", "pthread_mutex_destroy", R_ERRNO, false },
	[MO_CONSISTENT] = { "consistent", "pthread_mutex_consistent", R_ERRNO, false },
	[MO_CONSISTENT_NP] = { "consistent_np", "pthread_mutex_consistent_np", R_ERRNO, false },
	[MO_GETCEIL] = { "getprioceiling", "pthread_mutex_getprioceiling", R_ERRNO, false },
	[MO_SETCEIL] = { "setprioceiling", "pthread_mutex_setprioceiling", R_ERRNO, false },
	[MO_ALIAS_LOCK] = { "__lock", "__pthread_mutex_lock", R_ERRNO, false },
	[MO_ALIAS_TRYLOCK] = { "__trylock", "__pthread_mutex_trylock", R_ERRNO, false },
	[MO_ALIAS_UNLOCK] = { "__unlock", "__pthread_mutex_unlock", R_ERRNO, false },
	[MO_ALIAS_DESTROY] = { "__destroy", "__pthread_mutex_destroy", R_ERRNO, false },
	[MO_MTX_LOCK] = { "mtx_lock", "mtx_lock", R_THRD, true },
	[MO_MTX_TRYLOCK] = { "mtx_trylock", "mtx_trylock", R_THRD, true },
	[MO_MTX_TIMEDLOCK] = { "mtx_timedlock", "mtx_timedlock", R_THRD, true },
	[MO_MTX_UNLOCK] = { "mtx_unlock", "mtx_unlock", R_THRD, true },
	[MO_MTX_DESTROY] = { "mtx_destroy", "mtx_destroy", R_VOID, true },
	[MO_COND_TIMEDWAIT] = { "cond_timedwait", "pthread_cond_timedwait", R_ERRNO, false },
	[MO_CND_TIMEDWAIT] = { "cnd_timedwait", "cnd_timedwait", R_THRD, true },
};

typedef int mutex_fn(pthread_mutex_t *);

static int via_alias(const char *name, pthread_mutex_t *m)
{
	mutex_fn *f = sym(name, "GLIBC_2.2.5");
	return f ? f(m) : RES_SETUP(ENOSYS);
}

/* a: mutex_op, b: pattern of the mutex's bytes. */
static int call_mutex_junk(const struct row *r)
{
	enum mutex_op op = (enum mutex_op)r->a;
	pthread_mutex_t *m = &junk.m;
	if (r->b == P_DESTROYED) {
		if (mutex_ops[op].c11) {
			SETUP_WANT(mtx_init(&junk.x, mtx_timed), thrd_success);
			mtx_destroy(&junk.x);
		} else {
			SETUP(pthread_mutex_init(m, NULL));
			SETUP(pthread_mutex_destroy(m));
		}
	} else {
		fill(&junk, sizeof junk, (enum pattern)r->b);
	}
	struct timespec ts = deadline_in_ms(CLOCK_REALTIME, SHORT_MS);
	struct timespec mono = deadline_in_ms(CLOCK_MONOTONIC, SHORT_MS);
	int old = -1;
	switch (op) {
	case MO_LOCK:
		return pthread_mutex_lock(m);
	case MO_TRYLOCK:
		return pthread_mutex_trylock(m);
	case MO_TIMEDLOCK:
		return pthread_mutex_timedlock(m, &ts);
	case MO_CLOCKLOCK:
		return pthread_mutex_clocklock(m, CLOCK_MONOTONIC, &mono);
	case MO_UNLOCK:
		return pthread_mutex_unlock(m);
	case MO_DESTROY:
		return pthread_mutex_destroy(m);
	case MO_CONSISTENT:
		return pthread_mutex_consistent(m);
	case MO_CONSISTENT_NP: {
		mutex_fn *f = sym("pthread_mutex_consistent_np", "GLIBC_2.4");
		return f ? f(m) : RES_SETUP(ENOSYS);
	}
	case MO_GETCEIL:
		return pthread_mutex_getprioceiling(m, &old);
	case MO_SETCEIL:
		return pthread_mutex_setprioceiling(m, CEILING, &old);
	case MO_ALIAS_LOCK:
		return via_alias("__pthread_mutex_lock", m);
	case MO_ALIAS_TRYLOCK:
		return via_alias("__pthread_mutex_trylock", m);
	case MO_ALIAS_UNLOCK:
		return via_alias("__pthread_mutex_unlock", m);
	case MO_ALIAS_DESTROY:
		return via_alias("__pthread_mutex_destroy", m);
	case MO_MTX_LOCK:
		return mtx_lock(&junk.x);
	case MO_MTX_TRYLOCK:
		return mtx_trylock(&junk.x);
	case MO_MTX_TIMEDLOCK:
		return mtx_timedlock(&junk.x, &ts);
	case MO_MTX_UNLOCK:
		return mtx_unlock(&junk.x);
	case MO_MTX_DESTROY:
		mtx_destroy(&junk.x);
		return 0;
	case MO_COND_TIMEDWAIT:
		SETUP(pthread_cond_init(&cv, NULL));
		return pthread_cond_timedwait(&cv, m, &ts);
	case MO_CND_TIMEDWAIT:
		SETUP_WANT(cnd_init(&xc), thrd_success);
		return cnd_timedwait(&xc, &junk.x, &ts);
	case MO_COUNT:
		break;
	}
	return RES_SETUP(EPROTO);
}

/* A condition that met a bad mutex still works with a good one. */
static const char *check_mutex_junk(const struct row *r, int res)
{
	(void)res;
	if (r->a == MO_COND_TIMEDWAIT) {
		WANT(pthread_mutex_init(&mx, NULL), 0, "mutex init");
		return cond_usable();
	}
	if (r->a == MO_CND_TIMEDWAIT) {
		WANT_THRD(mtx_init(&xm, mtx_plain), thrd_success, "mtx_init");
		return cnd_usable();
	}
	return NOSTATE;
}

/* ================================================================== */
/* Every type x protocol x robustness                                  */
/* ================================================================== */

/* a: combo. */
static int call_unlock_nonowner(const struct row *r)
{
	SETUP(make_mutex(&mx, r->a));
	SETUP(agent_call(&A, ag_lock, &mx));
	return pthread_mutex_unlock(&mx);
}

/* Refused: the owner still holds it and can unlock it.  Accepted: the
 * mutex is free for others (the owner is left believing it holds it). */
static const char *check_unlock_nonowner(const struct row *r, int res)
{
	(void)r;
	if (res != 0)
		WANT(agent_call(&A, ag_unlock, &mx), 0, "owner's unlock");
	return mutex_usable();
}

static int call_unlock_unlocked(const struct row *r)
{
	SETUP(make_mutex(&mx, r->a));
	return pthread_mutex_unlock(&mx);
}

static const char *check_unlock_unlocked(const struct row *r, int res)
{
	(void)r;
	(void)res;
	return mutex_usable();
}

static int call_destroy_locked(const struct row *r)
{
	SETUP(make_mutex(&mx, r->a));
	SETUP(pthread_mutex_lock(&mx));
	return pthread_mutex_destroy(&mx);
}

static const char *check_destroy_locked(const struct row *r, int res)
{
	(void)r;
	if (res == 0)
		return NOSTATE;
	WANT(pthread_mutex_unlock(&mx), 0, "owner's unlock");
	return mutex_usable();
}

enum relock_op { RL_LOCK, RL_TRYLOCK, RL_TIMEDLOCK };

/* a: combo, b: relock_op.  The caller already holds the mutex. */
static int call_relock(const struct row *r)
{
	SETUP(make_mutex(&mx, r->a));
	SETUP(pthread_mutex_lock(&mx));
	struct timespec ts = deadline_in_ms(CLOCK_REALTIME, 50);
	switch ((enum relock_op)r->b) {
	case RL_LOCK:
		return pthread_mutex_lock(&mx);
	case RL_TRYLOCK:
		return pthread_mutex_trylock(&mx);
	case RL_TIMEDLOCK:
		return pthread_mutex_timedlock(&mx, &ts);
	}
	return RES_SETUP(EPROTO);
}

static const char *check_relock(const struct row *r, int res)
{
	(void)r;
	WANT(pthread_mutex_unlock(&mx), 0, "owner's unlock");
	if (res == 0)
		WANT(pthread_mutex_unlock(&mx), 0, "owner's second unlock");
	return mutex_usable();
}

/* ================================================================== */
/* Robust mutexes: consistent, unrecoverable                           */
/* ================================================================== */

enum consistent_case { CC_NOT_DEAD, CC_NONOWNER, CC_DEAD_UNLOCKED, CC_UNRECOVERABLE, CC_NOT_ROBUST, CC_NP_NOT_ROBUST };

/* a: consistent_case, b: protocol. */
static int call_consistent(const struct row *r)
{
	int proto = (int)r->b;
	bool robust = r->a != CC_NOT_ROBUST && r->a != CC_NP_NOT_ROBUST;
	SETUP(make_mutex(&mx, COMBO(PTHREAD_MUTEX_NORMAL, proto, robust)));
	switch ((enum consistent_case)r->a) {
	case CC_NOT_DEAD:
	case CC_NOT_ROBUST:
		SETUP(pthread_mutex_lock(&mx));
		return pthread_mutex_consistent(&mx);
	case CC_NP_NOT_ROBUST: {
		SETUP(pthread_mutex_lock(&mx));
		mutex_fn *f = sym("pthread_mutex_consistent_np", "GLIBC_2.4");
		return f ? f(&mx) : RES_SETUP(ENOSYS);
	}
	case CC_NONOWNER:
		agent_exit_holding(&A, &mx);
		SETUP_WANT(agent_call(&B, ag_lock, &mx), EOWNERDEAD);
		return pthread_mutex_consistent(&mx);
	case CC_DEAD_UNLOCKED:
		agent_exit_holding(&A, &mx);
		return pthread_mutex_consistent(&mx);
	case CC_UNRECOVERABLE:
		SETUP(make_unrecoverable(&mx));
		return pthread_mutex_consistent(&mx);
	}
	return RES_SETUP(EPROTO);
}

static const char *check_consistent(const struct row *r, int res)
{
	switch ((enum consistent_case)r->a) {
	case CC_NOT_DEAD:
	case CC_NOT_ROBUST:
	case CC_NP_NOT_ROBUST:
		WANT(pthread_mutex_unlock(&mx), 0, "owner's unlock");
		return mutex_usable();
	case CC_NONOWNER:
		/* B got EOWNERDEAD: unless the call made it consistent already,
		 * B does so; then the mutex is an ordinary one again. */
		if (res != 0)
			WANT(agent_call(&B, ag_consistent, &mx), 0, "owner's consistent");
		WANT(agent_call(&B, ag_unlock, &mx), 0, "owner's unlock");
		return mutex_usable();
	case CC_DEAD_UNLOCKED:
		WANT(agent_call(&B, ag_lock, &mx), EOWNERDEAD, "next locker");
		WANT(agent_call(&B, ag_consistent, &mx), 0, "next locker's consistent");
		WANT(agent_call(&B, ag_unlock, &mx), 0, "next locker's unlock");
		return mutex_usable();
	case CC_UNRECOVERABLE:
		WANT(pthread_mutex_lock(&mx), ENOTRECOVERABLE, "lock");
		WANT(pthread_mutex_destroy(&mx), 0, "destroy");
		return priorities_at_base();
	}
	return NOSTATE;
}

enum unrecoverable_op { UO_LOCK, UO_TRYLOCK, UO_TIMEDLOCK, UO_CLOCKLOCK, UO_UNLOCK };

/* a: unrecoverable_op, b: protocol. */
static int call_unrecoverable(const struct row *r)
{
	SETUP(make_mutex(&mx, COMBO(PTHREAD_MUTEX_NORMAL, r->b, 1)));
	SETUP(make_unrecoverable(&mx));
	struct timespec ts = deadline_in_ms(CLOCK_REALTIME, SHORT_MS);
	struct timespec mono = deadline_in_ms(CLOCK_MONOTONIC, SHORT_MS);
	switch ((enum unrecoverable_op)r->a) {
	case UO_LOCK:
		return pthread_mutex_lock(&mx);
	case UO_TRYLOCK:
		return pthread_mutex_trylock(&mx);
	case UO_TIMEDLOCK:
		return pthread_mutex_timedlock(&mx, &ts);
	case UO_CLOCKLOCK:
		return pthread_mutex_clocklock(&mx, CLOCK_MONOTONIC, &mono);
	case UO_UNLOCK:
		return pthread_mutex_unlock(&mx);
	}
	return RES_SETUP(EPROTO);
}

/* Still unrecoverable for every later locker. */
static const char *check_unrecoverable(const struct row *r, int res)
{
	(void)r;
	if (res == 0 || res == EOWNERDEAD)
		return "an unrecoverable mutex was acquired";
	WANT(agent_call(&B, ag_trylock, &mx), ENOTRECOVERABLE, "other thread's trylock");
	WANT(pthread_mutex_destroy(&mx), 0, "destroy");
	return priorities_at_base();
}

/* The dead owner's successor holds it inconsistent; another thread unlocks. */
static int call_unlock_ownerdead_nonowner(const struct row *r)
{
	SETUP(make_mutex(&mx, COMBO(PTHREAD_MUTEX_NORMAL, r->b, 1)));
	agent_exit_holding(&A, &mx);
	SETUP_WANT(agent_call(&B, ag_lock, &mx), EOWNERDEAD);
	return pthread_mutex_unlock(&mx);
}

static const char *check_unlock_ownerdead_nonowner(const struct row *r, int res)
{
	(void)r;
	if (res == 0)
		return NOSTATE;
	WANT(agent_call(&B, ag_consistent, &mx), 0, "owner's consistent");
	WANT(agent_call(&B, ag_unlock, &mx), 0, "owner's unlock");
	return mutex_usable();
}

/* ================================================================== */
/* Priority protect                                                    */
/* ================================================================== */

enum pp_op { PO_LOCK, PO_TRYLOCK, PO_TIMEDLOCK, PO_CLOCKLOCK };

/* a: pp_op.  From SCHED_FIFO HIGH_PRIO (above the ceiling), or from
 * SCHED_OTHER (b = 1). */
static int call_pp_lock(const struct row *r)
{
	SETUP(make_mutex(&mx, COMBO(PTHREAD_MUTEX_NORMAL, P_PP, 0)));
	struct timespec ts = deadline_in_ms(CLOCK_REALTIME, SHORT_MS);
	struct timespec mono = deadline_in_ms(CLOCK_MONOTONIC, SHORT_MS);
	switch ((enum pp_op)r->a) {
	case PO_LOCK:
		return pthread_mutex_lock(&mx);
	case PO_TRYLOCK:
		return pthread_mutex_trylock(&mx);
	case PO_TIMEDLOCK:
		return pthread_mutex_timedlock(&mx, &ts);
	case PO_CLOCKLOCK:
		return pthread_mutex_clocklock(&mx, CLOCK_MONOTONIC, &mono);
	}
	return RES_SETUP(EPROTO);
}

/* The caller keeps its priority; once below the ceiling it can lock. */
static const char *check_pp_lock(const struct row *r, int res)
{
	(void)r;
	if (res == 0)
		WANT(pthread_mutex_unlock(&mx), 0, "unlock");
	const char *s = priorities_at_base();
	if (s)
		return s;
	struct sched_param p = { .sched_priority = BASE_PRIO };
	WANT(pthread_setschedparam(pthread_self(), SCHED_FIFO, &p), 0, "setschedparam below the ceiling");
	WANT(pthread_mutex_lock(&mx), 0, "lock from below the ceiling");
	WANT(pthread_mutex_unlock(&mx), 0, "unlock");
	if (!sched_is(0, SCHED_FIFO, BASE_PRIO))
		return fmt("caller runs at %s after the unlock", sched_text(0));
	WANT(pthread_mutex_destroy(&mx), 0, "destroy");
	return NULL;
}

static int prioceiling_before;

/* a: the new ceiling; b: the mutex's protocol. */
static int call_setceil(const struct row *r)
{
	SETUP(make_mutex(&mx, COMBO(PTHREAD_MUTEX_NORMAL, r->b, 0)));
	prioceiling_before = -1;
	if (r->b == P_PP)
		SETUP(pthread_mutex_getprioceiling(&mx, &prioceiling_before));
	int old = -1;
	return pthread_mutex_setprioceiling(&mx, (int)r->a, &old);
}

static const char *check_setceil(const struct row *r, int res)
{
	if (r->b != P_PP)
		return NOSTATE;
	int now = -1;
	WANT(pthread_mutex_getprioceiling(&mx, &now), 0, "getprioceiling");
	int want = res == 0 ? (int)r->a : prioceiling_before;
	if (now != want)
		return fmt("ceiling is %d, not %d", now, want);
	return mutex_usable();
}

/* c: pass a NULL result pointer (glibc declares it non-null: hidden). */
static int call_getceil_not_pp(const struct row *r)
{
	SETUP(make_mutex(&mx, COMBO(PTHREAD_MUTEX_NORMAL, r->b, 0)));
	int c = -1;
	int *volatile out = r->c ? NULL : &c;
	return pthread_mutex_getprioceiling(&mx, out);
}

/* a: type.  The caller holds the PP mutex and changes its ceiling. */
static int call_setceil_owner(const struct row *r)
{
	SETUP(make_mutex(&mx, COMBO(r->a, P_PP, 0)));
	SETUP(pthread_mutex_lock(&mx));
	int old = -1;
	return pthread_mutex_setprioceiling(&mx, CEILING + 5, &old);
}

static const char *check_setceil_owner(const struct row *r, int res)
{
	(void)r;
	WANT(pthread_mutex_unlock(&mx), 0, "owner's unlock");
	int now = -1;
	WANT(pthread_mutex_getprioceiling(&mx, &now), 0, "getprioceiling");
	int want = res == 0 ? CEILING + 5 : CEILING;
	if (now != want)
		return fmt("ceiling is %d, not %d", now, want);
	return mutex_usable();
}

static int call_setceil_old_null(const struct row *r)
{
	(void)r;
	SETUP(make_mutex(&mx, COMBO(PTHREAD_MUTEX_NORMAL, P_PP, 0)));
	/* glibc declares it non-null: hide the NULL from the compiler. */
	int *volatile none = NULL;
	return pthread_mutex_setprioceiling(&mx, CEILING + 2, none);
}

static const char *check_setceil_old_null(const struct row *r, int res)
{
	(void)r;
	if (res != 0)
		return mutex_usable();
	int now = -1;
	WANT(pthread_mutex_getprioceiling(&mx, &now), 0, "getprioceiling");
	if (now != CEILING + 2)
		return fmt("ceiling is %d, not %d", now, CEILING + 2);
	return mutex_usable();
}

/* ================================================================== */
/* Deadlines                                                           */
/* ================================================================== */

enum spec { TS_NSEC_NEG, TS_NSEC_1E9, TS_NSEC_MAX, TS_SEC_NEG, TS_PAST, TS_NULL, TS_FAR, TS_COUNT };
static const char *const spec_tag[TS_COUNT] = { "nsec-neg", "nsec-1e9", "nsec-LONG_MAX", "sec-neg",
						"past",	    "NULL",	"far-future" };
static const char *const spec_desc[TS_COUNT] = {
	"tv_nsec -1",
	"tv_nsec 1000000000",
	"tv_nsec LONG_MAX",
	"tv_sec -1",
	"deadline 1 s ago",
	"NULL deadline",
	"tv_sec LONG_MAX, released after 50 ms (expect 0)",
};

/* The bad nanoseconds come with the current second, so that a call that
 * does not check them times out at once instead of looking hung. */
static const struct timespec *make_spec(enum spec s, clockid_t clock, struct timespec *ts)
{
	clock_gettime(clock, ts);
	switch (s) {
	case TS_NSEC_NEG:
		ts->tv_nsec = -1;
		break;
	case TS_NSEC_1E9:
		ts->tv_nsec = 1000000000L;
		break;
	case TS_NSEC_MAX:
		ts->tv_nsec = LONG_MAX;
		break;
	case TS_SEC_NEG:
		ts->tv_sec = -1;
		ts->tv_nsec = 0;
		break;
	case TS_PAST:
		ts->tv_sec -= 1;
		break;
	case TS_NULL:
		return NULL;
	case TS_FAR:
		ts->tv_sec = LONG_MAX;
		ts->tv_nsec = 999999999L;
		break;
	case TS_COUNT:
		break;
	}
	return ts;
}

enum timed_call {
	TC_TIMEDLOCK, TC_CLOCKLOCK_MONO, TC_CLOCKLOCK_REAL, TC_MTX_TIMEDLOCK,
	TC_COND_TIMEDWAIT, TC_COND_TIMEDWAIT_MONOATTR, TC_COND_CLOCKWAIT_MONO, TC_CND_TIMEDWAIT
};

static const struct target {
	const char *tag, *fn, *desc;
	enum timed_call call;
	long combo;
	int flags;
} targets[] = {
	{ "timedlock-NORMAL", "pthread_mutex_timedlock", "NORMAL held by another", TC_TIMEDLOCK, COMBO(0, P_NONE, 0), 0 },
	{ "timedlock-ERRORCHECK-PI", "pthread_mutex_timedlock", "ERRORCHECK PI held by another", TC_TIMEDLOCK,
	  COMBO(2, P_PI, 0), 0 },
	{ "timedlock-NORMAL-PP", "pthread_mutex_timedlock", "NORMAL PP held by another", TC_TIMEDLOCK,
	  COMBO(0, P_PP, 0), F_FIFO },
	{ "timedlock-NORMAL-robust", "pthread_mutex_timedlock", "NORMAL robust held by another", TC_TIMEDLOCK,
	  COMBO(0, P_NONE, 1), 0 },
	{ "timedlock-NORMAL-PI-robust", "pthread_mutex_timedlock", "NORMAL PI robust held by another",
	  TC_TIMEDLOCK, COMBO(0, P_PI, 1), 0 },
	{ "clocklock-MONO-NORMAL", "pthread_mutex_clocklock", "CLOCK_MONOTONIC, NORMAL held by another",
	  TC_CLOCKLOCK_MONO, COMBO(0, P_NONE, 0), 0 },
	{ "clocklock-MONO-PI", "pthread_mutex_clocklock", "CLOCK_MONOTONIC, NORMAL PI held by another",
	  TC_CLOCKLOCK_MONO, COMBO(0, P_PI, 0), 0 },
	{ "clocklock-REAL-NORMAL", "pthread_mutex_clocklock", "CLOCK_REALTIME, NORMAL held by another",
	  TC_CLOCKLOCK_REAL, COMBO(0, P_NONE, 0), 0 },
	{ "mtx_timedlock", "mtx_timedlock", "mtx_timed held by another", TC_MTX_TIMEDLOCK, 0, 0 },
	{ "cond_timedwait-ERRORCHECK", "pthread_cond_timedwait", "ERRORCHECK mutex", TC_COND_TIMEDWAIT,
	  COMBO(2, P_NONE, 0), 0 },
	{ "cond_timedwait-ERRORCHECK-PI", "pthread_cond_timedwait", "ERRORCHECK PI mutex", TC_COND_TIMEDWAIT,
	  COMBO(2, P_PI, 0), 0 },
	{ "cond_timedwait-MONOattr", "pthread_cond_timedwait", "condition on CLOCK_MONOTONIC, ERRORCHECK mutex",
	  TC_COND_TIMEDWAIT_MONOATTR, COMBO(2, P_NONE, 0), 0 },
	{ "cond_clockwait-MONO", "pthread_cond_clockwait", "CLOCK_MONOTONIC, ERRORCHECK mutex",
	  TC_COND_CLOCKWAIT_MONO, COMBO(2, P_NONE, 0), 0 },
	{ "cond_clockwait-MONO-PI", "pthread_cond_clockwait", "CLOCK_MONOTONIC, ERRORCHECK PI mutex",
	  TC_COND_CLOCKWAIT_MONO, COMBO(2, P_PI, 0), 0 },
	{ "cnd_timedwait", "cnd_timedwait", "recursive mtx", TC_CND_TIMEDWAIT, 0, 0 },
};
#define TARGET_COUNT (sizeof targets / sizeof targets[0])

static bool target_is_cond(const struct target *t)
{
	return t->call >= TC_COND_TIMEDWAIT;
}

static clockid_t target_clock(const struct target *t)
{
	switch (t->call) {
	case TC_CLOCKLOCK_MONO:
	case TC_COND_TIMEDWAIT_MONOATTR:
	case TC_COND_CLOCKWAIT_MONO:
		return CLOCK_MONOTONIC;
	default:
		return CLOCK_REALTIME;
	}
}

static int timed(const struct target *t, const struct timespec *dl)
{
	switch (t->call) {
	case TC_TIMEDLOCK:
		return pthread_mutex_timedlock(&mx, dl);
	case TC_CLOCKLOCK_MONO:
		return pthread_mutex_clocklock(&mx, CLOCK_MONOTONIC, dl);
	case TC_CLOCKLOCK_REAL:
		return pthread_mutex_clocklock(&mx, CLOCK_REALTIME, dl);
	case TC_MTX_TIMEDLOCK:
		return mtx_timedlock(&xm, dl);
	case TC_COND_TIMEDWAIT:
	case TC_COND_TIMEDWAIT_MONOATTR:
		return pthread_cond_timedwait(&cv, &mx, dl);
	case TC_COND_CLOCKWAIT_MONO:
		return pthread_cond_clockwait(&cv, &mx, CLOCK_MONOTONIC, dl);
	case TC_CND_TIMEDWAIT:
		return cnd_timedwait(&xc, &xm, dl);
	}
	return RES_SETUP(EPROTO);
}

static bool target_c11(const struct target *t)
{
	return t->call == TC_MTX_TIMEDLOCK || t->call == TC_CND_TIMEDWAIT;
}

/* a: target, b: spec.  A mutex is held by thread A; a condition is waited
 * on with the mutex held by the caller.  With a far deadline thread A
 * releases the mutex or signals the condition once the caller sleeps. */
static int call_timed(const struct row *r)
{
	const struct target *t = &targets[r->a];
	enum spec s = (enum spec)r->b;
	if (t->call == TC_MTX_TIMEDLOCK) {
		SETUP_WANT(mtx_init(&xm, mtx_timed), thrd_success);
		SETUP_WANT(agent_call(&A, ag_mtx_lock, &xm), thrd_success);
		if (s == TS_FAR)
			agent_post(&A, ag_mtx_unlock_later, &xm);
	} else if (t->call == TC_CND_TIMEDWAIT) {
		SETUP_WANT(mtx_init(&xm, mtx_timed | mtx_recursive), thrd_success);
		SETUP_WANT(cnd_init(&xc), thrd_success);
		SETUP_WANT(mtx_lock(&xm), thrd_success);
		if (s == TS_FAR)
			agent_post(&A, ag_cnd_signal_main, NULL);
	} else if (target_is_cond(t)) {
		SETUP(make_mutex(&mx, t->combo));
		SETUP(make_cond(&cv, false, t->call == TC_COND_TIMEDWAIT_MONOATTR ? CLOCK_MONOTONIC : CLOCK_REALTIME));
		SETUP(pthread_mutex_lock(&mx));
		if (s == TS_FAR)
			agent_post(&A, ag_signal_main, NULL);
	} else {
		SETUP(make_mutex(&mx, t->combo));
		SETUP(agent_call(&A, ag_lock, &mx));
		if (s == TS_FAR)
			agent_post(&A, ag_unlock_later, &mx);
	}
	struct timespec ts;
	return timed(t, make_spec(s, target_clock(t), &ts));
}

/* A mutex: whoever holds it can release it, then it works for everybody.
 * A condition: the caller holds the mutex again (whatever the result),
 * and the condition still wakes a waiter. */
static const char *check_timed(const struct row *r, int res)
{
	const struct target *t = &targets[r->a];
	bool far = r->b == TS_FAR;
	bool c11 = target_c11(t);
	int ok = c11 ? thrd_success : 0;
	if (far)
		WANT(agent_wait(&A, WAIT_MS), ok, "helper thread's release or signal");
	if (target_is_cond(t)) {
		if (c11) {
			WANT_THRD(mtx_unlock(&xm), thrd_success, "caller's mtx_unlock after the wait");
			return cnd_usable();
		}
		WANT(pthread_mutex_unlock(&mx), 0, "caller's unlock after the wait");
		return cond_usable();
	}
	if (res == ok) {
		if (c11)
			WANT_THRD(mtx_unlock(&xm), thrd_success, "caller's mtx_unlock");
		else
			WANT(pthread_mutex_unlock(&mx), 0, "caller's unlock");
	} else if (!far) {
		if (c11)
			WANT_THRD(agent_call(&A, ag_mtx_unlock, &xm), thrd_success, "holder's mtx_unlock");
		else
			WANT(agent_call(&A, ag_unlock, &mx), 0, "holder's unlock");
	}
	return c11 ? mtx_usable() : mutex_usable();
}

/* a: combo (-1: C11 mtx), b: spec.  The mutex is free. */
static int call_timed_free(const struct row *r)
{
	struct timespec ts;
	const struct timespec *dl = make_spec((enum spec)r->b, CLOCK_REALTIME, &ts);
	if (r->a < 0) {
		SETUP_WANT(mtx_init(&xm, mtx_timed), thrd_success);
		return mtx_timedlock(&xm, dl);
	}
	SETUP(make_mutex(&mx, r->a));
	return r->c ? pthread_mutex_clocklock(&mx, CLOCK_MONOTONIC, dl) : pthread_mutex_timedlock(&mx, dl);
}

static const char *check_timed_free(const struct row *r, int res)
{
	if (r->a < 0) {
		if (res == thrd_success)
			WANT_THRD(mtx_unlock(&xm), thrd_success, "mtx_unlock");
		return mtx_usable();
	}
	if (res == 0)
		WANT(pthread_mutex_unlock(&mx), 0, "unlock");
	return mutex_usable();
}

/* ================================================================== */
/* Clocks                                                              */
/* ================================================================== */

/* b: the clock.  a: 0 clockwait (mutex held by the caller), 1 clocklock of
 * a free mutex, 2 clocklock of a mutex held by thread A. */
static int call_bad_clock(const struct row *r)
{
	clockid_t clock = (clockid_t)r->b;
	struct timespec ts = deadline_in_ms(CLOCK_MONOTONIC, SHORT_MS);
	SETUP(make_mutex(&mx, COMBO(PTHREAD_MUTEX_ERRORCHECK, P_NONE, 0)));
	switch (r->a) {
	case 0:
		SETUP(pthread_cond_init(&cv, NULL));
		SETUP(pthread_mutex_lock(&mx));
		return pthread_cond_clockwait(&cv, &mx, clock, &ts);
	case 2:
		SETUP(agent_call(&A, ag_lock, &mx));
		return pthread_mutex_clocklock(&mx, clock, &ts);
	default:
		return pthread_mutex_clocklock(&mx, clock, &ts);
	}
}

static const char *check_bad_clock(const struct row *r, int res)
{
	switch (r->a) {
	case 0:
		WANT(pthread_mutex_unlock(&mx), 0, "caller's unlock after the wait");
		return cond_usable();
	case 2:
		if (res == 0)
			return "got a mutex another thread holds";
		WANT(agent_call(&A, ag_unlock, &mx), 0, "holder's unlock");
		return mutex_usable();
	default:
		if (res == 0)
			WANT(pthread_mutex_unlock(&mx), 0, "unlock");
		return mutex_usable();
	}
}

/* ================================================================== */
/* Condition variables                                                 */
/* ================================================================== */

enum cond_op {
	CO_WAIT, CO_TIMEDWAIT, CO_CLOCKWAIT, CO_SIGNAL, CO_BROADCAST, CO_DESTROY, CO_CND_WAIT, CO_CND_TIMEDWAIT,
	CO_CND_SIGNAL, CO_CND_BROADCAST, CO_CND_DESTROY, CO_COUNT
};

static const struct {
	const char *tag, *fn;
	enum result kind;
	bool c11;
	bool waits;
} cond_ops[CO_COUNT] = {
	[CO_WAIT] = { "wait", "pthread_cond_wait", R_ERRNO, false, true },
	[CO_TIMEDWAIT] = { "timedwait", "pthread_cond_timedwait", R_ERRNO, false, true },
	[CO_CLOCKWAIT] = { "clockwait", "pthread_cond_clockwait", R_ERRNO, false, true },
	[CO_SIGNAL] = { "signal", "pthread_cond_signal", R_ERRNO, false, false },
	[CO_BROADCAST] = { "broadcast", "pthread_cond_broadcast", R_ERRNO, false, false },
	[CO_DESTROY] = { "destroy", "pthread_cond_destroy", R_ERRNO, false, false },
	[CO_CND_WAIT] = { "cnd_wait", "cnd_wait", R_THRD, true, true },
	[CO_CND_TIMEDWAIT] = { "cnd_timedwait", "cnd_timedwait", R_THRD, true, true },
	[CO_CND_SIGNAL] = { "cnd_signal", "cnd_signal", R_THRD, true, false },
	[CO_CND_BROADCAST] = { "cnd_broadcast", "cnd_broadcast", R_THRD, true, false },
	[CO_CND_DESTROY] = { "cnd_destroy", "cnd_destroy", R_VOID, true, false },
};

/* a: cond_op, b: pattern of the condition's bytes.  The waits use an
 * ERRORCHECK mutex (a recursive mtx) the caller holds. */
static int call_cond_junk(const struct row *r)
{
	enum cond_op op = (enum cond_op)r->a;
	pthread_cond_t *c = &junk.c;
	if (r->b == P_DESTROYED) {
		if (cond_ops[op].c11) {
			SETUP_WANT(cnd_init(&junk.y), thrd_success);
			cnd_destroy(&junk.y);
		} else {
			SETUP(pthread_cond_init(c, NULL));
			SETUP(pthread_cond_destroy(c));
		}
	} else {
		fill(&junk, sizeof junk, (enum pattern)r->b);
	}
	if (cond_ops[op].waits) {
		if (cond_ops[op].c11) {
			SETUP_WANT(mtx_init(&xm, mtx_timed | mtx_recursive), thrd_success);
			SETUP_WANT(mtx_lock(&xm), thrd_success);
		} else {
			SETUP(make_mutex(&mx, COMBO(PTHREAD_MUTEX_ERRORCHECK, P_NONE, 0)));
			SETUP(pthread_mutex_lock(&mx));
		}
	}
	struct timespec ts = deadline_in_ms(CLOCK_REALTIME, SHORT_MS);
	struct timespec mono = deadline_in_ms(CLOCK_MONOTONIC, SHORT_MS);
	switch (op) {
	case CO_WAIT:
		return pthread_cond_wait(c, &mx);
	case CO_TIMEDWAIT:
		return pthread_cond_timedwait(c, &mx, &ts);
	case CO_CLOCKWAIT:
		return pthread_cond_clockwait(c, &mx, CLOCK_MONOTONIC, &mono);
	case CO_SIGNAL:
		return pthread_cond_signal(c);
	case CO_BROADCAST:
		return pthread_cond_broadcast(c);
	case CO_DESTROY:
		return pthread_cond_destroy(c);
	case CO_CND_WAIT:
		return cnd_wait(&junk.y, &xm);
	case CO_CND_TIMEDWAIT:
		return cnd_timedwait(&junk.y, &xm, &ts);
	case CO_CND_SIGNAL:
		return cnd_signal(&junk.y);
	case CO_CND_BROADCAST:
		return cnd_broadcast(&junk.y);
	case CO_CND_DESTROY:
		cnd_destroy(&junk.y);
		return 0;
	case CO_COUNT:
		break;
	}
	return RES_SETUP(EPROTO);
}

/* After a wait on a bad condition returned, the caller holds the mutex. */
static const char *check_cond_junk(const struct row *r, int res)
{
	(void)res;
	if (!cond_ops[r->a].waits)
		return NOSTATE;
	if (cond_ops[r->a].c11) {
		WANT_THRD(mtx_unlock(&xm), thrd_success, "caller's mtx_unlock after the wait");
		return mtx_usable();
	}
	WANT(pthread_mutex_unlock(&mx), 0, "caller's unlock after the wait");
	return mutex_usable();
}

/* a: combo of the mutex, b: 0 wait / 1 timedwait, c: 0 the mutex is
 * free, 1 thread A holds it. */
static int call_cond_unowned(const struct row *r)
{
	SETUP(make_mutex(&mx, r->a));
	SETUP(pthread_cond_init(&cv, NULL));
	if (r->c)
		SETUP(agent_call(&A, ag_lock, &mx));
	struct timespec ts = deadline_in_ms(CLOCK_REALTIME, SHORT_MS);
	return r->b ? pthread_cond_timedwait(&cv, &mx, &ts) : pthread_cond_wait(&cv, &mx);
}

/* Refused: nothing changed.  A wait that did happen (0, ETIMEDOUT)
 * returns with the mutex held by the caller. */
static const char *check_cond_unowned(const struct row *r, int res)
{
	if (res == 0 || res == ETIMEDOUT)
		WANT(pthread_mutex_unlock(&mx), 0, "caller's unlock after the wait");
	if (r->c)
		WANT(agent_call(&A, ag_unlock, &mx), 0, "holder's unlock");
	return cond_usable();
}

/* C11: a: 0 cnd_wait, 1 cnd_timedwait, on a recursive mtx nobody holds. */
static int call_cnd_unowned(const struct row *r)
{
	SETUP_WANT(mtx_init(&xm, mtx_timed | mtx_recursive), thrd_success);
	SETUP_WANT(cnd_init(&xc), thrd_success);
	struct timespec ts = deadline_in_ms(CLOCK_REALTIME, SHORT_MS);
	return r->a ? cnd_timedwait(&xc, &xm, &ts) : cnd_wait(&xc, &xm);
}

static const char *check_cnd_unowned(const struct row *r, int res)
{
	(void)r;
	if (res == thrd_success || res == thrd_timedout)
		WANT_THRD(mtx_unlock(&xm), thrd_success, "caller's mtx_unlock after the wait");
	return cnd_usable();
}

/* A wait whose mutex is bad: b is the pattern (destroyed or 0xff). */
static int call_cond_bad_mutex(const struct row *r)
{
	SETUP(pthread_cond_init(&cv, NULL));
	if (r->b == P_DESTROYED) {
		SETUP(pthread_mutex_init(&mx, NULL));
		SETUP(pthread_mutex_destroy(&mx));
	} else {
		fill(&mx, sizeof mx, (enum pattern)r->b);
	}
	struct timespec ts = deadline_in_ms(CLOCK_REALTIME, SHORT_MS);
	return r->a ? pthread_cond_timedwait(&cv, &mx, &ts) : pthread_cond_wait(&cv, &mx);
}

static const char *check_cond_bad_mutex(const struct row *r, int res)
{
	(void)r;
	(void)res;
	WANT(pthread_mutex_init(&mx, NULL), 0, "mutex init");
	return cond_usable();
}

enum waited_kind { WK_NORMAL, WK_PI, WK_PSHARED, WK_CND };

/* a: waited_kind.  Thread A is blocked in the wait when the caller
 * destroys the condition. */
static int call_cond_destroy_waited(const struct row *r)
{
	enum waited_kind k = (enum waited_kind)r->a;
	if (k == WK_CND) {
		SETUP_WANT(mtx_init(&xm, mtx_plain), thrd_success);
		SETUP_WANT(cnd_init(&xc), thrd_success);
		agent_post(&A, ag_cnd_wait, NULL);
		if (!wait_blocked(&A))
			return RES_HUNG;
		cnd_destroy(&xc);
		return 0;
	}
	SETUP(make_mutex(&mx, COMBO(PTHREAD_MUTEX_NORMAL, k == WK_PI ? P_PI : P_NONE, 0)));
	SETUP(make_cond(&cv, k == WK_PSHARED, CLOCK_REALTIME));
	agent_post(&A, ag_cond_wait, NULL);
	if (!wait_blocked(&A))
		return RES_HUNG;
	return pthread_cond_destroy(&cv);
}

/* Refused: the waiter is still there and a signal wakes it. */
static const char *check_cond_destroy_waited(const struct row *r, int res)
{
	if (r->a == WK_CND) {
		WANT_THRD(mtx_lock(&xm), thrd_success, "mtx_lock to signal");
		WANT_THRD(cnd_signal(&xc), thrd_success, "cnd_signal");
		WANT_THRD(mtx_unlock(&xm), thrd_success, "mtx_unlock");
		WANT_THRD(agent_wait(&A, WAIT_MS), thrd_success, "the waiter");
		return cnd_usable();
	}
	if (res == 0)
		return NOSTATE;
	WANT(pthread_mutex_lock(&mx), 0, "lock to signal");
	WANT(pthread_cond_signal(&cv), 0, "signal");
	WANT(pthread_mutex_unlock(&mx), 0, "unlock");
	WANT(agent_wait(&A, WAIT_MS), 0, "the waiter");
	return cond_usable();
}

/* Thread A waits with mx; the caller waits on the same condition with
 * another mutex, mx2, until a deadline.  b: wake A with a broadcast (1)
 * or a signal (0) afterwards. */
static int call_cond_two_mutexes(const struct row *r)
{
	(void)r;
	SETUP(pthread_mutex_init(&mx, NULL));
	SETUP(pthread_mutex_init(&mx2, NULL));
	SETUP(pthread_cond_init(&cv, NULL));
	agent_post(&A, ag_cond_wait, NULL);
	if (!wait_blocked(&A))
		return RES_HUNG;
	SETUP(pthread_mutex_lock(&mx2));
	struct timespec ts = deadline_in_ms(CLOCK_REALTIME, SHORT_MS);
	return pthread_cond_timedwait(&cv, &mx2, &ts);
}

static const char *check_cond_two_mutexes(const struct row *r, int res)
{
	if (res == 0 || res == ETIMEDOUT)
		WANT(pthread_mutex_unlock(&mx2), 0, "unlock of the second mutex");
	WANT(pthread_mutex_lock(&mx), 0, "lock to wake");
	WANT(r->b ? pthread_cond_broadcast(&cv) : pthread_cond_signal(&cv), 0, "wake");
	WANT(pthread_mutex_unlock(&mx), 0, "unlock");
	WANT(agent_wait(&A, WAIT_MS), 0, "the first waiter");
	WANT(pthread_mutex_destroy(&mx2), 0, "destroy of the second mutex");
	return cond_usable();
}

static int call_cond_destroy_twice(const struct row *r)
{
	(void)r;
	SETUP(pthread_cond_init(&cv, NULL));
	SETUP(pthread_cond_destroy(&cv));
	return pthread_cond_destroy(&cv);
}

/* ================================================================== */
/* The library's own condition calls (glibc: "absent")                 */
/* ================================================================== */

/* futex_waitv(2) is there (Linux 5.16); without it a wait-for-any that
 * passes its argument checks is ENOSYS.  Set before the rows are built. */
static bool have_waitv;

enum mask_op { KO_WAIT, KO_TIMEDWAIT, KO_CLOCKWAIT, KO_SIGNAL, KO_BROADCAST, KO_WAITANY, KO_COUNT };

static const struct {
	const char *tag, *fn;
	bool waits, timed;
} mask_ops[KO_COUNT] = {
	[KO_WAIT] = { "wait_mask", "rtpthread_cond_wait_mask_np", true, false },
	[KO_TIMEDWAIT] = { "timedwait_mask", "rtpthread_cond_timedwait_mask_np", true, true },
	[KO_CLOCKWAIT] = { "clockwait_mask", "rtpthread_cond_clockwait_mask_np", true, true },
	[KO_SIGNAL] = { "signal_mask", "rtpthread_cond_signal_mask_np", false, false },
	[KO_BROADCAST] = { "broadcast_mask", "rtpthread_cond_broadcast_mask_np", false, false },
	[KO_WAITANY] = { "waitany", "rtpthread_cond_waitany_np", true, true },
};

/* The bad input of a row; the row's c is its parameter. */
enum mask_case {
	MK_MASK0,    /* mask 0 */
	MK_COND,     /* c: pattern of the condition's bytes */
	MK_MUTEX,    /* c: pattern of the mutex's bytes */
	MK_UNOWNED,  /* c: combo of a mutex nobody holds */
	MK_DEADLINE, /* c: spec */
	MK_CLOCK,    /* c: the clock */
	MK_ANY,      /* c: any_case */
};

/* Wait-for-any's own arguments. */
enum any_case { AC_COUNT0, AC_COUNT_OVER, AC_CONDS_NULL, AC_ELEMENT_NULL, AC_ELEMENT_JUNK, AC_MUTEX_NULL,
		AC_INDEX_NULL, AC_COUNT };
static const char *const any_tag[AC_COUNT] = { "count0",       "count129",   "conds-NULL", "element-NULL",
					       "element-0xff", "mutex-NULL", "index-NULL" };
static const char *const any_desc[AC_COUNT] = {
	"count 0",
	"count 129 (RTPTHREAD_WAITANY_MAX + 1)",
	"conds NULL",
	"the second of two conditions NULL",
	"the second of two conditions of bytes 0xff",
	"mutex NULL",
	"index NULL, no deadline, signalled (expect 0)",
};

/* timedwait_mask waits on the condition's clock (CLOCK_REALTIME here). */
static clockid_t mask_clock(enum mask_op op)
{
	return op == KO_TIMEDWAIT ? CLOCK_REALTIME : CLOCK_MONOTONIC;
}

/* What include/rtpthread.h documents for the row (an errno value). */
static int mask_expect(enum mask_op op, enum mask_case k, long c)
{
	int e = EINVAL;
	if (k == MK_COND && !mask_ops[op].waits && c == P_DESTROYED)
		e = 0; /* as pthread_cond_signal and _broadcast */
	else if (k == MK_UNOWNED)
		e = EPERM;
	else if (k == MK_DEADLINE && (c == TS_SEC_NEG || c == TS_PAST))
		e = ETIMEDOUT;
	else if ((k == MK_DEADLINE && (c == TS_FAR || (c == TS_NULL && op == KO_WAITANY))) ||
		 (k == MK_ANY && c == AC_INDEX_NULL))
		e = 0; /* signalled */
	/* tv_sec < 0 is an argument check: ETIMEDOUT before the kernel is asked. */
	if (op == KO_WAITANY && !have_waitv && (e == 0 || (e == ETIMEDOUT && c == TS_PAST)))
		e = ENOSYS;
	return e;
}

#define OWN(name) ((__typeof__(name) *)sym(#name, "RTPTHREAD_1"))
static unsigned any_index;

/* a: mask_op, b: mask_case, c: its parameter.  Everything the case does
 * not make bad is valid: cv (CLOCK_REALTIME), an ERRORCHECK mx the caller
 * holds for a wait, mask 0x10, CLOCK_MONOTONIC, a deadline SHORT_MS away,
 * one condition for waitany.  A wait that should return 0 is signalled
 * by thread A once the caller sleeps. */
static int call_mask(const struct row *r)
{
	enum mask_op op = (enum mask_op)r->a;
	enum mask_case k = (enum mask_case)r->b;
	if (!sym(mask_ops[op].fn, "RTPTHREAD_1"))
		return RES_ABSENT;
	pthread_cond_t *c = &cv;
	if (k == MK_COND) {
		c = &junk.c;
		if (r->c == P_DESTROYED) {
			SETUP(pthread_cond_init(c, NULL));
			SETUP(pthread_cond_destroy(c));
		} else {
			fill(c, sizeof *c, (enum pattern)r->c);
		}
	} else {
		SETUP(make_cond(&cv, false, CLOCK_REALTIME));
	}
	if (k == MK_MUTEX && r->c == P_DESTROYED) {
		SETUP(pthread_mutex_init(&mx, NULL));
		SETUP(pthread_mutex_destroy(&mx));
	} else if (k == MK_MUTEX) {
		fill(&mx, sizeof mx, (enum pattern)r->c);
	} else {
		SETUP(make_mutex(&mx, k == MK_UNOWNED ? r->c : COMBO(PTHREAD_MUTEX_ERRORCHECK, P_NONE, 0)));
		if (mask_ops[op].waits && k != MK_UNOWNED)
			SETUP(pthread_mutex_lock(&mx));
	}
	unsigned mask = k == MK_MASK0 ? 0 : 0x10;
	clockid_t clock = k == MK_CLOCK ? (clockid_t)r->c : mask_clock(op);
	struct timespec ts = deadline_in_ms(mask_clock(op), SHORT_MS);
	const struct timespec *dl = k == MK_DEADLINE ? make_spec((enum spec)r->c, mask_clock(op), &ts) : &ts;

	/* waitany: conds, count, mutex, index */
	static pthread_cond_t *conds[RTPTHREAD_WAITANY_MAX + 1];
	for (size_t i = 0; i < sizeof conds / sizeof conds[0]; i++)
		conds[i] = c;
	pthread_cond_t *const *list = conds;
	unsigned count = 1, *index = &any_index;
	pthread_mutex_t *m = &mx;
	any_index = UINT_MAX;
	switch (k == MK_ANY ? (enum any_case)r->c : AC_COUNT) {
	case AC_COUNT0:
		count = 0;
		break;
	case AC_COUNT_OVER:
		count = RTPTHREAD_WAITANY_MAX + 1;
		break;
	case AC_CONDS_NULL:
		list = NULL;
		break;
	case AC_ELEMENT_NULL:
		count = 2;
		conds[1] = NULL;
		break;
	case AC_ELEMENT_JUNK:
		count = 2;
		fill(&junk.c, sizeof junk.c, P_FF);
		conds[1] = &junk.c;
		break;
	case AC_MUTEX_NULL:
		m = NULL;
		break;
	case AC_INDEX_NULL:
		index = NULL;
		dl = NULL;
		break;
	case AC_COUNT:
		break;
	}

	if (mask_ops[op].waits && mask_expect(op, k, r->c) == 0)
		agent_post(&A, ag_signal_main, NULL);
	switch (op) {
	case KO_WAIT:
		return OWN(rtpthread_cond_wait_mask_np)(c, &mx, mask);
	case KO_TIMEDWAIT:
		return OWN(rtpthread_cond_timedwait_mask_np)(c, &mx, mask, dl);
	case KO_CLOCKWAIT:
		return OWN(rtpthread_cond_clockwait_mask_np)(c, &mx, mask, clock, dl);
	case KO_SIGNAL:
		return OWN(rtpthread_cond_signal_mask_np)(c, mask);
	case KO_BROADCAST:
		return OWN(rtpthread_cond_broadcast_mask_np)(c, mask);
	case KO_WAITANY:
		return OWN(rtpthread_cond_waitany_np)(list, count, m, clock, dl, index);
	case KO_COUNT:
		break;
	}
	return RES_SETUP(EPROTO);
}

/* After a wait the caller holds the mutex again (or, refused for not
 * holding it, still does not); a signalled wait took the lowest index;
 * the condition still wakes a waiter (a garbage one: the mutex works). */
static const char *check_mask(const struct row *r, int res)
{
	enum mask_op op = (enum mask_op)r->a;
	enum mask_case k = (enum mask_case)r->b;
	if (!mask_ops[op].waits)
		return k == MK_COND ? NOSTATE : cond_usable();
	bool signalled = mask_expect(op, k, r->c) == 0;
	if (op == KO_WAITANY && res == 0 && !(k == MK_ANY && r->c == AC_INDEX_NULL) && any_index != 0)
		return fmt("index %u, not 0", any_index);
	if (k == MK_MUTEX)
		WANT(pthread_mutex_init(&mx, NULL), 0, "mutex init");
	else if (k != MK_UNOWNED || res == 0 || res == ETIMEDOUT)
		WANT(pthread_mutex_unlock(&mx), 0, "caller's unlock after the wait");
	if (signalled)
		WANT(agent_wait(&A, WAIT_MS), 0, "helper thread's signal");
	return k == MK_COND ? mutex_usable() : cond_usable();
}

/* ================================================================== */
/* Barriers                                                            */
/* ================================================================== */

/* b: the count. */
static int call_barrier_count(const struct row *r)
{
	return pthread_barrier_init(&bar, NULL, (unsigned)r->b);
}

static const char *check_barrier_count(const struct row *r, int res)
{
	(void)r;
	if (res != 0)
		return NOSTATE;
	WANT(pthread_barrier_destroy(&bar), 0, "destroy");
	return NULL;
}

/* a: 0 wait, 1 destroy; b: pattern; c: count for a destroyed barrier. */
static int call_barrier_junk(const struct row *r)
{
	if (r->b == P_DESTROYED) {
		SETUP(pthread_barrier_init(&junk.b, NULL, (unsigned)r->c));
		SETUP(pthread_barrier_destroy(&junk.b));
	} else {
		fill(&junk, sizeof junk, (enum pattern)r->b);
	}
	return r->a ? pthread_barrier_destroy(&junk.b) : pthread_barrier_wait(&junk.b);
}

/* a: pshared.  Thread A waits in a round of two when the caller destroys. */
static int call_barrier_destroy_waited(const struct row *r)
{
	pthread_barrierattr_t attr;
	SETUP(pthread_barrierattr_init(&attr));
	SETUP(pthread_barrierattr_setpshared(&attr, r->a ? PTHREAD_PROCESS_SHARED : PTHREAD_PROCESS_PRIVATE));
	SETUP(pthread_barrier_init(&bar, &attr, 2));
	pthread_barrierattr_destroy(&attr);
	agent_post(&A, ag_barrier_wait, &bar);
	if (!wait_blocked(&A))
		return RES_HUNG;
	return pthread_barrier_destroy(&bar);
}

/* Refused: the waiter is still counted; the caller completes its round. */
static const char *check_barrier_destroy_waited(const struct row *r, int res)
{
	(void)r;
	if (res == 0)
		return NOSTATE;
	int mine = pthread_barrier_wait(&bar);
	int theirs = agent_wait(&A, WAIT_MS);
	if (!((mine == 0 && theirs == PTHREAD_BARRIER_SERIAL_THREAD) ||
	      (mine == PTHREAD_BARRIER_SERIAL_THREAD && theirs == 0)))
		return fmt("the round returned %d and %s", mine, errname(theirs));
	WANT(pthread_barrier_destroy(&bar), 0, "destroy");
	WANT(pthread_barrier_init(&bar, NULL, 2), 0, "init again");
	return barrier_usable();
}

/* ================================================================== */
/* Scheduling                                                          */
/* ================================================================== */

enum { SO_PARAM, SO_PRIO, SO_PARAM_NULL };
enum { ST_SELF, ST_SELF_HOLDING_PP, ST_EXITED };

static _Atomic pid_t exiting_tid;

static void *exit_at_once(void *arg)
{
	(void)arg;
	atomic_store(&exiting_tid, gettid());
	return NULL;
}

/* A thread that has exited and was not joined: its pthread_t is still
 * valid, the thread is gone (the kernel cleared its TID). */
static int exited_thread(pthread_t *t)
{
	SETUP(pthread_create(t, NULL, exit_at_once, NULL));
	while (atomic_load(&exiting_tid) == 0)
		sched_yield();
	char path[64];
	snprintf(path, sizeof path, "/proc/self/task/%d", (int)atomic_load(&exiting_tid));
	for (int i = 0; access(path, F_OK) == 0; i++) {
		if (i == WAIT_MS)
			return RES_HUNG;
		sleep_ms(1);
	}
	return 0;
}

/* a: SO_PARAM, SO_PRIO or SO_PARAM_NULL (param NULL) | target << 4,
 * b: policy, c: priority. */
static int call_sched(const struct row *r)
{
	int op = (int)(r->a & 0xf), target = (int)(r->a >> 4);
	pthread_t t = pthread_self();
	if (target == ST_EXITED)
		SETUP(exited_thread(&t));
	if (target == ST_SELF_HOLDING_PP) {
		SETUP(make_mutex(&mx, COMBO(PTHREAD_MUTEX_NORMAL, P_PP, 0)));
		SETUP(pthread_mutex_lock(&mx));
	}
	if (op == SO_PRIO)
		return pthread_setschedprio(t, (int)r->c);
	struct sched_param p = { .sched_priority = (int)r->c };
	/* glibc declares param non-null: hide the NULL from the compiler. */
	struct sched_param *volatile param = op == SO_PARAM_NULL ? NULL : &p;
	return pthread_setschedparam(t, (int)r->b, param);
}

static const char *policy_name(int policy)
{
	switch (policy) {
	case SCHED_OTHER:
		return "OTHER";
	case SCHED_FIFO:
		return "FIFO";
	case SCHED_RR:
		return "RR";
	default:
		return "?";
	}
}

/* Refused: the caller runs as before (once the ceiling is given back).
 * Accepted: it runs as asked. */
static const char *check_sched(const struct row *r, int res)
{
	int op = (int)(r->a & 0xf), target = (int)(r->a >> 4);
	if (target == ST_EXITED)
		return NOSTATE;
	if (target == ST_SELF_HOLDING_PP)
		WANT(pthread_mutex_unlock(&mx), 0, "unlock");
	int policy = base_policy, prio = base_prio;
	if (res == 0) {
		prio = (int)r->c;
		if (op != SO_PRIO)
			policy = (int)r->b;
	}
	if (!sched_is(0, policy, prio))
		return fmt("caller runs at %s, not %s/%d", sched_text(0), policy_name(policy), prio);
	if (target == ST_SELF_HOLDING_PP)
		WANT(pthread_mutex_destroy(&mx), 0, "destroy");
	return NULL;
}

static int got_policy, got_prio;

/* a: target (ST_*).  pthread_getschedparam of an exited thread, or of
 * the caller holding a ceiling-10 PP mutex at FIFO 5 (which must report
 * FIFO 5, not the ceiling). */
static int call_getsched(const struct row *r)
{
	pthread_t t = pthread_self();
	if (r->a == ST_EXITED)
		SETUP(exited_thread(&t));
	if (r->a == ST_SELF_HOLDING_PP) {
		SETUP(make_mutex(&mx, COMBO(PTHREAD_MUTEX_NORMAL, P_PP, 0)));
		SETUP(pthread_mutex_lock(&mx));
	}
	struct sched_param p = { .sched_priority = -1 };
	got_policy = -1;
	int e = pthread_getschedparam(t, &got_policy, &p);
	got_prio = p.sched_priority;
	return e;
}

static const char *check_getsched(const struct row *r, int res)
{
	if (r->a != ST_SELF_HOLDING_PP)
		return NOSTATE;
	WANT(pthread_mutex_unlock(&mx), 0, "unlock");
	WANT(pthread_mutex_destroy(&mx), 0, "destroy");
	if (res == 0 && ((got_policy & ~SCHED_RESET_ON_FORK) != base_policy || got_prio != base_prio))
		return fmt("reported %s/%d while holding, not %s/%d", policy_name(got_policy), got_prio,
			   policy_name(base_policy), base_prio);
	if (!sched_is(0, base_policy, base_prio))
		return fmt("caller runs at %s after the unlock", sched_text(0));
	return NULL;
}

/* ================================================================== */
/* C11                                                                 */
/* ================================================================== */

/* b: the type argument. */
static int call_mtx_init(const struct row *r)
{
	return mtx_init(&xm, (int)r->b);
}

/* b: the type argument.  The caller locks the new mutex and tries again:
 * thrd_success if it was made recursive, thrd_busy if plain. */
static int call_mtx_init_relock(const struct row *r)
{
	SETUP_WANT(mtx_init(&xm, (int)r->b), thrd_success);
	SETUP_WANT(mtx_lock(&xm), thrd_success);
	return mtx_trylock(&xm);
}

static const char *check_mtx_init_relock(const struct row *r, int res)
{
	(void)r;
	WANT_THRD(mtx_unlock(&xm), thrd_success, "owner's mtx_unlock");
	if (res == thrd_success)
		WANT_THRD(mtx_unlock(&xm), thrd_success, "owner's second mtx_unlock");
	return mtx_usable();
}

enum mtx_case {
	XC_TIMEDLOCK_PLAIN, XC_TIMEDLOCK_RECURSIVE, XC_TIMEDLOCK_RELOCK, XC_TRYLOCK_RELOCK,
	XC_UNLOCK_NONOWNER_RECURSIVE, XC_UNLOCK_NONOWNER_PLAIN, XC_UNLOCK_UNLOCKED_RECURSIVE
};

static bool mtx_case_agent_holds(enum mtx_case k)
{
	return k == XC_TIMEDLOCK_PLAIN || k == XC_TIMEDLOCK_RECURSIVE || k == XC_UNLOCK_NONOWNER_RECURSIVE ||
	       k == XC_UNLOCK_NONOWNER_PLAIN;
}

/* a: mtx_case. */
static int call_mtx_case(const struct row *r)
{
	enum mtx_case k = (enum mtx_case)r->a;
	bool recursive = k == XC_TIMEDLOCK_RECURSIVE || k == XC_UNLOCK_NONOWNER_RECURSIVE ||
			 k == XC_UNLOCK_UNLOCKED_RECURSIVE;
	SETUP_WANT(mtx_init(&xm, recursive ? mtx_plain | mtx_recursive : mtx_plain), thrd_success);
	if (mtx_case_agent_holds(k))
		SETUP_WANT(agent_call(&A, ag_mtx_lock, &xm), thrd_success);
	if (k == XC_TIMEDLOCK_RELOCK || k == XC_TRYLOCK_RELOCK)
		SETUP_WANT(mtx_lock(&xm), thrd_success);
	struct timespec ts = deadline_in_ms(CLOCK_REALTIME, 50);
	switch (k) {
	case XC_TIMEDLOCK_PLAIN:
	case XC_TIMEDLOCK_RECURSIVE:
	case XC_TIMEDLOCK_RELOCK:
		return mtx_timedlock(&xm, &ts);
	case XC_TRYLOCK_RELOCK:
		return mtx_trylock(&xm);
	default:
		return mtx_unlock(&xm);
	}
}

static const char *check_mtx_case(const struct row *r, int res)
{
	enum mtx_case k = (enum mtx_case)r->a;
	bool unlock = k == XC_UNLOCK_NONOWNER_RECURSIVE || k == XC_UNLOCK_NONOWNER_PLAIN;
	if (mtx_case_agent_holds(k) && !(unlock && res == thrd_success))
		WANT_THRD(agent_call(&A, ag_mtx_unlock, &xm), thrd_success, "holder's mtx_unlock");
	if (k == XC_TIMEDLOCK_RELOCK || k == XC_TRYLOCK_RELOCK) {
		WANT_THRD(mtx_unlock(&xm), thrd_success, "owner's mtx_unlock");
		if (res == thrd_success)
			WANT_THRD(mtx_unlock(&xm), thrd_success, "owner's second mtx_unlock");
	}
	return mtx_usable();
}

/* ---- once ---- */

static void once_nothing(void)
{
}

/* a: 0 pthread_once, 1 __pthread_once, 2 call_once; b: 0 a NULL object,
 * 1 a NULL function. */
static int call_once_null(const struct row *r)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	pthread_once_t *o = r->b == 0 ? NULL : &once;
	void (*f)(void) = r->b == 1 ? NULL : once_nothing;
	if (r->a == 2) {
		call_once((once_flag *)o, f);
		return 0;
	}
	int (*fn)(pthread_once_t *, void (*)(void)) =
		r->a == 1 ? (int (*)(pthread_once_t *, void (*)(void)))sym("__pthread_once", "GLIBC_2.2.5") : pthread_once;
	return fn ? fn(o, f) : RES_SETUP(ENOSYS);
}

/* The initializer calls pthread_once on its own object. */
static pthread_once_t recursive_once = PTHREAD_ONCE_INIT;
static int recursive_result;

static void once_recurse(void)
{
	recursive_result = pthread_once(&recursive_once, once_recurse);
}

static int call_once_recursive(const struct row *r)
{
	(void)r;
	int res = pthread_once(&recursive_once, once_recurse);
	return res != 0 ? res : recursive_result;
}

/* ================================================================== */
/* The table                                                           */
/* ================================================================== */

#define ATTR_SET(id, fn, desc, kind, value, setter, getter)                                         \
	{ id, fn, desc, R_ERRNO, call_attr_set, check_attr_set, .a = kind, .b = value, .c = P_VALID, \
	  .set = setter, .get = getter }
#define NOTHING(id, fn) { id, fn, "no bad input detectable", R_NONE, call_nothing, NULL, .a = 0 }

static const struct row fixed_rows[] = {
	/* Functions that accept every input. */
	NOTHING("NB-mutexattr_init", "pthread_mutexattr_init"),
	NOTHING("NB-__mutexattr_init", "__pthread_mutexattr_init"),
	NOTHING("NB-condattr_init", "pthread_condattr_init"),
	NOTHING("NB-barrierattr_init", "pthread_barrierattr_init"),
	NOTHING("NB-rwlockattr_init", "pthread_rwlockattr_init"),
	NOTHING("NB-rwlockattr_destroy", "pthread_rwlockattr_destroy"),
	NOTHING("NB-rwlockattr_getkind_np", "pthread_rwlockattr_getkind_np"),
	NOTHING("NB-rwlockattr_getpshared", "pthread_rwlockattr_getpshared"),
	NOTHING("NB-cnd_init", "cnd_init"),
	NOTHING("NB-rtpthread_version", "rtpthread_version"),
	{ "RT-mutex_stats-NULL", "rtpthread_mutex_stats", "out NULL, max 8", R_COUNT, call_stats_null, NULL, .a = 0,
	  .expect = "0" },
	/* Once: NULL arguments, and an initializer that calls itself. */
	{ "OC-once-NULL", "pthread_once", "once NULL", R_ERRNO, call_once_null, NULL, .a = 0, .b = 0 },
	{ "OC-once-fn-NULL", "pthread_once", "init routine NULL", R_ERRNO, call_once_null, NULL, .a = 0, .b = 1 },
	{ "OC-__once-NULL", "__pthread_once", "once NULL", R_ERRNO, call_once_null, NULL, .a = 1, .b = 0 },
	{ "OC-call_once-NULL", "call_once", "flag NULL", R_VOID, call_once_null, NULL, .a = 2, .b = 0 },
	{ "OC-once-recursive", "pthread_once", "the init routine calls it again", R_ERRNO, call_once_recursive,
	  NULL, .a = 0 },
	/* The C++ guards: any byte 0 other than 0 reads "initialized". */
	NOTHING("NB-__cxa_guard_acquire", "__cxa_guard_acquire"),
	NOTHING("NB-__cxa_guard_release", "__cxa_guard_release"),
	NOTHING("NB-__cxa_guard_abort", "__cxa_guard_abort"),

	/* Mutex attributes: values out of range. */
	ATTR_SET("MA-settype-99", "pthread_mutexattr_settype", "type 99", AK_MUTEX, 99, set_mtype, get_mtype),
	ATTR_SET("MA-settype-neg1", "pthread_mutexattr_settype", "type -1", AK_MUTEX, -1, set_mtype, get_mtype),
	ATTR_SET("MA-settype-4", "pthread_mutexattr_settype", "type 4 (one past ADAPTIVE_NP)", AK_MUTEX, 4,
		 set_mtype, get_mtype),
	ATTR_SET("MA-__settype-99", "__pthread_mutexattr_settype", "type 99", AK_MUTEX, 99, set_mtype_alias,
		 get_mtype),
	ATTR_SET("MA-setkind_np-99", "pthread_mutexattr_setkind_np", "kind 99", AK_MUTEX, 99, set_mkind_np,
		 get_mkind_np),
	ATTR_SET("MA-setprotocol-99", "pthread_mutexattr_setprotocol", "protocol 99", AK_MUTEX, 99, set_mprotocol,
		 get_mprotocol),
	ATTR_SET("MA-setprotocol-neg1", "pthread_mutexattr_setprotocol", "protocol -1", AK_MUTEX, -1,
		 set_mprotocol, get_mprotocol),
	ATTR_SET("MA-setprotocol-3", "pthread_mutexattr_setprotocol", "protocol 3 (one past PROTECT)", AK_MUTEX, 3,
		 set_mprotocol, get_mprotocol),
	ATTR_SET("MA-setprioceiling-0", "pthread_mutexattr_setprioceiling", "ceiling 0 (below FIFO min)", AK_MUTEX,
		 0, set_mceiling, get_mceiling),
	ATTR_SET("MA-setprioceiling-100", "pthread_mutexattr_setprioceiling", "ceiling 100 (above FIFO max)",
		 AK_MUTEX, 100, set_mceiling, get_mceiling),
	ATTR_SET("MA-setprioceiling-neg1", "pthread_mutexattr_setprioceiling", "ceiling -1", AK_MUTEX, -1,
		 set_mceiling, get_mceiling),
	ATTR_SET("MA-setprioceiling-4096", "pthread_mutexattr_setprioceiling", "ceiling 4096 (wider than the field)",
		 AK_MUTEX, 4096, set_mceiling, get_mceiling),
	ATTR_SET("MA-setprioceiling-INT_MIN", "pthread_mutexattr_setprioceiling", "ceiling INT_MIN", AK_MUTEX,
		 INT_MIN, set_mceiling, get_mceiling),
	ATTR_SET("MA-setpshared-5", "pthread_mutexattr_setpshared", "pshared 5", AK_MUTEX, 5, set_mpshared,
		 get_mpshared),
	ATTR_SET("MA-setpshared-neg1", "pthread_mutexattr_setpshared", "pshared -1", AK_MUTEX, -1, set_mpshared,
		 get_mpshared),
	ATTR_SET("MA-setrobust-7", "pthread_mutexattr_setrobust", "robust 7", AK_MUTEX, 7, set_mrobust,
		 get_mrobust),
	ATTR_SET("MA-setrobust-neg1", "pthread_mutexattr_setrobust", "robust -1", AK_MUTEX, -1, set_mrobust,
		 get_mrobust),
	ATTR_SET("MA-setrobust_np-7", "pthread_mutexattr_setrobust_np", "robust 7", AK_MUTEX, 7, set_mrobust_np,
		 get_mrobust_np),
	{ "MA-destroyed-settype", "pthread_mutexattr_settype", "RECURSIVE on a destroyed attribute", R_ERRNO,
	  call_attr_set, check_attr_set, .a = AK_MUTEX, .b = PTHREAD_MUTEX_RECURSIVE, .c = P_DESTROYED,
	  .set = set_mtype, .get = get_mtype },
	{ "MA-destroyed-setprotocol", "pthread_mutexattr_setprotocol", "INHERIT on a destroyed attribute",
	  R_ERRNO, call_attr_set, check_attr_set, .a = AK_MUTEX, .b = PTHREAD_PRIO_INHERIT, .c = P_DESTROYED,
	  .set = set_mprotocol, .get = get_mprotocol },

	/* Condition and barrier attributes. */
	ATTR_SET("CA-setpshared-5", "pthread_condattr_setpshared", "pshared 5", AK_COND, 5, set_cpshared,
		 get_cpshared),
	ATTR_SET("CA-setpshared-neg1", "pthread_condattr_setpshared", "pshared -1", AK_COND, -1, set_cpshared,
		 get_cpshared),
	ATTR_SET("CA-setclock-PROCESS_CPUTIME", "pthread_condattr_setclock", "CLOCK_PROCESS_CPUTIME_ID", AK_COND,
		 CLOCK_PROCESS_CPUTIME_ID, set_cclock, get_cclock),
	ATTR_SET("CA-setclock-THREAD_CPUTIME", "pthread_condattr_setclock", "CLOCK_THREAD_CPUTIME_ID", AK_COND,
		 CLOCK_THREAD_CPUTIME_ID, set_cclock, get_cclock),
	ATTR_SET("CA-setclock-12345", "pthread_condattr_setclock", "clock 12345", AK_COND, 12345, set_cclock,
		 get_cclock),
	ATTR_SET("CA-setclock-neg1", "pthread_condattr_setclock", "clock -1", AK_COND, -1, set_cclock, get_cclock),
	ATTR_SET("CA-setclock-MONOTONIC_RAW", "pthread_condattr_setclock", "CLOCK_MONOTONIC_RAW", AK_COND,
		 CLOCK_MONOTONIC_RAW, set_cclock, get_cclock),
	ATTR_SET("CA-setclock-BOOTTIME", "pthread_condattr_setclock", "CLOCK_BOOTTIME", AK_COND, CLOCK_BOOTTIME,
		 set_cclock, get_cclock),
	ATTR_SET("CA-setclock-REALTIME_COARSE", "pthread_condattr_setclock", "CLOCK_REALTIME_COARSE", AK_COND,
		 CLOCK_REALTIME_COARSE, set_cclock, get_cclock),
	ATTR_SET("BA-setpshared-9", "pthread_barrierattr_setpshared", "pshared 9", AK_BARRIER, 9, set_bpshared,
		 get_bpshared),
	ATTR_SET("BA-setpshared-neg1", "pthread_barrierattr_setpshared", "pshared -1", AK_BARRIER, -1,
		 set_bpshared, get_bpshared),
	ATTR_SET("BA-setpshared-2", "pthread_barrierattr_setpshared", "pshared 2", AK_BARRIER, 2, set_bpshared,
		 get_bpshared),

	/* Attribute objects destroyed twice. */
	{ "MA-destroy-twice", "pthread_mutexattr_destroy", "destroyed attribute", R_ERRNO,
	  call_attr_destroy_twice, NULL, .a = AK_MUTEX },
	{ "MA-__destroy-twice", "__pthread_mutexattr_destroy", "destroyed attribute", R_ERRNO,
	  call_attr_destroy_twice, NULL, .a = AK_MUTEX_ALIAS },
	{ "CA-destroy-twice", "pthread_condattr_destroy", "destroyed attribute", R_ERRNO, call_attr_destroy_twice,
	  NULL, .a = AK_COND },
	{ "BA-destroy-twice", "pthread_barrierattr_destroy", "destroyed attribute", R_ERRNO,
	  call_attr_destroy_twice, NULL, .a = AK_BARRIER },
	{ "MA-destroy-NULL", "pthread_mutexattr_destroy", "NULL", R_ERRNO, call_attr_destroy_null, NULL,
	  .a = AK_MUTEX },
	{ "MA-__destroy-NULL", "__pthread_mutexattr_destroy", "NULL", R_ERRNO, call_attr_destroy_null, NULL,
	  .a = AK_MUTEX_ALIAS },
	{ "CA-destroy-NULL", "pthread_condattr_destroy", "NULL", R_ERRNO, call_attr_destroy_null, NULL,
	  .a = AK_COND },
	{ "BA-destroy-NULL", "pthread_barrierattr_destroy", "NULL", R_ERRNO, call_attr_destroy_null, NULL,
	  .a = AK_BARRIER },

	/* Mutex init. */
	{ "MI-robust-PP", "pthread_mutex_init", "robust + PRIO_PROTECT attribute", R_ERRNO, call_init_robust_pp,
	  check_init_ok, .flags = F_FIFO },
	{ "MI-over-locked-NORMAL", "pthread_mutex_init", "init over a NORMAL mutex the caller holds", R_ERRNO,
	  call_init_locked, check_init_ok, .a = COMBO(0, P_NONE, 0) },
	{ "MI-over-locked-ERRORCHECK-PI", "pthread_mutex_init", "init over an ERRORCHECK PI mutex the caller holds",
	  R_ERRNO, call_init_locked, check_init_ok, .a = COMBO(2, P_PI, 0) },
	{ "MI-junk-ceiling-lock", "pthread_mutex_lock",
	  "PP mutex from an attribute of bytes 0xa5 (ceiling 1445), locked", R_ERRNO, call_lock_ceiling_from_junk,
	  check_lock_ceiling_from_junk, .flags = F_FIFO },

	/* Priority protect. */
	{ "PP-above-lock", "pthread_mutex_lock", "caller at FIFO 20, ceiling 10", R_ERRNO, call_pp_lock,
	  check_pp_lock, .a = PO_LOCK, .flags = F_HIGH },
	{ "PP-above-trylock", "pthread_mutex_trylock", "caller at FIFO 20, ceiling 10", R_ERRNO, call_pp_lock,
	  check_pp_lock, .a = PO_TRYLOCK, .flags = F_HIGH },
	{ "PP-above-timedlock", "pthread_mutex_timedlock", "caller at FIFO 20, ceiling 10", R_ERRNO, call_pp_lock,
	  check_pp_lock, .a = PO_TIMEDLOCK, .flags = F_HIGH },
	{ "PP-above-clocklock", "pthread_mutex_clocklock", "caller at FIFO 20, ceiling 10", R_ERRNO, call_pp_lock,
	  check_pp_lock, .a = PO_CLOCKLOCK, .flags = F_HIGH },
	{ "PP-other-lock", "pthread_mutex_lock", "caller SCHED_OTHER, ceiling 10", R_ERRNO, call_pp_lock,
	  check_pp_lock, .a = PO_LOCK },
	{ "PP-setprioceiling-0", "pthread_mutex_setprioceiling", "ceiling 0", R_ERRNO, call_setceil, check_setceil,
	  .a = 0, .b = P_PP, .flags = F_FIFO },
	{ "PP-setprioceiling-100", "pthread_mutex_setprioceiling", "ceiling 100", R_ERRNO, call_setceil,
	  check_setceil, .a = 100, .b = P_PP, .flags = F_FIFO },
	{ "PP-setprioceiling-neg1", "pthread_mutex_setprioceiling", "ceiling -1", R_ERRNO, call_setceil,
	  check_setceil, .a = -1, .b = P_PP, .flags = F_FIFO },
	{ "PP-setprioceiling-INT_MAX", "pthread_mutex_setprioceiling", "ceiling INT_MAX", R_ERRNO, call_setceil,
	  check_setceil, .a = INT_MAX, .b = P_PP, .flags = F_FIFO },
	{ "PP-setprioceiling-NONE", "pthread_mutex_setprioceiling", "on a PRIO_NONE mutex", R_ERRNO, call_setceil,
	  check_setceil, .a = CEILING, .b = P_NONE },
	{ "PP-setprioceiling-PI", "pthread_mutex_setprioceiling", "on a PRIO_INHERIT mutex", R_ERRNO, call_setceil,
	  check_setceil, .a = CEILING, .b = P_PI },
	{ "PP-getprioceiling-NONE", "pthread_mutex_getprioceiling", "on a PRIO_NONE mutex", R_ERRNO,
	  call_getceil_not_pp, NULL, .b = P_NONE },
	{ "PP-getprioceiling-PI", "pthread_mutex_getprioceiling", "on a PRIO_INHERIT mutex", R_ERRNO,
	  call_getceil_not_pp, NULL, .b = P_PI },
	{ "PP-getprioceiling-NONE-NULL", "pthread_mutex_getprioceiling", "on a PRIO_NONE mutex, result pointer NULL",
	  R_ERRNO, call_getceil_not_pp, NULL, .b = P_NONE, .c = 1 },
	{ "PP-setprioceiling-owner-NORMAL", "pthread_mutex_setprioceiling", "by the owner, NORMAL PP", R_ERRNO,
	  call_setceil_owner, check_setceil_owner, .a = PTHREAD_MUTEX_NORMAL, .flags = F_FIFO },
	{ "PP-setprioceiling-owner-RECURSIVE", "pthread_mutex_setprioceiling", "by the owner, RECURSIVE PP",
	  R_ERRNO, call_setceil_owner, check_setceil_owner, .a = PTHREAD_MUTEX_RECURSIVE, .flags = F_FIFO },
	{ "PP-setprioceiling-owner-ERRORCHECK", "pthread_mutex_setprioceiling", "by the owner, ERRORCHECK PP",
	  R_ERRNO, call_setceil_owner, check_setceil_owner, .a = PTHREAD_MUTEX_ERRORCHECK, .flags = F_FIFO },
	{ "PP-setprioceiling-oldNULL", "pthread_mutex_setprioceiling", "old_ceiling NULL", R_ERRNO,
	  call_setceil_old_null, check_setceil_old_null, .flags = F_FIFO },

	/* Free mutexes and bad deadlines: a lock that need not block succeeds. */
	{ "TF-timedlock-NORMAL-nsec-neg", "pthread_mutex_timedlock", "free NORMAL, tv_nsec -1", R_ERRNO,
	  call_timed_free, check_timed_free, .a = COMBO(0, P_NONE, 0), .b = TS_NSEC_NEG },
	{ "TF-timedlock-NORMAL-NULL", "pthread_mutex_timedlock", "free NORMAL, NULL deadline", R_ERRNO,
	  call_timed_free, check_timed_free, .a = COMBO(0, P_NONE, 0), .b = TS_NULL },
	{ "TF-timedlock-ERRORCHECK-nsec-1e9", "pthread_mutex_timedlock", "free ERRORCHECK, tv_nsec 1000000000",
	  R_ERRNO, call_timed_free, check_timed_free, .a = COMBO(2, P_NONE, 0), .b = TS_NSEC_1E9 },
	{ "TF-timedlock-PI-nsec-neg", "pthread_mutex_timedlock", "free NORMAL PI, tv_nsec -1", R_ERRNO,
	  call_timed_free, check_timed_free, .a = COMBO(0, P_PI, 0), .b = TS_NSEC_NEG },
	{ "TF-timedlock-robust-nsec-neg", "pthread_mutex_timedlock", "free NORMAL robust, tv_nsec -1", R_ERRNO,
	  call_timed_free, check_timed_free, .a = COMBO(0, P_NONE, 1), .b = TS_NSEC_NEG },
	{ "TF-clocklock-NORMAL-nsec-neg", "pthread_mutex_clocklock", "free NORMAL, CLOCK_MONOTONIC, tv_nsec -1",
	  R_ERRNO, call_timed_free, check_timed_free, .a = COMBO(0, P_NONE, 0), .b = TS_NSEC_NEG, .c = 1 },
	{ "TF-mtx_timedlock-nsec-neg", "mtx_timedlock", "free mtx_timed, tv_nsec -1", R_THRD, call_timed_free,
	  check_timed_free, .a = -1, .b = TS_NSEC_NEG },

	/* Condition variables. */
	{ "C-destroy-twice", "pthread_cond_destroy", "destroyed condition", R_ERRNO, call_cond_destroy_twice,
	  NULL, .a = 0 },
	{ "C-destroy-waited-NORMAL", "pthread_cond_destroy", "a waiter blocked (NORMAL mutex)", R_ERRNO,
	  call_cond_destroy_waited, check_cond_destroy_waited, .a = WK_NORMAL },
	{ "C-destroy-waited-PI", "pthread_cond_destroy", "a waiter blocked (PI mutex)", R_ERRNO,
	  call_cond_destroy_waited, check_cond_destroy_waited, .a = WK_PI },
	{ "C-destroy-waited-pshared", "pthread_cond_destroy", "a waiter blocked (process-shared condition)",
	  R_ERRNO, call_cond_destroy_waited, check_cond_destroy_waited, .a = WK_PSHARED },
	{ "C-cnd_destroy-waited", "cnd_destroy", "a waiter blocked", R_VOID, call_cond_destroy_waited,
	  check_cond_destroy_waited, .a = WK_CND },
	{ "C-two-mutexes-signal", "pthread_cond_timedwait",
	  "a second mutex while another thread waits with the first; then signal", R_ERRNO, call_cond_two_mutexes,
	  check_cond_two_mutexes, .b = 0 },
	{ "C-two-mutexes-broadcast", "pthread_cond_timedwait",
	  "a second mutex while another thread waits with the first; then broadcast", R_ERRNO,
	  call_cond_two_mutexes, check_cond_two_mutexes, .b = 1 },
	{ "C-wait-destroyed-mutex", "pthread_cond_wait", "destroyed mutex", R_ERRNO, call_cond_bad_mutex,
	  check_cond_bad_mutex, .a = 0, .b = P_DESTROYED },
	{ "C-timedwait-destroyed-mutex", "pthread_cond_timedwait", "destroyed mutex", R_ERRNO, call_cond_bad_mutex,
	  check_cond_bad_mutex, .a = 1, .b = P_DESTROYED },
	{ "C-wait-0xff-mutex", "pthread_cond_wait", "mutex of bytes 0xff", R_ERRNO, call_cond_bad_mutex,
	  check_cond_bad_mutex, .a = 0, .b = P_FF },
	{ "C-timedwait-0xff-mutex", "pthread_cond_timedwait", "mutex of bytes 0xff", R_ERRNO, call_cond_bad_mutex,
	  check_cond_bad_mutex, .a = 1, .b = P_FF },
	{ "C-cnd_wait-unowned", "cnd_wait", "recursive mtx nobody holds", R_THRD, call_cnd_unowned,
	  check_cnd_unowned, .a = 0 },
	{ "C-cnd_timedwait-unowned", "cnd_timedwait", "recursive mtx nobody holds", R_THRD, call_cnd_unowned,
	  check_cnd_unowned, .a = 1 },

	/* Barriers. */
	{ "B-init-0", "pthread_barrier_init", "count 0", R_ERRNO, call_barrier_count, check_barrier_count, .b = 0 },
	{ "B-init-UINT_MAX", "pthread_barrier_init", "count UINT_MAX", R_ERRNO, call_barrier_count,
	  check_barrier_count, .b = UINT_MAX },
	{ "B-init-INT_MAX+1", "pthread_barrier_init", "count INT_MAX + 1", R_ERRNO, call_barrier_count,
	  check_barrier_count, .b = (long)INT_MAX + 1 },
	{ "B-init-INT_MAX", "pthread_barrier_init", "count INT_MAX", R_ERRNO, call_barrier_count,
	  check_barrier_count, .b = INT_MAX },
	{ "B-init-2^22", "pthread_barrier_init", "count 2^22", R_ERRNO, call_barrier_count, check_barrier_count,
	  .b = 1L << 22 },
	{ "B-init-2^22-1", "pthread_barrier_init", "count 2^22 - 1 (valid)", R_ERRNO, call_barrier_count,
	  check_barrier_count, .b = (1L << 22) - 1 },
	{ "B-destroy-waited", "pthread_barrier_destroy", "a thread blocked in the round", R_ERRNO,
	  call_barrier_destroy_waited, check_barrier_destroy_waited, .a = 0 },
	{ "B-destroy-waited-pshared", "pthread_barrier_destroy", "a thread blocked in the round (process-shared)",
	  R_ERRNO, call_barrier_destroy_waited, check_barrier_destroy_waited, .a = 1 },
	{ "B-wait-destroyed-count1", "pthread_barrier_wait", "destroyed barrier of count 1", R_BARRIER,
	  call_barrier_junk, NULL, .a = 0, .b = P_DESTROYED, .c = 1 },

	/* Scheduling. */
#define SCHED(id, fn, desc, op, target, policy, prio, fl)                                                  \
	{ id, fn, desc, R_ERRNO, call_sched, check_sched, .a = (op) | (target) << 4, .b = policy, .c = prio, \
	  .flags = fl }
	SCHED("S-param-policy-99", "pthread_setschedparam", "policy 99", SO_PARAM, ST_SELF, 99, 0, 0),
	SCHED("S-param-FIFO-0", "pthread_setschedparam", "SCHED_FIFO priority 0", SO_PARAM, ST_SELF, SCHED_FIFO, 0,
	      0),
	SCHED("S-param-FIFO-100", "pthread_setschedparam", "SCHED_FIFO priority 100", SO_PARAM, ST_SELF, SCHED_FIFO,
	      100, 0),
	SCHED("S-param-FIFO-neg1", "pthread_setschedparam", "SCHED_FIFO priority -1", SO_PARAM, ST_SELF,
	      SCHED_FIFO, -1, 0),
	SCHED("S-param-RR-100", "pthread_setschedparam", "SCHED_RR priority 100", SO_PARAM, ST_SELF, SCHED_RR, 100,
	      0),
	SCHED("S-param-OTHER-5", "pthread_setschedparam", "SCHED_OTHER priority 5", SO_PARAM, ST_SELF, SCHED_OTHER,
	      5, 0),
	SCHED("S-param-NULL", "pthread_setschedparam", "SCHED_FIFO, param NULL", SO_PARAM_NULL, ST_SELF,
	      SCHED_FIFO, 0, 0),
	SCHED("S-param-exited", "pthread_setschedparam", "a thread that has exited (not joined)", SO_PARAM,
	      ST_EXITED, SCHED_FIFO, 5, 0),
	SCHED("S-prio-100", "pthread_setschedprio", "priority 100 (caller FIFO 5)", SO_PRIO, ST_SELF, 0, 100,
	      F_FIFO),
	SCHED("S-prio-neg1", "pthread_setschedprio", "priority -1 (caller FIFO 5)", SO_PRIO, ST_SELF, 0, -1,
	      F_FIFO),
	SCHED("S-prio-OTHER-5", "pthread_setschedprio", "priority 5 (caller SCHED_OTHER)", SO_PRIO, ST_SELF, 0, 5,
	      0),
	SCHED("S-prio-exited", "pthread_setschedprio", "a thread that has exited (not joined)", SO_PRIO, ST_EXITED,
	      0, 5, 0),
	SCHED("S-pp-param-policy-99", "pthread_setschedparam", "policy 99, holding a PP mutex", SO_PARAM,
	      ST_SELF_HOLDING_PP, 99, 3, F_FIFO),
	SCHED("S-pp-param-FIFO-100", "pthread_setschedparam", "SCHED_FIFO 100, holding a PP mutex", SO_PARAM,
	      ST_SELF_HOLDING_PP, SCHED_FIFO, 100, F_FIFO),
	SCHED("S-pp-param-FIFO-0", "pthread_setschedparam", "SCHED_FIFO 0, holding a PP mutex", SO_PARAM,
	      ST_SELF_HOLDING_PP, SCHED_FIFO, 0, F_FIFO),
	SCHED("S-pp-param-OTHER-5", "pthread_setschedparam", "SCHED_OTHER 5, holding a PP mutex", SO_PARAM,
	      ST_SELF_HOLDING_PP, SCHED_OTHER, 5, F_FIFO),
	SCHED("S-pp-prio-100", "pthread_setschedprio", "priority 100, holding a PP mutex", SO_PRIO,
	      ST_SELF_HOLDING_PP, 0, 100, F_FIFO),
	SCHED("S-pp-prio-neg1", "pthread_setschedprio", "priority -1, holding a PP mutex", SO_PRIO,
	      ST_SELF_HOLDING_PP, 0, -1, F_FIFO),
	SCHED("S-pp-prio-0", "pthread_setschedprio", "priority 0 (caller FIFO), holding a PP mutex", SO_PRIO,
	      ST_SELF_HOLDING_PP, 0, 0, F_FIFO),
#undef SCHED
	{ "S-get-exited", "pthread_getschedparam", "a thread that has exited (not joined)", R_ERRNO, call_getsched,
	  check_getsched, .a = ST_EXITED },
	{ "S-get-pp", "pthread_getschedparam", "caller FIFO 5, holding a PP mutex of ceiling 10", R_ERRNO,
	  call_getsched, check_getsched, .a = ST_SELF_HOLDING_PP, .flags = F_FIFO },

	/* C11. */
	{ "X-mtx_init-4", "mtx_init", "type 4", R_THRD, call_mtx_init, NULL, .b = 4 },
	{ "X-mtx_init-8", "mtx_init", "type 8", R_THRD, call_mtx_init, NULL, .b = 8 },
	{ "X-mtx_init-neg1", "mtx_init", "type -1", R_THRD, call_mtx_init, NULL, .b = -1 },
	{ "X-mtx_init-99", "mtx_init", "type 99", R_THRD, call_mtx_init, NULL, .b = 99 },
	{ "X-mtx_init-7", "mtx_init", "type mtx_timed | mtx_recursive | 4", R_THRD, call_mtx_init, NULL, .b = 7 },
	{ "X-mtx_init-INT_MIN", "mtx_init", "type INT_MIN", R_THRD, call_mtx_init, NULL, .b = INT_MIN },
	{ "X-mtx_init-4-relock", "mtx_trylock", "relock by the owner of a mutex made with type 4", R_THRD,
	  call_mtx_init_relock, check_mtx_init_relock, .b = 4 },
	{ "X-mtx_init-99-relock", "mtx_trylock", "relock by the owner of a mutex made with type 99", R_THRD,
	  call_mtx_init_relock, check_mtx_init_relock, .b = 99 },
	{ "X-mtx_init-neg1-relock", "mtx_trylock", "relock by the owner of a mutex made with type -1", R_THRD,
	  call_mtx_init_relock, check_mtx_init_relock, .b = -1 },
	{ "X-mtx_init-7-relock", "mtx_trylock",
	  "relock by the owner of a mutex made with type mtx_timed | mtx_recursive | 4", R_THRD,
	  call_mtx_init_relock, check_mtx_init_relock, .b = 7 },
	{ "X-mtx_timedlock-plain", "mtx_timedlock", "mtx_plain (not mtx_timed) held by another", R_THRD,
	  call_mtx_case, check_mtx_case, .a = XC_TIMEDLOCK_PLAIN },
	{ "X-mtx_timedlock-plain-recursive", "mtx_timedlock", "mtx_plain | mtx_recursive held by another", R_THRD,
	  call_mtx_case, check_mtx_case, .a = XC_TIMEDLOCK_RECURSIVE },
	{ "X-mtx_timedlock-relock", "mtx_timedlock", "mtx_plain, by its owner", R_THRD, call_mtx_case,
	  check_mtx_case, .a = XC_TIMEDLOCK_RELOCK },
	{ "X-mtx_trylock-relock", "mtx_trylock", "mtx_plain, by its owner", R_THRD, call_mtx_case, check_mtx_case,
	  .a = XC_TRYLOCK_RELOCK },
	{ "X-mtx_unlock-nonowner-recursive", "mtx_unlock", "mtx_recursive held by another", R_THRD,
	  call_mtx_case, check_mtx_case, .a = XC_UNLOCK_NONOWNER_RECURSIVE },
	{ "X-mtx_unlock-nonowner-plain", "mtx_unlock", "mtx_plain held by another", R_THRD, call_mtx_case,
	  check_mtx_case, .a = XC_UNLOCK_NONOWNER_PLAIN },
	{ "X-mtx_unlock-unlocked-recursive", "mtx_unlock", "mtx_recursive nobody holds", R_THRD, call_mtx_case,
	  check_mtx_case, .a = XC_UNLOCK_UNLOCKED_RECURSIVE },
};

static struct row *rows;
static size_t nrows, rows_cap;

static struct row *add_row(void)
{
	if (nrows == rows_cap) {
		rows_cap = rows_cap ? rows_cap * 2 : 256;
		rows = realloc(rows, rows_cap * sizeof *rows);
		if (!rows)
			abort();
	}
	memset(&rows[nrows], 0, sizeof rows[nrows]);
	return &rows[nrows++];
}

static char *xasprintf(const char *format, ...) __attribute__((format(printf, 1, 2)));
static char *xasprintf(const char *format, ...)
{
	va_list ap;
	char *s;
	va_start(ap, format);
	if (vasprintf(&s, format, ap) < 0)
		abort();
	va_end(ap);
	return s;
}

static const char *object_desc(const char *object, enum pattern pat)
{
	if (pat == P_DESTROYED)
		return xasprintf("destroyed %s", object);
	return xasprintf("%s of %s", object, pattern_desc[pat]);
}

static const char *combo_tag(long c)
{
	return xasprintf("%s-%s%s", type_tag[C_TYPE(c)], proto_tag[C_PROTO(c)], C_ROBUST(c) ? "-robust" : "");
}

static const char *combo_desc(long c)
{
	return xasprintf("%s %s%s", type_tag[C_TYPE(c)], proto_tag[C_PROTO(c)], C_ROBUST(c) ? " robust" : "");
}

static void add_mask_row(int op, enum mask_case k, long c, const char *tag, const char *desc)
{
	struct row *r = add_row();
	r->id = xasprintf("RT-%s-%s", mask_ops[op].tag, tag);
	r->fn = mask_ops[op].fn;
	r->desc = desc;
	r->kind = R_ERRNO;
	r->call = call_mask;
	r->check = check_mask;
	r->a = op;
	r->b = k;
	r->c = c;
	r->expect = errname(mask_expect((enum mask_op)op, k, c));
}

/* ---- reader-writer locks ---- */

enum rw_case {
	RWC_SETKIND_99, RWC_SETKIND_NEG1, RWC_SETPSHARED_2, RWC_INIT_JUNK_ATTR, RWC_RDLOCK_OWNER,
	RWC_WRLOCK_OWNER, RWC_TRYRDLOCK_OWNER, RWC_TRYWRLOCK_READER, RWC_TIMED, RWC_UNLOCK_FREE,
	RWC_UNLOCK_OTHER_WRITER, RWC_DESTROY_HELD, RWC_ALIAS,
};
/* RWC_TIMED: b = which call (0 timedrd, 1 timedwr, 2 clockrd, 3 clockwr),
 * c = what is wrong. */
enum rw_timed_case { RWT_NSEC_1E9, RWT_NSEC_NEG, RWT_SEC_NEG, RWT_NULL, RWT_CLOCK_CPUTIME, RWT_CLOCK_99 };

static pthread_rwlock_t rw_obj;

static int rw_wrlock(void *rw)
{
	return pthread_rwlock_wrlock(rw);
}

static int rw_rdlock(void *rw)
{
	return pthread_rwlock_rdlock(rw);
}

static int rw_unlock(void *rw)
{
	return pthread_rwlock_unlock(rw);
}

static int rw_tryrdlock_release(void *rw)
{
	int e = pthread_rwlock_tryrdlock(rw);
	if (e == 0)
		pthread_rwlock_unlock(rw);
	return e;
}

static int rw_timed(pthread_rwlock_t *rw, int which, int c)
{
	struct timespec ts = { 0, 0 };
	clockid_t clock = CLOCK_MONOTONIC;
	if (c == RWT_NSEC_1E9)
		ts.tv_nsec = 1000000000L;
	else if (c == RWT_NSEC_NEG)
		ts.tv_nsec = -1;
	else if (c == RWT_SEC_NEG)
		ts.tv_sec = -1;
	else if (c == RWT_CLOCK_CPUTIME)
		clock = CLOCK_PROCESS_CPUTIME_ID;
	else if (c == RWT_CLOCK_99)
		clock = 99;
	const struct timespec *d = c == RWT_NULL ? NULL : &ts;
	switch (which) {
	case 0: return pthread_rwlock_timedrdlock(rw, d);
	case 1: return pthread_rwlock_timedwrlock(rw, d);
	case 2: return pthread_rwlock_clockrdlock(rw, clock, d);
	default: return pthread_rwlock_clockwrlock(rw, clock, d);
	}
}

typedef int rw_fn(pthread_rwlock_t *);

/* a: rw_case; for RWC_ALIAS, b: which __pthread_rwlock_* (see rw_aliases). */
static const struct {
	const char *tag, *fn, *desc;
} rw_aliases[] = {
	{ "__init", "__pthread_rwlock_init", "attribute of bytes 0xff" },
	{ "__destroy", "__pthread_rwlock_destroy", "held for writing by the caller" },
	{ "__rdlock", "__pthread_rwlock_rdlock", "held for writing by the caller" },
	{ "__tryrdlock", "__pthread_rwlock_tryrdlock", "held for writing by the caller" },
	{ "__wrlock", "__pthread_rwlock_wrlock", "held for writing by the caller" },
	{ "__trywrlock", "__pthread_rwlock_trywrlock", "held for reading by the caller" },
	{ "__unlock", "__pthread_rwlock_unlock", "free lock" },
};

static int call_rw(const struct row *r)
{
	pthread_rwlock_t *rw = &rw_obj;
	pthread_rwlockattr_t a;
	SETUP(pthread_rwlockattr_init(&a));
	switch ((enum rw_case)r->a) {
	case RWC_SETKIND_99: return pthread_rwlockattr_setkind_np(&a, 99);
	case RWC_SETKIND_NEG1: return pthread_rwlockattr_setkind_np(&a, -1);
	case RWC_SETPSHARED_2: return pthread_rwlockattr_setpshared(&a, 2);
	default: break;
	}
	if (r->a == RWC_INIT_JUNK_ATTR || (r->a == RWC_ALIAS && r->b == 0)) {
		memset(&a, 0xff, sizeof a);
		if (r->a == RWC_ALIAS) {
			int (*f)(pthread_rwlock_t *, const pthread_rwlockattr_t *) = sym("__pthread_rwlock_init",
											   "GLIBC_2.2.5");
			return f ? f(rw, &a) : RES_SETUP(ENOSYS);
		}
		return pthread_rwlock_init(rw, &a);
	}
	SETUP(pthread_rwlock_init(rw, NULL));
	int e;
	switch ((enum rw_case)r->a) {
	case RWC_RDLOCK_OWNER:
	case RWC_WRLOCK_OWNER:
	case RWC_TRYRDLOCK_OWNER:
		SETUP(pthread_rwlock_wrlock(rw));
		e = r->a == RWC_RDLOCK_OWNER   ? pthread_rwlock_rdlock(rw)
		    : r->a == RWC_WRLOCK_OWNER ? pthread_rwlock_wrlock(rw)
					       : pthread_rwlock_tryrdlock(rw);
		SETUP(pthread_rwlock_unlock(rw));
		return e;
	case RWC_TRYWRLOCK_READER:
		SETUP(pthread_rwlock_rdlock(rw));
		e = pthread_rwlock_trywrlock(rw);
		SETUP(pthread_rwlock_unlock(rw));
		return e;
	case RWC_TIMED:
		/* Held for writing by another thread: a valid deadline in the
		 * past times out. */
		SETUP(agent_call(&A, rw_wrlock, rw));
		e = rw_timed(rw, (int)r->b, (int)r->c);
		SETUP(agent_call(&A, rw_unlock, rw));
		return e;
	case RWC_UNLOCK_FREE:
		return pthread_rwlock_unlock(rw);
	case RWC_UNLOCK_OTHER_WRITER:
		SETUP(agent_call(&A, rw_wrlock, rw));
		e = pthread_rwlock_unlock(rw);
		if (e == 0)
			return e; /* the check tells what that did */
		SETUP(agent_call(&A, rw_unlock, rw));
		return e;
	case RWC_DESTROY_HELD:
		SETUP(agent_call(&A, rw_rdlock, rw));
		e = pthread_rwlock_destroy(rw);
		SETUP(agent_call(&A, rw_unlock, rw));
		return e;
	case RWC_ALIAS: {
		rw_fn *f = sym(rw_aliases[r->b].fn, "GLIBC_2.2.5");
		if (!f)
			return RES_SETUP(ENOSYS);
		if (r->b == 6)
			return f(rw);
		if (r->b == 5) {
			SETUP(pthread_rwlock_rdlock(rw));
			e = f(rw);
			SETUP(pthread_rwlock_unlock(rw));
			return e;
		}
		SETUP(pthread_rwlock_wrlock(rw));
		e = f(rw);
		if (r->b != 1) /* destroy leaves it held, as it was */
			SETUP(pthread_rwlock_unlock(rw));
		else
			pthread_rwlock_unlock(rw);
		return e;
	}
	default:
		return RES_SETUP(EINVAL);
	}
}

/* After the row the lock (re-initialized where the row destroyed or
 * broke it on purpose: init and destroy rows) must work: free, one
 * writer excludes a reader of another thread, readers share it. */
static const char *check_rw(const struct row *r, int res)
{
	pthread_rwlock_t *rw = &rw_obj;
	if (r->a <= RWC_SETPSHARED_2)
		return NOSTATE;
	if (r->a == RWC_INIT_JUNK_ATTR || (r->a == RWC_ALIAS && r->b == 0)) {
		if (res != 0)
			return NOSTATE;
	}
	if (r->a == RWC_UNLOCK_OTHER_WRITER && res == 0)
		agent_call(&A, rw_unlock, rw);
	WANT(pthread_rwlock_trywrlock(rw), 0, "trywrlock of the free lock");
	WANT(agent_call(&A, rw_tryrdlock_release, rw), EBUSY, "tryrdlock by another thread while written");
	WANT(pthread_rwlock_unlock(rw), 0, "unlock of the write lock");
	WANT(pthread_rwlock_tryrdlock(rw), 0, "tryrdlock");
	WANT(agent_call(&A, rw_tryrdlock_release, rw), 0, "tryrdlock by another thread while read");
	WANT(pthread_rwlock_trywrlock(rw), EBUSY, "trywrlock while read");
	WANT(pthread_rwlock_unlock(rw), 0, "unlock of the read lock");
	WANT(pthread_rwlock_trywrlock(rw), 0, "trywrlock of the lock freed again");
	WANT(pthread_rwlock_unlock(rw), 0, "last unlock");
	return NULL;
}

static void add_rwlock_rows(void)
{
	static const struct {
		const char *id, *fn, *desc;
		enum rw_case c;
	} fixed[] = {
		{ "RWA-setkind_np-99", "pthread_rwlockattr_setkind_np", "kind 99", RWC_SETKIND_99 },
		{ "RWA-setkind_np-neg1", "pthread_rwlockattr_setkind_np", "kind -1", RWC_SETKIND_NEG1 },
		{ "RWA-setpshared-2", "pthread_rwlockattr_setpshared", "pshared 2", RWC_SETPSHARED_2 },
		{ "RW-init-attr-0xff", "pthread_rwlock_init", "attribute of bytes 0xff", RWC_INIT_JUNK_ATTR },
		{ "RW-rdlock-owner", "pthread_rwlock_rdlock", "held for writing by the caller", RWC_RDLOCK_OWNER },
		{ "RW-wrlock-owner", "pthread_rwlock_wrlock", "held for writing by the caller", RWC_WRLOCK_OWNER },
		{ "RW-tryrdlock-owner", "pthread_rwlock_tryrdlock", "held for writing by the caller",
		  RWC_TRYRDLOCK_OWNER },
		{ "RW-trywrlock-reader", "pthread_rwlock_trywrlock", "held for reading by the caller",
		  RWC_TRYWRLOCK_READER },
		{ "RW-unlock-free", "pthread_rwlock_unlock", "free lock", RWC_UNLOCK_FREE },
		{ "RW-unlock-other-writer", "pthread_rwlock_unlock", "held for writing by another thread",
		  RWC_UNLOCK_OTHER_WRITER },
		{ "RW-destroy-held", "pthread_rwlock_destroy", "held for reading by another thread", RWC_DESTROY_HELD },
	};
	for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++) {
		struct row *r = add_row();
		r->id = fixed[i].id;
		r->fn = fixed[i].fn;
		r->desc = fixed[i].desc;
		r->kind = R_ERRNO;
		r->call = call_rw;
		r->check = check_rw;
		r->a = fixed[i].c;
	}
	static const char *const timed_fn[4] = { "pthread_rwlock_timedrdlock", "pthread_rwlock_timedwrlock",
						 "pthread_rwlock_clockrdlock", "pthread_rwlock_clockwrlock" };
	static const char *const timed_tag[4] = { "timedrdlock", "timedwrlock", "clockrdlock", "clockwrlock" };
	static const struct {
		const char *tag, *desc;
	} timed_case[] = {
		[RWT_NSEC_1E9] = { "nsec-1e9", "tv_nsec 1e9, held for writing by another thread" },
		[RWT_NSEC_NEG] = { "nsec-neg", "tv_nsec -1, held for writing by another thread" },
		[RWT_SEC_NEG] = { "sec-neg", "tv_sec -1, held for writing by another thread" },
		[RWT_NULL] = { "NULL", "NULL deadline, held for writing by another thread" },
		[RWT_CLOCK_CPUTIME] = { "clock-cputime", "CLOCK_PROCESS_CPUTIME_ID" },
		[RWT_CLOCK_99] = { "clock-99", "clock 99" },
	};
	for (int which = 0; which < 4; which++)
		for (int c = 0; c <= RWT_CLOCK_99; c++) {
			if (which < 2 && c >= RWT_CLOCK_CPUTIME)
				continue;
			struct row *r = add_row();
			r->id = xasprintf("RW-%s-%s", timed_tag[which], timed_case[c].tag);
			r->fn = timed_fn[which];
			r->desc = timed_case[c].desc;
			r->kind = R_ERRNO;
			r->call = call_rw;
			r->check = check_rw;
			r->a = RWC_TIMED;
			r->b = which;
			r->c = c;
		}
	for (size_t i = 0; i < sizeof rw_aliases / sizeof rw_aliases[0]; i++) {
		struct row *r = add_row();
		r->id = xasprintf("RW-%s", rw_aliases[i].tag);
		r->fn = rw_aliases[i].fn;
		r->desc = rw_aliases[i].desc;
		r->kind = R_ERRNO;
		r->call = call_rw;
		r->check = check_rw;
		r->a = RWC_ALIAS;
		r->b = (long)i;
	}
}

static void build_rows(void)
{
	for (size_t i = 0; i < sizeof fixed_rows / sizeof fixed_rows[0]; i++)
		*add_row() = fixed_rows[i];

	/* Gets on destroyed and garbage attribute objects. */
	static const struct {
		const char *tag, *fn;
		enum attr_kind kind;
		int (*get)(void *, int *);
	} gets[] = {
		{ "MA-gettype", "pthread_mutexattr_gettype", AK_MUTEX, get_mtype },
		{ "MA-getkind_np", "pthread_mutexattr_getkind_np", AK_MUTEX, get_mkind_np },
		{ "MA-getprotocol", "pthread_mutexattr_getprotocol", AK_MUTEX, get_mprotocol },
		{ "MA-getprioceiling", "pthread_mutexattr_getprioceiling", AK_MUTEX, get_mceiling },
		{ "MA-getrobust", "pthread_mutexattr_getrobust", AK_MUTEX, get_mrobust },
		{ "MA-getrobust_np", "pthread_mutexattr_getrobust_np", AK_MUTEX, get_mrobust_np },
		{ "MA-getpshared", "pthread_mutexattr_getpshared", AK_MUTEX, get_mpshared },
		{ "CA-getclock", "pthread_condattr_getclock", AK_COND, get_cclock },
		{ "CA-getpshared", "pthread_condattr_getpshared", AK_COND, get_cpshared },
		{ "BA-getpshared", "pthread_barrierattr_getpshared", AK_BARRIER, get_bpshared },
	};
	static const enum pattern get_patterns[] = { P_DESTROYED, P_FF };
	for (size_t i = 0; i < sizeof gets / sizeof gets[0]; i++)
		for (size_t p = 0; p < 2; p++) {
			struct row *r = add_row();
			r->id = xasprintf("%s-%s", gets[i].tag, pattern_tag[get_patterns[p]]);
			r->fn = gets[i].fn;
			r->desc = object_desc("attribute", get_patterns[p]);
			r->kind = R_ERRNO;
			r->call = call_attr_get;
			r->a = gets[i].kind;
			r->c = get_patterns[p];
			r->get = gets[i].get;
		}

	/* Objects initialized from bad attribute objects. */
	static const struct {
		const char *tag, *fn;
		enum init_kind kind;
	} inits[] = {
		{ "MI-attr", "pthread_mutex_init", IK_MUTEX },
		{ "MI-__attr", "__pthread_mutex_init", IK_MUTEX_ALIAS },
		{ "CI-attr", "pthread_cond_init", IK_COND },
		{ "BI-attr", "pthread_barrier_init", IK_BARRIER },
	};
	static const enum pattern junk_patterns[] = { P_FF, P_A5, P_RAND, P_DESTROYED };
	for (size_t i = 0; i < sizeof inits / sizeof inits[0]; i++)
		for (size_t p = 0; p < 4; p++) {
			struct row *r = add_row();
			r->id = xasprintf("%s-%s", inits[i].tag, pattern_tag[junk_patterns[p]]);
			r->fn = inits[i].fn;
			r->desc = object_desc("attribute", junk_patterns[p]);
			r->kind = R_ERRNO;
			r->call = call_init_bad_attr;
			r->check = check_init_bad_attr;
			r->a = inits[i].kind;
			r->b = junk_patterns[p];
		}

	/* Garbage and destroyed mutexes, every mutex operation. */
	for (size_t p = 0; p < 4; p++)
		for (int op = 0; op < MO_COUNT; op++) {
			struct row *r = add_row();
			r->id = xasprintf("MG-%s-%s", mutex_ops[op].tag, pattern_tag[junk_patterns[p]]);
			r->fn = mutex_ops[op].fn;
			r->desc = object_desc("mutex", junk_patterns[p]);
			r->kind = mutex_ops[op].kind;
			r->call = call_mutex_junk;
			r->check = check_mutex_junk;
			r->a = op;
			r->b = junk_patterns[p];
		}

	/* Every type x protocol x robustness. */
	static const struct {
		const char *tag, *fn, *desc;
		int (*call)(const struct row *);
		const char *(*check)(const struct row *, int);
		long b;
	} per_kind[] = {
		{ "MU-nonowner", "pthread_mutex_unlock", "unlock by a non-owner", call_unlock_nonowner,
		  check_unlock_nonowner, 0 },
		{ "MU-unlocked", "pthread_mutex_unlock", "unlock of a mutex nobody holds", call_unlock_unlocked,
		  check_unlock_unlocked, 0 },
		{ "MD-locked", "pthread_mutex_destroy", "destroy of a mutex the caller holds", call_destroy_locked,
		  check_destroy_locked, 0 },
		{ "MR-trylock", "pthread_mutex_trylock", "trylock by the owner", call_relock, check_relock,
		  RL_TRYLOCK },
		{ "MR-timedlock", "pthread_mutex_timedlock", "timedlock (50 ms) by the owner", call_relock,
		  check_relock, RL_TIMEDLOCK },
	};
	for (size_t k = 0; k < sizeof per_kind / sizeof per_kind[0]; k++)
		for (int robust = 0; robust < 2; robust++)
			for (int proto = 0; proto < 3; proto++)
				for (int type = 0; type < 4; type++) {
					long c = COMBO(type, proto, robust);
					struct row *r = add_row();
					r->id = xasprintf("%s-%s", per_kind[k].tag, combo_tag(c));
					r->fn = per_kind[k].fn;
					r->desc = xasprintf("%s, %s", per_kind[k].desc, combo_desc(c));
					r->kind = R_ERRNO;
					r->call = per_kind[k].call;
					r->check = per_kind[k].check;
					r->a = c;
					r->b = per_kind[k].b;
					r->flags = proto == P_PP ? F_FIFO : 0;
				}
	for (int robust = 0; robust < 2; robust++)
		for (int proto = 0; proto < 3; proto++) {
			long c = COMBO(PTHREAD_MUTEX_ERRORCHECK, proto, robust);
			struct row *r = add_row();
			r->id = xasprintf("MR-lock-%s", combo_tag(c));
			r->fn = "pthread_mutex_lock";
			r->desc = xasprintf("lock by the owner, %s", combo_desc(c));
			r->kind = R_ERRNO;
			r->call = call_relock;
			r->check = check_relock;
			r->a = c;
			r->b = RL_LOCK;
			r->flags = proto == P_PP ? F_FIFO : 0;
		}

	/* Robust: consistent, unrecoverable. */
	static const struct {
		const char *tag, *fn, *desc;
	} consistent_cases[] = {
		[CC_NOT_DEAD] = { "MC-notdead", "pthread_mutex_consistent", "robust, owner alive (the caller)" },
		[CC_NONOWNER] = { "MC-nonowner", "pthread_mutex_consistent",
				  "by a non-owner, after the next locker got EOWNERDEAD" },
		[CC_DEAD_UNLOCKED] = { "MC-dead-unlocked", "pthread_mutex_consistent",
				       "owner died, nobody has locked it since" },
		[CC_UNRECOVERABLE] = { "MC-unrecoverable", "pthread_mutex_consistent", "unrecoverable mutex" },
		[CC_NOT_ROBUST] = { "MC-notrobust", "pthread_mutex_consistent", "non-robust mutex the caller holds" },
		[CC_NP_NOT_ROBUST] = { "MC-np-notrobust", "pthread_mutex_consistent_np",
				       "non-robust mutex the caller holds" },
	};
	for (int k = 0; k < 6; k++)
		for (int proto = 0; proto < 3; proto++) {
			struct row *r = add_row();
			r->id = xasprintf("%s-%s", consistent_cases[k].tag, proto_tag[proto]);
			r->fn = consistent_cases[k].fn;
			r->desc = xasprintf("%s, NORMAL %s", consistent_cases[k].desc, proto_tag[proto]);
			r->kind = R_ERRNO;
			r->call = call_consistent;
			r->check = check_consistent;
			r->a = k;
			r->b = proto;
			r->flags = proto == P_PP ? F_FIFO : 0;
		}
	static const struct {
		const char *tag, *fn;
	} unrecoverable_ops[] = {
		[UO_LOCK] = { "lock", "pthread_mutex_lock" },
		[UO_TRYLOCK] = { "trylock", "pthread_mutex_trylock" },
		[UO_TIMEDLOCK] = { "timedlock", "pthread_mutex_timedlock" },
		[UO_CLOCKLOCK] = { "clocklock", "pthread_mutex_clocklock" },
		[UO_UNLOCK] = { "unlock", "pthread_mutex_unlock" },
	};
	for (int op = 0; op < 5; op++)
		for (int proto = 0; proto < 3; proto++) {
			struct row *r = add_row();
			r->id = xasprintf("MN-%s-%s", unrecoverable_ops[op].tag, proto_tag[proto]);
			r->fn = unrecoverable_ops[op].fn;
			r->desc = xasprintf("unrecoverable NORMAL %s robust mutex", proto_tag[proto]);
			r->kind = R_ERRNO;
			r->call = call_unrecoverable;
			r->check = check_unrecoverable;
			r->a = op;
			r->b = proto;
			r->flags = proto == P_PP ? F_FIFO : 0;
		}
	for (int proto = 0; proto < 3; proto++) {
		struct row *r = add_row();
		r->id = xasprintf("MN-unlock-ownerdead-nonowner-%s", proto_tag[proto]);
		r->fn = "pthread_mutex_unlock";
		r->desc = xasprintf("by a non-owner, the owner got EOWNERDEAD, NORMAL %s robust", proto_tag[proto]);
		r->kind = R_ERRNO;
		r->call = call_unlock_ownerdead_nonowner;
		r->check = check_unlock_ownerdead_nonowner;
		r->b = proto;
		r->flags = proto == P_PP ? F_FIFO : 0;
	}

	/* Deadlines. */
	for (size_t t = 0; t < TARGET_COUNT; t++)
		for (int s = 0; s < TS_COUNT; s++) {
			struct row *r = add_row();
			r->id = xasprintf("T-%s-%s", targets[t].tag, spec_tag[s]);
			r->fn = targets[t].fn;
			r->desc = xasprintf("%s, %s", targets[t].desc, spec_desc[s]);
			r->kind = target_c11(&targets[t]) ? R_THRD : R_ERRNO;
			r->call = call_timed;
			r->check = check_timed;
			r->a = (long)t;
			r->b = s;
			r->flags = targets[t].flags;
		}

	/* Clocks. */
	static const struct {
		const char *tag, *desc;
		clockid_t clock;
	} clocks[] = {
		{ "PROCESS_CPUTIME", "CLOCK_PROCESS_CPUTIME_ID", CLOCK_PROCESS_CPUTIME_ID },
		{ "THREAD_CPUTIME", "CLOCK_THREAD_CPUTIME_ID", CLOCK_THREAD_CPUTIME_ID },
		{ "neg1", "clock -1", -1 },
		{ "999", "clock 999", 999 },
		{ "MONOTONIC_RAW", "CLOCK_MONOTONIC_RAW", CLOCK_MONOTONIC_RAW },
		{ "BOOTTIME", "CLOCK_BOOTTIME", CLOCK_BOOTTIME },
		{ "REALTIME_COARSE", "CLOCK_REALTIME_COARSE", CLOCK_REALTIME_COARSE },
	};
	for (size_t i = 0; i < sizeof clocks / sizeof clocks[0]; i++)
		for (int where = 0; where < 3; where++) {
			if (where == 2 && i != 0)
				continue;
			struct row *r = add_row();
			r->id = xasprintf("CK-%s-%s",
					  where == 0   ? "clockwait"
					  : where == 1 ? "clocklock-free"
						       : "clocklock-held",
					  clocks[i].tag);
			r->fn = where == 0 ? "pthread_cond_clockwait" : "pthread_mutex_clocklock";
			r->desc = xasprintf("%s%s", clocks[i].desc,
					    where == 0   ? ", ERRORCHECK mutex held"
					    : where == 1 ? ", free mutex"
							 : ", mutex held by another");
			r->kind = R_ERRNO;
			r->call = call_bad_clock;
			r->check = check_bad_clock;
			r->a = where;
			r->b = clocks[i].clock;
		}

	/* Garbage and destroyed conditions, every condition operation. */
	for (size_t p = 0; p < 4; p++)
		for (int op = 0; op < CO_COUNT; op++) {
			struct row *r = add_row();
			r->id = xasprintf("CG-%s-%s", cond_ops[op].tag, pattern_tag[junk_patterns[p]]);
			r->fn = cond_ops[op].fn;
			r->desc = object_desc("condition", junk_patterns[p]);
			r->kind = cond_ops[op].kind;
			r->call = call_cond_junk;
			r->check = check_cond_junk;
			r->a = op;
			r->b = junk_patterns[p];
		}


	/* The library's own condition calls, each with the bad inputs it
	 * takes: mask 0, garbage and destroyed conditions and mutexes, a
	 * mutex the caller does not hold, deadlines, clocks, and
	 * wait-for-any's own arguments. */
	static const enum pattern mutex_patterns[] = { P_DESTROYED, P_FF };
	static const long mask_unowned[] = { COMBO(PTHREAD_MUTEX_ERRORCHECK, P_NONE, 0),
					     COMBO(PTHREAD_MUTEX_RECURSIVE, P_NONE, 0),
					     COMBO(PTHREAD_MUTEX_NORMAL, P_PI, 0) };
	for (int op = 0; op < KO_COUNT; op++) {
		if (op != KO_WAITANY)
			add_mask_row(op, MK_MASK0, 0, "mask0", "mask 0");
		for (size_t p = 0; p < 4; p++) {
			enum pattern pat = junk_patterns[p];
			add_mask_row(op, MK_COND, pat, xasprintf("cond-%s", pattern_tag[pat]),
				     object_desc("condition", pat));
		}
		if (!mask_ops[op].waits)
			continue;
		for (size_t p = 0; p < 2; p++) {
			enum pattern pat = mutex_patterns[p];
			add_mask_row(op, MK_MUTEX, pat, xasprintf("mutex-%s", pattern_tag[pat]),
				     object_desc("mutex", pat));
		}
		for (size_t i = 0; i < sizeof mask_unowned / sizeof mask_unowned[0]; i++) {
			long c = mask_unowned[i];
			add_mask_row(op, MK_UNOWNED, c, xasprintf("unowned-%s", combo_tag(c)),
				     xasprintf("%s mutex nobody holds", combo_desc(c)));
		}
		if (!mask_ops[op].timed)
			continue;
		for (int t = 0; t < TS_COUNT; t++)
			add_mask_row(op, MK_DEADLINE, t, spec_tag[t],
				     t == TS_NULL && op == KO_WAITANY ? "NULL deadline (none), signalled (expect 0)"
				     : t == TS_FAR ? "tv_sec LONG_MAX, signalled (expect 0)"
						   : spec_desc[t]);
		if (op == KO_TIMEDWAIT)
			continue;
		for (size_t i = 0; i < sizeof clocks / sizeof clocks[0]; i++)
			add_mask_row(op, MK_CLOCK, clocks[i].clock, xasprintf("clock-%s", clocks[i].tag),
				     clocks[i].desc);
		if (op == KO_WAITANY)
			for (int a = 0; a < AC_COUNT; a++)
				add_mask_row(op, MK_ANY, a, any_tag[a], any_desc[a]);
	}

	/* Waits with a mutex the caller does not hold. */
	static const struct {
		long combo;
		int owner;
	} unowned[] = {
		{ COMBO(PTHREAD_MUTEX_ERRORCHECK, P_NONE, 0), 0 }, { COMBO(PTHREAD_MUTEX_RECURSIVE, P_NONE, 0), 0 },
		{ COMBO(PTHREAD_MUTEX_ERRORCHECK, P_PI, 0), 0 },   { COMBO(PTHREAD_MUTEX_NORMAL, P_PI, 0), 0 },
		{ COMBO(PTHREAD_MUTEX_NORMAL, P_NONE, 1), 0 },	   { COMBO(PTHREAD_MUTEX_ERRORCHECK, P_PP, 0), 0 },
		{ COMBO(PTHREAD_MUTEX_NORMAL, P_NONE, 0), 0 },	   { COMBO(PTHREAD_MUTEX_ERRORCHECK, P_NONE, 0), 1 },
		{ COMBO(PTHREAD_MUTEX_NORMAL, P_PI, 0), 1 },
	};
	for (size_t i = 0; i < sizeof unowned / sizeof unowned[0]; i++)
		for (int timed = 0; timed < 2; timed++) {
			long c = unowned[i].combo;
			/* A NORMAL mutex cannot tell: only its timed wait ends. */
			if (c == COMBO(PTHREAD_MUTEX_NORMAL, P_NONE, 0) && !timed)
				continue;
			struct row *r = add_row();
			r->id = xasprintf("C-%s-%s-%s", timed ? "timedwait" : "wait",
					  unowned[i].owner ? "held-by-other" : "unowned", combo_tag(c));
			r->fn = timed ? "pthread_cond_timedwait" : "pthread_cond_wait";
			r->desc = xasprintf("%s mutex %s", combo_desc(c),
					    unowned[i].owner ? "held by another thread" : "nobody holds");
			r->kind = R_ERRNO;
			r->call = call_cond_unowned;
			r->check = check_cond_unowned;
			r->a = c;
			r->b = timed;
			r->c = unowned[i].owner;
			r->flags = C_PROTO(c) == P_PP ? F_FIFO : 0;
		}

	/* Garbage and destroyed barriers. */
	for (size_t p = 0; p < 4; p++)
		for (int op = 0; op < 2; op++) {
			struct row *r = add_row();
			r->id = xasprintf("BG-%s-%s", op ? "destroy" : "wait", pattern_tag[junk_patterns[p]]);
			r->fn = op ? "pthread_barrier_destroy" : "pthread_barrier_wait";
			r->desc = junk_patterns[p] == P_DESTROYED ? "destroyed barrier of count 2"
								  : object_desc("barrier", junk_patterns[p]);
			r->kind = op ? R_ERRNO : R_BARRIER;
			r->call = call_barrier_junk;
			r->a = op;
			r->b = junk_patterns[p];
			r->c = 2;
		}
	add_rwlock_rows();
}

/* ================================================================== */
/* Running the rows                                                    */
/* ================================================================== */

static void result_text(const struct row *r, int res, char *out, size_t n)
{
	if (res == RES_SKIP)
		snprintf(out, n, "SKIP");
	else if (res == RES_ABSENT)
		snprintf(out, n, "absent");
	else if (res == RES_HUNG)
		snprintf(out, n, "SETUP(hang)");
	else if (res <= RES_SETUP_BASE)
		snprintf(out, n, "SETUP(%s)", errname(RES_SETUP_BASE - res));
	else if (r->kind == R_VOID)
		snprintf(out, n, "void");
	else if (r->kind == R_NONE)
		snprintf(out, n, "n/a");
	else if (r->kind == R_THRD)
		snprintf(out, n, "%s", thrdname(res));
	else if (r->kind == R_COUNT)
		snprintf(out, n, "%d", res);
	else if (r->kind == R_BARRIER && res == PTHREAD_BARRIER_SERIAL_THREAD)
		snprintf(out, n, "SERIAL");
	else
		snprintf(out, n, "%s", errname(res));
}

/* The child: one row, its result on fd ("R ..."), then its state ("S ..."). */
static void __attribute__((noreturn)) child(const struct row *r, int fd, bool verbose)
{
	if (!verbose) {
		int null = open("/dev/null", O_WRONLY);
		if (null >= 0)
			dup2(null, 2);
	}
	main_tid = gettid();
	if (r->flags & (F_FIFO | F_HIGH)) {
		struct sched_param p = { .sched_priority = (r->flags & F_HIGH) ? HIGH_PRIO : BASE_PRIO };
		if (sched_setscheduler(0, SCHED_FIFO, &p) != 0) {
			dprintf(fd, "R SKIP\n");
			_exit(0);
		}
	}
	struct sched_param p;
	base_policy = sched_getscheduler(0) & ~SCHED_RESET_ON_FORK;
	sched_getparam(0, &p);
	base_prio = p.sched_priority;

	int res = r->call(r);
	char text[64];
	result_text(r, res, text, sizeof text);
	dprintf(fd, "R %s\n", text);
	if (r->expect && res_is_own(res) && strcmp(text, r->expect) != 0) {
		dprintf(fd, "S corrupt (expected %s)\n", r->expect);
	} else if (r->check && res_is_own(res)) {
		const char *s = r->check(r, res);
		if (!s)
			dprintf(fd, "S ok\n");
		else if (s != NOSTATE)
			dprintf(fd, "S corrupt (%s)\n", s);
	}
	_exit(0);
}

struct job {
	size_t index;
	pid_t pid;
	int fd;
	int64_t deadline;
	char buf[1024];
	size_t len;
};

/* The text of the report line "KEY text", or NULL. */
static const char *report_line(char *report, char key)
{
	for (char *line = strtok(report, "\n"); line; line = strtok(NULL, "\n"))
		if (line[0] == key && line[1] == ' ')
			return line + 2;
	return NULL;
}

static char *outcome(struct job *j, int status, bool killed)
{
	char copy[sizeof j->buf];
	j->buf[j->len] = '\0';
	memcpy(copy, j->buf, sizeof copy);
	const char *result = report_line(j->buf, 'R');
	const char *state = report_line(copy, 'S');
	if (killed)
		return result ? xasprintf("%s; state corrupt (hang after the call)", result) : xasprintf("HANG");
	if (WIFSIGNALED(status)) {
		const char *abbrev = sigabbrev_np(WTERMSIG(status));
		char crash[32];
		snprintf(crash, sizeof crash, "CRASH(SIG%s)", abbrev ? abbrev : "?");
		return result ? xasprintf("%s; state corrupt (%s after the call)", result, crash) : xasprintf("%s", crash);
	}
	if (!result)
		return xasprintf("EXIT(%d)", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	return state ? xasprintf("%s; state %s", result, state) : xasprintf("%s", result);
}

static void run_rows(const struct row *const *list, size_t n, int jobs, bool verbose)
{
	struct job *running = calloc((size_t)jobs, sizeof *running);
	char **out = calloc(n, sizeof *out);
	if (!running || !out)
		abort();
	size_t next = 0, printed = 0;
	int active = 0;
	while (printed < n) {
		while (active < jobs && next < n) {
			int fds[2];
			if (pipe2(fds, O_CLOEXEC) != 0)
				abort();
			fflush(stdout);
			pid_t pid = fork();
			if (pid < 0)
				abort();
			if (pid == 0) {
				close(fds[0]);
				child(list[next], fds[1], verbose);
			}
			close(fds[1]);
			struct job *j = &running[active++];
			memset(j, 0, sizeof *j);
			j->index = next;
			j->pid = pid;
			j->fd = fds[0];
			j->deadline = now_ms() + ROW_TIMEOUT_MS;
			next++;
		}
		struct pollfd pfd[64];
		for (int i = 0; i < active; i++)
			pfd[i] = (struct pollfd){ .fd = running[i].fd, .events = POLLIN };
		poll(pfd, (nfds_t)active, 10);
		for (int i = 0; i < active; i++) {
			struct job *j = &running[i];
			bool eof = false, killed = false;
			if (pfd[i].revents) {
				ssize_t m = read(j->fd, j->buf + j->len, sizeof j->buf - 1 - j->len);
				if (m > 0)
					j->len += (size_t)m;
				else
					eof = true;
			}
			if (!eof && now_ms() >= j->deadline) {
				kill(j->pid, SIGKILL);
				killed = true;
			}
			if (!eof && !killed)
				continue;
			int status = 0;
			waitpid(j->pid, &status, 0);
			ssize_t m;
			while ((m = read(j->fd, j->buf + j->len, sizeof j->buf - 1 - j->len)) > 0)
				j->len += (size_t)m;
			close(j->fd);
			out[j->index] = outcome(j, status, killed);
			running[i] = running[--active];
			pfd[i] = pfd[active];
			i--;
		}
		while (printed < n && out[printed]) {
			const struct row *r = list[printed];
			printf("%s\t%s\t%s\t%s\n", r->id, r->fn, r->desc, out[printed]);
			fflush(stdout);
			printed++;
		}
	}
	free(running);
	free(out);
}

int main(int argc, char **argv)
{
	int jobs = 4, opt;
	bool verbose = false, list_only = false;
	while ((opt = getopt(argc, argv, "j:vl")) != -1) {
		switch (opt) {
		case 'j':
			jobs = atoi(optarg);
			break;
		case 'v':
			verbose = true;
			break;
		case 'l':
			list_only = true;
			break;
		default:
			fprintf(stderr, "usage: %s [-j JOBS] [-v] [-l] [ROW-ID...]\n", argv[0]);
			return 2;
		}
	}
	if (jobs < 1 || jobs > 64)
		jobs = 4;
	have_waitv = syscall(SYS_futex_waitv, NULL, 0, 0, NULL, 0) == -1 && errno != ENOSYS;
	build_rows();

	const struct row **list = calloc(nrows, sizeof *list);
	if (!list)
		abort();
	size_t n = 0;
	for (size_t i = 0; i < nrows; i++) {
		bool wanted = optind == argc;
		for (int a = optind; a < argc && !wanted; a++)
			wanted = strcmp(argv[a], rows[i].id) == 0;
		if (wanted)
			list[n++] = &rows[i];
	}
	if (list_only) {
		for (size_t i = 0; i < n; i++)
			printf("%s\t%s\t%s\n", list[i]->id, list[i]->fn, list[i]->desc);
		return 0;
	}
	const char *(*version)(void) = (const char *(*)(void))dlsym(RTLD_DEFAULT, "rtpthread_version");
	printf("# library: %s%s\n", version ? "rtpthread " : "glibc (NPTL)", version ? version() : "");
	run_rows(list, n, jobs, verbose);
	return 0;
}
