/*
 * The word protocol: how every mutex that is not PI is acquired and
 * released (plain, robust and PP ones; see mutex.h for the encoding).
 * A leaf: mutex.c dispatches to it, mutex_pp.c wraps it in a ceiling, and
 * it calls nothing of either; what it reads of the mutex layer (the spin
 * count, fork ownership) sits below them all, in mutex_defaults.c and
 * mutex_fork.c.  Inline, because it is the contended and robust fast
 * path of both.
 *
 *   lock:   CAS 0 -> TID.  Contended: set WORD_WAITERS, FUTEX_WAIT on the
 *           word; once a thread has slept it takes the lock as TID|WAITERS,
 *           since others may still sleep (glibc's "lock with 2").
 *   unlock: exchange 0; FUTEX_WAKE one if WAITERS was set.
 * A condition variable's broadcast moves sleepers from the condition onto
 * this word (FUTEX_CMP_REQUEUE) after setting WORD_WAITERS itself, so
 * that the unlock that ends its hold wakes them, all at once, as does an
 * unlock by a thread that does not hold the word (mutex_wake_count); any
 * other unlock wakes one sleeper.
 *
 * Robust mutexes use the same word; the kernel's robust list (robust.c)
 * rewrites a dead owner's word to OWNER_DIED|(WAITERS) and wakes one
 * sleeper, which then takes the word and returns EOWNERDEAD.  __owner says
 * whether the protected data was made consistent again (glibc's
 * OWNER_INCONSISTENT until then); unlocking an inconsistent mutex stores
 * OWNER_NOTRECOVERABLE there and, in our format, WORD_NOTRECOVERABLE in the
 * word, which no CAS from 0 matches, and wakes everybody, so every later
 * lock, trylock or timedlock fails at once with ENOTRECOVERABLE.  In
 * glibc's format (process-shared) the word is freed instead, as glibc
 * does, and a locker that takes it sees __owner and gives it back.
 */
#ifndef RTPTHREAD_MUTEX_WORD_H
#define RTPTHREAD_MUTEX_WORD_H

#include <limits.h>

#include "clock.h"
#include "debug.h"
#include "mutex_internal.h"
#include "probe.h"
#include "robust.h"
#include "stats.h"

/* Adaptive mutexes spin this many times (a pause each) before sleeping:
 * bounded, and short enough not to matter at real-time priority. */
#define ADAPTIVE_SPINS 100

/* A waiter a broadcast moved onto the word spins mutex_short_spins
 * (about a microsecond, none on one CPU) whatever the configuration: it
 * was woken with the other moved waiters at the broadcaster's release,
 * and each of them holds the mutex only for a moment, so a waiter on the
 * other CPU often finds the word held; sleeping again would cost a
 * wake-up and two context switches.  On the holder's own CPU the spin
 * cannot succeed and costs only its bound. */
static inline int word_spins(int kind, const struct lock_request *req)
{
	if (req->try)
		return 0;
	if (req->moved)
		return mutex_short_spins;
	if (kind_type(kind) == PTHREAD_MUTEX_ADAPTIVE_NP && mutex_spins < ADAPTIVE_SPINS)
		return ADAPTIVE_SPINS;
	return mutex_spins;
}

/* wait: where to count a sleep (statistics on), or NULL.  Ends: every
 * turn takes the word, returns (a try, the deadline, NOTRECOVERABLE),
 * spins once of a bounded count, or sleeps until the word changes; a CAS
 * fails only because another thread changed the word meanwhile. */
static inline int word_acquire(struct mutex *m, int kind, uint32_t tid, const struct lock_request *req,
			       struct stats_wait *wait)
{
	bool shared = kind_shared(kind);
	uint32_t slept = 0;
	bool deadline_checked = false;
	int spins = word_spins(kind, req);

