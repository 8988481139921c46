/*
 * inversion: bounded or unbounded priority inversion, one scenario per
 * blocking call.  The classic setup, every thread SCHED_FIFO and pinned to
 * the same CPU:
 *
 *   L  FIFO 10  takes the object (holds the lock, runs the initializer, is
 *               a woken waiter that has not run yet, ...)
 *   M  FIFO 50  a CPU hog: spins for a fixed time (-m, default 20 ms),
 *               bounded in time, then stops
 *   H  FIFO 90  blocks on the object; its latency is measured from its
 *               call to its return
 *   S  FIFO 60  a helper some scenarios need above M (a second condition
 *               waiter, the signaller of a condition wait)
 *
 * Every round is deterministic: H starts L and waits until L has taken the
 * object (L runs only while H sleeps), makes M runnable (M runs as soon as
 * H blocks) and makes its call.  If the call waits for L without boosting
 * it, M's whole spin passes before L can run: H's latency is about M's
 * spin (inverted).  If L inherits H's priority, L runs before M and H gets
 * through in microseconds (bounded).  Per scenario the program prints H's
 * worst and p99 latency over the rounds and the share of rounds in which
 * M's spin had not finished when H got through.
 *
 * The harness does not depend on the objects under test: its own
 * hand-shakes are raw private futexes and C11 atomics (a go/done word per
 * thread, a ready flag), and where H must wait until a thread is asleep
 * inside the call under test it reads the thread's state in /proc while
 * sleeping in clock_nanosleep (no sched_yield, no pthread object).  Every
 * hand-shake wait has a deadline (a stuck round exits with an error), and
 * M's spin is bounded in time.  Between rounds H sleeps a quarter of the
 * round's length, so the real-time throttling budget is never exhausted.
 *
 * usage: inversion [-r rounds] [-m spin_ms] [-s name,name...] [-l]
 *   -l lists the scenarios.  Exit 77 if SCHED_FIFO is refused.
 *
 * Output: "metric SCENARIO worst us V", "... p99 us V",
 * "... M unfinished % V" per scenario, and "metric M spin us V".
 */
#include "common.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <threads.h>
#include <unistd.h>

/* libstdc++'s function-local static guard (the Itanium C++ ABI), called
 * directly: g++ emits these calls around a static local's initializer. */
int __cxa_guard_acquire(uint64_t *guard);
void __cxa_guard_release(uint64_t *guard);

#define PRIO_L 10
#define PRIO_M 50
#define PRIO_S 60
#define PRIO_H 90
#define MAX_ROUNDS 1000
#define HANDSHAKE_NS 5000000000ull /* a stuck hand-shake ends the run */
#define POLL_NS 50000ull

static uint64_t spin_ns = 20000000;
static int rounds = 20;
static int cpu;

/* ------------------------------------------------------------ futexes */

static long futex(_Atomic uint32_t *word, int op, uint32_t val, const struct timespec *ts)
{
	return syscall(SYS_futex, word, op | FUTEX_PRIVATE_FLAG, val, ts, NULL, 0);
}

static void wake_all(_Atomic uint32_t *word)
{
	futex(word, FUTEX_WAKE, INT32_MAX, NULL);
}

static _Noreturn void stuck(const char *what)
{
	printf("# inversion: stuck waiting for %s: giving up\n", what);
	fflush(stdout);
	_exit(3);
}

/* Sleeps until *word != old.  Ends: every turn sleeps or finds the word
 * changed, and the deadline ends the run. */
static void wait_change(_Atomic uint32_t *word, uint32_t old, const char *what)
{
	uint64_t end = now_ns() + HANDSHAKE_NS;
	while (atomic_load_explicit(word, memory_order_acquire) == old) {
		uint64_t now = now_ns();
		if (now >= end)
			stuck(what);
		struct timespec ts = { (time_t)((end - now) / 1000000000u), (long)((end - now) % 1000000000u) };
		futex(word, FUTEX_WAIT, old, &ts);
	}
}

/* ------------------------------------------------------------ threads */

