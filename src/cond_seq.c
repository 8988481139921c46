/*
 * The state-word protocol of condition variables: every wait that is
 * neither on requeue-PI (cond_pi.c) nor masked (cond_mask.c); cond.c
 * dispatches to it.
 *
 * State word (cond_state.h has the arithmetic): seq, the futex word, and
 * pending, the registered waiters nothing was counted against yet.
 *
 *   wait       holding the mutex, one fetch_add: pending + 1, and the seq
 *              it returns is the waiter's registration.  Unlock, sleep
 *              while seq is unchanged with the bit mask epoch_bit(seq).
 *   signal     one CAS: pending - 1, seq moves on (nothing if pending is 0).
 *              Then wake one sleeper with wake_mask(current seq): one that
 *              registered before, never one that registered since.
 *   broadcast  one CAS: pending 0, seq moves on; then, by the mutex's
 *              owner on a private condition, move every sleeper onto the
 *              mutex word (FUTEX_CMP_REQUEUE; seq marked), else wake them
 *              all (cond_seq_broadcast says why).
 *   return     a waiter returns once seq differs from its registration:
 *              a signal or broadcast came after it registered.
 *   deadline   if seq has not moved, the waiter takes itself off pending
 *              in one CAS that checks seq: ETIMEDOUT.  If it moved, the
 *              waiter counts as woken and returns 0.
 *
 * Why no wake-up is lost.  Every signal's wake reaches a sleeper that
 * registered before the seq current at the wake, and such a sleeper always
 * returns.  If the wake finds nobody, every waiter owed one is awake (it
 * will see seq moved before it sleeps) or sleeps with an aliased bit (it
 * slept through a multiple of 32 moves), and those are woken with
 * alias_mask.  The wake can still meet a waiter that registered after it
 * (seq moved on between the signal's CAS and its wake): such a waiter,
 * woken with seq unchanged, hands a wake on to the sleepers before it.  A
 * wake can reach more than one waiter (a deadline and a wake at once): a
 * spurious return, never a lost one.  pending may then count a waiter
 * that is gone: every leaving waiter trims it to the waiters still inside
 * (state_trim), and signal and broadcast touch nothing of the mutex when
 * nobody is inside.
 *
 * Broadcast and the mutex word.  Sleepers moved onto the mutex word are
 * woken by its unlock: the broadcaster marks the word as waited on
 * (mutex_cond_mark_waiters) before the move and the mutex as moved onto
 * (mutex_cond_moved) after it, and its release wakes every sleeper of the
 * word.  A moved waiter then relocks as any locker does: one that has to
 * sleep on the word again sets WAITERS itself.
 * A waiter knows it may have been moved if `generation` changed since it
 * registered (a requeuing broadcast counts itself after its CAS and before
 * its move, and a waiter reads it before registering, so a broadcast that
 * covers it is always seen), or if it registered at a seq a requeuing
 * broadcast made (it may have been asleep when that broadcast moved the
 * sleepers: moved, but not covered); such a waiter, woken with seq
 * unchanged, passes the wake on to the mutex word and sleeps again.  A
 * waiter that may have been moved spins a moment before it sleeps on the
 * mutex word (SHORT_SPINS); one woken by a broadcast that moved nobody
 * does not.  The move compares seq with the broadcast's own: after a
 * racing signal it fails and everybody is woken instead, so no later
 * signal's sleeper is ever moved unmarked.  (Masked wakes move
 * `generation` on too: a waiter then only spins without need.)
 *
 * seq is 32 bits: a waiter that sleeps through 2^31 moves could miss that
 * seq moved.
 */
#include <limits.h>

#include "boost.h"
#include "cond_internal.h"
#include "cond_state.h"
#include "stats.h"

_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "seq is the low half of state");

/* The futex word: the low half of state (the kernel compares 32 bits). */
static _Atomic uint32_t *seq_word(struct cond *c)
{
	return (_Atomic uint32_t *)&c->state;
}

/* A mutex a broadcast may move sleepers onto (kind_cond_requeue says
 * which, and only from a private condition), or NULL: wake instead. */
static struct mutex *requeue_target(struct cond *c, struct mutex *m)
{
	return m && !cond_pshared(c) && kind_cond_requeue(mutex_kind(m)) ? m : NULL;
}

/* The futex flag of seq: the mutex word's, since a requeue moves between
 * the two with one flag (robust words are always shared). */
static bool seq_shared(struct cond *c, struct mutex *m)
{
	return cond_pshared(c) || !m || kind_shared(mutex_kind(m));
}

static struct mutex *cond_mutex(struct cond *c)
{
	return cond_pshared(c) ? NULL : atomic_load_explicit(&c->mutex, memory_order_relaxed);
}

/* Wakes one sleeper that registered before the current seq (see the top
 * for why the aliased ones are woken when it finds none). */
