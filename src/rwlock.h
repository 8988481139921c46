/*
 * The reader-writer lock, laid over glibc's pthread_rwlock_t (56 bytes on
 * x86_64 and aarch64, 8-byte aligned; glibc's __flags at 48 on both).
 *
 *   off  ours
 *    0   state: RW_READERS anonymous readers | RW_QUEUE | RW_DRAIN | RW_HELD |
 *        RW_WRITER
 *    4   writer: a PI futex word (TID | FUTEX_WAITERS), held by the writer
 *        that wants or holds the lock, or for a moment by a reader that
 *        had to queue behind a writer
 *    8   slot[RW_SLOTS]: PI futex words, each 0 or the TID of one reader
 *        inside the lock (| FUTEX_WAITERS while a writer waits on it)
 *   48   flags: the kind (glibc's __flags: 0 prefer reader, 1 prefer
 *        writer, 2 prefer writer non-recursive) | RW_FLAG_PSHARED
 *   52   unused
 *
 * PTHREAD_RWLOCK_INITIALIZER is all zero: a free private prefer-reader
 * lock.  PTHREAD_RWLOCK_WRITER_NONRECURSIVE_INITIALIZER_NP is zero but 2
 * in __flags: a free private writer-non-recursive lock.  The object holds
 * TIDs and counts, no pointers, so it works mapped at different addresses
 * in several processes.  See rwlock.c for the protocol.
 */
#ifndef RTPTHREAD_RWLOCK_H
#define RTPTHREAD_RWLOCK_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "futex.h"
#include "self.h"

/* Readers that can be boosted at once: the slots left in the object. */
#define RW_SLOTS 10

#define RW_READERS 0x0fffffffu /* anonymous readers inside the lock */
#define RW_QUEUE 0x10000000u   /* threads not boosting anyone sleep on state until the writer word is free */
#define RW_DRAIN 0x20000000u   /* the writer sleeps on state until RW_READERS is 0 */
#define RW_HELD 0x40000000u    /* the writer holds the lock: no reader is inside */
#define RW_WRITER 0x80000000u  /* the holder of the writer word is a writer */

#define RW_KIND_MASK 0x3u
#define RW_FLAG_PSHARED 0x100u

struct rwlock {
	_Atomic uint32_t state;
	_Atomic uint32_t writer;
	_Atomic uint32_t slot[RW_SLOTS];
	uint32_t flags;
	uint32_t unused;
};

int rwlock_init(struct rwlock *rw, const pthread_rwlockattr_t *attr) HIDDEN;
int rwlock_destroy(struct rwlock *rw) HIDDEN;
/* try: fail with EBUSY instead of blocking.  deadline: absolute on clock,
 * NULL for none; checked before anything else, as glibc does. */

/*
 * state and writer side by side are one aligned 64-bit word (the object is
 * 8-byte aligned; state is the low half on these little-endian targets):
 * an uncontended writer takes the writer word and sets RW_WRITER|RW_HELD
 * in one CAS, and frees both in one, as the two steps would.  x86_64 and
 * aarch64 keep mixed-size atomic accesses to one aligned word coherent,
 * so the kernel's 32-bit operations on the writer word and ours on either
 * half stay atomic against it; a pair CAS that meets FUTEX_WAITERS fails.
 */
typedef uint64_t __attribute__((may_alias)) rwlock_pair_t;

_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "state is the low half of the pair");
_Static_assert(offsetof(struct rwlock, state) == 0 && offsetof(struct rwlock, writer) == 4, "the pair");

static inline rwlock_pair_t *rwlock_pair(struct rwlock *rw)
{
	return (rwlock_pair_t *)(void *)&rw->state;
}

static inline uint64_t rwlock_pair_of(uint32_t state, uint32_t writer)
{
	return (uint64_t)state | (uint64_t)writer << 32;
}

/* Whether no slot holds a TID: the ten slots as five aligned 64-bit loads
 * (two slots each, as the pair above), no early exit. */
_Static_assert(offsetof(struct rwlock, slot) % 8 == 0 && RW_SLOTS % 2 == 0, "slots in 64-bit pairs");