struct worker {
	const char *name;
	int prio;
	pthread_t thread;
	_Atomic pid_t tid;
	_Atomic uint32_t go;	  /* bumped for every job (and to quit) */
	_Atomic uint32_t started; /* = go once the job has begun */
	_Atomic uint32_t done;	  /* = go once the job has ended */
	void (*_Atomic job)(void);
};

static struct worker L = { .name = "L", .prio = PRIO_L };
static struct worker M = { .name = "M", .prio = PRIO_M };
static struct worker S = { .name = "S", .prio = PRIO_S };
static struct worker H = { .name = "H", .prio = PRIO_H };
static atomic_bool quit;
static atomic_int fifo_ok = 1;

static void pin_and_raise(int prio)
{
	pin_cpu(cpu);
	if (!set_fifo(prio))
		atomic_store(&fifo_ok, 0);
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	pin_and_raise(w->prio);
	atomic_store(&w->tid, (pid_t)syscall(SYS_gettid));
	uint32_t seen = 0;
	/* Ends: quit, set by H after the last scenario. */
	for (;;) {
		/* Idle: no deadline (H may spend long between jobs). */
		while (atomic_load_explicit(&w->go, memory_order_acquire) == seen)
			futex(&w->go, FUTEX_WAIT, seen, NULL);
		seen = atomic_load_explicit(&w->go, memory_order_acquire);
		if (atomic_load(&quit))
			return NULL;
		atomic_store_explicit(&w->started, seen, memory_order_release);
		atomic_load_explicit(&w->job, memory_order_relaxed)();
		atomic_store_explicit(&w->done, seen, memory_order_release);
		wake_all(&w->done);
	}
}

/* Gives w a job; it runs when nothing of higher priority is runnable. */
static void run_on(struct worker *w, void (*job)(void))
{
	atomic_store_explicit(&w->job, job, memory_order_relaxed);
	atomic_fetch_add_explicit(&w->go, 1, memory_order_release);
	wake_all(&w->go);
}

static void wait_done(struct worker *w)
{
	uint32_t go = atomic_load_explicit(&w->go, memory_order_relaxed);
	/* Ends: the job ends (every job is bounded), or the deadline. */
	for (;;) {
		uint32_t done = atomic_load_explicit(&w->done, memory_order_acquire);
		if (done == go)
			return;
		wait_change(&w->done, done, w->name);
	}
}

/* Is w's thread asleep in the kernel (state S in /proc)? */
static bool asleep(struct worker *w)
{
	char path[64], buf[256];
	snprintf(path, sizeof path, "/proc/self/task/%d/stat", (int)atomic_load(&w->tid));
	int fd = open(path, O_RDONLY);
	if (fd < 0)
		return false;
	ssize_t n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = 0;
	char *p = strrchr(buf, ')');
	return p && p[1] == ' ' && p[2] == 'S';
}

/* Sleeps until w has begun its current job and sleeps inside it: lower
 * threads run meanwhile.  Ends: the deadline. */
static void wait_asleep(struct worker *w)
{
	uint64_t end = now_ns() + HANDSHAKE_NS;
	while (atomic_load_explicit(&w->started, memory_order_acquire) !=
		       atomic_load_explicit(&w->go, memory_order_relaxed) ||
	       !asleep(w)) {
		if (now_ns() >= end)
			stuck("a thread to sleep");
		sleep_ns(POLL_NS);
	}
}

/* L's "I hold it" flag. */
static _Atomic uint32_t ready;

static void flag_set(_Atomic uint32_t *f)
{
	atomic_store_explicit(f, 1, memory_order_release);
	wake_all(f);
}

static void flag_wait(_Atomic uint32_t *f)
{
	wait_change(f, 0, "L to take the object");
}

/* ------------------------------------------------------------ M */

static _Atomic uint32_t m_stop, m_state; /* m_state: 0 not started, 1 spinning, 2 spin over */

