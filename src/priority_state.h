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
 * (sched_registry.c).  The owner counts without the lock when the count
 * changes nothing in the kernel, and checks changes for a setschedparam
 * that ran meanwhile (ceiling.c says why that is enough).  The struct is
 * here so that both read the same fields; the pure functions of it are
 * inline below.
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
	_Atomic uint32_t lock; /* pi_lock.h; the owner's, set/getschedparam's, thread exit's */
	/* Odd while a setschedparam changes the state (under lock), two
	 * more after each. */
	_Atomic uint32_t changes;
	pthread_t thread;
	uint32_t tid;
	bool registered;
	uint16_t held[PRIORITY_MAX + 1]; /* the owner's alone */
	unsigned generation;             /* of base, the owner's alone; 0: never read */
	/* mask is written by the owner and read by other threads under
	 * lock; the rest is written under lock and read by the owner
	 * without it.  Hence atomics, all relaxed: changes orders them. */
	_Atomic uint64_t mask[2];
	_Atomic int base_policy; /* as sched_getscheduler returns it, RESET_ON_FORK included */
	_Atomic int base_priority;
	/* Set through glibc while no ceiling was held: the kernel and
	 * glibc have the base, not us. */
	_Atomic bool base_unknown;
	_Atomic bool glibc_stale;  /* set around glibc: glibc's cache still has the old one */
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

static inline int base_policy(const struct priority_state *p)
{
	return atomic_load_explicit(&p->base_policy, memory_order_relaxed);
}

static inline int base_priority(const struct priority_state *p)
{
	return atomic_load_explicit(&p->base_priority, memory_order_relaxed);
}

static inline void set_base(struct priority_state *p, int policy, int priority)
{
	atomic_store_explicit(&p->base_policy, policy, memory_order_relaxed);
	atomic_store_explicit(&p->base_priority, priority, memory_order_relaxed);
}

/* The highest ceiling in a mask (its two words), 0 if none. */
static inline int highest_of(uint64_t low, uint64_t high)
{
	if (high)
		return 127 - __builtin_clzll(high);
	if (low)
		return 63 - __builtin_clzll(low);
	return 0;
}

static inline int highest_ceiling(const struct priority_state *p)
{
	return highest_of(atomic_load_explicit(&p->mask[0], memory_order_relaxed),
			  atomic_load_explicit(&p->mask[1], memory_order_relaxed));
}

/* Whether glibc's idea of p's thread is or may be wrong: it holds a
 * ceiling, or its base was set around glibc and the owner has not yet
 * handed it over.  Its priority is then set and read around glibc. */
static inline bool glibc_unaware(const struct priority_state *p)
{
	return highest_ceiling(p) != 0 || atomic_load_explicit(&p->glibc_stale, memory_order_relaxed);
}

/* What p's thread runs at with base priority base: the higher of base
 * and its ceilings. */
static inline int effective_over(const struct priority_state *p, int base)
{
	int top = highest_ceiling(p);
	return top > base ? top : base;
}

/* What p's thread runs at. */
static inline int effective(const struct priority_state *p)
{
	return effective_over(p, base_priority(p));
}

/* sched_registry.c */
/* Read the base of p's thread from the kernel (one sched_getattr), which
 * must not run it at a ceiling then: 0 or the kernel's positive errno. */
int priority_refresh_base(struct priority_state *p) HIDDEN;
/* Run the thread tid (0: the caller), whose base is policy and
 * base_priority, at priority, which is base itself when it equals
 * base_priority; a deadline thread is left as it is.  0 or the
 * scheduler's positive errno. */
int priority_apply(int policy, int base_priority, uint32_t tid, int priority) HIDDEN;
/* At the calling thread's first PP lock: make p findable by pthread_t. */
void registry_add(struct priority_state *p) HIDDEN;
/* glibc's pthread_setschedparam (ENOSYS if it was not found). */
int glibc_setschedparam(pthread_t thread, int policy, int priority) HIDDEN;

/* wait_order.c */
/* The calling thread's cached wait order is stale (its priority changed,
 * or a fork child's reset-on-fork may have changed it). */
void wait_order_forget(void) HIDDEN;

#endif