static inline bool rwlock_slots_empty(struct rwlock *rw)
{
	const rwlock_pair_t *two = (const rwlock_pair_t *)(const void *)rw->slot;
	uint64_t any = 0;
	for (int i = 0; i < RW_SLOTS / 2; i++)
		any |= __atomic_load_n(&two[i], __ATOMIC_SEQ_CST);
	return !(any & rwlock_pair_of(FUTEX_TID_MASK, FUTEX_TID_MASK));
}

/*
 * The fast paths, inline in the entry points (preload/) as the mutex's
 * are: a reader's CAS of its TID into its home slot and a load of state to
 * lock, a CAS back to 0 to unlock (rwlock.c says why a reader that sees no
 * RW_WRITER is safe); a writer's pair CAS from 0 and a look at the slots
 * to lock, a pair CAS back to 0 to unlock.  Every other case is a tail call of
 * rwlock.c, so the entry points set up no stack frame.
 */

/* Read locks this thread holds, on every rwlock (rwlock.c). */
extern __thread unsigned rwlock_reads_held TLS_FAST HIDDEN;

/* home: the slot the fast path took (a writer is there), or -1. */
int rwlock_rdlock_slow(struct rwlock *rw, uint32_t tid, int home, int try, clockid_t clock,
		       const struct timespec *deadline) HIDDEN;
/* A timed call, or a thread whose TID is not at hand yet. */
int rwlock_rdlock_checked(struct rwlock *rw, int try, clockid_t clock, const struct timespec *deadline) HIDDEN;
/* tid 0: not at hand yet. */
int rwlock_unlock_slow(struct rwlock *rw, uint32_t tid) HIDDEN;
/* A writer may wait for the last slot reader to leave (RW_DRAIN). */
int rwlock_reader_left_drain(struct rwlock *rw, bool shared) HIDDEN;

/* tid's own slot, where its read locks start looking: one of the first
 * eight (a mask, where tid % RW_SLOTS would be a multiply on both fast
 * paths); the last two are taken when a reader's own is busy. */
_Static_assert(RW_SLOTS >= 8, "rwlock_slot_home");
static inline unsigned rwlock_slot_home(uint32_t tid)
{
	return tid & 7;
}

static inline __attribute__((always_inline)) int rwlock_rdlock(struct rwlock *rw, int try, clockid_t clock,
								const struct timespec *deadline)
{
	uint32_t tid = self_tid_or_zero();
	if (__builtin_expect(deadline != NULL || tid == 0, 0))
		return rwlock_rdlock_checked(rw, try, clock, deadline);
	/* The home slot (seq_cst: see the top of rwlock.c). */
	unsigned i = rwlock_slot_home(tid);
	uint32_t v = 0;
	if (__builtin_expect(atomic_compare_exchange_strong_explicit(&rw->slot[i], &v, tid, memory_order_seq_cst,
								     memory_order_relaxed),
			     1)) {
		if (__builtin_expect(!(atomic_load_explicit(&rw->state, memory_order_seq_cst) & RW_WRITER), 1)) {
			rwlock_reads_held++;
			return 0;
		}
		return rwlock_rdlock_slow(rw, tid, (int)i, try, clock, deadline);
	}
	return rwlock_rdlock_slow(rw, tid, -1, try, clock, deadline);
}

/* A writer that did not get the lock at the first try. */
int rwlock_wrlock_slow(struct rwlock *rw, uint32_t tid, int try, clockid_t clock,
		       const struct timespec *deadline) HIDDEN;
/* The writer holds the word and RW_WRITER but readers may be inside. */
int rwlock_wrlock_readers_inside(struct rwlock *rw, int try, clockid_t clock,
				 const struct timespec *deadline) HIDDEN;
int rwlock_wrlock_checked(struct rwlock *rw, int try, clockid_t clock, const struct timespec *deadline) HIDDEN;