/* Bounded: spin_ns of CPU time at most, less if H says stop. */
static void job_m(void)
{
	atomic_store_explicit(&m_state, 1, memory_order_relaxed);
	uint64_t end = now_ns() + spin_ns;
	while (now_ns() < end && !atomic_load_explicit(&m_stop, memory_order_relaxed))
		;
	atomic_store_explicit(&m_state, 2, memory_order_relaxed);
}

static void start_m(void)
{
	atomic_store(&m_stop, 0);
	atomic_store(&m_state, 0);
	run_on(&M, job_m);
}

/* ------------------------------------------------------------ rounds */

static uint64_t t0, t1;
static bool m_unfinished;

static void h_begin(void)
{
	t0 = now_ns();
}

static void h_end(void)
{
	t1 = now_ns();
	m_unfinished = atomic_load_explicit(&m_state, memory_order_relaxed) != 2;
}

/* After H's call: stop M and wait for every worker to finish its job. */
static void finish(void)
{
	atomic_store(&m_stop, 1);
	wait_done(&M);
	wait_done(&L);
	wait_done(&S);
}

static int errors;

static void check(int e, const char *what)
{
	if (e != 0 && e != PTHREAD_BARRIER_SERIAL_THREAD) {
		printf("# inversion: %s failed: %s\n", what, strerror(e));
		errors++;
	}
}

/* Mutexes. */
static pthread_mutex_t mutex;

static void init_mutex(int type, int protocol)
{
	pthread_mutexattr_t a;
	pthread_mutexattr_init(&a);
	pthread_mutexattr_settype(&a, type);
	if (protocol >= 0)
		pthread_mutexattr_setprotocol(&a, protocol);
	if (protocol == PTHREAD_PRIO_PROTECT)
		pthread_mutexattr_setprioceiling(&a, PRIO_H + 5);
	check(pthread_mutex_init(&mutex, protocol >= 0 || type != PTHREAD_MUTEX_DEFAULT ? &a : NULL),
	      "mutex_init");
	pthread_mutexattr_destroy(&a);
}

static void job_l_mutex(void)
{
	check(pthread_mutex_lock(&mutex), "L mutex_lock");
	flag_set(&ready);
	check(pthread_mutex_unlock(&mutex), "L mutex_unlock");
}

static void round_mutex(int type, int protocol)
{
	init_mutex(type, protocol);
	run_on(&L, job_l_mutex);
	flag_wait(&ready);
	start_m();
	h_begin();
	check(pthread_mutex_lock(&mutex), "H mutex_lock");
	h_end();
	check(pthread_mutex_unlock(&mutex), "H mutex_unlock");
	finish();
	check(pthread_mutex_destroy(&mutex), "mutex_destroy");
}

static void round_mutex_normal(void) { round_mutex(PTHREAD_MUTEX_DEFAULT, -1); }
static void round_mutex_pi(void) { round_mutex(PTHREAD_MUTEX_NORMAL, PTHREAD_PRIO_INHERIT); }
static void round_mutex_recursive_pi(void) { round_mutex(PTHREAD_MUTEX_RECURSIVE, PTHREAD_PRIO_INHERIT); }
static void round_mutex_errorcheck_pi(void) { round_mutex(PTHREAD_MUTEX_ERRORCHECK, PTHREAD_PRIO_INHERIT); }
static void round_mutex_pp(void) { round_mutex(PTHREAD_MUTEX_NORMAL, PTHREAD_PRIO_PROTECT); }

/* Conditions.  pred_l and pred_s are the predicates of L's and S's waits
 * (under the condition's mutex). */
static pthread_cond_t cond;
static bool pred_l, pred_s, pred_h;

static void job_l_cond_wait(void)
{
	check(pthread_mutex_lock(&mutex), "L mutex_lock");
	while (!pred_l)
		check(pthread_cond_wait(&cond, &mutex), "L cond_wait");
	check(pthread_mutex_unlock(&mutex), "L mutex_unlock");
}

static void job_s_cond_wait(void)
{
	check(pthread_mutex_lock(&mutex), "S mutex_lock");
	while (!pred_s)
		check(pthread_cond_wait(&cond, &mutex), "S cond_wait");
	check(pthread_mutex_unlock(&mutex), "S mutex_unlock");
}

