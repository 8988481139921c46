/* Shared between the mutex protocol files (mutex.c, mutex_word.h,
 * mutex_pi.c, mutex_pp.c). */
#ifndef RTPTHREAD_MUTEX_INTERNAL_H
#define RTPTHREAD_MUTEX_INTERNAL_H

#include "mutex.h"

/* How a caller wants to wait: not at all (trylock), for ever (deadline
 * NULL) or until an absolute deadline on clock. */
struct lock_request {
	bool try;
	bool contended; /* take the word as TID|WAITERS: others may sleep on it */
	clockid_t clock;
	const struct timespec *deadline;
};

/* How many pauses a PI locker spins on an owner nobody queued behind
 * before FUTEX_LOCK_PI (mutex_pi.c); set once at load, 0 on one CPU. */
extern int mutex_pi_spins HIDDEN;

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

/* In a fork child, the replica of the forking thread takes over a private
 * mutex that thread held (mutex.c).  false if m is not such a mutex. */
bool mutex_take_from_fork_parent(struct mutex *m, int kind, uint32_t tid) HIDDEN;
/* mutex_owned in a fork child (mutex.c). */
bool mutex_owned_in_child(struct mutex *m, int kind, uint32_t tid) HIDDEN;
/* Before taking a word whose owner is gone (mutex.c). */
void mutex_forget_ancestor_owner(struct mutex *m) HIDDEN;

/* Does the thread tid own m?  In a fork child a word may name a thread of
 * an ancestor process that had tid's TID, or the forking thread, whose
 * mutexes the replica takes over (mutex_owned_in_child): one compare
 * more, paid only there. */
static inline bool mutex_owned(struct mutex *m, int kind, uint32_t tid)
{
	if (__builtin_expect(fork_generation != 0, 0))
		return mutex_owned_in_child(m, kind, tid);
	return (atomic_load_explicit(&m->word, memory_order_relaxed) & WORD_TID_MASK) == tid;
}

/* PI: acquire and release through the kernel's PI futex.  pi_lock
 * returns PI_TURNED_PLAIN if a convertible mutex turned plain meanwhile
 * (the caller does not hold it). */
int pi_lock(struct mutex *m, int kind, uint32_t tid, const struct lock_request *req) HIDDEN;
void pi_unlock(struct mutex *m, int kind, uint32_t tid) HIDDEN;

/* PP: raise to the ceiling, then the word protocol; release, then drop. */
int pp_lock(struct mutex *m, int kind, uint32_t tid, const struct lock_request *req) HIDDEN;
int pp_unlock(struct mutex *m, int kind) HIDDEN;

/* After a condition wait returned without the mutex: relock it, as
 * contended if a broadcast may have moved other sleepers onto it. */
int mutex_cond_relock(struct mutex *m, bool contended) HIDDEN;
/* After FUTEX_WAIT_REQUEUE_PI made the caller the owner of a PI mutex
 * (robust_pending_set already done for a robust one): the bookkeeping
 * pi_lock would have done.  0, EOWNERDEAD or ENOTRECOVERABLE. */
int pi_taken_by_kernel(struct mutex *m, int kind, uint32_t tid) HIDDEN;

#endif
