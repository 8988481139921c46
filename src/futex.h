/*
 * The futex layer: the only place that issues futex(2).  Every wrapper
 * returns 0 on success or a positive errno, so callers compare against
 * ETIMEDOUT, EAGAIN, ... directly; counts come back through a pointer.
 * Each wrapper's comment lists the results the kernel can produce.
 *
 * Kernel contracts relied on:
 * - FUTEX_WAIT_BITSET takes an absolute timeout on CLOCK_MONOTONIC, or on
 *   CLOCK_REALTIME with FUTEX_CLOCK_REALTIME; plain FUTEX_WAIT with that
 *   flag is ENOSYS, so every timed wait here is a BITSET wait.
 * - Waiter and waker must agree on FUTEX_PRIVATE_FLAG.  Robust mutexes are
 *   always shared: the kernel's death wake-up is a shared wake.
 * - FUTEX_LOCK_PI's timeout is absolute CLOCK_REALTIME; FUTEX_LOCK_PI2
 *   (5.14) is absolute CLOCK_MONOTONIC unless FUTEX_CLOCK_REALTIME is set.
 * - Wake order is the kernel's: highest priority first, FIFO among equals
 *   (by the sleeper's normal priority: PI boosts do not reorder).
 * - A wake may reach an address after its memory was reused: every waiter
 *   here tolerates a wake it was not meant to get.  A requeue on a reused
 *   address would not be harmless, so no requeue ever runs on memory whose
 *   owner may have left (see cond_pi.c).
 */
#ifndef RTPTHREAD_FUTEX_H
#define RTPTHREAD_FUTEX_H

#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "syscall.h"

#ifndef FUTEX_LOCK_PI2
#define FUTEX_LOCK_PI2 13
#endif

static inline int futex_op(bool shared, int op)
{
	return shared ? op : op | FUTEX_PRIVATE_FLAG;
}

static inline int futex_result(long r)
{
	return r < 0 ? (int)-r : 0;
}

/* Sleeps while *word == expected, until a wake whose bit mask meets bits,
 * a signal, or the deadline (absolute, on clock; NULL for none).  0 after a
 * wake (also a spurious one: callers re-check their word), EAGAIN if *word
 * != expected, ETIMEDOUT, EINTR (a handler ran and the kernel did not
 * restart), EINVAL (bits 0, bad timespec, or a word others use for
 * requeue-PI).  A kernel wake-up that coincides with the deadline returns
 * 0: a wake is never reported as a timeout. */
static inline int futex_wait_bits(_Atomic uint32_t *word, uint32_t expected, uint32_t bits, bool shared,
				  clockid_t clock, const struct timespec *deadline)
{
	int op = FUTEX_WAIT_BITSET;
	if (deadline && clock == CLOCK_REALTIME)
		op |= FUTEX_CLOCK_REALTIME;
	return futex_result(raw_syscall6(SYS_futex, (long)word, futex_op(shared, op), expected,
					 (long)deadline, 0, bits));
}

static inline int futex_wait(_Atomic uint32_t *word, uint32_t expected, bool shared, clockid_t clock,
			     const struct timespec *deadline)
{
	return futex_wait_bits(word, expected, FUTEX_BITSET_MATCH_ANY, shared, clock, deadline);
}

/* Wakes up to count sleepers of word whose bit mask meets bits, highest
 * priority first.  0 or EINVAL/EFAULT (a bad word; also EINVAL when a
 * requeue-PI waiter sleeps there); *woken (if not NULL) gets the number. */
static inline int futex_wake_bits(_Atomic uint32_t *word, int count, uint32_t bits, bool shared, int *woken)
{
	long r = raw_syscall6(SYS_futex, (long)word, futex_op(shared, FUTEX_WAKE_BITSET), count, 0, 0, bits);
	if (woken)
		*woken = r < 0 ? 0 : (int)r;
	return futex_result(r);
}

static inline int futex_wake(_Atomic uint32_t *word, int count, bool shared)
{
	return futex_wake_bits(word, count, FUTEX_BITSET_MATCH_ANY, shared, NULL);
}

/* FUTEX_WAKE_OP's operation word (the kernel's FUTEX_OP, spelled without
 * its precedence warning): op in bits 28-31, cmp in 24-27, oparg in 12-23,
 * cmparg in 0-11.  The use here gives the word as both addresses, with no
 * wake on the second. */
static inline uint32_t futex_op_word(uint32_t op, uint32_t oparg)
{
	return op << 28 | (uint32_t)FUTEX_OP_CMP_EQ << 24 | (oparg & 0xfff) << 12;
}

/* Stores value (0..2047) in word and wakes up to count of its sleepers, in
 * one call (FUTEX_WAKE_OP with the word as both addresses): a caller
 * killed meanwhile has done both or neither.  0 or EINVAL/EFAULT/ENOSYS. */
static inline int futex_store_wake(_Atomic uint32_t *word, uint32_t value, int count, bool shared)
{
	uint32_t op = futex_op_word(FUTEX_OP_SET, value);
	return futex_result(raw_syscall6(SYS_futex, (long)word, futex_op(shared, FUTEX_WAKE_OP), count, 0,
					 (long)word, op));
}

