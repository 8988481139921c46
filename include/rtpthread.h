/*
 * rtpthread: the public extension API.  Everything else the library offers
 * is the standard <pthread.h> and <threads.h> interface.
 */
#ifndef RTPTHREAD_H
#define RTPTHREAD_H

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

#ifdef __cplusplus
}
#endif

#endif
