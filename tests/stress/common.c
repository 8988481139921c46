/* Shared by the stress and fault programs: see common.h. */
#include "common.h"
#include "testlib.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <threads.h>
#include <unistd.h>

static uint64_t seed;
static double duration;
static int64_t end_ns;

void stress_start(const char *name, double default_seconds)
{
	const char *s = getenv("STRESS_SEED");
	seed = s && *s ? strtoull(s, NULL, 0) : (uint64_t)now_ns(CLOCK_MONOTONIC) ^ ((uint64_t)getpid() << 32);
	if (seed == 0)
		seed = 1;
	const char *d = getenv("STRESS_DURATION");
	duration = d && *d ? strtod(d, NULL) : default_seconds;
	if (!(duration > 0))
		duration = default_seconds;
	end_ns = now_ns(CLOCK_MONOTONIC) + (int64_t)(duration * 1e9);
	printf("%s: %s, seed %llu (STRESS_SEED=%llu reruns it), duration %.1f s\n", name,
	       stress_library(), (unsigned long long)seed, (unsigned long long)seed, duration);
	fflush(stdout);
}

double stress_duration(void)
{
	return duration;
}

bool stress_running(void)
{
	return now_ns(CLOCK_MONOTONIC) < end_ns;
}

uint64_t stress_seed(void)
{
	return seed;
}

void rng_seed(struct rng *r, uint64_t stream)
{
	/* splitmix64 of (seed, stream): distinct, nonzero states. */
	uint64_t z = seed + 0x9e3779b97f4a7c15ULL * (stream + 1);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	z ^= z >> 31;
	r->state = z ? z : 1;
}

uint64_t rng_next(struct rng *r)
{
	uint64_t x = r->state;
	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	r->state = x;
	return x * 0x2545f4914f6cdd1dULL;
}

uint32_t rng_below(struct rng *r, uint32_t n)
{
	return n ? (uint32_t)((rng_next(r) >> 32) % n) : 0;
}

void stress_fail(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	printf("FAIL: ");
	vprintf(fmt, ap);
	printf(" (seed %llu)\n", (unsigned long long)seed);
	va_end(ap);
	fflush(stdout);
	_exit(1);
}

void stress_skip(const char *fmt, ...)
{
	va_list ap;
	bool ci = under_ci();
	va_start(ap, fmt);
	printf(ci ? "FAIL: skipped under CI=true: " : "SKIP: ");
	vprintf(fmt, ap);
	printf("\n");
	va_end(ap);
	fflush(stdout);
	_exit(ci ? 1 : 77);
}

/* ASan's runtime guards its stack depot and quarantine with spin locks
 * that wait with sched_yield, which never lets a lower-priority SCHED_FIFO
 * holder run: in a ten-minute run two SCHED_FIFO threads spun in thread
 * exit (its frees) for 67 s on both CPUs while lower-priority threads that
 * could release them waited.  The sanitizer build checks memory, not
 * priorities, so its stress programs run SCHED_OTHER. */
#if defined(__SANITIZE_ADDRESS__)
#define FIFO_OFF_WHY "ASan's spin locks livelock under SCHED_FIFO"
#endif

bool stress_can_fifo(void)
{
#ifdef FIFO_OFF_WHY
	return false;
#endif
	return can_fifo();
}

bool stress_fifo_or_note(const char *left_out)
{
#ifdef FIFO_OFF_WHY
	printf("note: SCHED_FIFO off (%s): every thread runs SCHED_OTHER%s%s\n", FIFO_OFF_WHY, left_out ? "; " : "",
	       left_out ? left_out : "");
	return false;
#endif
	if (stress_can_fifo())
		return true;
	if (under_ci())
		stress_skip("SCHED_FIFO is not allowed");
	printf("note: SCHED_FIFO is not allowed: every thread runs SCHED_OTHER%s%s\n", left_out ? "; " : "",
	       left_out ? left_out : "");
	return false;
}

void stress_set_priority(int prio)
{
	struct sched_param sp = { .sched_priority = prio };
	int e = pthread_setschedparam(pthread_self(), prio ? SCHED_FIFO : SCHED_OTHER, &sp);
	if (e)
		stress_fail("pthread_setschedparam(%d): %s", prio, strerror(e));
}

const char *stress_library(void)
{
	void *h = dlopen("librtpthread.so.1", RTLD_NOW | RTLD_NOLOAD);
	if (!h)
		return "NPTL";
	dlclose(h);
	return "rtpthread";
}

/* ---- the run clock (see common.h) ---- */

#define MS 1000000LL
#define RUN_STEP_NS (20 * MS) /* the longest step the run clock counts */

static _Atomic int64_t run_ns;

static void *run_clock_main(void *arg)
{
	(void)arg;
	stress_set_priority(0);
	int64_t last = now_ns(CLOCK_MONOTONIC);
	for (;;) {
		nap_us(1000);
		int64_t now = now_ns(CLOCK_MONOTONIC), step = now - last;
		last = now;
		atomic_fetch_add_explicit(&run_ns, step < RUN_STEP_NS ? step : RUN_STEP_NS, memory_order_relaxed);
	}
	return NULL;
}

void stress_start_run_clock(void)
{
	pthread_t t;
	if (pthread_create(&t, NULL, run_clock_main, NULL) != 0)
		stress_fail("pthread_create failed");
	pthread_detach(t);
}

int64_t stress_run_clock_ns(void)
{
	return atomic_load_explicit(&run_ns, memory_order_relaxed);
}

