/*
 * Condition variables on one futex word, woken in the kernel's order
 * (highest priority first, FIFO among equals) and moved onto the mutex by
 * requeue instead of woken in a herd.
 *
 * State (all-zero = PTHREAD_COND_INITIALIZER: private, CLOCK_REALTIME):
 *   state    64 bits: seq in the low half, the futex word waiters sleep
 *            on, moved on by every signal and broadcast that finds a
 *            waiter: seq / 2 counts them, bit 0 says the last one was a
 *            broadcast.  In the high half a ring of 32 wake-up tokens, bit
 *            (seq / 2 mod 32) standing for the signal that made seq.  One
 *            CAS publishes a signal's token and its seq together.
 *   counts   64 bits: pending (low half), registered waiters no signal or
 *            broadcast has been sent to yet; broadcasts (high half).  A
 *            waiter registers with one fetch_add, which also tells it which
 *            broadcasts came before it: "a broadcast covered me" is exact.
 *   waiters  threads between registration and leaving (what destroy waits
 *            for), | COND_DESTROYING while destroy waits.
 *   flags    COND_PSHARED, COND_MONOTONIC from the attribute.
 *   mutex    the waiters' mutex, the requeue target (private conditions
 *            only: in a process-shared one the address means nothing to
 *            another process).
 *   requeuing  broadcasts between their CAS on counts and their advance.
 *
 * A waiter, holding the mutex, reads seq (registered), registers, unlocks
 * and sleeps while seq is unchanged: one futex call.  It returns once it
 * is covered: a broadcast came after its registration, or it takes a token
 * of a signal that came after its registration (the oldest such token:
 * older tokens can only go to older waiters).  A signal takes one off
 * pending, posts its token with the next seq, and wakes one sleeper (the
 * highest-priority one, which normally takes that token).  A waiter that
 * registered but was not asleep yet sees seq move (EAGAIN) and takes the
 * token itself if the sleeper has not: so exactly one thread returns per
 * signal, and a signal never goes to a thread that registered after it.  A
 * wake-up that reaches a thread with nothing to take (it registered after
 * the signal: possible when the signaller does not hold the mutex) is
 * passed on to all sleepers while tokens remain, and the thread sleeps
 * again: no lost wake-up, no spurious return.  A signal whose token bit is
 * still in use 32 signals later turns into a broadcast (spurious wake-ups
 * are allowed, lost ones are not).
 *
 * A broadcast zeroes pending and bumps broadcasts in one CAS, advances seq
 * clearing every token (all are covered), and moves the sleepers onto the
 * mutex word (FUTEX_CMP_REQUEUE against the seq it made), waking one only
 * when the broadcaster does not hold the mutex: each unlock then wakes the
 * next, in priority order.  The mutex word gets WORD_WAITERS before the
 * move and every moved waiter relocks as contended, so the chain of
 * wake-ups cannot break.
 *
 * A thread that registers after a broadcast's CAS is not covered by it,
 * yet is moved with the others if it is asleep when the move comes.  It
 * must know, or a signal's token would let it relock as uncontended and
 * strand the rest on the mutex word.  It slept either on the seq the
 * broadcast made (bit 0 marks it) or on an older one, which is only
 * possible while the broadcast is between its CAS and its advance:
 * `requeuing` counts broadcasts there, and a waiter that sees it non-zero
 * at registration relocks as contended too.  If seq moved on before the
 * move (a signal racing the broadcast), the move fails, and unless a later
 * broadcast will move everybody, the broadcast wakes all sleepers instead:
 * a later signal's sleepers must not be moved without a mark.
 *
 * With a PI mutex, waiters sleep in FUTEX_WAIT_REQUEUE_PI and are moved
 * with FUTEX_CMP_REQUEUE_PI (FUTEX_WAKE on such waiters is EINVAL): the
 * kernel takes the mutex for the top waiter if it is free and queues the
 * others on its rt_mutex, where they boost the owner; a waiter returns from
 * the kernel owning the mutex.  Such a waiter was moved by a signal or a
 * broadcast, so it is covered, and it never touches the condition again:
 * the requeuer counts it out of waiters and takes back a signal's token
 * for it.  So "broadcast, destroy, free" is safe even while the destroyer
 * holds the PI mutex the waiters are queued on.  (Not covered: a timed
 * wait whose deadline passes after it was moved, a cancellation there, or
 * a signal handler run there, after which the kernel returns EAGAIN
 * without the mutex, looks to the waiter like one that was never moved;
 * see the README's known limitations.)
 *
 * A timed-out waiter returns 0 if it is covered (the signal was for it),
 * else takes itself off pending.  A cancelled waiter passes on what it may
 * have taken.
 */
