/* Shared between the mutex files (mutex.c, mutex_word.h, mutex_pi.c,
 * mutex_pp.c, mutex_shared.c, and under them mutex_defaults.c and
 * mutex_fork.c). */
#ifndef RTPTHREAD_MUTEX_INTERNAL_H
#define RTPTHREAD_MUTEX_INTERNAL_H

#include "mutex.h"

/* How a caller wants to wait: not at all (trylock), for ever (deadline
 * NULL) or until an absolute deadline on clock. */
struct lock_request {
	bool try;
	bool moved; /* woken with the sleepers a broadcast moved onto the word */
	clockid_t clock;
	const struct timespec *deadline;
};

/* mutex_defaults.c: set once at load (mutex_set_spin,
 * mutex_set_default_protocol in mutex.h), read by the protocol files. */
/* Every contended lock of a word (mutex_word.h, mutex_shared.c) that may
 * sleep spins this many times first (the spin configuration; 0 by
 * default). */
extern int mutex_spins HIDDEN;
/* How many pauses a PI locker spins on an owner nobody queued behind
 * before FUTEX_LOCK_PI (mutex_pi.c), and a waiter a broadcast moved onto
 * a word before it sleeps again (mutex_word.h); 0 on one CPU. */
extern int mutex_short_spins HIDDEN;
/* The kind bits (0, or KIND_DEFAULTED with KIND_PI, KIND_PP or neither)
 * and PP ceiling of a mutex whose attributes chose no protocol. */
extern int mutex_default_kind HIDDEN;
extern int mutex_default_ceiling HIDDEN;

static inline void cpu_relax(void)
{
#if defined(__x86_64__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ volatile("yield" ::: "memory");
#endif
}

static inline bool kind_valid(int kind)
{
	return (kind & ~(KIND_TYPE_MASK | KIND_ROBUST | KIND_PI | KIND_PP | KIND_PSHARED | KIND_ELISION |
			 KIND_INIT | KIND_DEFAULTED)) == 0 &&
	       (kind & (KIND_PI | KIND_PP)) != (KIND_PI | KIND_PP);
}

/* A kind whose PI or PP came from the configuration and that glibc lets
 * any thread unlock (NORMAL, ADAPTIVE, not robust): a foreign unlock
 * turns it plain (mutex.c, mutex_unlock_foreign). */
static inline bool kind_convertible(int kind)
{
	return (kind & KIND_DEFAULTED) && (kind & (KIND_PI | KIND_PP)) &&
	       kind_unlocks_unchecked(kind & ~(KIND_PI | KIND_PP));
}

/* pi_lock's answer when the mutex turned plain under it: lock it again
 * through the word protocol. */
#define PI_TURNED_PLAIN (-1)

/* How long a locker of a convertible PI mutex sleeps in the kernel before
 * it looks whether the mutex turned plain (mutex_pi.c). */
#define CONVERTIBLE_POLL_NS 10000000

/* mutex_fork.c */
/* In a fork child, the replica of the forking thread takes over a private
 * mutex that thread held.  false if m is not such a mutex. */
bool mutex_take_from_fork_parent(struct mutex *m, int kind, uint32_t tid) HIDDEN;
/* mutex_owned in a fork child. */
bool mutex_owned_in_child(struct mutex *m, int kind, uint32_t tid) HIDDEN;
/* Before taking a word whose owner is gone. */
void mutex_forget_ancestor_owner(struct mutex *m) HIDDEN;

/* Is the word glibc's 0/1/2 lock (plain and PP process-shared kinds),
 * which does not name its owner? */
static inline bool kind_lll_word(int kind)
{
	return kind_glibc_format(kind) && !(kind & (KIND_PI | KIND_ROBUST));
}

/* Does the thread tid own m?  In a fork child a word may name a thread of
 * an ancestor process that had tid's TID, or the forking thread, whose
 * mutexes the replica takes over (mutex_owned_in_child): one compare
 * more, paid only there.  glibc's format carries no fork stamp (its
 * __elision is glibc's): as in glibc, the word or __owner alone says. */
static inline bool mutex_owned(struct mutex *m, int kind, uint32_t tid)
{
	if (__builtin_expect(kind_lll_word(kind), 0))
		return atomic_load_explicit(&m->owner, memory_order_relaxed) == (int32_t)tid;
	if (__builtin_expect(fork_generation != 0 && !kind_glibc_format(kind), 0))
		return mutex_owned_in_child(m, kind, tid);
	return (atomic_load_explicit(&m->word, memory_order_relaxed) & WORD_TID_MASK) == tid;
}

/* The holds beyond the first that unlock gives back one at a time: our
 * depth, or glibc's __count - 1 for a RECURSIVE mutex in its format (its
 * other kinds leave __count at 1 or 0 and never read it). */
