/*
 * The arithmetic of the state-word protocol, as pure functions
 * (tests/unit/test_cond_state.c checks them, and explores the
 * process-shared protocol built on them).  cond_seq.c has the protocol and
 * why it is exact.
 *
 *   seq     the futex word every waiter sleeps on.  It moves on by 2 at
 *           every signal and broadcast that finds a waiter, so that a
 *           waiter on its way to sleep sees the change (EAGAIN); bit 0
 *           says the last move was a broadcast that moves sleepers onto
 *           the mutex (a requeue).
 *
 * A process-shared condition's waiters, in groups by generation (under
 * the condition's lock):
 *
 *   gen       the generation new waiters register in: G2, the newest group.
 *   span      G1, the group signals go to, is the generations gen - span
 *             to gen - 1 (none when span is 0).  A waiter of an older
 *             generation is in a closed group: it was signalled.
 *   waiting   G1's and G2's waiters that no signal has gone to.
 *   tokens    signals to G1 that none of its waiters has taken yet.
 *
 *   ranked    a waiter of G2 runs at a real-time wait order (priority.h).
 *
 * So G1's waiters inside number waiting[G1] + tokens, and each token is
 * taken by one of them.  A signal goes to G1.  First, when G1 has nobody
 * left to signal but tokens out, G1 closes (every waiter of it inside
 * holds one of them).  Then, when G1 has no token out, G2 joins it (all
 * of them were blocked at this signal) if G1 is empty or G2 is ranked:
 * the kernel then wakes the highest of both.  Among waiters without
 * real-time priority the kernel's order is the order they last went to
 * sleep, which every handler that interrupts a sleep changes; the older
 * group is served first, as NPTL's, so a handler moves its waiter back
 * within its group only.  A
 * waiter sleeps with the futex bit of its generation (group_bit): a
 * signal's wake reaches G1's sleepers only, as span stays below 32, and a
 * closing wakes the closed group's.
 */
#ifndef RTPTHREAD_COND_STATE_H
#define RTPTHREAD_COND_STATE_H

#include <stdbool.h>
#include <stdint.h>

#define SEQ_BY_REQUEUE 1u

/* The seq a signal or broadcast (marked if it requeues) makes out of seq. */
static inline uint32_t seq_next(uint32_t seq, bool requeue)
{
	return ((seq & ~SEQ_BY_REQUEUE) + 2) | (requeue ? SEQ_BY_REQUEUE : 0);
}

static inline bool seq_by_requeue(uint32_t seq)
{
	return seq & SEQ_BY_REQUEUE;
}

enum { G1, G2 };

/* G1 spans at most this many generations: their bits and G2's are then
 * 32 different futex bits.  G2 that would make it span more waits until
 * G1 has nobody left to signal. */
#define GROUP_SPAN_MAX 31u

struct cond_groups {
	uint32_t gen;
	uint32_t waiting[2]; /* by G1, G2 */
	uint32_t tokens : 24; /* at most the waiters inside, far below 2^24 */
	uint32_t span : 7;
	uint32_t ranked : 1;
};

/* What a signal or broadcast leaves to wake, after the lock: futex bit
 * masks, 0 for none. */
struct group_wake {
	uint32_t one; /* one sleeper of these bits */
	uint32_t all; /* every sleeper of these bits */
};

static inline uint32_t group_bit(uint32_t gen)
{
	return 1u << (gen % 32);
}

/* The bits of G1's generations. */
static inline uint32_t group_g1_bits(const struct cond_groups *g)
{
	uint32_t bits = (1u << g->span) - 1, first = (g->gen - g->span) % 32;
	return first ? bits << first | bits >> (32 - first) : bits;
}

/* Where a waiter of generation gen stands: G1, G2, or -1, closed. */
static inline int group_of(const struct cond_groups *g, uint32_t gen)
{
	uint32_t age = g->gen - gen;
	if (age == 0)
		return G2;
	return age <= g->span ? G1 : -1;
}

