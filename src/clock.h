/*
 * Deadlines.  Every timed call takes an absolute deadline on CLOCK_REALTIME
 * or CLOCK_MONOTONIC and passes it to the kernel unchanged (no clock is read
 * on the way in).  A bad deadline is reported only by a call that would
 * block, as glibc does: a free mutex is taken whatever the timespec.
 */
#ifndef RTPTHREAD_CLOCK_H
#define RTPTHREAD_CLOCK_H

#include <errno.h>
#include <stdbool.h>
#include <time.h>

#include "self.h"

static inline bool clock_supported(clockid_t clock)
{
	return clock == CLOCK_REALTIME || clock == CLOCK_MONOTONIC;
}

/* 0, EINVAL for tv_nsec outside [0, 1e9), ETIMEDOUT for a time before the
 * epoch of its clock (the kernel would call that EINVAL). */
static inline int deadline_check(const struct timespec *deadline)
{
	if (!deadline)
		return 0;
	if (deadline->tv_nsec < 0 || deadline->tv_nsec >= 1000000000L)
		return EINVAL;
	if (deadline->tv_sec < 0)
		return ETIMEDOUT;
	return 0;
}

/* Sleeps until the deadline on clock (for ever without one): what POSIX
 * calls "deadlock" for a mutex the caller already holds.  ETIMEDOUT, or
 * EINVAL for a deadline the kernel refuses. */
int sleep_until(clockid_t clock, const struct timespec *deadline) HIDDEN;

/* The same instant on another clock (approximate: the clocks may be
 * stepped apart while the caller sleeps). */
struct timespec deadline_convert(const struct timespec *deadline, clockid_t from, clockid_t to) HIDDEN;

#endif
