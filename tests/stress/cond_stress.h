/*
 * Shared by the condition-variable stress tests (test_cond_stress.c and
 * test_cond_stress_races.c, Check programs run linked and preloaded like
 * the unit tests): the time budget, the mutex flavours and small helpers.
 *
 * STRESS_DURATION (default 5) is the budget of the two files together;
 * each test takes a fixed share of it (stress_budget), so the split does
 * not change how long any test runs.
 */
#ifndef RTPTHREAD_COND_STRESS_H
#define RTPTHREAD_COND_STRESS_H

#include <sys/mman.h>

#include "testutil.h"

static double stress_seconds = 5.0;

static inline double stress_budget(double share)
{
	double s = stress_seconds * share;
	return s < 0.2 ? 0.2 : s;
}

static inline unsigned rnd(unsigned *state)
{
	*state = *state * 1103515245u + 12345u;
	return *state >> 16;
}

/* glibc's, the library's or the robust flavour of a mutex */
struct skind {
	const char *name;
	int protocol;
	bool robust;
};

static const struct skind skinds[] = {
	{ "normal", PTHREAD_PRIO_NONE, false },
	{ "pi", PTHREAD_PRIO_INHERIT, false },
	{ "robust", PTHREAD_PRIO_NONE, true },
	{ "pi robust", PTHREAD_PRIO_INHERIT, true },
};
#define NSKINDS 4

static inline void init_skind(pthread_mutex_t *m, const struct skind *k)
{
	pthread_mutexattr_t a;
	ck_assert_int_eq(pthread_mutexattr_init(&a), 0);
	ck_assert_int_eq(pthread_mutexattr_setprotocol(&a, k->protocol), 0);
	if (k->robust)
		ck_assert_int_eq(pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST), 0);
	ck_assert_int_eq(pthread_mutex_init(m, &a), 0);
	ck_assert_int_eq(pthread_mutexattr_destroy(&a), 0);
}

static inline void join_within(pthread_t t, void **ret, long ms, const char *what)
{
	struct timespec dl = deadline_in_ms(CLOCK_REALTIME, ms);
	int r = pthread_timedjoin_np(t, ret, &dl);
	ck_assert_msg(r == 0, "%s did not finish within %ld ms (%s)", what, ms, strerror(r));
}

/* The object's words in hex, for a failure message (opaque, but lets a
 * maintainer see the library's state at the moment of failure). */
static inline void format_raw(char *buf, size_t size, const void *obj, size_t len)
{
	const uint32_t *w = obj;
	size_t used = 0;
	buf[0] = '\0';
	for (size_t i = 0; i < len / 4 && used + 10 < size; i++)
		used += (size_t)snprintf(buf + used, size - used, "%s%08x", i ? " " : "", w[i]);
}

/* STRESS_DURATION, when set, replaces the default budget. */
static inline void stress_read_duration(void)
{
	const char *env = getenv("STRESS_DURATION");
	if (env && atof(env) > 0)
		stress_seconds = atof(env);
}

#endif
