/* Shared helpers for the rt-bench programs: see common.h. */
#include "common.h"

#include <dlfcn.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void sleep_until_ns(uint64_t t)
{
	struct timespec ts = { (time_t)(t / 1000000000u), (long)(t % 1000000000u) };

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

void sleep_ns(uint64_t ns)
{
	sleep_until_ns(now_ns() + ns);
}

double timer_mhz(void)
{
#if defined(__x86_64__)
	static double mhz;

	/* Calibrate once against CLOCK_MONOTONIC over 20 ms. */
	if (mhz == 0) {
		uint64_t n0 = now_ns(), c0 = timer_start();

		sleep_ns(20000000);
		uint64_t n1 = now_ns(), c1 = timer_end();
		mhz = (double)(c1 - c0) * 1000.0 / (double)(n1 - n0);
	}
	return mhz;
#else
	return 1000.0;
#endif
}

/* Scheduling results, reported once at the end by report_sched(). */
static atomic_int fifo_granted, fifo_refused, fifo_errno;

int set_fifo(int prio)
{
	struct sched_param sp = { .sched_priority = prio };
	/* pthread_setschedparam, not sched_setscheduler: glibc caches the
	 * policy for PP mutexes and only this call updates the cache. */
	int e = pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp);

	if (e == 0) {
		atomic_fetch_add(&fifo_granted, 1);
		return 1;
	}
	atomic_fetch_add(&fifo_refused, 1);
	atomic_store(&fifo_errno, e);
	return 0;
}

int set_other(void)
{
	struct sched_param sp = { .sched_priority = 0 };

	return pthread_setschedparam(pthread_self(), SCHED_OTHER, &sp) == 0;
}

int ncpus(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	return n > 0 ? (int)n : 1;
}

int pin_cpu(int cpu)
{
	cpu_set_t set;

	if (cpu >= ncpus())
		return 0;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return pthread_setaffinity_np(pthread_self(), sizeof(set), &set) == 0;
}

void lock_memory(void)
{
	struct rlimit rl;
	int flags = MCL_CURRENT | MCL_FUTURE;

	/* Page faults in the measured loop would show up as latency.  But
	 * without CAP_IPC_LOCK, RLIMIT_MEMLOCK (often 8 MiB) also caps future
	 * mappings: thread stacks would then fail to map.  Lock only what is
	 * mapped now in that case. */
	if (geteuid() != 0 && getrlimit(RLIMIT_MEMLOCK, &rl) == 0 &&
	    rl.rlim_cur != RLIM_INFINITY)
		flags = MCL_CURRENT;
	if (mlockall(flags) != 0)
		printf("# mlockall refused (%s): page faults may add latency\n",
		       strerror(errno));
	else
		printf("# mlockall: %s\n", flags & MCL_FUTURE ? "ok" :
		       "current mappings only (RLIMIT_MEMLOCK)");
}

const pthread_attr_t *small_stack(void)
{
	static pthread_attr_t attr;
	static int ready;

	/* Called from the main thread only, before threads exist. */
	if (!ready) {
		pthread_attr_init(&attr);
		pthread_attr_setstacksize(&attr, 128 * 1024);
		ready = 1;
	}
	return &attr;
}

void report_sched(void)
{
	int ok = atomic_load(&fifo_granted), no = atomic_load(&fifo_refused);

	if (no)
		printf("# rt: SCHED_FIFO refused for %d thread(s) (%s): they ran SCHED_OTHER\n",
		       no, strerror(atomic_load(&fifo_errno)));
	else if (ok)
		printf("# rt: SCHED_FIFO granted\n");
	else
		printf("# rt: not used (SCHED_OTHER workload)\n");
}

static long read_long(const char *path)
{
	FILE *f = fopen(path, "r");
	long v = 0;

	if (!f)
		return 0;
	if (fscanf(f, "%ld", &v) != 1)
		v = 0;
	fclose(f);
	return v;
}

void report_throttling(void)
{
	long rt = read_long("/proc/sys/kernel/sched_rt_runtime_us");
	long period = read_long("/proc/sys/kernel/sched_rt_period_us");

	if (rt < 0)
		printf("# throttling: off (sched_rt_runtime_us=-1); bursts kept anyway\n");
	else
		printf("# throttling: on (%ld/%ld us): running in bursts of %d ms with %d ms pauses\n",
		       rt, period, BURST_MS, PAUSE_MS);
}

void bursts_init(struct bursts *b, double seconds)
{
	/* Start 50 ms from now so every thread is created and waiting. */
	b->start = now_ns() + 50000000u;
	b->end = b->start + (uint64_t)(seconds * 1e9);
	b->burst = BURST_MS * 1000000ull;
	b->period = (BURST_MS + PAUSE_MS) * 1000000ull;
}

void bursts_wait_start(const struct bursts *b)
{
	sleep_until_ns(b->start);
}

