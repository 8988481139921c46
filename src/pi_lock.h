/*
 * The library's own lock for short internal critical sections: a PI futex
 * word, 0 when free, else the owner's TID (| FUTEX_WAITERS).  Uncontended it
 * is one CAS each way; a thread that blocks on it boosts the owner, so a
 * preempted low-priority holder never stalls a high-priority thread.  It
 * never goes through the public mutex code.
 *
 * Holders never block on anything else while they hold it, but for
 * glibc's own per-thread lock, which glibc's pthread_setschedparam,
 * setschedprio and getschedparam take around a system call or two (they
 * are called under a thread's priority lock or the registry's,
 * sched_registry.c; glibc holds it longer only in pthread_create and
 * pthread_getattr_np), and cannot exit inside it (asynchronous
 * cancellation is never enabled there), so the wait in pi_lock_take
 * ends: the owner runs, boosted, to its release.
 */
#ifndef RTPTHREAD_PI_LOCK_H
#define RTPTHREAD_PI_LOCK_H

#include "debug.h"
#include "futex.h"
#include "self.h"

static inline void pi_lock_take(_Atomic uint32_t *word, bool shared)
{
	uint32_t tid = self_tid(), expected = 0;
	if (atomic_compare_exchange_strong_explicit(word, &expected, tid, memory_order_acquire,
						    memory_order_relaxed))
		return;
	for (;;) {
		uint32_t seen = atomic_load_explicit(word, memory_order_relaxed);
		int r = futex_lock_pi(word, shared, CLOCK_REALTIME, NULL);
		if (r == 0)
			return;
		if (r == ESRCH) {
			/* The owner is gone without releasing it (a thread
			 * killed by a raw tgkill, or a process killed inside a
			 * process-shared condition's lock): take it over, but
			 * only as the word was before the call.  Another taker
			 * told the same may have taken it over and given it
			 * to a live owner since, whom a CAS from whatever the
			 * word holds now would rob.  Its TID reused in between
			 * would be taken for the dead owner. */
			if ((seen & FUTEX_TID_MASK) != 0 && (seen & FUTEX_TID_MASK) != tid &&
			    atomic_compare_exchange_strong_explicit(word, &seen, tid | (seen & FUTEX_WAITERS),
								    memory_order_acquire, memory_order_relaxed))
				return;
		}
		/* EAGAIN (owner exiting), EINTR, ESRCH for a word that
		 * changed: try again.  Ends: each turn blocks in the kernel
		 * until the word changes hands, or finds a dead owner, which
		 * one taker replaces. */
	}
}

static inline void pi_lock_release(_Atomic uint32_t *word, bool shared)
{
	uint32_t expected = self_tid();
	if (!atomic_compare_exchange_strong_explicit(word, &expected, 0, memory_order_release,
						     memory_order_relaxed)) {
		DEBUG_ASSERT((expected & FUTEX_TID_MASK) == self_tid());
		int r = futex_unlock_pi(word, shared);
		DEBUG_ASSERT(r == 0);
		(void)r;
	}
}

#endif
