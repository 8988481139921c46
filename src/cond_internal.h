/* The condition object, shared by cond.c and the protocols it dispatches
 * to: cond_seq.c, cond_pi.c, cond_mask.c (see cond.c). */
#ifndef RTPTHREAD_COND_INTERNAL_H
#define RTPTHREAD_COND_INTERNAL_H

#include <pthread.h>

#include "attr.h"
#include "clock.h"
#include "cond_state.h"
#include "debug.h"
#include "mutex_cond.h" /* the door to the mutex: nothing else of it */

#define COND_PSHARED CONDATTR_PSHARED
#define COND_MONOTONIC CONDATTR_MONOTONIC
#define COND_MASKED 0x100u /* a masked wait has run: see cond_mask.c */
#define COND_DESTROYED 0x80000000u
/* The fork generation (self.h) that last reset the waiter records of a
 * private condition, modulo 2^15: see cond_fork_check. */
#define COND_FORK_SHIFT 16
#define COND_FORK_MASK 0x7fff0000u
#define COND_DESTROYING 0x80000000u

struct cond_link;
struct cond_node;

struct cond {
	_Atomic uint32_t seq;		  /* the state-word protocol's futex word: cond_state.h */
	uint32_t zero;			  /* 0 (glibc's __wseq is 64 bits here) */
	_Atomic uint32_t waiters;	  /* threads that may still touch the object | COND_DESTROYING */
	_Atomic uint32_t flags;		  /* COND_PSHARED, COND_MONOTONIC, or COND_DESTROYED */
	union {
		struct {				  /* private conditions */
			struct mutex *_Atomic mutex;	  /* the waiters' mutex */
			struct cond_link *_Atomic head; /* the waiters, highest priority first (cond_queue.h, under lock) */
		};
		struct cond_groups groups;		  /* process-shared: the waiters (cond_state.h, under lock) */
	};
	_Atomic uint32_t lock;		  /* pi_lock.h: guards head and the records' links, or groups */
	_Atomic uint32_t generation;	  /* moved on (by COND_GENERATION_STEP) by every broadcast and masked wake; masked waiters sleep on it */
	struct cond_node *passing;	  /* signalled PI waiters that may pass a wake-up on (under lock) */
};

_Static_assert(sizeof(struct cond) <= sizeof(pthread_cond_t), "struct cond fits pthread_cond_t");
/* init clears groups by clearing mutex and head. */
_Static_assert(sizeof(struct cond_groups) <= 2 * sizeof(void *), "groups lie within mutex and head");
_Static_assert(_Alignof(struct cond) <= _Alignof(pthread_cond_t), "struct cond alignment");

static inline struct cond *cond_of(pthread_cond_t *c)
{
	return (struct cond *)c;
}

/* What init and masked waits leave in flags: anything else is a destroyed
 * condition (COND_DESTROYED) or memory that never was one. */
static inline bool cond_flags_valid(uint32_t flags)
{
	return (flags & ~(uint32_t)(COND_PSHARED | COND_MONOTONIC | COND_MASKED | COND_FORK_MASK)) == 0;
}

static inline uint32_t cond_fork_bits(void)
{
	return (fork_generation << COND_FORK_SHIFT) & COND_FORK_MASK;
}

/* cond.c: forgets the waiters of an ancestor process (cond_fork_check). */
void cond_after_fork(struct cond *c) HIDDEN;

/*
 * A fork child has the memory of the parent's waiters but not the
 * threads: a private condition's PI queue may point into stacks that the
 * child reuses, and its count of waiters counts threads that will never
 * leave.  The first wait, signal, broadcast or destroy of a
 * private condition in a process of a new fork generation drops them all
 * (cond_after_fork), before anything follows them; flags then carry that
 * generation, and every later call pays one compare.  Process-shared
 * conditions are left alone: the parent's waiters are alive and use the
 * same memory.  flags (valid) was read with acquire, which pairs with the
 * release that publishes the reset.
 */
static inline void cond_fork_check(struct cond *c, uint32_t flags)
{
	if (__builtin_expect((flags & COND_FORK_MASK) != cond_fork_bits(), 0) && !(flags & COND_PSHARED))
		cond_after_fork(c);
}

/* generation moves in steps of 2, so its bit 0 is always clear: glibc's
 * __wrefs, at the same offset, has bit 0 set in every process-shared
 * condition glibc initialized (its process-shared flag), and flags, at
 * glibc's high half of __g1_start, reads 0 there: a private default
 * condition.  Such a condition, made by a process without the library, is
 * refused with EINVAL: its waiters and wakers follow glibc's algorithm,
 * which ours cannot meet (they would miss our wakes and we theirs). */
#define COND_GENERATION_STEP 2u