static void set_preds(bool value)
{
	check(pthread_mutex_lock(&mutex), "H mutex_lock");
	pred_l = pred_s = pred_h = value;
	check(pthread_mutex_unlock(&mutex), "H mutex_unlock");
}

/*
 * Signal or broadcast by H while L is a waiter that was woken but has not
 * run: L waits (asleep), H signals it, M starts, S (above M) waits too, and
 * H's second signal or broadcast is measured.  glibc 2.36 waits there in
 * __condvar_quiesce_and_switch_g1 until L drops its group reference.
 */
static void round_cond_wake(bool broadcast)
{
	init_mutex(PTHREAD_MUTEX_DEFAULT, -1);
	check(pthread_cond_init(&cond, NULL), "cond_init");
	set_preds(false);
	run_on(&L, job_l_cond_wait);
	wait_asleep(&L);
	check(pthread_mutex_lock(&mutex), "H mutex_lock");
	pred_l = true;
	check(pthread_mutex_unlock(&mutex), "H mutex_unlock");
	check(pthread_cond_signal(&cond), "H cond_signal");
	start_m(); /* keeps L (woken) off the CPU from now on */
	run_on(&S, job_s_cond_wait);
	wait_asleep(&S);
	check(pthread_mutex_lock(&mutex), "H mutex_lock");
	pred_s = true;
	check(pthread_mutex_unlock(&mutex), "H mutex_unlock");
	h_begin();
	check(broadcast ? pthread_cond_broadcast(&cond) : pthread_cond_signal(&cond), "H cond wake");
	h_end();
	finish();
	check(pthread_cond_destroy(&cond), "cond_destroy");
	check(pthread_mutex_destroy(&mutex), "mutex_destroy");
}

static void round_cond_signal(void) { round_cond_wake(false); }
static void round_cond_broadcast(void) { round_cond_wake(true); }

/*
 * H waits on a condition with a PI mutex: L takes the mutex, wakes S (S
 * preempts L, which keeps the mutex), S starts M and signals H, and H's
 * relock finds the mutex held by L.
 */
static void job_s_signal(void)
{
	start_m();
	check(pthread_cond_signal(&cond), "S cond_signal");
}

static void job_l_lock_wake_s(void)
{
	check(pthread_mutex_lock(&mutex), "L mutex_lock");
	pred_h = true;
	run_on(&S, job_s_signal);
	check(pthread_mutex_unlock(&mutex), "L mutex_unlock");
}

static void round_cond_wait(bool timed)
{
	init_mutex(PTHREAD_MUTEX_NORMAL, PTHREAD_PRIO_INHERIT);
	check(pthread_cond_init(&cond, NULL), "cond_init");
	pred_h = false;
	atomic_store(&m_state, 0);
	struct timespec deadline;
	clock_gettime(CLOCK_REALTIME, &deadline);
	deadline.tv_sec += 5;
	check(pthread_mutex_lock(&mutex), "H mutex_lock");
	run_on(&L, job_l_lock_wake_s);
	h_begin();
	/* Ends: L sets pred_h before S signals; the deadline otherwise. */
	while (!pred_h) {
		int e = timed ? pthread_cond_timedwait(&cond, &mutex, &deadline) : pthread_cond_wait(&cond, &mutex);
		check(e, "H cond_wait");
		if (e)
			break;
	}
	h_end();
	check(pthread_mutex_unlock(&mutex), "H mutex_unlock");
	finish();
	check(pthread_cond_destroy(&cond), "cond_destroy");
	check(pthread_mutex_destroy(&mutex), "mutex_destroy");
}

static void round_cond_wait_pi(void) { round_cond_wait(false); }
static void round_cond_timedwait_pi(void) { round_cond_wait(true); }

