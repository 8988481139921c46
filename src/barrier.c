/*
 * Barriers: one 64-bit word of state, no internal lock.
 *
 * The object (inside pthread_barrier_t, which glibc never initializes
 * statically, so every barrier went through rt_barrier_init):
 *   state    arrived << 32 | generation, one 64-bit word.  arrived counts
 *            the threads that have arrived in the current round;
 *            generation counts finished rounds modulo 2^32.  Every waiter
 *            sleeps on the low half, generation alone, so arrivals do not
 *            change the futex word under a thread going to sleep (its
 *            FUTEX_WAIT would fail with EAGAIN and be made again).
 *   count    threads per round, 1..BARRIER_MAX_COUNT (2^22 - 1; larger is
 *            EINVAL: a Linux PID namespace holds fewer threads,
 *            PID_MAX_LIMIT, so such a round could never end); 0 after
 *            destroy, so a later wait returns EINVAL.
 *   shared   1: process-shared futex operations; 0: private ones.  At
 *            glibc's offset of its own flag, which a barrier glibc made
 *            process-shared has at 128: refused.
 *   pending  LEAVERS_WAITED (bit 31) | OVERFULL_SLEPT (bit 30) | threads
 *            of finished rounds that may still touch the object.  destroy
 *            sleeps on this word.
 *   unused   zero: with count and shared, what tells an initialized
 *            barrier from garbage (EINVAL, never a sleep).
 *
 * wait:
 *   Arrive with fetch_add(state, 1 << 32).  The thread whose add makes
 *   arrived equal to count is the serial thread: it adds count to pending,
 *   stores generation + 1 with arrived 0, wakes every sleeper of the round
 *   with one FUTEX_WAKE_BITSET(INT_MAX, round_bit(generation)) (the kernel
 *   wakes them highest priority first) and returns
 *   PTHREAD_BARRIER_SERIAL_THREAD.  Every other thread sleeps in
 *   FUTEX_WAIT_BITSET with round_bit of the generation it arrived in, while
 *   that generation lasts, and returns 0.  Waiting always blocks in the
 *   kernel: nothing spins.
 *
 *   Leaving.  The wake returns how many sleepers it took off the futex
 *   queue, and each of them returns 0 from its FUTEX_WAIT (the kernel's
 *   contract: an unqueued waiter succeeds).  So the serial thread leaves
 *   for them and for itself in one fetch_sub(pending, woken + 1), and a
 *   sleeper whose wait returns 0 returns at once, without touching the
 *   object again.  Only a participant that was not asleep at the wake (it
 *   arrived and had not slept yet, or a handler interrupted its sleep)
 *   reads the state again and leaves with fetch_sub(pending, 1) itself.
 *   Hence destroy, which waits for pending to drain, never waits for a
 *   woken sleeper that has not run yet (a low-priority thread a busy
 *   middle-priority one keeps off the CPU): only for a thread that was
 *   running inside wait when the round ended.
 *
 * Invariants:
 *   - arrived < count, except between the serial thread's fetch_add and its
 *     store; exactly one thread per generation sees arrived == count.
 *   - pending = participants of finished rounds still inside wait.  The
 *     serial thread adds before its release store and every waiter
 *     subtracts after its acquire load saw that store, so the add comes
 *     first and pending never goes below zero.
 *
 * Races closed:
 *   Immediate reuse.  A thread released from round k may arrive for round
 *   k + 1 before slow threads of round k have run.  Its increment lands in
 *   the new generation: it cannot release them (they wait for a generation
 *   change, which already happened) and cannot be released by them (its
 *   own round needs count arrivals of generation k + 1).
 *
 *   Overfull round.  POSIX lets more than count threads use a barrier.  A
 *   thread whose fetch_add sees arrived > count found the round full (the
 *   serial thread has not stored the next generation yet).  That store
 *   wipes its increment, so it sleeps until the generation changes and
 *   arrives again.  arrived cannot overflow: a thread adds at most once per
 *   generation, and a Linux PID namespace has fewer than 2^22 thread IDs
 *   (PID_MAX_LIMIT).
 *
 *   Wrap-around.  Generations are only compared for equality.  With count
 *   threads using the barrier (the normal case), the generation cannot
 *   move on by more than one while a thread is inside wait, since the next
 *   round needs that thread, so wrapping is harmless.  With more threads
 *   than count, a released thread that stays unscheduled while the others
 *   finish exactly a multiple of 2^32 rounds would sleep one more round:
 *   late, never early.
 *
 *   Round bits.  A thread released from round k may arrive for round k + 1
 *   and sleep before round k's serial thread has made its wake: round_bit
 *   differs between consecutive generations (16 bits, and 2^32 is a
 *   multiple of 16), so that wake cannot reach it.  Only a serial thread
 *   delayed between its store and its wake while 16 more rounds finish
 *   could wake a sleeper of a later round early; with count threads that
 *   cannot happen (round k + 1 needs the serial thread of round k), only
 *   with more threads than count.
 *
 *   Overfull sleepers (below) sleep with OVERFULL_BIT, never counted by
 *   a round's wake.  The first one sets OVERFULL_SLEPT in pending, for
 *   good: from then on every serial thread also wakes OVERFULL_BIT (one
 *   more system call per round, only for barriers used that way).  The
 *   flag is set before the sleeper's FUTEX_WAIT reads the word and the
 *   serial thread reads it after its store (both sequentially
 *   consistent), so either the serial thread sees it or the sleeper sees
 *   the new generation and does not sleep.
 *
 *   Destroy.  The serial thread still wakes the sleepers after its store,
 *   and a participant that was not asleep then still reads the state.  So
 *   destroy returns EBUSY if arrived != 0 (a thread is blocked in the
 *   current round: glibc would hang instead), and otherwise sets
 *   LEAVERS_WAITED and sleeps on pending until every participant of the
 *   finished rounds has left (see Leaving: a woken sleeper has left when
 *   its waker did).  The leaver that brings pending to LEAVERS_WAITED
 *   wakes it.  While it waits, it lends its priority to the threads still
 *   inside wait (boost.c): a participant that was between its arrival and
 *   its sleep when the round ended runs at the destroyer's priority until
 *   it leaves, so destroy never waits for a preempted low-priority thread
 *   unboosted.  (It may also lend to a woken sleeper that has left
 *   already but not yet returned: that only shortens its way out.)  A leaver touches the object only up to its
 *   fetch_sub; the one wake after that is by address only, and harmless
 *   if the memory has been freed or reused: a spurious wake for whatever
 *   futex lives there now (every futex user tolerates those), or EFAULT
 *   for a shared wake of unmapped memory.  glibc relies on the same thing.
 */