#include <limits.h>
#include <pthread.h>

#include "api.h"
#include "attr.h"
#include "clock.h"
#include "mutex_internal.h"
#include "robust.h"

#define COND_PSHARED CONDATTR_PSHARED
#define COND_MONOTONIC CONDATTR_MONOTONIC
#define COND_DESTROYED 0x80000000u
#define COND_DESTROYING 0x80000000u
#define TOKEN_RING 32

struct cond {
	_Atomic uint64_t state;
	_Atomic uint64_t counts;
	_Atomic uint32_t waiters;
	_Atomic uint32_t flags;
	struct mutex *_Atomic mutex;
	_Atomic uint32_t requeuing;
};

_Static_assert(sizeof(struct cond) <= sizeof(pthread_cond_t), "struct cond fits pthread_cond_t");
_Static_assert(_Alignof(struct cond) <= _Alignof(pthread_cond_t), "struct cond alignment");
_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "seq is the low half of state");

static struct cond *cond_of(pthread_cond_t *c)
{
	return (struct cond *)c;
}

/* The futex word: the low half of state (the kernel compares 32 bits). */
static _Atomic uint32_t *seq_word(struct cond *c)
{
	return (_Atomic uint32_t *)&c->state;
}

static uint32_t seq_of(uint64_t state)
{
	return (uint32_t)state;
}

static uint32_t tokens_of(uint64_t state)
{
	return (uint32_t)(state >> 32);
}

static uint64_t state_make(uint32_t seq, uint32_t tokens)
{
	return seq | (uint64_t)tokens << 32;
}

#define SEQ_BY_BROADCAST 1u

/* The seq a signal (or a broadcast, marked) makes from seq. */
static uint32_t seq_next(uint32_t seq, bool broadcast)
{
	return ((seq & ~SEQ_BY_BROADCAST) + 2) | (broadcast ? SEQ_BY_BROADCAST : 0);
}

/* Signals and broadcasts counted mod 2^31: a multiple of the ring size, so
 * the ring turns evenly across the wrap. */
static uint32_t seq_count(uint32_t seq)
{
	return seq >> 1;
}

static uint32_t token_bit(uint32_t seq)
{
	return 1u << (seq_count(seq) % TOKEN_RING);
}

static uint32_t pending_of(uint64_t counts)
{
	return (uint32_t)counts;
}

static uint32_t broadcasts_of(uint64_t counts)
{
	return (uint32_t)(counts >> 32);
}

static bool cond_pshared(struct cond *c)
{
	return atomic_load_explicit(&c->flags, memory_order_relaxed) & COND_PSHARED;
}

/* How waiters of c sleep, decided from the mutex they registered with. */
struct cond_mode {
	struct mutex *mutex; /* requeue target, or NULL: wake instead */
	bool shared;	     /* futex flag for seq, and for the mutex word */
	bool pi;	     /* FUTEX_WAIT_REQUEUE_PI / FUTEX_CMP_REQUEUE_PI */
};

static struct cond_mode cond_mode(struct cond *c, struct mutex *m)
{
	struct cond_mode mode = { .mutex = NULL, .shared = true, .pi = false };
	if (cond_pshared(c) || !m)
		return mode;
	int kind = mutex_kind(m);
	mode.mutex = m;
	mode.shared = kind_shared(kind);
	mode.pi = kind & KIND_PI;
	return mode;
}