static inline uint32_t mutex_extra_holds(const struct mutex *m, int kind)
{
	if (!kind_glibc_format(kind))
		return m->depth;
	return kind_type(kind) == PTHREAD_MUTEX_RECURSIVE && m->depth > 1 ? m->depth - 1 : 0;
}

static inline void mutex_set_extra_holds(struct mutex *m, int kind, uint32_t extra)
{
	m->depth = kind_glibc_format(kind) ? extra + 1 : extra;
}

/*
 * The bookkeeping of every successful lock, whatever the protocol, after
 * the word is ours: r is the protocol's result.  __owner as glibc keeps it
 * (the TID, or OWNER_INCONSISTENT after EOWNERDEAD), __count, and in
 * glibc's format __nusers (which glibc does not count for a dead owner's
 * successor: the dead owner's count stands for it).
 */
static inline void mutex_record_owner(struct mutex *m, int kind, uint32_t tid, int r)
{
	if (r != 0 && r != EOWNERDEAD)
		return;
	atomic_store_explicit(&m->owner, r == 0 ? (int32_t)tid : OWNER_INCONSISTENT, memory_order_relaxed);
	if (!kind_glibc_format(kind))
		atomic_store_explicit(&m->owner_fork, owner_code, memory_order_relaxed);
	m->depth = kind_glibc_format(kind) ? 1 : 0; /* a dead owner's recursion is not ours */
	if (r == 0 && kind_glibc_format(kind))
		m->nusers++;
}

/* The release's counterpart, by the holder before the word goes (robust
 * kinds store OWNER_NOTRECOVERABLE instead where they must). */
static inline void mutex_record_release(struct mutex *m, int kind)
{
	if (kind_glibc_format(kind))
		m->nusers--;
	else
		atomic_store_explicit(&m->owner_fork, 0, memory_order_relaxed);
	atomic_store_explicit(&m->owner, 0, memory_order_relaxed);
}

/* PI: acquire and release through the kernel's PI futex.  pi_lock
 * returns PI_TURNED_PLAIN if a convertible mutex turned plain meanwhile
 * (the caller does not hold it). */
int pi_lock(struct mutex *m, int kind, uint32_t tid, const struct lock_request *req) HIDDEN;
void pi_unlock(struct mutex *m, int kind, uint32_t tid) HIDDEN;

/* Process-shared plain and PP kinds in glibc's 0/1/2 word (mutex_shared.c). */
int lll_lock(struct mutex *m, int kind, uint32_t tid, const struct lock_request *req) HIDDEN;
int lll_unlock(struct mutex *m, int kind) HIDDEN;
int lll_setprioceiling(struct mutex *m, int kind, int ceiling, int *old_ceiling) HIDDEN;

/* PP: raise to the ceiling, then the word protocol; release, then drop. */
int pp_lock(struct mutex *m, int kind, uint32_t tid, const struct lock_request *req) HIDDEN;
int pp_unlock(struct mutex *m, int kind) HIDDEN;

/* The parts of the door to the condition protocols (mutex_cond.h) that
 * the mutex files define or use themselves: declared here, so that they
 * never include the door. */

/* May a broadcast move sleepers onto this kind's word with
 * FUTEX_CMP_REQUEUE, to be woken by its unlocks (all at once by the
 * broadcaster's: mutex_wake_count)?  Not PI words (the kernel's) nor
 * process-shared ones (glibc's 0/1/2, whose lockers would never wake
 * them). */
static inline bool kind_cond_requeue(int kind)
{
	return !(kind & (KIND_PI | KIND_PSHARED));
}

/* After a wait that returned without m: locks it (moved: a broadcast may
 * have moved the caller onto its word), and gives back saved
 * (mutex_cond_detach's) if it got it.  0, EOWNERDEAD or a lock's error
 * (mutex.c). */
int mutex_cond_attach(struct mutex *m, uint32_t saved, bool moved) HIDDEN;

/* After FUTEX_WAIT_REQUEUE_PI (mutex_cond_detach_pi; kind as then): the
 * kernel gave the caller m if the word names it, else the caller locks it
 * itself; then as mutex_cond_attach (mutex_pi.c). */
int mutex_cond_attach_pi(struct mutex *m, int kind, uint32_t saved) HIDDEN;

/*
 * A PI word names an owner that is gone, and the kernel did not clean it
 * up (only a robust-list entry makes it: a non-robust owner, or a robust
 * one that died between taking the word and linking it): FUTEX_LOCK_PI
 * and FUTEX_CMP_REQUEUE_PI said ESRCH.  Puts tid in the owner's place,
 * keeps WAITERS and sets OWNER_DIED, so that a robust mutex's next owner
 * gets EOWNERDEAD: tid is a locker taking it over, or 0 for a requeue
 * whose sleeper the kernel then hands it to.  false if there is no such
 * owner (any more): the word changed, somebody else got further.
 * (mutex_pi.c)
 */
bool pi_take_from_dead_owner(struct mutex *m, uint32_t tid) HIDDEN;

#endif
