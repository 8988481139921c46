/*
 * Shared by the three priority files, which call each other one way
 * only:
 *
 *   ceiling.c         PP ceiling counting (priority_raise/priority_drop)
 *       |
 *       v
 *   sched_registry.c  each thread's base priority, how a thread is run at
 *       |             a priority, the registry where other threads find
 *       |             its state, pthread_setschedparam/getschedparam
 *       v
 *   wait_order.c      where a thread queues among a condition's waiters,
 *                     and priority_generation
 *
 * A thread's state is one object under one lock (p->lock): its owner
 * counts ceilings in it (ceiling.c) and other threads set its base
 * (sched_registry.c).  The struct is here so that both read the same
 * fields; the pure functions of it are inline below.
 */
#ifndef RTPTHREAD_PRIORITY_STATE_H
#define RTPTHREAD_PRIORITY_STATE_H

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "attr.h"
#include "priority.h"

struct priority_state {
	_Atomic uint32_t lock; /* pi_lock.h; taken by the owner and by other threads' setschedparam */
	pthread_t thread;
	uint32_t tid;
	bool registered;
	uint16_t held[PRIORITY_MAX + 1];
	uint64_t mask[2];
	int base_policy; /* as sched_getscheduler returns it, RESET_ON_FORK included */
	int base_priority;
	unsigned generation; /* of base; 0: never read */
	bool glibc_stale;    /* base was set while boosted: glibc's cache still has the old one */
};

/* The calling thread's state (sched_registry.c). */
extern __thread struct priority_state self_priority TLS_FAST HIDDEN;

/* Bumped by every pthread_setschedparam/setschedprio through us, for any
 * thread (sched_registry.c); read before an outermost PP raise (ceiling.c)
 * and by the wait-order cache.  Never 0.  Defined in wait_order.c, the
 * lowest of the three. */
extern _Atomic unsigned priority_generation HIDDEN;

#define POLICY_DEADLINE 6	 /* SCHED_DEADLINE, absent from older headers */
#define FLAG_RESET_ON_FORK 0x01 /* SCHED_FLAG_RESET_ON_FORK */

/* The kernel's struct sched_attr, first version. */
struct sched_attr_v0 {
	uint32_t size, policy;
	uint64_t flags;
	int32_t nice;
	uint32_t priority;
	uint64_t runtime, deadline, period;
};

static inline bool policy_is_realtime(int policy)
{
	policy &= ~SCHED_RESET_ON_FORK;
	return policy == SCHED_FIFO || policy == SCHED_RR;
}

static inline bool policy_is_deadline(int policy)
{
	return (policy & ~SCHED_RESET_ON_FORK) == POLICY_DEADLINE;
}

static inline int highest_ceiling(const struct priority_state *p)
{
	if (p->mask[1])
		return 127 - __builtin_clzll(p->mask[1]);
	if (p->mask[0])
		return 63 - __builtin_clzll(p->mask[0]);
	return 0;
}

/* What p's thread runs at: the higher of its base and its ceilings. */
static inline int effective(const struct priority_state *p)
{
	int top = highest_ceiling(p);
	return top > p->base_priority ? top : p->base_priority;
}

/* sched_registry.c */
/* Read the calling thread's base from the kernel (one sched_getattr):
 * 0 or the kernel's positive errno. */
int priority_refresh_base(struct priority_state *p) HIDDEN;
/* Run p's thread (tid 0: the caller) at priority, which is base itself
 * when it equals base; a deadline thread is left as it is.  0 or the
 * scheduler's positive errno. */
int priority_apply(const struct priority_state *p, uint32_t tid, int priority) HIDDEN;
/* At the calling thread's first PP lock: make p findable by pthread_t. */
void registry_add(struct priority_state *p) HIDDEN;
/* glibc's pthread_setschedparam (ENOSYS if it was not found). */
int glibc_setschedparam(pthread_t thread, int policy, int priority) HIDDEN;

/* wait_order.c */
/* The calling thread's cached wait order is stale (its priority changed,
 * or a fork child's reset-on-fork may have changed it). */
void wait_order_forget(void) HIDDEN;

#endif