int rt_cond_init(pthread_cond_t *cond, const pthread_condattr_t *attr)
{
	struct cond *c = cond_of(cond);
	unsigned value = attr ? attr_value(attr) : 0;
	if (value & ~(unsigned)(COND_PSHARED | COND_MONOTONIC))
		return EINVAL;
	atomic_store_explicit(&c->state, 0, memory_order_relaxed);
	atomic_store_explicit(&c->counts, 0, memory_order_relaxed);
	atomic_store_explicit(&c->waiters, 0, memory_order_relaxed);
	atomic_store_explicit(&c->mutex, NULL, memory_order_relaxed);
	atomic_store_explicit(&c->requeuing, 0, memory_order_relaxed);
	atomic_store_explicit(&c->flags, value, memory_order_release);
	return 0;
}

/* Safe once every waiter has been sent a wake-up: waits for the woken
 * ones to stop touching the object (they may not have run yet). */
int rt_cond_destroy(pthread_cond_t *cond)
{
	struct cond *c = cond_of(cond);
	uint32_t flags = atomic_load_explicit(&c->flags, memory_order_relaxed);
	if (flags & COND_DESTROYED)
		return EINVAL;
	/* A waiter is counted in waiters before it registers (acquire: we see
	 * that), so pending without waiters is a registration nobody will
	 * leave: a PI waiter moved by a broadcast that did not cover it. */
	if (pending_of(atomic_load_explicit(&c->counts, memory_order_acquire)) != 0 &&
	    (atomic_load_explicit(&c->waiters, memory_order_acquire) & ~COND_DESTROYING) != 0)
		return EBUSY;
	bool shared = flags & COND_PSHARED;
	uint32_t v = atomic_fetch_or_explicit(&c->waiters, COND_DESTROYING, memory_order_acquire);
	struct mutex *m = atomic_load_explicit(&c->mutex, memory_order_relaxed);
	if ((v & ~COND_DESTROYING) && m && !(flags & COND_PSHARED)) {
		/* Woken waiters a broadcast moved onto the mutex leave the
		 * condition only once they run: wake them all now (they go
		 * back to sleep on the mutex word, done with us), as glibc's
		 * requeueing condition variable did.  Waiters moved onto a PI
		 * mutex were let go by their requeuer already. */
		if (!(mutex_kind(m) & KIND_PI))
			futex_wake(&m->word, INT_MAX, kind_shared(mutex_kind(m)));
	}
	while (v & ~COND_DESTROYING) {
		futex_wait(&c->waiters, v | COND_DESTROYING, shared, CLOCK_MONOTONIC, NULL);
		v = atomic_load_explicit(&c->waiters, memory_order_acquire);
	}
	atomic_store_explicit(&c->flags, COND_DESTROYED, memory_order_relaxed);
	atomic_store_explicit(&c->waiters, 0, memory_order_relaxed);
	return 0;
}

/* The last thing a waiter does to the condition (or a requeuer, for the
 * count waiters it moved onto a PI mutex): once waiters drops, destroy may
 * return and the memory go, so nothing is read after the decrement. */
static void cond_leave_many(struct cond *c, uint32_t count)
{
	bool shared = cond_pshared(c);
	uint32_t old = atomic_fetch_sub_explicit(&c->waiters, count, memory_order_release);
	if (old == (COND_DESTROYING | count))
		futex_wake(&c->waiters, 1, shared);
}

static void cond_leave(struct cond *c)
{
	cond_leave_many(c, 1);
}

/* A waiter cancelled while moved onto a PI mutex cannot tell that it was
 * moved (the kernel reports both alike), and its requeuer counted it out
 * already: never take the count below zero, so destroy cannot hang. */
static void cond_leave_cancelled(struct cond *c)
{
	uint32_t v = atomic_load_explicit(&c->waiters, memory_order_relaxed);
	while (v & ~COND_DESTROYING)
		if (atomic_compare_exchange_weak_explicit(&c->waiters, &v, v - 1, memory_order_release,
							  memory_order_relaxed)) {
			if (v == (COND_DESTROYING | 1))
				futex_wake(&c->waiters, 1, cond_pshared(c));
			return;
		}
}