/* Destroy right after a broadcast: L was woken and has not run. */
static void round_cond_destroy(int protocol)
{
	init_mutex(PTHREAD_MUTEX_NORMAL, protocol);
	check(pthread_cond_init(&cond, NULL), "cond_init");
	pred_l = false;
	run_on(&L, job_l_cond_wait);
	wait_asleep(&L);
	check(pthread_mutex_lock(&mutex), "H mutex_lock");
	pred_l = true;
	check(pthread_cond_broadcast(&cond), "H cond_broadcast");
	check(pthread_mutex_unlock(&mutex), "H mutex_unlock");
	start_m();
	h_begin();
	check(pthread_cond_destroy(&cond), "H cond_destroy");
	h_end();
	finish();
	check(pthread_mutex_destroy(&mutex), "mutex_destroy");
}

static void round_cond_destroy_normal(void) { round_cond_destroy(-1); }
static void round_cond_destroy_pi(void) { round_cond_destroy(PTHREAD_PRIO_INHERIT); }

/* Barriers of two: L arrives first and sleeps, H arrives last. */
static pthread_barrier_t barrier;

static void job_l_barrier(void)
{
	check(pthread_barrier_wait(&barrier), "L barrier_wait");
}

static void round_barrier(bool destroy)
{
	check(pthread_barrier_init(&barrier, NULL, 2), "barrier_init");
	run_on(&L, job_l_barrier);
	wait_asleep(&L);
	if (destroy) {
		check(pthread_barrier_wait(&barrier), "H barrier_wait");
		start_m();
		h_begin();
		check(pthread_barrier_destroy(&barrier), "H barrier_destroy");
		h_end();
	} else {
		start_m();
		h_begin();
		check(pthread_barrier_wait(&barrier), "H barrier_wait");
		h_end();
	}
	finish();
	if (!destroy)
		check(pthread_barrier_destroy(&barrier), "barrier_destroy");
}

static void round_barrier_wait(void) { round_barrier(false); }
static void round_barrier_destroy(void) { round_barrier(true); }

/* Reader-writer locks. */
static pthread_rwlock_t rwlock;
static bool l_writes;

static void job_l_rwlock(void)
{
	check(l_writes ? pthread_rwlock_wrlock(&rwlock) : pthread_rwlock_rdlock(&rwlock), "L rwlock lock");
	flag_set(&ready);
	check(pthread_rwlock_unlock(&rwlock), "L rwlock_unlock");
}

static void round_rwlock(bool l_writer)
{
	check(pthread_rwlock_init(&rwlock, NULL), "rwlock_init");
	l_writes = l_writer;
	run_on(&L, job_l_rwlock);
	flag_wait(&ready);
	start_m();
	h_begin();
	check(l_writer ? pthread_rwlock_rdlock(&rwlock) : pthread_rwlock_wrlock(&rwlock), "H rwlock lock");
	h_end();
	check(pthread_rwlock_unlock(&rwlock), "H rwlock_unlock");
	finish();
	check(pthread_rwlock_destroy(&rwlock), "rwlock_destroy");
}

static void round_rwlock_rd_wr(void) { round_rwlock(false); }
static void round_rwlock_wr_rd(void) { round_rwlock(true); }

/* Once: L runs the initializer, H calls once while it runs.  The once
 * words are reset between rounds (nobody is inside then). */
static pthread_once_t once;
static once_flag c11_once;
static uint64_t guard;
static atomic_int h_ran_init;

static void init_by_l(void)
{
	flag_set(&ready);
}

static void init_by_h(void)
{
	atomic_store(&h_ran_init, 1);
}

static void job_l_once(void)
{
	check(pthread_once(&once, init_by_l), "L pthread_once");
}

static void job_l_call_once(void)
{
	call_once(&c11_once, init_by_l);
}

static void job_l_guard(void)
{
	if (__cxa_guard_acquire(&guard)) {
		flag_set(&ready);
		__cxa_guard_release(&guard);
	}
}

static void once_check(void)
{
	if (atomic_exchange(&h_ran_init, 0)) {
		printf("# inversion: H ran an initializer L was running\n");
		errors++;
	}
}

static void round_once(void)
{
	once = (pthread_once_t)PTHREAD_ONCE_INIT;
	run_on(&L, job_l_once);
	flag_wait(&ready);
	start_m();
	h_begin();
	check(pthread_once(&once, init_by_h), "H pthread_once");
	h_end();
	finish();
	once_check();
}

