/*
 * Priority-protect bookkeeping, per thread.  A thread holding PP mutexes
 * runs at max(base, highest ceiling held), where base is its own policy and
 * priority.  We count holds per ceiling (any release order restores
 * correctly) and keep a 128-bit mask of the ceilings held, so the highest
 * is two clz away: no loop, no allocation (NPTL callocs a table).
 *
 * The scheduler is touched only when the effective priority really
 * changes: one sched_setscheduler at the raise, one at the drop; none when
 * the thread already runs at or above the ceiling (but one that changes
 * nothing after a pthread_setschedparam raced with the count, below).  A
 * SCHED_OTHER, BATCH or IDLE thread is run as SCHED_FIFO at the ceiling
 * while it holds one (NPTL refuses it with EINVAL), and given back its
 * policy after: sched_setscheduler keeps the nice value (the kernel passes
 * the task's own to the change), and reset-on-fork travels in the policy.
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
	_Atomic uint64_t *word = &p->mask[ceiling >> 6];
	uint64_t bit = 1ull << (ceiling & 63), mask = atomic_load_explicit(word, memory_order_relaxed);
	/* The mask has a ceiling's bit exactly while its count is nonzero.
	 * Only the owner writes it: a load and a store, no RMW. */
	DEBUG_ASSERT(held == (p->held[ceiling] != 0));
	atomic_store_explicit(word, held ? mask | bit : mask & ~bit, memory_order_relaxed);
}

/*
 * Without the lock.  A raise that changes nothing in the kernel (the
 * thread runs at or above the ceiling already) and a drop that lowers
 * nothing only count: the owner alone writes held and mask, and the lock
 * is only there against a setschedparam (sched_registry.c), which reads
 * mask to decide what the thread runs at, and writes base.  So the owner
 * reads changes before (odd: a change is under way, take the lock) and
 * after its count, with a sequentially consistent fence between count and
 * second read; the changer makes changes odd, then the same fence, then
 * reads mask.  Either the changer sees the new count (and runs the thread
 * at what it implies), or the owner sees changes moved and, under the
 * lock, once the change is done, runs itself at what base and ceilings
 * say now (resync_locked).  A base the owner read while it was being
 * changed is caught the same way.  The outcome is that of the count
 * before the change, which is what the change then did.
 *
 * Everything that moves the thread in the kernel (a raise above its
 * priority, a drop that lowers it) keeps the lock from before the count
 * to after the system call.  So under the lock, the kernel runs the
 * thread above its base only while mask holds a ceiling above it, or
 * while a change that saw a ceiling the owner has since counted off
 * waits for the owner's resync (glibc_stale is set then): setschedparam
 * and getschedparam go around glibc in both cases (glibc_unaware).
 */
static uint32_t changes_begin(struct priority_state *p)
{
	/* acquire: pairs with the changer's last increment, so an even count
	 * comes with the base it wrote. */
	return atomic_load_explicit(&p->changes, memory_order_acquire);
}

static bool changes_none_since(struct priority_state *p, uint32_t seen)
{
	atomic_thread_fence(memory_order_seq_cst);
	return atomic_load_explicit(&p->changes, memory_order_relaxed) == seen;
}

/* Under the lock: run the thread at what base and ceilings say, whatever
 * a raced change left in the kernel.  A change that saw no ceiling went
 * through glibc and left base_unknown: the kernel has the new base, and
 * nothing has run the thread above it since (any raise that could have
 * comes through here or through raise_locked's refresh first), so it is
 * read back first. */
static int resync_locked(struct priority_state *p)
{
	if (atomic_load_explicit(&p->base_unknown, memory_order_relaxed)) {
		int r = priority_refresh_base(p);
		if (r)
			return r;
	}
	if (highest_ceiling(p) == 0 && atomic_load_explicit(&p->glibc_stale, memory_order_relaxed)) {
		/* The boost ends: back to base through glibc, whose cache
		 * then holds base too (same one system call). */
		int r = glibc_setschedparam(p->thread, base_policy(p), base_priority(p));
		atomic_store_explicit(&p->glibc_stale, r != 0, memory_order_relaxed);
		wait_order_forget();
		return r;
	}
	return priority_apply(base_policy(p), base_priority(p), 0, effective(p));
}

