/*
 * The wait order: where a thread queues among a condition's waiters, as
 * the kernel orders futex sleepers (by normal priority, boosts aside).
 *
 * The calling thread's order is cached per thread: a condition wait with
 * a PI mutex needs it every time, and asking the kernel each time
 * (sched_getattr) would add a system call NPTL's wait does not make.  The
 * cache is read once per thread, at its first such wait, and again after
 * priority_generation moved (any pthread_setschedparam/setschedprio
 * through us, for any thread) or after this thread's own PP boost or drop
 * (priority_apply forgets it).  A change made around us (a raw
 * sched_setscheduler or sched_setattr, chrt -p from another process) is
 * seen only at the next generation bump: until then the thread queues at
 * its old place among a condition's waiters (its wake order, not its
 * wake-up, is stale).  That is the price of no system call per wait.
 */
#include <sched.h>
#include <stdatomic.h>

#include "priority_state.h"
#include "syscall.h"

_Atomic unsigned priority_generation = 1;

static __thread struct {
	int order;
	unsigned generation; /* priority_generation when read; 0: never */
} wait_order_cache TLS_FAST;

void wait_order_forget(void)
{
	wait_order_cache.generation = 0;
}

int priority_wait_order(void)
{
	unsigned generation = atomic_load_explicit(&priority_generation, memory_order_acquire);
	if (__builtin_expect(wait_order_cache.generation == generation && generation != 0, 1))
		return wait_order_cache.order;
	int order = priority_order_of(0);
	wait_order_cache.order = order < 0 ? 0 : order;
	wait_order_cache.generation = generation;
	return wait_order_cache.order;
}

int priority_order_of(uint32_t tid)
{
	struct sched_attr_v0 attr;
	if (raw_syscall6(SYS_sched_getattr, tid, (long)&attr, sizeof attr, 0, 0, 0) < 0)
		return -1;
	switch (attr.policy) {
	case SCHED_FIFO:
	case SCHED_RR:
		return (int)attr.priority;
	case POLICY_DEADLINE: /* before every fixed priority */
		return PRIORITY_MAX + 1;
	default:
		return 0;
	}
}