static void round_call_once(void)
{
	c11_once = (once_flag)ONCE_FLAG_INIT;
	run_on(&L, job_l_call_once);
	flag_wait(&ready);
	start_m();
	h_begin();
	call_once(&c11_once, init_by_h);
	h_end();
	finish();
	once_check();
}

static void round_cxa_guard(void)
{
	guard = 0;
	run_on(&L, job_l_guard);
	flag_wait(&ready);
	start_m();
	h_begin();
	if (__cxa_guard_acquire(&guard)) {
		init_by_h();
		__cxa_guard_release(&guard);
	}
	h_end();
	finish();
	once_check();
}

/* ------------------------------------------------------------ table */

struct scenario {
	const char *name;
	void (*round)(void);
	const char *env; /* "NAME=VALUE": run in a child with it (re-exec) */
	const char *as;	 /* the scenario the child runs */
};

static const struct scenario scenarios[] = {
	{ "mutex-normal", round_mutex_normal, NULL, NULL },
	{ "mutex-normal-protocol-inherit", NULL, "RTPTHREAD_PROTOCOL=inherit", "mutex-normal" },
	{ "mutex-pi", round_mutex_pi, NULL, NULL },
	{ "mutex-recursive-pi", round_mutex_recursive_pi, NULL, NULL },
	{ "mutex-errorcheck-pi", round_mutex_errorcheck_pi, NULL, NULL },
	{ "mutex-pp", round_mutex_pp, NULL, NULL },
	{ "cond-signal", round_cond_signal, NULL, NULL },
	{ "cond-broadcast", round_cond_broadcast, NULL, NULL },
	{ "cond-wait-pi", round_cond_wait_pi, NULL, NULL },
	{ "cond-timedwait-pi", round_cond_timedwait_pi, NULL, NULL },
	{ "cond-destroy", round_cond_destroy_normal, NULL, NULL },
	{ "cond-destroy-pi", round_cond_destroy_pi, NULL, NULL },
	{ "barrier-wait", round_barrier_wait, NULL, NULL },
	{ "barrier-destroy", round_barrier_destroy, NULL, NULL },
	{ "rwlock-rd-wr", round_rwlock_rd_wr, NULL, NULL },
	{ "rwlock-wr-rd", round_rwlock_wr_rd, NULL, NULL },
	{ "once", round_once, NULL, NULL },
	{ "call_once", round_call_once, NULL, NULL },
	{ "cxa_guard", round_cxa_guard, NULL, NULL },
};
#define NSCENARIOS (sizeof scenarios / sizeof scenarios[0])

static bool selected[NSCENARIOS];
static const char *label; /* -n: the name to report (a re-executed child) */

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static void run_scenario(const struct scenario *s)
{
	static uint64_t lat[MAX_ROUNDS];
	int unfinished = 0;
	for (int i = 0; i < rounds; i++) {
		atomic_store(&ready, 0);
		uint64_t start = now_ns();
		s->round();
		lat[i] = t1 - t0;
		unfinished += m_unfinished;
		/* A quarter of the round's length off the CPU: the RT
		 * throttling budget (95% by default) is never used up. */
		uint64_t len = now_ns() - start;
		sleep_ns(len / 4 > 200000 ? len / 4 : 200000);
	}
	qsort(lat, (size_t)rounds, sizeof lat[0], cmp_u64);
	int p99 = (rounds * 99 + 99) / 100 - 1;
	const char *name = label ? label : s->name;
	char m[160];
	snprintf(m, sizeof m, "%s worst us", name);
	metric(m, lat[rounds - 1] / 1e3);
	snprintf(m, sizeof m, "%s p99 us", name);
	metric(m, lat[p99] / 1e3);
	snprintf(m, sizeof m, "%s M unfinished %%", name);
	metric(m, 100.0 * unfinished / rounds);
	fflush(stdout);
}