#include <errno.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "api.h"
#include "attr.h"
#include "boost.h"
#include "debug.h"
#include "futex.h"

#define ARRIVED_ONE (1ull << 32)
#define BARRIER_MAX_COUNT ((1u << 22) - 1)
#define LEAVERS_WAITED 0x80000000u
#define OVERFULL_SLEPT 0x40000000u
#define PENDING_COUNT (OVERFULL_SLEPT - 1)
#define ROUND_BITS 16
#define OVERFULL_BIT 0x80000000u

struct barrier {
	_Atomic uint64_t state;
	_Atomic uint32_t count;
	uint32_t shared;
	_Atomic uint32_t pending;
	uint32_t unused[3];
};

_Static_assert(sizeof(pthread_barrier_t) == 32 && _Alignof(pthread_barrier_t) == 8,
	       "glibc's pthread_barrier_t is 32 bytes, aligned to 8");
_Static_assert(sizeof(struct barrier) == sizeof(pthread_barrier_t),
	       "struct barrier must fill pthread_barrier_t exactly");
_Static_assert(_Alignof(struct barrier) <= _Alignof(pthread_barrier_t),
	       "struct barrier must not need more alignment than pthread_barrier_t");
_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "generation is the low half of state");

static inline struct barrier *barrier_of(pthread_barrier_t *b)
{
	return (struct barrier *)b;
}

static inline uint32_t arrived(uint64_t state)
{
	return (uint32_t)(state >> 32);
}

static inline uint32_t generation(uint64_t state)
{
	return (uint32_t)state;
}

/* The futex word: the low half of state (the kernel compares 32 bits). */
static inline _Atomic uint32_t *generation_word(struct barrier *bar)
{
	return (_Atomic uint32_t *)&bar->state;
}

/* The futex bit mask of the participants of round (see Round bits). */
static inline uint32_t round_bit(uint32_t round)
{
	return 1u << (round % ROUND_BITS);
}

/* The state that starts the next round: generation + 1 (wrapping), arrived 0. */
static inline uint64_t next_round(uint64_t state)
{
	return (uint32_t)(generation(state) + 1);
}