static inline bool cond_made_by_glibc(struct cond *c)
{
	return atomic_load_explicit(&c->generation, memory_order_relaxed) & 1;
}

static inline bool cond_pshared(struct cond *c)
{
	return atomic_load_explicit(&c->flags, memory_order_relaxed) & COND_PSHARED;
}

/* Is any waiter inside a wait (registered and not left)?  After a CAS
 * that read a registration (acquire), its waiter is seen. */
static inline bool cond_inside(struct cond *c)
{
	return (atomic_load_explicit(&c->waiters, memory_order_acquire) & ~COND_DESTROYING) != 0;
}

/* Takes count threads out of waiters: the last thing they (or, for waiters
 * moved onto a PI mutex, their mover) do to the object.  Once waiters
 * drops, destroy may return and the memory go, so the caller reads nothing
 * of c afterwards. */
static inline void cond_leave_many(struct cond *c, uint32_t count)
{
	bool shared = cond_pshared(c);
	uint32_t old = atomic_fetch_sub_explicit(&c->waiters, count, memory_order_release);
	DEBUG_ASSERT((old & ~COND_DESTROYING) >= count);
	if (old == (COND_DESTROYING | count))
		futex_wake(&c->waiters, 1, shared);
}

/* What the checks of a wait read, once: the condition's flags and the
 * mutex's kind.  Returned by value: a wait's frames are left by a
 * longjmp when it is cancelled, and a local whose address is taken gets
 * stack redzones in the sanitizer build that such a jump leaves poisoned
 * under the caller. */
struct wait_check {
	int error; /* 0, or what the wait returns */
	uint32_t flags; /* but COND_FORK_MASK */
	int kind;
};

/* The checks of every wait before it changes anything: EINVAL for what
 * is not a condition, a mutex or a deadline; EPERM when the caller must
 * own the mutex and does not. */
static inline struct wait_check cond_wait_check(struct cond *c, struct mutex *m, const struct timespec *deadline)
{
	struct wait_check w = { 0, atomic_load_explicit(&c->flags, memory_order_acquire), mutex_cond_kind(m) };
	if (!cond_flags_valid(w.flags) || w.kind == KIND_DESTROYED || cond_made_by_glibc(c)) {
		w.error = EINVAL;
		return w;
	}
	cond_fork_check(c, w.flags);
	w.error = deadline_check(deadline);
	if (w.error)
		return w;
	if (!mutex_cond_may_wait(m, w.kind))
		w.error = EPERM;
	return w;
}

/*
 * Every sleep of a wait goes through here (musl's __timedwait_cp): the
 * one place where a wait turns cancellation asynchronous, for the futex
 * call alone, so that a cancellation acted on at once hits the thread
 * asleep and never inside a step of the protocol; the wait's cleanup
 * handler then leaves the condition.  sleep is one futex wait, arg its
 * waiter; returns what sleep returns.  Always inline: sleep is then a
 * direct call, as the open-coded waits had.
 */
static inline __attribute__((always_inline)) int cond_sleep_cancellable(int (*sleep)(void *), void *arg)
{
	int old_type, r;
	pthread_setcanceltype(PTHREAD_CANCEL_ASYNCHRONOUS, &old_type);
	r = sleep(arg);
	pthread_setcanceltype(old_type, NULL);
	return r;
}

/* cond_seq.c: the state-word protocol (a wait checked, with the mutex;
 * signal and broadcast; destroy's wake of the waiters a broadcast moved
 * onto the mutex). */
int cond_seq_wait(struct cond *c, struct mutex *m, clockid_t clock, const struct timespec *deadline) HIDDEN;
void cond_seq_signal(struct cond *c) HIDDEN;
void cond_seq_broadcast(struct cond *c) HIDDEN;
void cond_seq_wake_moved(struct cond *c) HIDDEN;
/* destroy: has a process-shared condition a waiter no signal went to? */
bool cond_seq_blocked(struct cond *c) HIDDEN;

/* cond_mask.c: a masked wait (checked); wakes every masked waiter whose
 * mask meets mask. */
int cond_wait_mask(struct cond *c, struct mutex *m, uint32_t mask, clockid_t clock,
		   const struct timespec *deadline) HIDDEN;
void cond_mask_wake(struct cond *c, uint32_t mask) HIDDEN;

/* cond_pi.c: waits with a PI mutex on a private condition. */
int cond_pi_wait(struct cond *c, struct mutex *m, int kind, clockid_t clock,
		 const struct timespec *deadline) HIDDEN;
void cond_pi_signal(struct cond *c) HIDDEN;
void cond_pi_broadcast(struct cond *c) HIDDEN;
/* destroy: takes the right to pass a wake-up on from every signalled PI
 * waiter that has not started to; those that have are added to waiters,
 * and leave when done. */
void cond_pi_revoke(struct cond *c) HIDDEN;

#endif