	for (;;) {
		uint32_t v = atomic_load_explicit(&m->word, memory_order_relaxed);
		if ((v & WORD_TID_MASK) == 0) {
			uint32_t next = tid | (v & WORD_WAITERS) | slept;
			if (v & WORD_OWNER_DIED)
				mutex_forget_ancestor_owner(m);
			if (atomic_compare_exchange_weak_explicit(&m->word, &v, next, memory_order_acquire,
								  memory_order_relaxed))
				return (v & WORD_OWNER_DIED) ? EOWNERDEAD : 0;
			continue;
		}
		if (v == WORD_NOTRECOVERABLE && (kind & KIND_ROBUST))
			return ENOTRECOVERABLE;
		if (req->try)
			return EBUSY;
		if (spins > 0) {
			spins--;
			cpu_relax();
			continue;
		}
		if (!deadline_checked) {
			int r = deadline_check(req->deadline);
			if (r)
				return r;
			deadline_checked = true;
		}
		if (!(v & WORD_WAITERS) &&
		    !atomic_compare_exchange_weak_explicit(&m->word, &v, v | WORD_WAITERS,
							   memory_order_relaxed, memory_order_relaxed))
			continue;
		PROBE2(mutex_contended, m, v & WORD_TID_MASK);
		if (wait)
			/* A mutex the configuration would have made PI
			 * (protocol=report) counts the waits inheritance
			 * would have bounded. */
			stats_wait_begin(wait, v & WORD_TID_MASK, (kind & KIND_DEFAULTED) != 0);
		int r = futex_wait(&m->word, v | WORD_WAITERS, shared, req->clock, req->deadline);
		if (r == ETIMEDOUT || r == EINVAL)
			return r;
		slept = WORD_WAITERS;
	}
}

/*
 * The wake after a release that found WAITERS in old: every sleeper if
 * wake_all (unrecoverable) or if a broadcast may have moved sleepers here
 * (mutex_wake_count), else one.  A private robust word still has the bit
 * (word_release frees it to WAITERS): the locker this wakes may be killed
 * before it takes the word, and then whoever takes it instead (or the
 * kernel, which wakes one sleeper for a dead locker's pending operation on
 * a word without an owner) must know that others still sleep.  If the wake
 * finds nobody, the bit is dropped again (nobody can start to sleep on a
 * word without an owner).
 */
static __attribute__((noinline)) void word_wake_released(struct mutex *m, int kind, uint32_t old,
							 bool keep_waiters, bool wake_all)
{
	int woken = 1;
	futex_wake_bits(&m->word, wake_all ? INT_MAX : mutex_wake_count(m, old), FUTEX_BITSET_MATCH_ANY,
			kind_shared(kind), keep_waiters ? &woken : NULL);
	uint32_t stale = WORD_WAITERS;
	if (keep_waiters && woken == 0)
		atomic_compare_exchange_strong_explicit(&m->word, &stale, 0, memory_order_relaxed,
							memory_order_relaxed);
}

/*
 * word_release for a process-shared robust word (glibc's format), whose
 * lockers read a free word with WAITERS as held and sleep on it, so the
 * private format's release to WAITERS cannot be used.  Instead, with
 * sleepers, the kernel frees the word and wakes in one call, so that our
 * death cannot fall between the two; and it wakes two, so that if the one
 * that would take the word is killed before it does while a newcomer takes
 * it (without WAITERS: it never slept), the other still competes and, if
 * it has to sleep again, sets WAITERS for the newcomer's unlock.  The
 * second one usually sleeps again: one more wake-up per contended unlock.
 * Ends: we own the word, so others can only add WAITERS, once.
 */
static __attribute__((noinline)) void word_release_glibc_robust(struct mutex *m, uint32_t value, bool wake_all)
{
	uint32_t old = atomic_load_explicit(&m->word, memory_order_relaxed);
	while (!(old & WORD_WAITERS)) {
		if (atomic_compare_exchange_weak_explicit(&m->word, &old, value, memory_order_release,
							  memory_order_relaxed))
			return;
	}
	/* The kernel's store is a full barrier (an atomic exchange). */
	int r = futex_store_wake(&m->word, value, wake_all ? INT_MAX : 2, true);
	if (r) {
		/* No FUTEX_WAKE_OP here (a seccomp filter, an emulator):
		 * release and wake in two steps. */
		atomic_store_explicit(&m->word, value, memory_order_release);
		futex_wake(&m->word, wake_all ? INT_MAX : 2, true);
	}
}

/* Leaves value in the word we hold and wakes (all sleepers if wake_all).
 * Out of line: the wake is the contended path, the exchange the
 * uncontended one. */
