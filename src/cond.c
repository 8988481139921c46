/*
 * Condition variables: the object's lifecycle (init, destroy, a fork
 * child's reset) and the dispatch of waits, signals and broadcasts
 * between the protocols that share it (cond_internal.h):
 *
 * - A wait with a priority-inheritance mutex on a private condition sleeps
 *   on a record of its own, queued in priority order, and is moved onto
 *   the mutex's rt_mutex by FUTEX_CMP_REQUEUE_PI: cond_pi.c.
 * - Every other wait (any mutex on a process-shared condition; a mutex
 *   that is not PI on a private one) uses the state word, the sequence
 *   its waiters sleep on: cond_seq.c.  Its sleepers share one futex word,
 *   so that a broadcast moves them all with one call.  On a private
 *   condition each queues a record too, in priority order, and a signal
 *   claims the first (highest priority, FIFO among equals); on a
 *   process-shared one they count themselves, and the kernel wakes them
 *   in its own priority order.
 * - The records of both private protocols share one queue
 *   (cond_queue.h): the waiters' mutex says whose they are.
 * - Masked waits (cond_mask.c) sleep on `generation`.  Once one has run on
 *   a condition (COND_MASKED), every wait on it is masked, plain ones with
 *   every bit, and every signal and broadcast wakes the masked waiters its
 *   mask meets as well as those of the protocols above (waits that began
 *   before the flag was set).
 *
 * The three reach the mutex only through the door of mutex_cond.h.  The
 * objects of process-shared conditions hold no pointers.
 *
 * A fork child forgets the parent's waiters of a private condition at its
 * first call on it (cond_fork_check, cond_internal.h; docs/fork.md).
 */
#include "api.h"
#include "boost.h"
#include "clock.h"
#include "cond_internal.h"
#include "cond_queue.h"
#include "pi_lock.h"
#include "stats.h"

int rt_cond_init(pthread_cond_t *cond, const pthread_condattr_t *attr)
{
	struct cond *c = cond_of(cond);
	unsigned value = attr ? attr_value(attr) : 0;
	if (value & ~(unsigned)(COND_PSHARED | COND_MONOTONIC))
		return EINVAL;
	atomic_store_explicit(&c->seq, 0, memory_order_relaxed);
	c->zero = 0;
	atomic_store_explicit(&c->waiters, 0, memory_order_relaxed);
	atomic_store_explicit(&c->mutex, NULL, memory_order_relaxed);
	atomic_store_explicit(&c->head, NULL, memory_order_relaxed);
	atomic_store_explicit(&c->lock, 0, memory_order_relaxed);
	atomic_store_explicit(&c->generation, 0, memory_order_relaxed);
	c->passing = NULL;
	atomic_store_explicit(&c->flags, value | cond_fork_bits(), memory_order_release);
	return 0;
}

/*
 * cond_fork_check found a private condition of an older fork generation:
 * every waiter it records is a thread of an ancestor process, absent
 * here (the forking thread was in fork(), not in a wait).  Under the lock,
 * so that one caller resets and the others see its generation; nobody of
 * this process has touched the records before (they all check first).
 * Nothing of the dropped records is read: their stacks may be reused.
 */
void cond_after_fork(struct cond *c)
{
	pi_lock_take(&c->lock, false);
	uint32_t flags = atomic_load_explicit(&c->flags, memory_order_relaxed);
	if (cond_flags_valid(flags) && (flags & COND_FORK_MASK) != cond_fork_bits()) {
		atomic_store_explicit(&c->head, NULL, memory_order_relaxed);
		c->passing = NULL;
		atomic_store_explicit(&c->waiters, 0, memory_order_relaxed);
		/* Ends: only COND_MASKED can be set meanwhile, once. */
		while (!atomic_compare_exchange_weak_explicit(&c->flags, &flags,
							      (flags & ~COND_FORK_MASK) | cond_fork_bits(),
							      memory_order_release, memory_order_relaxed))
			;
	}
	pi_lock_release(&c->lock, false);
}

/* Safe once every waiter has been sent a wake-up: waits for the woken
 * ones to stop touching the object (they may not have run yet), lending
 * them the caller's priority (boost.c), so that a woken low-priority
 * waiter a middle-priority thread keeps off the CPU cannot hold it up. */
