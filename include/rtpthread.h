/*
 * rtpthread: the public extension API.  Everything else the library offers
 * is the standard <pthread.h> and <threads.h> interface.
 */
#ifndef RTPTHREAD_H
#define RTPTHREAD_H

#include <pthread.h>
#include <time.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The library's version, "MAJOR.MINOR.PATCH"; also a cheap way for a
 * program to tell whether it runs with rtpthread (dlsym(RTLD_DEFAULT,
 * "rtpthread_version") is non-NULL). */
const char *rtpthread_version(void);

/* What the library saw of one mutex while statistics were on
 * (RTPTHREAD_STATS=1 or RTPTHREAD_CONF=stats:...): slow paths only, so
 * uncontended locks are not counted. */
struct rtpthread_mutex_stats {
	const void *mutex;		    /* its address */
	int kind;			    /* RTPTHREAD_KIND_* bits */
	unsigned long long contended;	    /* lock calls that had to wait */
	unsigned long long wait_total_ns;   /* their total wait */
	unsigned long long wait_max_ns;	    /* the longest */
	int top_priority;		    /* the highest waiter priority seen (0: SCHED_OTHER) */
	unsigned long long top_wait_max_ns; /* the longest wait at that priority */
	unsigned long long pi_boosts;	    /* PI waits by a waiter above the owner's own priority */
	unsigned long long requeued;	    /* condition waiters moved onto it by broadcasts */
	unsigned long long owner_died;	    /* locks that returned EOWNERDEAD */
};

#define RTPTHREAD_KIND_RECURSIVE 0x1
#define RTPTHREAD_KIND_ERRORCHECK 0x2
#define RTPTHREAD_KIND_ADAPTIVE 0x3
#define RTPTHREAD_KIND_ROBUST 0x10
#define RTPTHREAD_KIND_PI 0x20
#define RTPTHREAD_KIND_PP 0x40
#define RTPTHREAD_KIND_PSHARED 0x80

/* Copies the statistics of at most max mutexes, most contended first,
 * into out; returns how many it copied (0 when statistics are off). */
unsigned rtpthread_mutex_stats(struct rtpthread_mutex_stats *out, unsigned max);

/*
 * Masked condition variables: publish/subscribe on one condition.  A
 * waiter subscribes with a 32-bit mask (one bit per channel, say); a
 * masked signal or broadcast wakes only the waiters whose mask meets its
 * own, highest priority first.  The plain calls on the same object are
 * the same calls with every bit set.  Process-shared conditions and every
 * mutex kind work.  A masked signal wakes every waiter its mask meets
 * (POSIX lets a signal wake more than one; see librtpthread(7) for why);
 * a waiter may also return when another mask's wake-up came just before
 * it slept: recheck the predicate, as after any condition wait.
 * A mask of 0 is EINVAL.  The deadlines are absolute: timedwait on the
 * condition's clock attribute, clockwait on clock (CLOCK_REALTIME or
 * CLOCK_MONOTONIC).
 */
int rtpthread_cond_wait_mask_np(pthread_cond_t *cond, pthread_mutex_t *mutex, unsigned mask);
int rtpthread_cond_timedwait_mask_np(pthread_cond_t *cond, pthread_mutex_t *mutex, unsigned mask,
				     const struct timespec *deadline);
int rtpthread_cond_clockwait_mask_np(pthread_cond_t *cond, pthread_mutex_t *mutex, unsigned mask,
				     clockid_t clock, const struct timespec *deadline);
int rtpthread_cond_signal_mask_np(pthread_cond_t *cond, unsigned mask);
int rtpthread_cond_broadcast_mask_np(pthread_cond_t *cond, unsigned mask);

/*
 * Waits on any of count conditions (1 to RTPTHREAD_WAITANY_MAX) at once,
 * all guarded by mutex, until one is signalled or broadcast or the
 * absolute deadline on clock passes (NULL: none).  Returns 0 with *index
 * (if index is not NULL) the lowest index of a condition that fired, or
 * ETIMEDOUT, and holds mutex again either way.  ENOSYS on kernels before
 * 5.16 (no futex_waitv), found before anything changes.  Each condition
 * is waited on with every mask bit.  No wake-up is taken from anybody
 * else: a waiter woken by two conditions leaves the other waiters of both
 * woken as they were.
 */
#define RTPTHREAD_WAITANY_MAX 128
int rtpthread_cond_waitany_np(pthread_cond_t *const *conds, unsigned count, pthread_mutex_t *mutex,
			      clockid_t clock, const struct timespec *deadline, unsigned *index);

#ifdef __cplusplus
}
#endif

#endif
