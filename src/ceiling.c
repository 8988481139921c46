/*
 * Priority-protect bookkeeping, per thread.  A thread holding PP mutexes
 * runs at max(base, highest ceiling held), where base is its own policy and
 * priority.  We count holds per ceiling (any release order restores
 * correctly) and keep a 128-bit mask of the ceilings held, so the highest
 * is two clz away: no loop, no allocation (NPTL callocs a table).
 *
 * The scheduler is touched only when the effective priority really
 * changes: one sched_setscheduler at the raise, one at the drop; none when
 * the thread already runs at or above the ceiling.  A SCHED_OTHER, BATCH
 * or IDLE thread is run as SCHED_FIFO at the ceiling while it holds one
 * (NPTL refuses it with EINVAL), and given back its policy after:
 * sched_setscheduler keeps the nice value (the kernel passes the task's
 * own to the change), and reset-on-fork travels in the policy.
 *
 * A SCHED_DEADLINE thread is never changed: the kernel runs it before
 * every SCHED_FIFO priority, so "the higher of its own priority and the
 * ceiling" is its own, and a FIFO ceiling could only demote it (and
 * sched_setscheduler could not give its runtime, deadline and period
 * back).  A PP mutex the program asked for gets EINVAL, as in NPTL; one
 * that only the configuration made PP (RTPTHREAD_PROTOCOL=protect) is
 * counted as held with no change at all, since a program that asked for
 * a plain mutex does not check for EINVAL and would lose its exclusion.
 *
 * base is read from the kernel (one sched_getattr) at the first PP lock,
 * again at the first PP lock after anyone changed a priority through
 * pthread_setschedparam/pthread_setschedprio (which we wrap to bump a
 * generation), and at every outermost raise of a thread whose base is not
 * FIFO or RR: that is how a thread that became SCHED_DEADLINE with a raw
 * sched_setattr (there is no other way) is seen before it is changed.
 * FIFO and RR threads pay nothing for it.  Those wrappers keep the
 * ceilings in force: a thread that holds PP mutexes and is given a new
 * priority, by itself or by another thread, takes it as its new base and
 * keeps running at max(base, highest ceiling).
 *
 * The base is kept, set and read back by sched_registry.c; this file
 * only counts ceilings and moves the thread between base and ceiling.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "debug.h"
#include "pi_lock.h"
#include "priority_state.h"

static void mark(struct priority_state *p, int ceiling, bool held)
{
	uint64_t bit = 1ull << (ceiling & 63);
	/* The mask has a ceiling's bit exactly while its count is nonzero. */
	DEBUG_ASSERT(held == (p->held[ceiling] != 0));
	if (held)
		p->mask[ceiling >> 6] |= bit;
	else
		p->mask[ceiling >> 6] &= ~bit;
}

static int raise_locked(struct priority_state *p, int ceiling, bool configured)
{
	unsigned generation = atomic_load_explicit(&priority_generation, memory_order_acquire);
	if ((p->generation != generation || !policy_is_realtime(p->base_policy)) && highest_ceiling(p) == 0) {
		int r = priority_refresh_base(p);
		if (r)
			return r;
		p->generation = generation;
	}
	if (p->base_priority > ceiling || (policy_is_deadline(p->base_policy) && !configured))
		return EINVAL;
	if (p->held[ceiling] == UINT16_MAX)
		return EAGAIN;
	int before = effective(p);
	if (ceiling > before) {
		int r = priority_apply(p, 0, ceiling);
		if (r)
			return r;
	}
	p->held[ceiling]++;
	mark(p, ceiling, true);
	return 0;
}

int priority_raise(int ceiling, bool configured)
{
	struct priority_state *p = &self_priority;
	if (ceiling < PRIORITY_MIN || ceiling > PRIORITY_MAX)
		return EINVAL;
	if (!p->registered)
		registry_add(p);
	pi_lock_take(&p->lock, false);
	int r = raise_locked(p, ceiling, configured);
	pi_lock_release(&p->lock, false);
	return r;
}

int priority_drop(int ceiling)
{
	struct priority_state *p = &self_priority;
	/* Every drop follows the raise of the same ceiling by this thread. */
	DEBUG_ASSERT(ceiling >= PRIORITY_MIN && ceiling <= PRIORITY_MAX && p->held[ceiling] > 0);
	if (ceiling < PRIORITY_MIN || ceiling > PRIORITY_MAX || p->held[ceiling] == 0)
		return 0;
	pi_lock_take(&p->lock, false);
	int before = effective(p);
	if (--p->held[ceiling] == 0)
		mark(p, ceiling, false);
	int after = effective(p);
	int r = 0;
	if (highest_ceiling(p) == 0 && p->glibc_stale) {
		/* The boost ends: back to base through glibc, whose cache
		 * then holds base too (same one system call). */
		r = glibc_setschedparam(p->thread, p->base_policy, p->base_priority);
		p->glibc_stale = r != 0;
	} else if (after < before) {
		r = priority_apply(p, 0, after);
	}
	pi_lock_release(&p->lock, false);
	return r;
}
