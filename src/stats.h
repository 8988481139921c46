/*
 * Contention statistics (configuration stats=1|PATH): per mutex, what its
 * slow paths saw.  Only slow paths count (a thread that is about to sleep,
 * a requeue, an owner's death): no uncontended lock or unlock does
 * anything more when statistics are on, and nothing at all is done when
 * they are off but one test of a flag on a path that is about to sleep.
 */
#ifndef RTPTHREAD_STATS_H
#define RTPTHREAD_STATS_H

#include <stdbool.h>
#include <stdint.h>

#include "mutex.h"
#include "probe.h"
#include "rtpthread.h"

/* Statistics on: set once at load (stats_enable, from the configuration)
 * before any other thread exists; read by every slow path. */
extern bool stats_enabled HIDDEN;
void stats_enable(void) HIDDEN;

/* A wait in progress: begun before the first sleep on a mutex, ended
 * after the lock call settled (acquired, timed out or failed). */
struct stats_wait {
	int64_t start; /* CLOCK_MONOTONIC ns; 0: no wait begun */
	uint32_t owner;
	int priority;	/* the waiter's, priority_wait_order() */
	bool boost;	/* a PI wait by a waiter above the owner's own priority */
};

/* The program's code that called the lock now in progress on this
 * thread (a return address, set by the lock slow path while statistics
 * are on): a mutex's row names where it was first contended. */
extern __thread const void *stats_caller TLS_FAST HIDDEN;

static inline void stats_note_caller(const void *caller)
{
	if (stats_enabled)
		stats_caller = caller;
}

void stats_wait_begin(struct stats_wait *w, uint32_t owner, bool pi) HIDDEN;
void stats_wait_end(struct stats_wait *w, struct mutex *m) HIDDEN;
void stats_requeued(struct mutex *m, int count) HIDDEN;
void stats_owner_died(struct mutex *m) HIDDEN;

/* An event a tracer and the statistics both see: one call each place. */
static inline void event_owner_died(struct mutex *m)
{
	PROBE1(mutex_owner_died, m);
	if (stats_enabled)
		stats_owner_died(m);
}

/* cond is an address only: the condition may be gone already. */
static inline void event_requeued(const void *cond, struct mutex *m, int moved)
{
	PROBE3(cond_requeue, cond, m, moved);
	if (stats_enabled)
		stats_requeued(m, moved);
}

/* The report, in mutrace's shape, to fd (AS-safe: write(2) only): each
 * mutex named by the code that first waited for it (as resolved by
 * stats_resolve_names, else a bare address), then a histogram of every
 * counted wait. */
void stats_report(int fd) HIDDEN;
/* Turns the recorded call sites into "symbol+0xoff (object)" through
 * dladdr: not AS-safe (the loader's lock), so only outside signal
 * handlers, before a report at exit. */
void stats_resolve_names(void) HIDDEN;
/* Fills at most max entries, most contended first; returns how many. */
unsigned stats_read(struct rtpthread_mutex_stats *out, unsigned max) HIDDEN;
/* pthread_atfork child handler: the child's counts start at zero. */
void stats_after_fork(void) HIDDEN;

#endif