struct moment stress_moment_now(void)
{
	return (struct moment){ now_ns(CLOCK_MONOTONIC), stress_run_clock_ns() };
}

bool stress_lasted(struct moment since, struct moment now, int limit_ms)
{
	return now.wall_ns - since.wall_ns > limit_ms * MS && now.run_ns - since.run_ns > limit_ms * MS;
}

/* ---- /proc/self/task/TID ---- */

bool stress_task_stat(pid_t tid, char *state, int *prio)
{
	struct task_sched s;
	if (!task_sched_read(tid, &s))
		return false;
	if (state)
		*state = s.state;
	if (prio)
		*prio = (int)s.prio;
	return true;
}

void stress_print_task(const char *label, pid_t tid)
{
	char line[320];
	task_describe(tid, line, sizeof line);
	printf("  %s %s\n", label, line);
}

/* ---- mutex kinds ---- */

static const int kind_types[4] = { PTHREAD_MUTEX_NORMAL, PTHREAD_MUTEX_RECURSIVE, PTHREAD_MUTEX_ERRORCHECK,
				   PTHREAD_MUTEX_ADAPTIVE_NP };
static const char *const kind_type_names[4] = { "normal", "recursive", "errorcheck", "adaptive" };

static struct mutex_kind *kind_add(struct mutex_kind *kinds, int *n, int max, enum kind_api api, int t)
{
	if (*n == max)
		stress_fail("more than %d mutex kinds", max);
	struct mutex_kind *k = &kinds[(*n)++];
	*k = (struct mutex_kind){ .api = api, .type = kind_types[t], .protocol = PTHREAD_PRIO_NONE };
	return k;
}

static void attr_kinds(struct mutex_kind *kinds, int *n, int max, bool fifo, bool rtpthread)
{
	static const int protocols[] = { PTHREAD_PRIO_NONE, PTHREAD_PRIO_INHERIT, PTHREAD_PRIO_PROTECT };
	static const char *const protocol_names[] = { "", "/pi", "/pp" };
	for (int ps = 0; ps < 2; ps++)
		for (int t = 0; t < 4; t++)
			for (int p = 0; p < 3; p++)
				for (int robust = 0; robust < 2; robust++) {
					bool pp = protocols[p] == PTHREAD_PRIO_PROTECT;
					if (pp && (!fifo || (robust && !rtpthread)))
						continue;
					struct mutex_kind *k = kind_add(kinds, n, max, API_ATTR, t);
					k->protocol = protocols[p];
					k->robust = robust;
					k->pshared = ps;
					snprintf(k->name, sizeof k->name, "%s%s%s%s", kind_type_names[t],
						 protocol_names[p], robust ? "/robust" : "", ps ? "/pshared" : "");
				}
}

int stress_mutex_kinds(struct mutex_kind *kinds, int max, bool fifo, bool rtpthread)
{
	int n = 0;
	attr_kinds(kinds, &n, max, fifo, rtpthread);
	for (int t = 0; t < 4; t++) {
		struct mutex_kind *k = kind_add(kinds, &n, max, API_STATIC, t);
		k->initializer = t;
		snprintf(k->name, sizeof k->name, "static %s", kind_type_names[t]);
	}
	static const int c11[] = { mtx_plain, mtx_timed, mtx_recursive, mtx_timed | mtx_recursive };
	for (int i = 0; i < 4; i++) {
		struct mutex_kind *k = kind_add(kinds, &n, max, API_C11, (c11[i] & mtx_recursive) ? 1 : 0);
		k->c11 = c11[i];
		snprintf(k->name, sizeof k->name, "c11 mtx_%s%s", (c11[i] & mtx_timed) ? "timed" : "plain",
			 (c11[i] & mtx_recursive) ? "|mtx_recursive" : "");
	}
	return n;
}

int stress_mutex_init(pthread_mutex_t *m, const struct mutex_kind *k, int ceiling)
{
	pthread_mutexattr_t a;
	pthread_mutexattr_init(&a);
	pthread_mutexattr_settype(&a, k->type);
	pthread_mutexattr_setprotocol(&a, k->protocol);
	if (k->protocol == PTHREAD_PRIO_PROTECT)
		pthread_mutexattr_setprioceiling(&a, ceiling);
	pthread_mutexattr_setrobust(&a, k->robust ? PTHREAD_MUTEX_ROBUST : PTHREAD_MUTEX_STALLED);
	pthread_mutexattr_setpshared(&a, k->pshared ? PTHREAD_PROCESS_SHARED : PTHREAD_PROCESS_PRIVATE);
	int r = pthread_mutex_init(m, &a);
	pthread_mutexattr_destroy(&a);
	return r;
}

bool stress_checks_owner(const struct mutex_kind *k, bool rtpthread)
{
	if (k->type == PTHREAD_MUTEX_RECURSIVE || k->type == PTHREAD_MUTEX_ERRORCHECK || k->robust ||
	    k->protocol == PTHREAD_PRIO_INHERIT)
		return true;
	return k->protocol == PTHREAD_PRIO_PROTECT && rtpthread;
}

int stress_from_c11(int r)
{
	switch (r) {
	case thrd_success:
		return 0;
	case thrd_busy:
		return EBUSY;
	case thrd_timedout:
		return ETIMEDOUT;
	case thrd_nomem:
		return ENOMEM;
	default:
		return EPERM; /* thrd_error */
	}
}
