/* The test library's clocks and sleeps: see testlib.h. */
#include "testlib.h"

#include <errno.h>

#define NSEC_PER_MS 1000000LL

int64_t ts_to_ns(const struct timespec *ts)
{
	return (int64_t)ts->tv_sec * NSEC_PER_SEC + ts->tv_nsec;
}

int64_t now_ns(clockid_t clock)
{
	struct timespec ts;
	clock_gettime(clock, &ts);
	return ts_to_ns(&ts);
}

int64_t now_ms(void)
{
	return now_ns(CLOCK_MONOTONIC) / NSEC_PER_MS;
}

struct timespec deadline_in_ns(clockid_t clock, int64_t ns)
{
	int64_t t = now_ns(clock) + ns;
	struct timespec ts = { .tv_sec = (time_t)(t / NSEC_PER_SEC), .tv_nsec = (long)(t % NSEC_PER_SEC) };
	return ts;
}

struct timespec deadline_in_ms(clockid_t clock, long ms)
{
	return deadline_in_ns(clock, (int64_t)ms * NSEC_PER_MS);
}

void sleep_ms(long ms)
{
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * NSEC_PER_MS };
	/* Ends: nanosleep leaves the time still to sleep in ts, which only
	 * shrinks. */
	while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
		;
}

void nap_us(int64_t us)
{
	struct timespec ts = { (time_t)(us / 1000000), (long)(us % 1000000) * 1000 };
	clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, NULL);
}

void spin_ns(int64_t ns)
{
	int64_t end = now_ns(CLOCK_MONOTONIC) + ns;
	/* Ends: at end, on a clock that moves on. */
	while (now_ns(CLOCK_MONOTONIC) < end)
		;
}

void burn_cpu_ms(long ms)
{
	int64_t end = now_ns(CLOCK_THREAD_CPUTIME_ID) + ms * NSEC_PER_MS;
	/* Ends: this thread's CPU clock moves while it spins here. */
	while (now_ns(CLOCK_THREAD_CPUTIME_ID) < end)
		;
}