static void seq_wake_one(struct cond *c, bool shared)
{
	uint32_t seq = atomic_load_explicit(seq_word(c), memory_order_relaxed);
	int woken;
	futex_wake_bits(seq_word(c), 1, wake_mask(seq), shared, &woken);
	if (woken == 0)
		futex_wake_bits(seq_word(c), INT_MAX, alias_mask(seq), shared, NULL);
}

void cond_seq_signal(struct cond *c)
{
	uint64_t old = atomic_load_explicit(&c->state, memory_order_relaxed), next;
	/* acq_rel: release publishes seq to the waiters; acquire makes the
	 * registrations we count carry what their waiters did before them
	 * (waiters, mutex). */
	do {
		if (!state_signal(old, &next))
			return;
	} while (!atomic_compare_exchange_weak_explicit(&c->state, &old, next, memory_order_acq_rel,
							 memory_order_relaxed));
	/* pending may count a waiter that is gone (see state_trim): with
	 * nobody inside, mutex may name a mutex destroyed since. */
	if (!cond_inside(c))
		return;
	seq_wake_one(c, seq_shared(c, cond_mutex(c)));
}

/*
 * A broadcast by the mutex's owner moves every sleeper onto the mutex
 * word and wakes none: they could only run into the mutex it holds.  Its
 * release of the mutex wakes them all with one call, once the mutex is
 * free (mutex_wake_count).
 *
 * Any other broadcast wakes every sleeper with one call.  Either way the
 * kernel queues them on the CPUs' run queues at once, paying the wake-up
 * of an idle CPU once per CPU; a chain of one wake-up per unlock would pay
 * it once per waiter, since each link is woken by the one before after it
 * ran (on a VM that is tens of microseconds a link).  They contend for
 * the mutex only as many at a time as there are CPUs to run them, and a
 * moved one spins a moment before it sleeps again (SHORT_SPINS).  The
 * kernel wakes them in priority order, and the scheduler runs the
 * highest first.
 */
void cond_seq_broadcast(struct cond *c)
{
	/* With nobody inside, mutex may name a mutex destroyed since
	 * (state_trim): only a waiter inside keeps it alive. */
	struct mutex *m = cond_inside(c) ? requeue_target(c, cond_mutex(c)) : NULL;
	bool requeue = m && mutex_cond_owned(m);
	uint64_t old = atomic_load_explicit(&c->state, memory_order_relaxed), next;
	/* acq_rel, as in cond_seq_signal; the acquire also keeps the count below
	 * after every registration this covers, so that a covered waiter,
	 * which read the count before registering, never sees it. */
	do {
		if (!state_broadcast(old, requeue, &next))
			return;
	} while (!atomic_compare_exchange_weak_explicit(&c->state, &old, next, memory_order_acq_rel,
							 memory_order_relaxed));
	if (!cond_inside(c))
		return; /* pending counted waiters that are gone (state_trim) */
	bool shared = seq_shared(c, cond_mutex(c));
	if (requeue) {
		/* Before the move: a waiter it moves sees this (the futex call
		 * orders it). */
		atomic_fetch_add_explicit(&c->generation, COND_GENERATION_STEP, memory_order_relaxed);
		/* Sleepers moved onto the mutex must be woken by its unlock. */
		mutex_cond_mark_waiters(m);
		int moved;
		if (futex_cmp_requeue(seq_word(c), 0, INT_MAX, mutex_cond_word(m), state_seq(next), shared, &moved) ==
		    0) {
			event_requeued(c, m, moved);
			if (moved > 0)
				mutex_cond_moved(m);
			return;
		}
		/* EAGAIN: a signal moved seq on; its sleepers must not be
		 * moved unmarked.  Any other error: nobody was moved.  Either
		 * way, wake everybody. */
	}
	futex_wake(seq_word(c), INT_MAX, shared);
}

/* What a waiter on the state word carries across the sleep. */
struct seq_wait {
	struct cond *c;
	struct mutex *m;
	uint32_t depth;
	uint32_t seq;	     /* its registration */
	uint32_t generation; /* read before registering */
	const void *outer;   /* boost_enter's result */
	bool requeue;	     /* a broadcast may move it onto m's word */
	bool shared;
	clockid_t clock;
	const struct timespec *deadline;
};

/* A deadline or a cancellation with seq unmoved: off pending.  false if a
 * signal or broadcast came first (then the waiter counts as woken). */
static bool seq_leave_unwoken(struct seq_wait *w)
{
	uint64_t old = atomic_load_explicit(&w->c->state, memory_order_relaxed), next;
	do {
		if (!state_leave_unwoken(old, w->seq, &next))
			return false;
	} while (!atomic_compare_exchange_weak_explicit(&w->c->state, &old, next, memory_order_relaxed,
							 memory_order_relaxed));
	return true;
}

/* May a broadcast have moved it onto the mutex word?  (See the top.) */
static bool seq_maybe_moved(struct seq_wait *w)
{
	return w->requeue && (seq_by_requeue(w->seq) ||
			      atomic_load_explicit(&w->c->generation, memory_order_relaxed) != w->generation);
}