static inline void word_release(struct mutex *m, int kind, uint32_t value, bool wake_all)
{
	if (mutex_word_unshared(kind)) {
		atomic_store_explicit(&m->word, value, memory_order_relaxed);
		return;
	}
	uint32_t old;
	if ((kind & KIND_ROBUST) && kind_glibc_format(kind)) {
		word_release_glibc_robust(m, value, wake_all);
		return;
	}
	bool keep_waiters = (kind & KIND_ROBUST) && value == 0;
	if (keep_waiters) {
		/* A robust word with sleepers is freed to WAITERS in the same
		 * step: if we die before the wake, a locker that takes it
		 * meanwhile keeps the bit and wakes at its unlock, and if none
		 * does, the kernel wakes one for our pending unlock (the owner
		 * part is 0).  Freed to 0 first, such a locker would leave the
		 * sleepers on a free word.  Ends: we own the word, so others
		 * can only add WAITERS, once. */
		old = atomic_load_explicit(&m->word, memory_order_relaxed);
		while (!atomic_compare_exchange_weak_explicit(&m->word, &old, old & WORD_WAITERS, memory_order_release,
							      memory_order_relaxed))
			;
	} else {
		old = atomic_exchange_explicit(&m->word, value, memory_order_release);
	}
	if (__builtin_expect(old & WORD_WAITERS, 0))
		word_wake_released(m, kind, old, keep_waiters, wake_all);
}

static inline __attribute__((always_inline)) int word_lock(struct mutex *m, int kind, uint32_t tid,
							   const struct lock_request *req)
{
	struct stats_wait counted = { .start = 0 }, *wait = stats_enabled ? &counted : NULL;
	int r;
	if (!(kind & KIND_ROBUST)) {
		r = word_acquire(m, kind, tid, req, wait);
		/* A word is released only at depth 0 (its owner died otherwise). */
		DEBUG_ASSERT(r != 0 || m->depth == 0);
	} else if (kind_glibc_format(kind) &&
		   atomic_load_explicit(&m->owner, memory_order_relaxed) == OWNER_NOTRECOVERABLE) {
		/* glibc's format frees an unrecoverable word (robust.c's
		 * lockers find out only after taking it); we look first. */
		r = ENOTRECOVERABLE;
	} else {
		struct robust_head *head = robust_head();
		robust_pending_set(head, m, false);
		r = word_acquire(m, kind, tid, req, wait);
		if (r == 0 && kind_glibc_format(kind) &&
		    atomic_load_explicit(&m->owner, memory_order_relaxed) == OWNER_NOTRECOVERABLE) {
			/* Made unrecoverable while we took it: give it back. */
			word_release(m, kind, 0, true);
			r = ENOTRECOVERABLE;
		}
		if (r == 0 || r == EOWNERDEAD)
			robust_enqueue(head, m, false);
		robust_pending_clear(head);
	}
	mutex_record_owner(m, kind, tid, r);
	if (wait)
		stats_wait_end(wait, m);
	return r;
}

/* The release of a robust word we hold, leaving value (0, OWNER_DIED,
 * NOTRECOVERABLE): pending mark, unlink, release. */
static inline void word_unlock_robust(struct mutex *m, int kind, uint32_t value, bool wake_all)
{
	struct robust_head *head = robust_head();
	robust_pending_set(head, m, false);
	robust_dequeue(m);
	word_release(m, kind, value, wake_all);
	robust_pending_clear(head);
}

/* Always inline: in mutex_unlock_slow it is every uncontended non-PI
 * unlock that the fast path in mutex.h does not take (robust ones above
 * all). */
static inline __attribute__((always_inline)) void word_unlock(struct mutex *m, int kind)
{
	if (!(kind & KIND_ROBUST)) {
		mutex_record_release(m, kind);
		word_release(m, kind, 0, false);
		return;
	}
	if (atomic_load_explicit(&m->owner, memory_order_relaxed) == OWNER_INCONSISTENT) {
		/* Every locker fails from now on: in glibc's format the word
		 * is freed (its lockers look at __owner once they hold it),
		 * in ours it keeps a TID no thread has. */
		bool glibc = kind_glibc_format(kind);
		if (glibc)
			m->nusers--;
		atomic_store_explicit(&m->owner, OWNER_NOTRECOVERABLE, memory_order_relaxed);
		word_unlock_robust(m, kind, glibc ? 0 : WORD_NOTRECOVERABLE, true);
		return;
	}
	mutex_record_release(m, kind);
	word_unlock_robust(m, kind, 0, false);
}

#endif
