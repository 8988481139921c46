/*
 * The arithmetic of a condition variable's state word, as pure functions
 * (tests/unit/test_cond_state.c checks every edge).  See cond_seq.c for
 * who calls them and why the protocol is exact.
 *
 *   state   64 bits: seq in the low half, the futex word waiters sleep on;
 *           pending in the high half, registered waiters no signal or
 *           broadcast has been counted against yet.
 *   seq     moves on by 2 at every signal and broadcast that finds a
 *           waiter pending; bit 0 says the last move was a broadcast that
 *           moves sleepers onto the mutex (a requeue).
 *           seq / 2 counts the moves (mod 2^31).
 *   epoch   a waiter that registered at seq s sleeps with the futex bit
 *           mask epoch_bit(s): one of 32 bits, by the count of s.  A wake
 *           with wake_mask(current seq) reaches every sleeper that
 *           registered before the current seq (all of them, unless one
 *           slept through a multiple of 32 moves: alias_mask catches those)
 *           and none that registered since.
 */
#ifndef RTPTHREAD_COND_STATE_H
#define RTPTHREAD_COND_STATE_H

#include <stdbool.h>
#include <stdint.h>

#define SEQ_BY_REQUEUE 1u
#define STATE_ONE_PENDING ((uint64_t)1 << 32)

static inline uint32_t state_seq(uint64_t state)
{
	return (uint32_t)state;
}

static inline uint32_t state_pending(uint64_t state)
{
	return (uint32_t)(state >> 32);
}

static inline uint64_t state_make(uint32_t seq, uint32_t pending)
{
	return (uint64_t)pending << 32 | seq;
}

/* The seq a signal or broadcast (marked if it requeues) makes out of seq. */
static inline uint32_t seq_next(uint32_t seq, bool requeue)
{
	return ((seq & ~SEQ_BY_REQUEUE) + 2) | (requeue ? SEQ_BY_REQUEUE : 0);
}

static inline bool seq_by_requeue(uint32_t seq)
{
	return seq & SEQ_BY_REQUEUE;
}

/* A signal: one pending waiter fewer and the next seq.  false (state
 * unchanged) when nobody is pending. */
static inline bool state_signal(uint64_t state, uint64_t *next)
{
	uint32_t pending = state_pending(state);
	if (pending == 0)
		return false;
	*next = state_make(seq_next(state_seq(state), false), pending - 1);
	return true;
}

/* A broadcast: nobody pending and the next seq, marked if it requeues. */
static inline bool state_broadcast(uint64_t state, bool requeue, uint64_t *next)
{
	if (state_pending(state) == 0)
		return false;
	*next = state_make(seq_next(state_seq(state), requeue), 0);
	return true;
}

/* A waiter that registered at seq `registered` and gives up (deadline,
 * cancellation, error): if seq has not moved since, nothing was counted
 * against it, and it takes itself off pending (true, *next).  If seq moved,
 * a signal or broadcast came after it registered: it counts as woken
 * (false).  seq unmoved implies pending >= 1 (its own registration); pending
 * 0 there is treated as woken, which can only cost a spurious return. */
static inline bool state_leave_unwoken(uint64_t state, uint32_t registered, uint64_t *next)
{
	if (state_seq(state) != registered || state_pending(state) == 0)
		return false;
	*next = state - STATE_ONE_PENDING;
	return true;
}

/* pending never counts more waiters than are inside the wait: a waiter
 * that returned for a signal another waiter also returned for (a spurious
 * return) leaves its registration counted.  A leaving waiter trims pending
 * to the others still inside (true, *next). */
static inline bool state_trim(uint64_t state, uint32_t others_inside, uint64_t *next)
{
	if (state_pending(state) <= others_inside)
		return false;
	*next = state_make(state_seq(state), others_inside);
	return true;
}

static inline uint32_t epoch_bit(uint32_t seq)
{
	return 1u << ((seq >> 1) % 32);
}

/* Sleepers that registered before seq (but for those whose count is a
 * multiple of 32 behind: see alias_mask). */
static inline uint32_t wake_mask(uint32_t seq)
{
	return ~epoch_bit(seq);
}

/* Sleepers that registered at seq, or a multiple of 32 moves before it. */
static inline uint32_t alias_mask(uint32_t seq)
{
	return epoch_bit(seq);
}

#endif