/* Woken with seq unchanged: the wake was meant for a waiter before us
 * (or was a mutex unlock's, if a broadcast moved us): hand it on. */
static void seq_pass_on(struct seq_wait *w)
{
	if (w->requeue && seq_by_requeue(w->seq)) {
		mutex_cond_wake(w->m, 1);
		return;
	}
	uint32_t seq = atomic_load_explicit(seq_word(w->c), memory_order_relaxed);
	futex_wake_bits(seq_word(w->c), 1, wake_mask(seq), w->shared, NULL);
}

/* Trims pending to the waiters inside besides us (state_trim).  waiters
 * is read after state: a registration the CAS would undo is seen with its
 * waiter.  Ends: the CAS fails only when another thread changed state. */
static void seq_trim_pending(struct cond *c)
{
	uint64_t old = atomic_load_explicit(&c->state, memory_order_acquire), next;
	for (;;) {
		uint32_t others = (atomic_load_explicit(&c->waiters, memory_order_acquire) & ~COND_DESTROYING) - 1;
		if (!state_trim(old, others, &next))
			return;
		if (atomic_compare_exchange_weak_explicit(&c->state, &old, next, memory_order_acq_rel,
							  memory_order_acquire))
			return;
	}
}

/* Done with the condition: leave it, then take the mutex back. */
static int seq_return(struct seq_wait *w, int result)
{
	bool moved = seq_maybe_moved(w);
	seq_trim_pending(w->c);
	cond_leave_many(w->c, 1);
	boost_leave(w->outer);
	int e = mutex_cond_attach(w->m, w->depth, moved);
	return e ? e : result;
}

/* One sleep on seq (cond_sleep_cancellable). */
static int seq_futex_wait(void *arg)
{
	struct seq_wait *w = arg;
	return futex_wait_bits(seq_word(w->c), w->seq, epoch_bit(w->seq), w->shared, w->clock, w->deadline);
}

/* Sleeps until woken or the deadline; returns with the mutex held.  Ends:
 * every turn sleeps, and a turn that returns without a wake-up for us
 * (a wake for somebody else, a handler) needs an event from outside. */
static int seq_sleep(struct seq_wait *w)
{
	for (;;) {
		int r = cond_sleep_cancellable(seq_futex_wait, w);
		if (state_seq(atomic_load_explicit(&w->c->state, memory_order_acquire)) != w->seq)
			return seq_return(w, 0);
		if (r == 0) {
			seq_pass_on(w);
			continue;
		}
		if (r == EAGAIN || r == EINTR)
			continue;
		/* ETIMEDOUT; EINVAL, which nothing but a broken object gives */
		return seq_return(w, seq_leave_unwoken(w) ? r : 0);
	}
}

/* Cancelled in the sleep: a wake-up we may have taken goes on to the next
 * pending waiter.  Else we are no longer pending, but the cancellation
 * may have hit just after a wake meant for a waiter before us (the kernel
 * returned 0, seq unchanged): that wake is handed on as seq_sleep would
 * have, or it is lost. */
static void seq_cancelled(void *arg)
{
	struct seq_wait *w = arg;
	if (seq_leave_unwoken(w))
		seq_pass_on(w);
	else
		cond_seq_signal(w->c);
	seq_return(w, 0);
}

int cond_seq_wait(struct cond *c, struct mutex *m, clockid_t clock, const struct timespec *deadline)
{
	struct seq_wait w = { .c = c, .m = m, .clock = clock, .deadline = deadline };
	w.requeue = requeue_target(c, m) != NULL;
	w.shared = seq_shared(c, m);
	w.outer = boost_enter(c);
	/* release: a destroyer that sees us counted finds us inside c. */
	atomic_fetch_add_explicit(&c->waiters, 1, memory_order_release);
	w.generation = atomic_load_explicit(&c->generation, memory_order_relaxed);
	/* acq_rel: a broadcast whose CAS reads this sees the generation read
	 * before it (it cannot have counted itself yet), and a signaller
	 * that counts us sees mutex. */
	uint64_t old = atomic_fetch_add_explicit(&c->state, STATE_ONE_PENDING, memory_order_acq_rel);
	w.seq = state_seq(old);
	/* pending counts at most the threads inside, far below 2^32. */
	DEBUG_ASSERT(state_pending(old) != UINT32_MAX);

	w.depth = mutex_cond_detach(m);

	int r;
	pthread_cleanup_push(seq_cancelled, &w);
	r = seq_sleep(&w);
	pthread_cleanup_pop(0);
	return r;
}

/* destroy, with waiters inside: those a broadcast moved onto the mutex
 * leave the condition only once they run: wake them all now (they go
 * back to sleep on the mutex word, done with c). */
void cond_seq_wake_moved(struct cond *c)
{
	struct mutex *m = requeue_target(c, cond_mutex(c));
	if (m)
		mutex_cond_wake(m, INT_MAX);
}