/* Takes one waiter off pending; false if none is pending. */
static bool cond_claim(struct cond *c)
{
	uint64_t old = atomic_load_explicit(&c->counts, memory_order_relaxed);
	do {
		if (pending_of(old) == 0)
			return false;
	} while (!atomic_compare_exchange_weak_explicit(&c->counts, &old, old - 1, memory_order_acq_rel,
							 memory_order_relaxed));
	return true;
}

/* Covers every registered waiter: pending to zero and the broadcast count
 * bumped, in one CAS; false if none is pending. */
static bool cond_cover_all(struct cond *c)
{
	uint64_t old = atomic_load_explicit(&c->counts, memory_order_relaxed);
	do {
		if (pending_of(old) == 0)
			return false;
	} while (!atomic_compare_exchange_weak_explicit(&c->counts, &old, (uint64_t)(broadcasts_of(old) + 1) << 32,
							 memory_order_acq_rel, memory_order_relaxed));
	return true;
}

/* A timed-out waiter nobody covered takes itself off pending. */
static bool cond_unregister(struct cond *c)
{
	uint64_t old = atomic_load_explicit(&c->counts, memory_order_relaxed);
	do {
		if (pending_of(old) == 0)
			return false;
	} while (!atomic_compare_exchange_weak_explicit(&c->counts, &old, old - 1, memory_order_relaxed,
							 memory_order_relaxed));
	return true;
}

/* The next seq and this signal's token, in one CAS (release: a waiter that
 * sees the new seq sees the token).  false: the ring slot is still taken by a
 * signal 32 back, whose waiter has not taken it yet. */
static bool cond_post_token(struct cond *c, uint32_t *posted)
{
	uint64_t old = atomic_load_explicit(&c->state, memory_order_relaxed);
	for (;;) {
		uint32_t seq = seq_next(seq_of(old), false);
		uint32_t bit = token_bit(seq);
		if (tokens_of(old) & bit)
			return false;
		if (atomic_compare_exchange_weak_explicit(&c->state, &old, state_make(seq, tokens_of(old) | bit),
							  memory_order_release, memory_order_relaxed)) {
			*posted = seq;
			return true;
		}
	}
}

/* Takes back the token of the signal that made seq `posted`, for the
 * waiter the kernel moved onto a PI mutex (unless a waiter that saw seq
 * move before it slept took it already). */
static void cond_withdraw_token(struct cond *c, uint32_t posted)
{
	uint32_t bit = token_bit(posted);
	uint64_t old = atomic_load_explicit(&c->state, memory_order_relaxed);
	while ((tokens_of(old) & bit) &&
	       !atomic_compare_exchange_weak_explicit(&c->state, &old, state_make(seq_of(old), tokens_of(old) & ~bit),
						      memory_order_relaxed, memory_order_relaxed))
		;
}

/* The next seq, marked, with every token dropped (a broadcast covers all
 * their owners); returns it. */
static uint32_t cond_advance_clear(struct cond *c)
{
	uint64_t old = atomic_load_explicit(&c->state, memory_order_relaxed);
	uint32_t seq;
	do
		seq = seq_next(seq_of(old), true);
	while (!atomic_compare_exchange_weak_explicit(&c->state, &old, state_make(seq, 0), memory_order_release,
						      memory_order_relaxed));
	return seq;
}