/*
 * Sleeps until a wake reaches any of the count words (futex_waitv(2),
 * 5.16), each compared with its entry's val first.  0 with *woken = the
 * index of a word woken (others may have been woken too), else EAGAIN (a
 * word differed), ETIMEDOUT, EINTR, ENOSYS (an older kernel) or EINVAL.
 * A sleeper here matches every wake bit set.  The deadline is absolute on
 * clock (NULL: none).
 */
static inline int futex_waitv(struct futex_waitv *words, unsigned count, clockid_t clock,
			      const struct timespec *deadline, int *woken)
{
	long r = raw_syscall6(SYS_futex_waitv, (long)words, count, 0, (long)deadline, clock, 0);
	*woken = r < 0 ? -1 : (int)r;
	return futex_result(r);
}

/* One futex_waitv entry for a 32-bit word. */
static inline struct futex_waitv futex_waitv_entry(_Atomic uint32_t *word, uint32_t expected, bool shared)
{
	return (struct futex_waitv){ .val = expected, .uaddr = (uintptr_t)word,
				     .flags = FUTEX_32 | (shared ? 0 : FUTEX_PRIVATE_FLAG) };
}

/* If *word == expected, wakes up to wake_count sleepers of word and moves
 * up to requeue_count others onto target, where only a wake of target
 * reaches them (bit masks are ignored).  0 with *moved = woken + moved, or
 * EAGAIN (*word != expected), EINVAL, EFAULT. */
static inline int futex_cmp_requeue(_Atomic uint32_t *word, int wake_count, int requeue_count,
				    _Atomic uint32_t *target, uint32_t expected, bool shared, int *moved)
{
	long r = raw_syscall6(SYS_futex, (long)word, futex_op(shared, FUTEX_CMP_REQUEUE), wake_count,
			      requeue_count, (long)target, expected);
	*moved = r < 0 ? 0 : (int)r;
	return futex_result(r);
}

/*
 * PI futex word: owner TID | FUTEX_WAITERS | FUTEX_OWNER_DIED.  Blocks on
 * the kernel's rt_mutex, boosting the owner.  0 once the caller owns the
 * word (OWNER_DIED may be set), else ETIMEDOUT, EDEADLK (caller owns it),
 * ESRCH (the TID in the word names no task: an owner that died without a
 * robust-list entry), EAGAIN (owner exiting: retry), EINTR, ENOSYS
 * (LOCK_PI2 absent) or EINVAL.
 */
static inline int futex_lock_pi(_Atomic uint32_t *word, bool shared, clockid_t clock,
				const struct timespec *deadline)
{
	int op = FUTEX_LOCK_PI;
	if (deadline && clock == CLOCK_MONOTONIC)
		op = FUTEX_LOCK_PI2;
	return futex_result(raw_syscall6(SYS_futex, (long)word, futex_op(shared, op), 0,
					 (long)deadline, 0, 0));
}

/* 0 (taken), EAGAIN/EBUSY (held), EDEADLK, ESRCH as above. */
static inline int futex_trylock_pi(_Atomic uint32_t *word, bool shared)
{
	return futex_result(raw_syscall6(SYS_futex, (long)word, futex_op(shared, FUTEX_TRYLOCK_PI),
					 0, 0, 0, 0));
}

/* Hands the word to the top waiter (the kernel writes its TID) or frees it.
 * 0, or EPERM when the caller does not own it. */
static inline int futex_unlock_pi(_Atomic uint32_t *word, bool shared)
{
	return futex_result(raw_syscall6(SYS_futex, (long)word, futex_op(shared, FUTEX_UNLOCK_PI),
					 0, 0, 0, 0));
}

/*
 * Condition wait on a PI mutex: sleeps on word while it equals expected;
 * FUTEX_CMP_REQUEUE_PI later moves the sleeper onto the PI futex pi_word.
 * 0 only once the caller owns pi_word.  Without the lock: EAGAIN (*word !=
 * expected before sleeping, or a signal handler ran after the move),
 * ETIMEDOUT (before or after the move), EINVAL.  A signal before the move
 * restarts the wait in the kernel.  The return value cannot tell whether
 * the caller was moved: the caller's own records must.
 */
static inline int futex_wait_requeue_pi(_Atomic uint32_t *word, uint32_t expected,
					_Atomic uint32_t *pi_word, bool shared, clockid_t clock,
					const struct timespec *deadline)
{
	int op = FUTEX_WAIT_REQUEUE_PI;
	if (deadline && clock == CLOCK_REALTIME)
		op |= FUTEX_CLOCK_REALTIME;
	return futex_result(raw_syscall6(SYS_futex, (long)word, futex_op(shared, op), expected,
					 (long)deadline, (long)pi_word, 0));
}

/* If *word == expected: takes pi_word for the top sleeper of word if it is
 * free (and wakes it), else moves it onto pi_word's rt_mutex; moves up to
 * requeue_count more.  0 with *moved = woken + moved, or EAGAIN (*word !=
 * expected), ESRCH (pi_word names a dead owner: nobody moved), EINVAL (a
 * sleeper named another pi_word), EFAULT. */
static inline int futex_cmp_requeue_pi(_Atomic uint32_t *word, int requeue_count,
				       _Atomic uint32_t *pi_word, uint32_t expected, bool shared, int *moved)
{
	long r = raw_syscall6(SYS_futex, (long)word, futex_op(shared, FUTEX_CMP_REQUEUE_PI), 1,
			      requeue_count, (long)pi_word, expected);
	*moved = r < 0 ? 0 : (int)r;
	return futex_result(r);
}

#endif
