/* Shared by the stress and fault programs: see common.h. */
#include "common.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

bool stress_can_fifo(void)
{
	struct sched_param sp = { .sched_priority = 1 };
	if (pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp) != 0)
		return false;
	sp.sched_priority = 0;
	pthread_setschedparam(pthread_self(), SCHED_OTHER, &sp);
	return true;
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