/* Takes the oldest token of a signal sent after seq was `registered`. */
static bool cond_take_token(struct cond *c, uint32_t registered)
{
	uint64_t old = atomic_load_explicit(&c->state, memory_order_acquire);
	for (;;) {
		uint32_t seq = seq_of(old), tokens = tokens_of(old);
		/* signals (and broadcasts) registered+1 .. seq, counted */
		uint32_t span = (seq_count(seq) - seq_count(registered)) & (UINT32_MAX >> 1);
		if (span == 0 || tokens == 0)
			return false;
		/* The oldest count that can still hold a token: ours + 1, or,
		 * 32 or more counts on, the oldest slot of the ring (a token
		 * never outlives its slot's next use). */
		uint32_t oldest = span >= TOKEN_RING ? seq_count(seq) + 1 : seq_count(registered) + 1;
		uint32_t first = oldest % TOKEN_RING;
		uint32_t rotated = first ? tokens >> first | tokens << (TOKEN_RING - first) : tokens;
		uint32_t window = span >= TOKEN_RING ? ~0u : (1u << span) - 1;
		if (!(rotated & window))
			return false;
		uint32_t slot = (first + (uint32_t)__builtin_ctz(rotated & window)) % TOKEN_RING;
		if (atomic_compare_exchange_weak_explicit(&c->state, &old, state_make(seq, tokens & ~(1u << slot)),
							  memory_order_acquire, memory_order_acquire))
			return true;
	}
}

/*
 * Moves sleepers to a PI mutex: the kernel takes it for the top one if it
 * is free and queues the others on its rt_mutex.  A moved waiter returns
 * owning the mutex and never touches the condition again (it may be
 * destroyed and freed while the waiter still waits for the mutex its
 * destroyer holds): we do its leaving for it, and take back the token
 * of the signal (posted, if any) that moved it.
 */
static void cond_requeue_pi(struct cond *c, struct mutex *m, bool shared, int requeue_count,
			    const uint32_t *posted)
{
	for (;;) {
		uint32_t seq = atomic_load_explicit(seq_word(c), memory_order_relaxed);
		int moved = futex_cmp_requeue_pi(seq_word(c), requeue_count, &m->word, seq, shared);
		if (moved == -EAGAIN)
			continue;
		if (moved > 0) {
			/* A signal's token first: once waiters drops, the
			 * moved waiter may destroy and free c. */
			if (posted)
				cond_withdraw_token(c, *posted);
			cond_leave_many(c, (uint32_t)moved);
		}
		return;
	}
}

/* Moves every sleeper onto the mutex (waking one unless we hold it); seq
 * is the one our broadcast made. */
static void cond_requeue_all(struct cond *c, struct cond_mode mode, uint32_t seq)
{
	if (!mode.mutex) {
		futex_wake(seq_word(c), INT_MAX, mode.shared);
		return;
	}
	if (mode.pi) {
		cond_requeue_pi(c, mode.mutex, mode.shared, INT_MAX, NULL);
		return;
	}
	/* Sleepers moved onto the mutex must be woken by its unlock. */
	struct mutex *m = mode.mutex;
	uint32_t word = atomic_fetch_or_explicit(&m->word, WORD_WAITERS, memory_order_relaxed);
	int wake = (word & WORD_TID_MASK) == self_tid() ? 0 : 1;
	if (futex_cmp_requeue(seq_word(c), wake, INT_MAX, &m->word, seq, mode.shared) != -EAGAIN)
		return;
	/* seq moved on.  A later broadcast moves everybody asleep now; after
	 * a later signal, wake them all (see the top of the file). */
	if (!(atomic_load_explicit(seq_word(c), memory_order_relaxed) & SEQ_BY_BROADCAST))
		futex_wake(seq_word(c), INT_MAX, mode.shared);
}

static struct cond_mode cond_current_mode(struct cond *c)
{
	return cond_mode(c, atomic_load_explicit(&c->mutex, memory_order_relaxed));
}

/* Cover, advance, move.  `requeuing` (see the top) is up from before the
 * cover (a waiter that syncs with the cover sees it) until after the
 * advance (a waiter that syncs with the decrement sees the new seq). */
static void cond_broadcast_all(struct cond *c)
{
	atomic_fetch_add_explicit(&c->requeuing, 1, memory_order_relaxed);
	if (!cond_cover_all(c)) {
		atomic_fetch_sub_explicit(&c->requeuing, 1, memory_order_relaxed);
		return;
	}
	uint32_t seq = cond_advance_clear(c);
	atomic_fetch_sub_explicit(&c->requeuing, 1, memory_order_release);
	cond_requeue_all(c, cond_current_mode(c), seq);
}

