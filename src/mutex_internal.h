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

static inline bool kind_valid(int kind)
{
	return (kind & ~(KIND_TYPE_MASK | KIND_ROBUST | KIND_PI | KIND_PP | KIND_PSHARED | KIND_ELISION |
			 KIND_INIT)) == 0 &&
	       (kind & (KIND_PI | KIND_PP)) != (KIND_PI | KIND_PP);
}

/* In a fork child, the replica of the forking thread takes over a private
 * mutex that thread held (mutex.c).  false if m is not such a mutex. */
bool mutex_take_from_fork_parent(struct mutex *m, int kind, uint32_t tid) HIDDEN;

/* Is the word glibc's 0/1/2 lock (plain and PP process-shared kinds),
 * which does not name its owner? */
static inline bool kind_lll_word(int kind)
{
	return kind_glibc_format(kind) && !(kind & (KIND_PI | KIND_ROBUST));
}

/* Does the thread tid own m (taking it over from the forking thread, in a
 * fork child)?  The second test costs only callers that do not own it. */
static inline bool mutex_owned(struct mutex *m, int kind, uint32_t tid)
{
	if (__builtin_expect(kind_lll_word(kind), 0))
		return atomic_load_explicit(&m->owner, memory_order_relaxed) == (int32_t)tid;
	return (atomic_load_explicit(&m->word, memory_order_relaxed) & WORD_TID_MASK) == tid ||
	       (__builtin_expect(fork_parent_tid != 0, 0) && mutex_take_from_fork_parent(m, kind, tid));
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
	atomic_store_explicit(&m->owner, 0, memory_order_relaxed);
}

/* PI: acquire and release through the kernel's PI futex. */
int pi_lock(struct mutex *m, int kind, uint32_t tid, const struct lock_request *req) HIDDEN;
void pi_unlock(struct mutex *m, int kind, uint32_t tid) HIDDEN;

/* Process-shared plain and PP kinds in glibc's 0/1/2 word (mutex_shared.c). */
int lll_lock(struct mutex *m, int kind, uint32_t tid, const struct lock_request *req) HIDDEN;
void lll_unlock(struct mutex *m, int kind) HIDDEN;
int lll_setprioceiling(struct mutex *m, int kind, int ceiling, int *old_ceiling) HIDDEN;

/* PP: raise to the ceiling, then the word protocol; release, then drop. */
int pp_lock(struct mutex *m, int kind, uint32_t tid, const struct lock_request *req) HIDDEN;
void pp_unlock(struct mutex *m, int kind) HIDDEN;

/* After a condition wait returned without the mutex: relock it, as
 * contended if a broadcast may have moved other sleepers onto it. */
int mutex_cond_relock(struct mutex *m, bool contended) HIDDEN;
/* After FUTEX_WAIT_REQUEUE_PI made the caller the owner of a PI mutex
 * (robust_pending_set already done for a robust one): the bookkeeping
 * pi_lock would have done.  0, EOWNERDEAD or ENOTRECOVERABLE. */
int pi_taken_by_kernel(struct mutex *m, int kind, uint32_t tid) HIDDEN;

#endif
