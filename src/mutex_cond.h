/*
 * The door from the condition protocols to the mutex (FreeBSD libthr's
 * _mutex_cv_detach / _mutex_cv_attach).  cond.c, cond_seq.c, cond_pi.c
 * and cond_mask.c take from the mutex layer only mutex.h's object and
 * kind predicates and what is below: they never read or write a mutex's
 * fields themselves.
 *
 *   check    mutex_cond_kind, mutex_cond_may_wait: what a wait checks
 *            before it changes anything.
 *   detach   mutex_cond_detach (mutex_cond_detach_pi): the recursion
 *            depth saved, the mutex unlocked as by a holder leaving.
 *   attach   mutex_cond_attach (mutex_cond_attach_pi): the mutex taken
 *            back, with a short spin where a requeue may have moved
 *            others onto it, its depth restored; EOWNERDEAD as a lock
 *            gives it.
 *   requeue  kind_cond_requeue, kind_cond_requeue_pi: which mutexes a
 *            condition may move its sleepers onto; mutex_cond_word, the
 *            word the kernel moves them onto; mutex_cond_owned,
 *            mutex_cond_mark_waiters, mutex_cond_wake for the sleepers
 *            moved there; pi_take_from_dead_owner when the move finds
 *            the owner gone.
 *
 * The inline ones sit on a wait's or a broadcast's path before its sleep:
 * they cost what the open-coded steps cost.  mutex_cond_attach (mutex.c),
 * mutex_cond_attach_pi and pi_take_from_dead_owner (mutex_pi.c) run after
 * a sleep or on an error path; they and kind_cond_requeue, which the
 * mutex files use too, are declared in mutex_internal.h, so that the
 * mutex files never include this header: the arrows go one way, from the
 * conditions through here to the mutex.
 */
#ifndef RTPTHREAD_MUTEX_COND_H
#define RTPTHREAD_MUTEX_COND_H

#include "mutex_internal.h"
#include "robust.h"

/* The kind a wait goes by (adopted first if nobody initialized m), or
 * KIND_DESTROYED for what is not a mutex (the wait's EINVAL). */
static inline int mutex_cond_kind(struct mutex *m)
{
	int kind = mutex_kind_adopted(m);
	return kind_valid(kind) ? kind : KIND_DESTROYED;
}

/* May the caller wait with m (of a valid kind)?  As glibc: the private
 * kinds any thread may unlock (kind_unlocks_unchecked) without a check,
 * every other kind only in its owner's hands.  false is the wait's EPERM. */
static inline bool mutex_cond_may_wait(struct mutex *m, int kind)
{
	bool owner_checked = !kind_is_simple(kind) || !kind_unlocks_unchecked(kind);
	return !owner_checked || mutex_owned(m, kind, self_tid());
}

/* Before the sleep, by the holder: unlocks m whatever its recursion depth
 * and returns that depth, for mutex_cond_attach to give back. */
static inline __attribute__((always_inline)) uint32_t mutex_cond_detach(struct mutex *m)
{
	int kind = mutex_kind(m);
	uint32_t saved = mutex_extra_holds(m, kind);
	mutex_set_extra_holds(m, kind, 0);
	mutex_unlock(m);
	return saved;
}

/* mutex_cond_detach before FUTEX_WAIT_REQUEUE_PI, which may hand the
 * waiter a robust mutex inside the wait: if it dies before its robust
 * list links the mutex, the pending entry lets the kernel mark it
 * OWNER_DIED. */
static inline uint32_t mutex_cond_detach_pi(struct mutex *m, int kind)
{
	uint32_t saved = mutex_cond_detach(m);
	if (kind & KIND_ROBUST)
		robust_pending_set(robust_head(), m, true);
	return saved;
}

/* Does detaching a mutex of this kind change the caller's priority?  A
 * PP mutex gives its ceiling back: a condition that queues its waiters by
 * priority places the waiter again after the detach. */
static inline bool kind_cond_detach_drops_ceiling(int kind)
{
	return kind & KIND_PP;
}

/* Does a wait on a private condition go onto this kind's rt_mutex with
 * requeue-PI?  Not a convertible one: a sleeper moved onto its word could
 * only leave through its owner's FUTEX_UNLOCK_PI (mutex_pi.c). */
static inline bool kind_cond_requeue_pi(int kind)
{
	return (kind & KIND_PI) && !kind_convertible(kind);
}

/* The futex word the kernel moves a condition's sleepers onto: for the
 * futex calls only, never read or written through this. */
static inline _Atomic uint32_t *mutex_cond_word(struct mutex *m)
{
	return &m->word;
}

/* Does the word name the caller?  For the kinds whose word holds the
 * owner's TID (private, PI): a broadcaster holding its requeue target, a
 * PI waiter the kernel handed the mutex to. */
static inline bool mutex_cond_owned(struct mutex *m)
{
	return (atomic_load_explicit(&m->word, memory_order_relaxed) & WORD_TID_MASK) == self_tid();
}

/* Before moving sleepers onto a kind_cond_requeue word (by its holder):
 * its unlock must wake them. */
static inline void mutex_cond_mark_waiters(struct mutex *m)
{
	atomic_fetch_or_explicit(&m->word, WORD_WAITERS, memory_order_relaxed);
}

/* Wakes count sleepers of m's word (moved there by a broadcast). */
static inline void mutex_cond_wake(struct mutex *m, int count)
{
	futex_wake(&m->word, count, kind_shared(mutex_kind(m)));
}

/*
 * After the holder's requeue moved sleepers onto m's word: its release
 * wakes them all (mutex_wake_count, mutex.h).  A NORMAL or ADAPTIVE mutex
 * (or a PP one from the configuration, mutex_unlock_foreign) may have been
 * released meanwhile by a thread that does not hold it, as glibc allows;
 * a release after the move wakes them all itself, one before it could
 * not, and then they are woken here.  The fence pairs with the smp_mb
 * that the kernel's futex_wake makes, after the releaser's exchange,
 * before it looks for sleepers: either the load below sees that release,
 * or its wake finds the moved sleepers.  (A release before our own mark
 * of WAITERS is seen by this thread's load anyway.)
 */
static inline void mutex_cond_moved(struct mutex *m)
{
	atomic_store_explicit(&m->moved, 1, memory_order_relaxed);
	atomic_thread_fence(memory_order_seq_cst);
	if (__builtin_expect(!mutex_cond_owned(m), 0))
		mutex_cond_wake(m, INT_MAX);
}

#endif