int rt_cond_signal(pthread_cond_t *cond)
{
	struct cond *c = cond_of(cond);
	if (!cond_claim(c))
		return 0;
	/* Cover everybody instead when 32 tokens are not taken yet, or when a
	 * broadcast is between its cover and its advance: that advance would
	 * drop our token, and the waiter we took off pending registered after
	 * that cover (else the broadcast covers it), so it would sleep on.
	 * requeuing is seen: our claim read the cover's count or a later one. */
	uint32_t posted;
	if (atomic_load_explicit(&c->requeuing, memory_order_acquire) != 0 || !cond_post_token(c, &posted)) {
		atomic_fetch_add_explicit(&c->counts, 1, memory_order_relaxed);
		cond_broadcast_all(c);
		return 0;
	}
	struct cond_mode mode = cond_current_mode(c);
	if (!(mode.pi && mode.mutex)) {
		futex_wake(seq_word(c), 1, mode.shared);
		return 0;
	}
	/* The waiter moved onto the mutex is covered by the move itself.  If
	 * a waiter that saw seq move took the token first, two returned for
	 * one signal; pending then counts one waiter too many, which costs at
	 * most one extra wake-up later (counting one too few would lose one). */
	cond_requeue_pi(c, mode.mutex, mode.shared, 0, &posted);
	return 0;
}

int rt_cond_broadcast(pthread_cond_t *cond)
{
	struct cond *c = cond_of(cond);
	/* One waiter: a signal covers it, without the requeue machinery and
	 * the contended relock it costs (a later waiter is not owed this
	 * wake-up: the broadcast took effect when it found one). */
	uint32_t pending = pending_of(atomic_load_explicit(&c->counts, memory_order_acquire));
	if (pending == 1)
		return rt_cond_signal(cond);
	if (pending != 0)
		cond_broadcast_all(c);
	return 0;
}

/* What a waiter carries across the sleep. */
struct cond_wait {
	struct cond *c;
	struct mutex *m;
	int kind;
	uint32_t depth;
	uint32_t registered; /* seq when it registered: which signals are for it */
	uint32_t broadcasts; /* broadcasts before it registered */
	uint32_t seq;	     /* the value it sleeps on now */
	bool maybe_moved;  /* a broadcast that does not cover it may have moved it */
	struct cond_mode mode;
	clockid_t clock;
	const struct timespec *deadline;
	bool by_broadcast; /* covered by a broadcast: it may have been requeued */
};

/* Only a plain (not PI) requeue leaves a moved waiter to relock by itself:
 * process-shared conditions never move, PI waiters come back owning it. */
static bool cond_may_be_moved(const struct cond_wait *w)
{
	return w->mode.mutex && !w->mode.pi;
}

/* Did a broadcast or a signal after our registration reach us? */
static bool cond_covered(struct cond_wait *w)
{
	uint64_t counts = atomic_load_explicit(&w->c->counts, memory_order_acquire);
	w->by_broadcast = broadcasts_of(counts) != w->broadcasts;
	return w->by_broadcast || cond_take_token(w->c, w->registered);
}

/* A waiter a broadcast may have moved onto the mutex word relocks as
 * contended: the unlock that woke it cleared WORD_WAITERS while others it
 * was moved with may still sleep there (glibc's "lock with 2"). */
static int cond_relock(struct cond_wait *w)
{
	return mutex_cond_relock(w->m, w->by_broadcast || w->maybe_moved);
}

/* Cancelled in the sleep: a wake-up we took goes on to the next pending
 * waiter (if any); else we are no longer pending. */