static void *h_main(void *arg)
{
	(void)arg;
	atomic_store(&H.tid, (pid_t)syscall(SYS_gettid));
	pin_and_raise(PRIO_H);
	if (atomic_load(&fifo_ok))
		for (size_t i = 0; i < NSCENARIOS; i++)
			if (selected[i] && scenarios[i].round)
				run_scenario(&scenarios[i]);
	atomic_store(&quit, true);
	run_on(&L, NULL);
	run_on(&M, NULL);
	run_on(&S, NULL);
	return NULL;
}

/* A scenario that needs another environment: this program again, in a
 * child, with env set and -s as -n name. */
static int run_child(char *self, const struct scenario *s)
{
	char r[16], m[32];
	snprintf(r, sizeof r, "%d", rounds);
	snprintf(m, sizeof m, "%.3f", spin_ns / 1e6);
	char *argv[] = { self, "-r", r, "-m", m, "-s", (char *)s->as, "-n", (char *)s->name, "-q", NULL };
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		putenv((char *)s->env);
		execv("/proc/self/exe", argv);
		_exit(127);
	}
	int status;
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return 1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

static void usage(void)
{
	fprintf(stderr, "usage: inversion [-r rounds] [-m spin_ms] [-s name,name...] [-l]\n");
	exit(2);
}

static void select_names(char *list)
{
	for (char *name = strtok(list, ","); name; name = strtok(NULL, ",")) {
		size_t i = 0;
		while (i < NSCENARIOS && strcmp(scenarios[i].name, name) != 0)
			i++;
		if (i == NSCENARIOS) {
			fprintf(stderr, "inversion: no scenario '%s' (-l lists them)\n", name);
			exit(2);
		}
		selected[i] = true;
	}
}

int main(int argc, char **argv)
{
	bool quiet = false, any = false;
	int opt;
	while ((opt = getopt(argc, argv, "r:m:s:n:lq")) != -1) {
		switch (opt) {
		case 'r':
			rounds = (int)arg_long(optarg, "rounds");
			if (rounds < 1 || rounds > MAX_ROUNDS)
				usage();
			break;
		case 'm':
			spin_ns = (uint64_t)(arg_double(optarg, "spin_ms") * 1e6);
			break;
		case 's':
			select_names(optarg);
			any = true;
			break;
		case 'n':
			label = optarg;
			break;
		case 'l':
			for (size_t i = 0; i < NSCENARIOS; i++)
				printf("%s\n", scenarios[i].name);
			return 0;
		case 'q':
			quiet = true;
			break;
		default:
			usage();
		}
	}
	if (!any)
		for (size_t i = 0; i < NSCENARIOS; i++)
			selected[i] = true;
	cpu = ncpus() - 1;
	if (!quiet) {
		report_impl("pthread_mutex_lock");
		metric("M spin us", spin_ns / 1e3);
	}
	int status = 0;
	for (size_t i = 0; i < NSCENARIOS; i++)
		if (selected[i] && scenarios[i].env) {
			int e = run_child(argv[0], &scenarios[i]);
			if (e)
				status = e;
		}

	lock_memory();
	struct worker *workers[] = { &L, &M, &S };
	for (int i = 0; i < 3; i++)
		if (pthread_create(&workers[i]->thread, small_stack(), worker_main, workers[i]) != 0) {
			fprintf(stderr, "inversion: cannot create threads\n");
			return 1;
		}
	/* The workers raise themselves before H starts its first round. */
	uint64_t end = now_ns() + HANDSHAKE_NS;
	while ((!atomic_load(&L.tid) || !atomic_load(&M.tid) || !atomic_load(&S.tid)) && now_ns() < end)
		sleep_ns(POLL_NS);
	sleep_ns(10 * POLL_NS);
	if (pthread_create(&H.thread, small_stack(), h_main, NULL) != 0)
		return 1;
	pthread_join(H.thread, NULL);
	for (int i = 0; i < 3; i++)
		pthread_join(workers[i]->thread, NULL);
	report_sched();
	if (!atomic_load(&fifo_ok)) {
		printf("# inversion: needs SCHED_FIFO\n");
		return 77;
	}
	if (errors)
		return 1;
	return status;
}
