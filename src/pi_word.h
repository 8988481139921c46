/*
 * A PI futex word used as an ownership token by once.c and guard.c: 0 when
 * free, else the owner's TID (| FUTEX_WAITERS).  A thread blocked in
 * pi_word_take boosts the owner through the kernel's rt_mutex.  Unlike
 * pi_lock.h, the caller learns when it already owns the word (EDEADLK):
 * both users must tell a recursive call from a wait.
 */
#ifndef RTPTHREAD_PI_WORD_H
#define RTPTHREAD_PI_WORD_H

#include "futex.h"

/* Takes word for tid.  0 once tid owns it, EDEADLK if tid owned it
 * already, else the kernel's error (EINVAL, ENOSYS: no PI futexes).
 * Ends: EAGAIN (owner exiting) and EINTR are retried, and each means the
 * owner is leaving or a handler ran; ESRCH (the owner died without
 * releasing, only a raw tgkill can do that) takes the word over by CAS or
 * retries because the word changed. */
static inline int pi_word_take(_Atomic uint32_t *word, uint32_t tid, bool shared)
{
	uint32_t v = 0;
	if (atomic_compare_exchange_strong_explicit(word, &v, tid, memory_order_acquire, memory_order_relaxed))
		return 0;
	if ((v & FUTEX_TID_MASK) == tid)
		return EDEADLK;
	for (;;) {
		int r = futex_lock_pi(word, shared, CLOCK_REALTIME, NULL);
		if (r == 0 || r == EDEADLK)
			return r;
		if (r == ESRCH) {
			v = atomic_load_explicit(word, memory_order_relaxed);
			if ((v & FUTEX_TID_MASK) != tid &&
			    atomic_compare_exchange_strong_explicit(word, &v, tid | (v & FUTEX_WAITERS),
								    memory_order_acquire, memory_order_relaxed))
				return 0;
		} else if (r != EAGAIN && r != EINTR) {
			return r;
		}
	}
}

/* Releases word if tid owns it (else leaves it: after fork() a word may
 * name a thread of the parent, or hold 0 in a wiped page).  A sleeper gets
 * the word from the kernel, its TID written in. */
static inline void pi_word_give(_Atomic uint32_t *word, uint32_t tid, bool shared)
{
	uint32_t v = tid;
	if (atomic_compare_exchange_strong_explicit(word, &v, 0, memory_order_release, memory_order_relaxed))
		return;
	if ((v & FUTEX_TID_MASK) == tid)
		futex_unlock_pi(word, shared); /* only EPERM (not the owner), excluded above */
}

#endif