/* Whether raising to ceiling needs nothing but the count: a known FIFO or
 * RR base at or below the ceiling, and the thread at or above it. */
static bool raise_counts_only(const struct priority_state *p, int ceiling)
{
	unsigned generation = atomic_load_explicit(&priority_generation, memory_order_acquire);
	unsigned known = p->generation;
	bool fresh = highest_ceiling(p) != 0 || (known != 0 && known == generation);
	return fresh && !atomic_load_explicit(&p->base_unknown, memory_order_relaxed) &&
	       policy_is_realtime(base_policy(p)) && base_priority(p) <= ceiling &&
	       p->held[ceiling] != UINT16_MAX && ceiling <= effective(p);
}

/* Whether dropping ceiling lowers nothing: the thread runs at the same
 * priority with one hold of it fewer, and no boost set around glibc ends. */
static bool drop_counts_only(const struct priority_state *p, int ceiling)
{
	if (p->held[ceiling] > 1)
		return true;
	uint64_t low = atomic_load_explicit(&p->mask[0], memory_order_relaxed);
	uint64_t high = atomic_load_explicit(&p->mask[1], memory_order_relaxed);
	int before = highest_of(low, high);
	if (ceiling < 64)
		low &= ~(1ull << ceiling);
	else
		high &= ~(1ull << (ceiling - 64));
	int after = highest_of(low, high), base = base_priority(p);
	if (after == 0 && atomic_load_explicit(&p->glibc_stale, memory_order_relaxed))
		return false;
	return (after > base ? after : base) == (before > base ? before : base);
}

static int raise_locked(struct priority_state *p, int ceiling, bool configured)
{
	unsigned generation = atomic_load_explicit(&priority_generation, memory_order_acquire);
	unsigned known = p->generation;
	/* Not while glibc_stale: base is ours then, and the kernel may still
	 * run the thread at a ceiling just counted off. */
	if ((known == 0 || known != generation || !policy_is_realtime(base_policy(p))) &&
	    highest_ceiling(p) == 0 && !atomic_load_explicit(&p->glibc_stale, memory_order_relaxed)) {
		int r = priority_refresh_base(p);
		if (r)
			return r;
		p->generation = generation;
	}
	if (base_priority(p) > ceiling || (policy_is_deadline(base_policy(p)) && !configured))
		return EINVAL;
	if (p->held[ceiling] == UINT16_MAX)
		return EAGAIN;
	int before = effective(p);
	if (ceiling > before) {
		int r = priority_apply(base_policy(p), base_priority(p), 0, ceiling);
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
	uint32_t seen = changes_begin(p);
	if (!(seen & 1) && raise_counts_only(p, ceiling)) {
		if (p->held[ceiling]++ == 0)
			mark(p, ceiling, true);
		if (changes_none_since(p, seen))
			return 0;
		pi_lock_take(&p->lock, false);
		int r = resync_locked(p);
		if (r) {
			/* Give the hold back, and the priority as far as the
			 * scheduler lets us: the raise failed. */
			if (--p->held[ceiling] == 0)
				mark(p, ceiling, false);
			resync_locked(p);
		}
		pi_lock_release(&p->lock, false);
		return r;
	}
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
	uint32_t seen = changes_begin(p);
	bool counts_only = !(seen & 1) && drop_counts_only(p, ceiling);
	if (!counts_only)
		pi_lock_take(&p->lock, false);
	if (--p->held[ceiling] == 0)
		mark(p, ceiling, false);
	if (counts_only) {
		if (changes_none_since(p, seen))
			return 0;
		pi_lock_take(&p->lock, false); /* a change ran meanwhile */
	}
	int r = resync_locked(p);
	pi_lock_release(&p->lock, false);
	return r;
}