static void cond_wait_cancelled(void *arg)
{
	struct cond_wait *w = arg;
	bool owner = (atomic_load_explicit(&w->m->word, memory_order_relaxed) & WORD_TID_MASK) == self_tid();
	if (w->mode.pi && w->mode.mutex && owner) {
		/* The kernel gave us the PI mutex: we were moved, and the
		 * requeuer did our leaving.  Pass the wake-up on. */
		rt_cond_signal((pthread_cond_t *)w->c);
		pi_taken_by_kernel(w->m, w->kind, self_tid());
	} else {
		if (cond_covered(w))
			rt_cond_signal((pthread_cond_t *)w->c);
		else
			cond_unregister(w->c);
		cond_leave_cancelled(w->c);
		if (!owner)
			mutex_cond_relock(w->m, true);
	}
	w->m->depth = w->depth;
}

enum sleep_result {
	SLEEP_COVERED,	    /* signalled or broadcast: relock and return 0 */
	SLEEP_MOVED_OWNED,  /* moved onto the PI mutex and given it: done */
	SLEEP_TIMEDOUT,
	SLEEP_AGAIN,	    /* woken with nothing for us: sleep again */
	SLEEP_AGAIN_RELOCK, /* the same, maybe woken by a mutex unlock we must pass on */
};

static enum sleep_result cond_sleep_once(struct cond_wait *w)
{
	struct cond *c = w->c;
	bool requeue_pi = w->mode.pi && w->mode.mutex;
	int old_type, r;
	pthread_setcanceltype(PTHREAD_CANCEL_ASYNCHRONOUS, &old_type);
	if (requeue_pi)
		r = futex_wait_requeue_pi(seq_word(c), w->seq, &w->m->word, w->mode.shared, w->clock,
					  w->deadline);
	else
		r = futex_wait(seq_word(c), w->seq, w->mode.shared, w->clock, w->deadline);
	pthread_setcanceltype(old_type, NULL);

	/* Moved by a signal or broadcast, which did our leaving: the
	 * condition may be gone already. */
	if (requeue_pi && r == 0)
		return SLEEP_MOVED_OWNED;
	if (r == EINTR)
		return SLEEP_AGAIN;
	if (cond_covered(w))
		return SLEEP_COVERED;
	if (r == ETIMEDOUT || r == EINVAL)
		return cond_unregister(c) ? SLEEP_TIMEDOUT : SLEEP_COVERED;
	if (r == 0) {
		/* Someone's wake-up reached us, registered after its signal:
		 * while tokens remain, hand it to every sleeper. */
		if (tokens_of(atomic_load_explicit(&c->state, memory_order_acquire))) {
			/* Woken on the condition word, not moved: they relock
			 * as signalled waiters do.  (PI waiters can only move.) */
			if (w->mode.pi && w->mode.mutex)
				cond_requeue_pi(c, w->mode.mutex, w->mode.shared, INT_MAX, NULL);
			else
				futex_wake(seq_word(c), INT_MAX, w->mode.shared);
		}
		return w->mode.mutex && !w->mode.pi ? SLEEP_AGAIN_RELOCK : SLEEP_AGAIN;
	}
	return SLEEP_AGAIN; /* EAGAIN: seq moved, but not for us */
}

/* Before sleeping again: a new value to sleep on, then one more look,
 * since a signal between our last look and this snapshot moved seq
 * before it, and its token is ours to take now or never. */
static bool cond_resnap_covered(struct cond_wait *w)
{
	w->seq = atomic_load_explicit(seq_word(w->c), memory_order_acquire);
	w->maybe_moved |= cond_may_be_moved(w) && (w->seq & SEQ_BY_BROADCAST);
	return cond_covered(w);
}

/* Sleeps until covered or timed out; returns what rt_cond_wait returns,
 * with the mutex held. */
