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
#include <stdint.h>
#include <time.h>

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
int rwlock_rdlock(struct rwlock *rw, int try, clockid_t clock, const struct timespec *deadline) HIDDEN;
int rwlock_wrlock(struct rwlock *rw, int try, clockid_t clock, const struct timespec *deadline) HIDDEN;
int rwlock_unlock(struct rwlock *rw) HIDDEN;

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