uint64_t bursts_next(const struct bursts *b)
{
	uint64_t t = now_ns();

	if (t >= b->end)
		return UINT64_MAX;
	uint64_t k = (t - b->start) / b->period;
	if (t - b->start - k * b->period < b->burst)
		return 0;
	uint64_t next = b->start + (k + 1) * b->period;
	return next < b->end ? next : UINT64_MAX;
}

int bursts_check(const struct bursts *b)
{
	uint64_t next = bursts_next(b);

	if (next == 0)
		return 0;
	if (next == UINT64_MAX)
		return -1;
	sleep_until_ns(next);
	return 1;
}

/* Bin of v: exact below 64, else exponent e >= 6 and the next 5 bits. */
static unsigned int bin_of(uint64_t v)
{
	if (v < 64)
		return (unsigned int)v;
	unsigned int e = 63 - (unsigned int)__builtin_clzll(v);
	unsigned int sub = (unsigned int)(v >> (e - 5)) & 31;

	return 64 + (e - 6) * 32 + sub;
}

static uint64_t bin_low(unsigned int i)
{
	if (i < 64)
		return i;
	unsigned int e = (i - 64) / 32 + 6, sub = (i - 64) % 32;

	return (uint64_t)(32 + sub) << (e - 5);
}

void hist_init(struct hist *h)
{
	memset(h, 0, sizeof(*h));
	h->min = UINT64_MAX;
}

void hist_add(struct hist *h, uint64_t v)
{
	h->n++;
	h->sum += v;
	if (v < h->min)
		h->min = v;
	if (v > h->max)
		h->max = v;
	h->bin[bin_of(v)]++;
}

void hist_merge(struct hist *into, const struct hist *from)
{
	into->n += from->n;
	into->sum += from->sum;
	if (from->min < into->min)
		into->min = from->min;
	if (from->max > into->max)
		into->max = from->max;
	for (unsigned int i = 0; i < HIST_BINS; i++)
		into->bin[i] += from->bin[i];
}

uint64_t hist_quantile(const struct hist *h, double q)
{
	uint64_t want = (uint64_t)(q * (double)h->n), seen = 0;

	for (unsigned int i = 0; i < HIST_BINS; i++) {
		seen += h->bin[i];
		if (seen > want) {
			uint64_t hi = i + 1 < HIST_BINS ? bin_low(i + 1) - 1 : h->max;
			return hi < h->max ? hi : h->max;
		}
	}
	return h->max;
}

int hist_write(const struct hist *h, const char *path, const char *unit)
{
	FILE *f = fopen(path, "w");

	if (!f) {
		printf("# cannot write %s: %s\n", path, strerror(errno));
		return -1;
	}
	fprintf(f, "# lower_edge_%s count\n", unit);
	for (unsigned int i = 0; i < HIST_BINS; i++)
		if (h->bin[i])
			fprintf(f, "%llu %llu\n", (unsigned long long)bin_low(i),
				(unsigned long long)h->bin[i]);
	fclose(f);
	return 0;
}

void hist_report(const struct hist *h, const char *prefix, const char *unit,
		 double scale)
{
	static const char *const what[] = { "min", "avg", "p99.9", "max" };
	double v[4] = { NAN, NAN, NAN, NAN };
	char name[128];

	printf("# %s%llu samples\n", prefix, (unsigned long long)h->n);
	if (h->n) {
		v[0] = (double)h->min / scale;
		v[1] = (double)h->sum / (double)h->n / scale;
		v[2] = (double)hist_quantile(h, 0.999) / scale;
		v[3] = (double)h->max / scale;
	}
	for (int i = 0; i < 4; i++) {
		snprintf(name, sizeof(name), "%s%s_%s", prefix, what[i], unit);
		metric(name, v[i]);
	}
}

void metric(const char *name, double value)
{
	if (isnan(value))
		printf("metric %s nan\n", name);
	else
		printf("metric %s %.3f\n", name, value);
}

void report_impl(const char *symbol)
{
	/* The first definition in the global scope is what the program's own
	 * calls bind to: the preload's if it interposes, else libc's. */
	void *p = dlsym(RTLD_DEFAULT, symbol);
	Dl_info di;

	if (p && dladdr(p, &di) && di.dli_fname) {
		const char *base = strrchr(di.dli_fname, '/');
		printf("impl %s %s\n", symbol, base ? base + 1 : di.dli_fname);
	} else {
		printf("impl %s unknown\n", symbol);
	}
}

double arg_double(const char *s, const char *what)
{
	char *end;
	double v = strtod(s, &end);

	if (*s == 0 || *end != 0 || v < 0) {
		fprintf(stderr, "bad %s: %s\n", what, s);
		exit(2);
	}
	return v;
}

long arg_long(const char *s, const char *what)
{
	char *end;
	long v = strtol(s, &end, 10);

	if (*s == 0 || *end != 0 || v < 0) {
		fprintf(stderr, "bad %s: %s\n", what, s);
		exit(2);
	}
	return v;
}

/* Line-buffered stdout: when scripts/bench kills a hung run, the lines
 * printed so far (which phase it reached) still reach its log. */
__attribute__((constructor)) static void line_buffered(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
}