int rt_barrier_init(pthread_barrier_t *b, const pthread_barrierattr_t *attr, unsigned count)
{
	unsigned pshared = attr ? attr_value(attr) : 0;
	if (count == 0 || count > BARRIER_MAX_COUNT || pshared > 1)
		return EINVAL;

	struct barrier *bar = barrier_of(b);
	/* Relaxed: the program hands the barrier to its users through its
	 * own synchronization (pthread_create, a mutex, ...), as for any
	 * object, and that orders these stores before their first wait. */
	atomic_store_explicit(&bar->state, 0, memory_order_relaxed);
	atomic_store_explicit(&bar->pending, 0, memory_order_relaxed);
	bar->shared = pshared;
	memset(bar->unused, 0, sizeof bar->unused);
	atomic_store_explicit(&bar->count, count, memory_order_relaxed);
	return 0;
}

/* Adds the caller to the current round; returns the state just after. */
static uint64_t arrive(struct barrier *bar)
{
	/* acq_rel: the release half publishes the caller's writes before the
	 * barrier (later adds continue the release sequence up to the serial
	 * thread's add); the acquire half lets the serial thread, which learns
	 * it is last only from this result, see every earlier arrival's. */
	return atomic_fetch_add_explicit(&bar->state, ARRIVED_ONE, memory_order_acq_rel) + ARRIVED_ONE;
}

/* A participant sleeps until the generation of bar->state differs from
 * state's.  state is a value the caller saw, so a change since then is not
 * missed: the kernel refuses to sleep (EAGAIN) if the generation is no
 * longer that one.  true: the serial thread's wake took us off the queue and
 * left for us, so the caller must not touch the object again; false: we
 * saw the new generation ourselves and must leave.  Ends: the round ends
 * (the program's contract: count threads arrive). */
static bool wait_for_next_round(struct barrier *bar, uint64_t state, bool shared)
{
	uint32_t round = generation(state);
	for (;;) {
		/* Read before every sleep, the first included: the round
		 * may have ended since our arrival, and a load costs less
		 * than a FUTEX_WAIT that fails with EAGAIN.  acquire: pairs
		 * with the serial thread's release store, so the caller sees
		 * every participant's writes before the barrier and the
		 * serial thread's add to pending before its own fetch_sub. */
		state = atomic_load_explicit(&bar->state, memory_order_acquire);
		if (generation(state) != round)
			return false;
		/* EAGAIN (the round ended) and EINTR: read the state again;
		 * nothing else can fail for a mapped word. */
		int r = futex_wait_bits(generation_word(bar), round, round_bit(round), shared, CLOCK_MONOTONIC, NULL);
		if (r == 0) {
			/* Only round's serial thread wakes round_bit(round),
			 * after its release store; the futex wake and the
			 * wakee's return are ordered by the kernel's hash
			 * bucket lock, so that store and every write it
			 * publishes are visible now. */
			atomic_thread_fence(memory_order_acquire);
			return true;
		}
	}
}

/* A thread that found the round full sleeps until the generation of state
 * ends (see Overfull sleepers).  It is no participant: no wake counts it.
 * Ends: as wait_for_next_round. */
static void wait_overfull(struct barrier *bar, uint64_t state, bool shared)
{
	uint32_t round = generation(state);
	while (generation(state) == round) {
		/* seq_cst: before the FUTEX_WAIT below reads the word, against
		 * the serial thread's store and then load of pending. */
		atomic_fetch_or_explicit(&bar->pending, OVERFULL_SLEPT, memory_order_seq_cst);
		futex_wait_bits(generation_word(bar), round, OVERFULL_BIT, shared, CLOCK_MONOTONIC, NULL);
		state = atomic_load_explicit(&bar->state, memory_order_acquire);
	}
}

static void leave(struct barrier *bar, bool shared, uint32_t n);

/* The serial thread: opens the next round, wakes the whole last one and
 * leaves for itself and every sleeper it woke. */
static void release_round(struct barrier *bar, uint64_t state, uint32_t count, bool shared)
{
	DEBUG_ASSERT(arrived(state) == count);
	/* Relaxed: the release store below orders it before every waiter's
	 * fetch_sub (they subtract only after their acquire load saw that
	 * store); count includes the caller, who still uses the object. */
	atomic_fetch_add_explicit(&bar->pending, count, memory_order_relaxed);
	/* release: waiters that see the new generation also see every
	 * participant's writes before the barrier (this thread acquired them
	 * in arrive) and the add above.  A plain store, not an RMW: since our
	 * fetch_add only threads that found the round full have added, and
	 * their increments are meant to be wiped.  seq_cst (a release and
	 * more): against wait_overfull's flag, read below. */
	atomic_store_explicit(&bar->state, next_round(state), memory_order_seq_cst);
	int woken;
	/* An error (EFAULT, EINVAL) woke nobody: woken is 0 then. */
	futex_wake_bits(generation_word(bar), INT_MAX, round_bit(generation(state)), shared, &woken);
	if (atomic_load_explicit(&bar->pending, memory_order_seq_cst) & OVERFULL_SLEPT)
		futex_wake_bits(generation_word(bar), INT_MAX, OVERFULL_BIT, shared, NULL);
	leave(bar, shared, (uint32_t)woken + 1);
}

