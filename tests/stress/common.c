/* Shared by the stress and fault programs: see common.h. */
#include "common.h"

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

int64_t stress_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

struct timespec stress_deadline(clockid_t clock, int64_t ns)
{
	struct timespec ts;
	clock_gettime(clock, &ts);
	int64_t t = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec + ns;
	ts.tv_sec = (time_t)(t / 1000000000);
	ts.tv_nsec = (long)(t % 1000000000);
	return ts;
}

void stress_sleep_us(int64_t us)
{
	struct timespec ts = { (time_t)(us / 1000000), (long)(us % 1000000) * 1000 };
	clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, NULL);
}

void stress_spin_ns(int64_t ns)
{
	int64_t end = stress_now_ns() + ns;
	while (stress_now_ns() < end)
		;
}

void stress_start(const char *name, double default_seconds)
{
	const char *s = getenv("STRESS_SEED");
	seed = s && *s ? strtoull(s, NULL, 0) : (uint64_t)stress_now_ns() ^ ((uint64_t)getpid() << 32);
	if (seed == 0)
		seed = 1;
	const char *d = getenv("DURATION");
	duration = d && *d ? strtod(d, NULL) : default_seconds;
	if (!(duration > 0))
		duration = default_seconds;
	end_ns = stress_now_ns() + (int64_t)(duration * 1e9);
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
	return stress_now_ns() < end_ns;
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
	const char *ci = getenv("CI");
	bool under_ci = ci && strcmp(ci, "true") == 0;
	va_start(ap, fmt);
	printf(under_ci ? "FAIL: skipped under CI=true: " : "SKIP: ");
	vprintf(fmt, ap);
	printf("\n");
	va_end(ap);
	fflush(stdout);
	_exit(under_ci ? 1 : 77);
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
	struct sched_param sp = { .sched_priority = 1 };
	if (pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp) != 0)
		return false;
	sp.sched_priority = 0;
	pthread_setschedparam(pthread_self(), SCHED_OTHER, &sp);
	return true;
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
	const char *ci = getenv("CI");
	if (ci && strcmp(ci, "true") == 0)
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
	int64_t last = stress_now_ns();
	for (;;) {
		stress_sleep_us(1000);
		int64_t now = stress_now_ns(), step = now - last;
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
	return (struct moment){ stress_now_ns(), stress_run_clock_ns() };
}

bool stress_lasted(struct moment since, struct moment now, int limit_ms)
{
	return now.wall_ns - since.wall_ns > limit_ms * MS && now.run_ns - since.run_ns > limit_ms * MS;
}

/* ---- /proc/self/task/TID ---- */

bool stress_task_stat(pid_t tid, char *state, int *prio)
{
	char path[64], buf[512];
	snprintf(path, sizeof path, "/proc/self/task/%d/stat", (int)tid);
	int fd = open(path, O_RDONLY);
	if (fd < 0)
		return false;
	ssize_t n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	char *p = strrchr(buf, ')');
	if (!p || p[1] != ' ')
		return false;
	p += 2; /* field 3, the state */
	if (state)
		*state = *p;
	if (!prio)
		return true;
	for (int field = 3; field < 18; field++) {
		p = strchr(p, ' ');
		if (!p)
			return false;
		p++;
	}
	*prio = atoi(p);
	return true;
}

void stress_task_wchan(pid_t tid, char *out, size_t size)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/self/task/%d/wchan", (int)tid);
	FILE *f = fopen(path, "r");
	size_t n = f ? fread(out, 1, size - 1, f) : 0;
	if (f)
		fclose(f);
	out[n] = '\0';
}

void stress_task_times(pid_t tid, long long *on_cpu_ms, long long *waiting_ms)
{
	char path[64];
	unsigned long long run = 0, wait = 0;
	snprintf(path, sizeof path, "/proc/self/task/%d/schedstat", (int)tid);
	FILE *f = fopen(path, "r");
	if (f) {
		if (fscanf(f, "%llu %llu", &run, &wait) != 2)
			run = wait = 0;
		fclose(f);
	}
	*on_cpu_ms = (long long)(run / MS);
	*waiting_ms = (long long)(wait / MS);
}

void stress_print_task(const char *label, pid_t tid)
{
	char state = '?', wchan[64];
	int prio = 0;
	long long cpu, waiting;
	stress_task_stat(tid, &state, &prio);
	stress_task_wchan(tid, wchan, sizeof wchan);
	stress_task_times(tid, &cpu, &waiting);
	printf("  %s tid %d: state %c, stat priority %d, wchan %s, %lld ms on a CPU and %lld ms waiting for one\n",
	       label, (int)tid, state, prio, wchan[0] ? wchan : "?", cpu, waiting);
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