static int cond_sleep(struct cond_wait *w)
{
	for (;;) {
		enum sleep_result r = cond_sleep_once(w);
		int e;
		switch (r) {
		case SLEEP_COVERED:
		case SLEEP_TIMEDOUT:
			cond_leave(w->c);
			if (w->mode.pi && w->mode.mutex && (w->kind & KIND_ROBUST))
				robust_pending_clear(robust_head());
			e = cond_relock(w);
			return e ? e : r == SLEEP_TIMEDOUT ? ETIMEDOUT : 0;
		case SLEEP_MOVED_OWNED:
			return pi_taken_by_kernel(w->m, w->kind, self_tid());
		case SLEEP_AGAIN_RELOCK:
			e = mutex_cond_relock(w->m, true);
			if (e != 0 && e != EOWNERDEAD) /* ENOTRECOVERABLE: not held */
				goto leave_not_covered;
			bool covered = cond_resnap_covered(w);
			if (covered || e == EOWNERDEAD) {
				if (!covered)
					cond_unregister(w->c); /* EOWNERDEAD: a spurious return, holding it */
				cond_leave(w->c);
				return e;
			}
			mutex_unlock(w->m);
			break;
		case SLEEP_AGAIN:
			if (cond_resnap_covered(w)) {
				cond_leave(w->c);
				if (w->mode.pi && w->mode.mutex && (w->kind & KIND_ROBUST))
					robust_pending_clear(robust_head());
				return cond_relock(w);
			}
			break;
		}
		continue;
leave_not_covered:
		cond_unregister(w->c);
		cond_leave(w->c);
		return e;
	}
}

/* The sleep, as a cancellation point: setjmp-based cleanup kept apart. */
static int cond_sleep_cancellable(struct cond_wait *w)
{
	int result;
	pthread_cleanup_push(cond_wait_cancelled, w);
	result = cond_sleep(w);
	pthread_cleanup_pop(0);
	return result;
}

int rt_cond_wait(pthread_cond_t *cond, pthread_mutex_t *mutex, clockid_t clock,
		 const struct timespec *deadline, int use_attr_clock)
{
	struct cond *c = cond_of(cond);
	struct mutex *m = mutex_of(mutex);
	uint32_t flags = atomic_load_explicit(&c->flags, memory_order_relaxed);
	int kind = mutex_kind(m);
	if ((flags & COND_DESTROYED) || !kind_valid(kind))
		return EINVAL;
	if (use_attr_clock)
		clock = (flags & COND_MONOTONIC) ? CLOCK_MONOTONIC : CLOCK_REALTIME;
	int r = deadline_check(deadline);
	if (r)
		return r;
	bool owner_checked = !kind_is_simple(kind) || kind_type(kind) == PTHREAD_MUTEX_RECURSIVE ||
			     kind_type(kind) == PTHREAD_MUTEX_ERRORCHECK || (kind & KIND_PI);
	if (owner_checked &&
	    (atomic_load_explicit(&m->word, memory_order_relaxed) & WORD_TID_MASK) != self_tid())
		return EPERM;

	pthread_testcancel();
	struct cond_wait w = { .c = c, .m = m, .kind = kind, .depth = m->depth, .clock = clock,
			       .deadline = deadline };
	if (!cond_pshared(c))
		atomic_store_explicit(&c->mutex, m, memory_order_relaxed);
	w.mode = cond_mode(c, m);
	atomic_fetch_add_explicit(&c->waiters, 1, memory_order_relaxed);
	w.registered = atomic_load_explicit(seq_word(c), memory_order_acquire);
	w.seq = w.registered;
	w.maybe_moved = cond_may_be_moved(&w) && (w.seq & SEQ_BY_BROADCAST);
	/* Release: a signaller that counts us sees mutex too. */
	uint64_t counts = atomic_fetch_add_explicit(&c->counts, 1, memory_order_acq_rel);
	w.broadcasts = broadcasts_of(counts);
	w.maybe_moved |= cond_may_be_moved(&w) && atomic_load_explicit(&c->requeuing, memory_order_acquire) != 0;

	/* A recursive mutex is released whatever its depth, and gets it back. */
	m->depth = 0;
	mutex_unlock(m);
	/* The kernel may hand us a robust PI mutex inside the wait: if we die
	 * before robust_enqueue, the pending entry lets it mark OWNER_DIED. */
	if (w.mode.pi && w.mode.mutex && (kind & KIND_ROBUST))
		robust_pending_set(robust_head(), m, true);

	r = cond_sleep_cancellable(&w);
	if (r == 0 || r == EOWNERDEAD || r == ETIMEDOUT)
		m->depth = w.depth;
	return r;
}