/* n participants are done with the barrier (the caller, and the sleepers
 * it woke): after the fetch_sub a destroy may return and the memory be
 * reused, so shared must be read before. */
static void leave(struct barrier *bar, bool shared, uint32_t n)
{
	/* release: the caller's reads of the object happen before destroy's
	 * acquire load that sees pending drained (fetch_subs form a release
	 * sequence, so destroy synchronizes with every leaver). */
	uint32_t old = atomic_fetch_sub_explicit(&bar->pending, n, memory_order_release);
	DEBUG_ASSERT((old & PENDING_COUNT) >= n);
	if ((old & ~OVERFULL_SLEPT) == (LEAVERS_WAITED | n))
		futex_wake(&bar->pending, INT_MAX, shared);
}

/* What init made: a count in range, a pshared flag, zeroed spare words.
 * Uninitialized or destroyed memory fails it (destroy zeroes count), so
 * it gets EINVAL instead of a sleep nobody ends. */
static bool barrier_valid(struct barrier *bar, uint32_t count)
{
	return count != 0 && count <= BARRIER_MAX_COUNT && bar->shared <= 1 &&
	       (bar->unused[0] | bar->unused[1] | bar->unused[2]) == 0;
}

int rt_barrier_wait(pthread_barrier_t *b)
{
	struct barrier *bar = barrier_of(b);
	uint32_t count = atomic_load_explicit(&bar->count, memory_order_relaxed);
	if (!barrier_valid(bar, count))
		return EINVAL;
	bool shared = bar->shared != 0;

	/* Findable by a destroyer from before our arrival (see Destroy); the
	 * arrival's release RMW publishes it. */
	const void *outer = boost_enter(bar);
	uint64_t state = arrive(bar);
	while (arrived(state) > count) {
		/* The round was full: our increment will be wiped by the serial
		 * thread's store.  Take part in the next round instead.  No
		 * participant meanwhile: a destroyer must not wait for us. */
		boost_leave(outer);
		wait_overfull(bar, state, shared);
		outer = boost_enter(bar);
		state = arrive(bar);
	}

	int result = 0;
	if (arrived(state) == count) {
		release_round(bar, state, count, shared);
		result = PTHREAD_BARRIER_SERIAL_THREAD;
	} else if (!wait_for_next_round(bar, state, shared)) {
		leave(bar, shared, 1);
	}
	boost_leave(outer);
	return result;
}

/* Sleeps until every participant of the finished rounds has left wait. */
static void wait_for_leavers(struct barrier *bar)
{
	bool shared = bar->shared != 0;
	/* acquire (all three loads): synchronizes with the leavers' release
	 * fetch_subs, so their last reads of the object happen before the
	 * caller reinitializes or frees it. */
	uint32_t pending = atomic_load_explicit(&bar->pending, memory_order_acquire);
	if ((pending & PENDING_COUNT) == 0)
		return;
	pending = atomic_fetch_or_explicit(&bar->pending, LEAVERS_WAITED, memory_order_acquire) |
		  LEAVERS_WAITED;
	while ((pending & ~OVERFULL_SLEPT) != LEAVERS_WAITED) {
		/* A participant still inside runs at our priority until it
		 * leaves.  Else: the last leaver wakes us once LEAVERS_WAITED
		 * is set; if it left between our load and the wait, the
		 * kernel sees the changed word and returns EAGAIN at once. */
		if (!boost_one_inside(bar))
			futex_wait(&bar->pending, pending, shared, CLOCK_MONOTONIC, NULL);
		pending = atomic_load_explicit(&bar->pending, memory_order_acquire);
	}
	atomic_store_explicit(&bar->pending, 0, memory_order_relaxed);
}

int rt_barrier_destroy(pthread_barrier_t *b)
{
	struct barrier *bar = barrier_of(b);
	if (!barrier_valid(bar, atomic_load_explicit(&bar->count, memory_order_relaxed)))
		return EINVAL;
	/* Relaxed: the caller must have ordered every arrival before this call
	 * (it took part in the last round, or synchronized with one who did);
	 * this only reports the misuse it can see: a thread still blocked. */
	if (arrived(atomic_load_explicit(&bar->state, memory_order_relaxed)) != 0)
		return EBUSY;
	wait_for_leavers(bar);
	atomic_store_explicit(&bar->count, 0, memory_order_relaxed);
	return 0;
}