/* A waiter registers (ranked: at a real-time wait order): its
 * generation. */
static inline uint32_t group_register(struct cond_groups *g, bool ranked)
{
	g->waiting[G2]++;
	g->ranked |= ranked;
	return g->gen;
}

/* A waiter of generation gen looks after a wake-up: true if it is
 * signalled (its group closed, or it takes one of G1's tokens). */
static inline bool group_take(struct cond_groups *g, uint32_t gen)
{
	int group = group_of(g, gen);
	if (group < 0)
		return true;
	if (group == G2 || g->tokens == 0)
		return false;
	g->tokens--;
	return true;
}

/*
 * A waiter of generation gen gives up (deadline, cancellation): true if
 * it left unsignalled; false if it is signalled and must act as such,
 * which it is when its group closed or when every waiter of G1 inside
 * holds a token (it takes one).  A count that is already 0 (the lock
 * taken over from a process killed inside it) is left alone: the waiter
 * then leaves as signalled, a spurious return at worst.
 */
static inline bool group_leave(struct cond_groups *g, uint32_t gen)
{
	int group = group_of(g, gen);
	if (group < 0)
		return false;
	if (g->waiting[group] > 0) {
		g->waiting[group]--;
		return true;
	}
	if (group == G1 && g->tokens > 0)
		g->tokens--;
	return false;
}

/*
 * After a waiter of generation gen that the kernel may have woken leaves
 * without a token of its own (its group closed, or it left unsignalled):
 * the bits of one sleeper to wake, or 0.  The wake may have been meant
 * for a token of G1: a closed group's sleeper can share its futex bit
 * with one of G1's generations (32 generations apart), and a cancellation
 * acts after the kernel's return.  While a token is out, a sleeper of G1
 * gets that wake.
 */
static inline uint32_t group_passed_wake(const struct cond_groups *g, uint32_t gen)
{
	return group_of(g, gen) != G2 && g->tokens > 0 ? group_g1_bits(g) : 0;
}

/* A signal (see the top): false if no waiter is left to signal. */
static inline bool group_signal(struct cond_groups *g, struct group_wake *wake)
{
	wake->one = wake->all = 0;
	if (g->waiting[G1] == 0 && g->waiting[G2] == 0)
		return false;
	if (g->waiting[G1] == 0) {
		/* Everybody of G1 still inside holds a token: they return
		 * without taking one. */
		if (g->tokens > 0)
			wake->all = group_g1_bits(g);
		g->tokens = 0;
		g->span = 0;
	}
	if (g->tokens == 0 && g->waiting[G2] > 0 && g->span < GROUP_SPAN_MAX &&
	    (g->waiting[G1] == 0 || g->ranked)) {
		g->waiting[G1] += g->waiting[G2];
		g->waiting[G2] = 0;
		g->gen++;
		g->span++;
		g->ranked = 0;
	}
	/* waiting[G1] > 0 here: it was, or it was 0 and G2 joined. */
	g->waiting[G1]--;
	g->tokens++;
	wake->one = group_g1_bits(g);
	return true;
}

/* A broadcast: every group closes.  false if no waiter is left to
 * signal (those holding tokens need nothing more). */
static inline bool group_broadcast(struct cond_groups *g, struct group_wake *wake)
{
	wake->one = wake->all = 0;
	if (g->waiting[G1] == 0 && g->waiting[G2] == 0)
		return false;
	wake->all = group_g1_bits(g) | group_bit(g->gen);
	g->gen++;
	g->span = 0;
	g->waiting[G1] = g->waiting[G2] = 0;
	g->tokens = 0;
	g->ranked = 0;
	return true;
}

/* Is a waiter blocked (not yet signalled)? */
static inline bool group_blocked(const struct cond_groups *g)
{
	return g->waiting[G1] != 0 || g->waiting[G2] != 0;
}

#endif
