/*
 * The futex layer: the only place that issues futex(2).  Every wrapper
 * returns 0 (or the kernel's positive count) on success and a positive errno
 * on failure, so callers compare against ETIMEDOUT, EAGAIN, ... directly.
 *
 * Kernel contracts relied on (see shared/anchors.md §3):
 * - FUTEX_WAIT_BITSET takes an absolute timeout on CLOCK_MONOTONIC, or on
 *   CLOCK_REALTIME with FUTEX_CLOCK_REALTIME; plain FUTEX_WAIT with that
 *   flag is ENOSYS, so every timed wait here is a BITSET wait.
 * - Waiter and waker must agree on FUTEX_PRIVATE_FLAG.  Robust mutexes are
 *   always shared: the kernel's death wake-up is a shared wake.
 * - FUTEX_LOCK_PI's timeout is absolute CLOCK_REALTIME; FUTEX_LOCK_PI2
 *   (5.14) is absolute CLOCK_MONOTONIC unless FUTEX_CLOCK_REALTIME is set.
 * - Wake order is the kernel's: highest priority first, FIFO among equals.
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

/* Sleeps while *word == expected, until woken, a signal, or the deadline
 * (absolute, on clock; NULL for none).  Spurious returns are possible:
 * callers always re-check their word. */
static inline int futex_wait(_Atomic uint32_t *word, uint32_t expected, bool shared,
			     clockid_t clock, const struct timespec *deadline)
{
	int op = FUTEX_WAIT_BITSET;
	if (deadline && clock == CLOCK_REALTIME)
		op |= FUTEX_CLOCK_REALTIME;
	return futex_result(raw_syscall6(SYS_futex, (long)word, futex_op(shared, op), expected,
					 (long)deadline, 0, FUTEX_BITSET_MATCH_ANY));
}

/* Returns how many threads were woken (never an error for a valid word). */
static inline int futex_wake(_Atomic uint32_t *word, int count, bool shared)
{
	long r = raw_syscall6(SYS_futex, (long)word, futex_op(shared, FUTEX_WAKE), count, 0, 0, 0);
	return r < 0 ? 0 : (int)r;
}

/* If *word == expected, wakes up to wake_count waiters of word and moves up
 * to requeue_count others onto target, where only a wake of target reaches
 * them.  Returns the number woken plus moved, or -EAGAIN if *word changed. */
static inline int futex_cmp_requeue(_Atomic uint32_t *word, int wake_count, int requeue_count,
				    _Atomic uint32_t *target, uint32_t expected, bool shared)
{
	long r = raw_syscall6(SYS_futex, (long)word, futex_op(shared, FUTEX_CMP_REQUEUE), wake_count,
			      requeue_count, (long)target, expected);
	return (int)r;
}

/*
 * PI futex word: owner TID | FUTEX_WAITERS | FUTEX_OWNER_DIED.  Blocks on
 * the kernel's rt_mutex, boosting the owner.  Returns 0 once the caller owns
 * the word, else ETIMEDOUT, EDEADLK (caller owns it), ESRCH (owner gone),
 * EAGAIN (owner exiting: retry), ENOSYS (LOCK_PI2 absent) or EINVAL.
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

static inline int futex_trylock_pi(_Atomic uint32_t *word, bool shared)
{
	return futex_result(raw_syscall6(SYS_futex, (long)word, futex_op(shared, FUTEX_TRYLOCK_PI),
					 0, 0, 0, 0));
}

/* Hands the word to the top waiter (the kernel writes its TID) or frees it. */
static inline int futex_unlock_pi(_Atomic uint32_t *word, bool shared)
{
	return futex_result(raw_syscall6(SYS_futex, (long)word, futex_op(shared, FUTEX_UNLOCK_PI),
					 0, 0, 0, 0));
}

/*
 * Condition wait on a PI mutex: sleeps on word while it equals expected;
 * FUTEX_CMP_REQUEUE_PI later moves the sleeper onto the PI futex pi_word,
 * and 0 is returned only once the caller owns pi_word.  ETIMEDOUT and
 * EAGAIN (woken before requeue, or *word changed) return without the lock.
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

/* Wakes (by taking pi_word for it) at most one waiter of word and moves up
 * to requeue_count more onto pi_word.  Returns the number woken plus moved,
 * or -errno (-EAGAIN if *word != expected). */
static inline int futex_cmp_requeue_pi(_Atomic uint32_t *word, int requeue_count,
				       _Atomic uint32_t *pi_word, uint32_t expected, bool shared)
{
	return (int)raw_syscall6(SYS_futex, (long)word, futex_op(shared, FUTEX_CMP_REQUEUE_PI), 1,
				 requeue_count, (long)pi_word, expected);
}

#endif