static inline __attribute__((always_inline)) int rwlock_wrlock_tid(struct rwlock *rw, uint32_t tid, int try,
								   clockid_t clock, const struct timespec *deadline)
{
	/* Nobody there: the writer word and RW_WRITER|RW_HELD in one CAS
	 * (seq_cst: before the loads of the slots, see the top of rwlock.c).
	 * A reader inside through a slot that sees RW_HELD meanwhile knows it
	 * is early (rwlock.c, reader_enter_anonymous). */
	uint64_t pair = 0;
	if (__builtin_expect(!__atomic_compare_exchange_n(rwlock_pair(rw), &pair, rwlock_pair_of(RW_WRITER | RW_HELD, tid),
							  false, __ATOMIC_SEQ_CST, __ATOMIC_RELAXED),
			     0))
		return rwlock_wrlock_slow(rw, tid, try, clock, deadline);
	/* A reader inside clears RW_HELD before it lets go of its slot, so
	 * finding the slots empty and state unchanged means no reader is
	 * inside. */
	if (__builtin_expect(rwlock_slots_empty(rw), 1) &&
	    atomic_load_explicit(&rw->state, memory_order_seq_cst) == (RW_WRITER | RW_HELD))
		return 0;
	return rwlock_wrlock_readers_inside(rw, try, clock, deadline);
}

static inline __attribute__((always_inline)) int rwlock_wrlock(struct rwlock *rw, int try, clockid_t clock,
								const struct timespec *deadline)
{
	uint32_t tid = self_tid_or_zero();
	if (__builtin_expect(deadline != NULL || tid == 0, 0))
		return rwlock_wrlock_checked(rw, try, clock, deadline);
	return rwlock_wrlock_tid(rw, tid, try, clock, deadline);
}

/* A reader in its home slot, or the writer, nobody waiting on it: one
 * CAS; everything else is rwlock_unlock_slow's. */
static inline __attribute__((always_inline)) int rwlock_unlock(struct rwlock *rw)
{
	uint32_t tid = self_tid_or_zero();
	unsigned i = rwlock_slot_home(tid);
	uint32_t v = tid;
	if (__builtin_expect(tid != 0 && atomic_load_explicit(&rw->slot[i], memory_order_relaxed) == tid, 1) &&
	    atomic_compare_exchange_strong_explicit(&rw->slot[i], &v, 0, memory_order_seq_cst,
						    memory_order_relaxed)) {
		if (rwlock_reads_held)
			rwlock_reads_held--;
		/* Then the load of state (seq_cst, after the CAS). */
		if (__builtin_expect(!(atomic_load_explicit(&rw->state, memory_order_seq_cst) & RW_DRAIN), 1))
			return 0;
		return rwlock_reader_left_drain(rw, rw->flags & RW_FLAG_PSHARED);
	}
	/* The writer, nobody queued on the writer word: one pair CAS.  (Nobody
	 * else changes state while RW_HELD is set, see rwlock_unlock_slow.) */
	uint64_t pair = rwlock_pair_of(RW_WRITER | RW_HELD, tid);
	if (tid != 0 && __atomic_load_n(rwlock_pair(rw), __ATOMIC_RELAXED) == pair &&
	    __atomic_compare_exchange_n(rwlock_pair(rw), &pair, 0, false, __ATOMIC_RELEASE, __ATOMIC_RELAXED))
		return 0;
	return rwlock_unlock_slow(rw, tid);
}

int rwlockattr_init(pthread_rwlockattr_t *attr) HIDDEN;
int rwlockattr_destroy(pthread_rwlockattr_t *attr) HIDDEN;
int rwlockattr_setkind(pthread_rwlockattr_t *attr, int kind) HIDDEN;
int rwlockattr_getkind(const pthread_rwlockattr_t *attr, int *kind) HIDDEN;
int rwlockattr_setpshared(pthread_rwlockattr_t *attr, int pshared) HIDDEN;
int rwlockattr_getpshared(const pthread_rwlockattr_t *attr, int *pshared) HIDDEN;

static inline struct rwlock *rwlock_of(pthread_rwlock_t *rw)
{
	return (struct rwlock *)rw;
}

#endif