int rt_cond_destroy(pthread_cond_t *cond)
{
	struct cond *c = cond_of(cond);
	uint32_t flags = atomic_load_explicit(&c->flags, memory_order_acquire);
	if (!cond_flags_valid(flags) || cond_made_by_glibc(c))
		return EINVAL;
	cond_fork_check(c, flags);
	bool shared = flags & COND_PSHARED;
	if (!shared && cond_queue_blocked(c))
		return EBUSY;
	if (!shared)
		cond_pi_revoke(c);
	if (shared && cond_seq_blocked(c))
		return EBUSY;
	uint32_t v = atomic_fetch_or_explicit(&c->waiters, COND_DESTROYING, memory_order_acquire);
	/* Masked waiters are counted only in waiters, so destroy cannot tell
	 * a blocked one from a woken one that has not run: it wakes them
	 * (a spurious return) rather than wait for ever. */
	if (flags & COND_MASKED)
		cond_mask_wake(c, ~0u);
	if (v & ~COND_DESTROYING)
		cond_seq_wake_moved(c);
	/* Ends: every thread still counted has been woken and leaves without
	 * waiting for anything we hold.  A waiter on the state word is found
	 * and boosted until it leaves; others (PI and masked waiters, which
	 * are running, and those boost.c cannot find) are waited for. */
	while (v & ~COND_DESTROYING) {
		if (!boost_one_inside(c))
			futex_wait(&c->waiters, v | COND_DESTROYING, shared, CLOCK_MONOTONIC, NULL);
		v = atomic_load_explicit(&c->waiters, memory_order_acquire);
	}
	atomic_store_explicit(&c->flags, COND_DESTROYED, memory_order_relaxed);
	atomic_store_explicit(&c->waiters, 0, memory_order_relaxed);
	return 0;
}

/* May signal and broadcast act on c?  If not, *result is theirs: 0 for
 * a destroyed condition (a no-op, as in glibc), EINVAL for memory that
 * never was one, found before any of its pointers is followed. */
static bool cond_wakeable(struct cond *c, uint32_t flags, int *result)
{
	*result = flags == COND_DESTROYED ? 0 : EINVAL;
	return cond_flags_valid(flags) && !cond_made_by_glibc(c);
}

/* Are cond_pi.c's records queued?  A waiter queues itself before it
 * unlocks the mutex: a signal or broadcast that comes after that unlock
 * sees the queue non-empty (acquire). */
static bool cond_queue_holds_pi(struct cond *c, uint32_t flags)
{
	return !(flags & COND_PSHARED) && atomic_load_explicit(&c->head, memory_order_acquire) && cond_queue_pi(c);
}

/* Signals the plain waiters (every mask) and wakes the masked ones whose
 * mask meets mask.  A masked waiter sets COND_MASKED before it unlocks
 * the mutex: a signal that comes after that unlock sees the flag. */
static int cond_signal_mask(struct cond *c, uint32_t mask)
{
	uint32_t flags = atomic_load_explicit(&c->flags, memory_order_acquire);
	int refused;
	if (!cond_wakeable(c, flags, &refused))
		return refused;
	cond_fork_check(c, flags);
	if (flags & COND_MASKED)
		cond_mask_wake(c, mask);
	if (cond_queue_holds_pi(c, flags))
		cond_pi_signal(c);
	else
		cond_seq_signal(c);
	return 0;
}

int rt_cond_signal(pthread_cond_t *cond)
{
	return cond_signal_mask(cond_of(cond), ~0u);
}

int rt_cond_signal_mask(pthread_cond_t *cond, uint32_t mask)
{
	return mask ? cond_signal_mask(cond_of(cond), mask) : EINVAL;
}

static int cond_broadcast_mask(struct cond *c, uint32_t mask)
{
	uint32_t flags = atomic_load_explicit(&c->flags, memory_order_acquire);
	int refused;
	if (!cond_wakeable(c, flags, &refused))
		return refused;
	cond_fork_check(c, flags);
	if (flags & COND_MASKED)
		cond_mask_wake(c, mask);
	if (cond_queue_holds_pi(c, flags))
		cond_pi_broadcast(c);
	else
		cond_seq_broadcast(c);
	return 0;
}

int rt_cond_broadcast(pthread_cond_t *cond)
{
	return cond_broadcast_mask(cond_of(cond), ~0u);
}

int rt_cond_broadcast_mask(pthread_cond_t *cond, uint32_t mask)
{
	return mask ? cond_broadcast_mask(cond_of(cond), mask) : EINVAL;
}

int rt_cond_wait(pthread_cond_t *cond, pthread_mutex_t *mutex, clockid_t clock,
		 const struct timespec *deadline, int use_attr_clock)
{
	/* The wait's relock may be the mutex's first contention: the
	 * program's call (the entry points tail-call this). */
	stats_note_caller(__builtin_extract_return_addr(__builtin_return_address(0)));
	struct cond *c = cond_of(cond);
	struct mutex *m = mutex_of(mutex);
	struct wait_check check = cond_wait_check(c, m, deadline);
	if (check.error)
		return check.error;
	uint32_t flags = check.flags;
	int kind = check.kind;
	if (use_attr_clock)
		clock = (flags & COND_MONOTONIC) ? CLOCK_MONOTONIC : CLOCK_REALTIME;
	if (flags & COND_MASKED)
		return cond_wait_mask(c, m, ~0u, clock, deadline);

	pthread_testcancel();
	if (!(flags & COND_PSHARED))
		atomic_store_explicit(&c->mutex, m, memory_order_relaxed);
	if (!(flags & COND_PSHARED) && kind_cond_requeue_pi(kind))
		return cond_pi_wait(c, m, kind, clock, deadline);
	return cond_seq_wait(c, m, clock, deadline);
}
