/*
 * The state-word protocol of condition variables: every wait that is
 * neither on requeue-PI (cond_pi.c) nor masked (cond_mask.c); cond.c
 * dispatches to it.
 *
 * seq (cond_state.h has the arithmetic) is the futex word every waiter
 * sleeps on.  It moves on at every signal and broadcast that finds a
 * waiter, so that a waiter on its way to sleep sees the change (EAGAIN).
 * Who a signal is for depends on where the waiters' records can live.
 *
 * A private condition queues a record per waiter (cond_queue.h), on the
 * waiter's stack, in priority order, under the condition's lock:
 *
 *   wait       holding the mutex: queue the record under the lock (a
 *              waiter whose unlock gives a PP ceiling back moves it to the
 *              place of its lower priority after the unlock).  Unlock,
 *              then read seq and sleep while it is unchanged with the
 *              record's bit (one of 32, by TID); after any return that
 *              did not find the record claimed, read seq and sleep again.
 *   signal     under the lock: claim the first record (SIGNALLED, out of
 *              the queue), move seq on.  After the lock, wake the sleepers
 *              of its bit (the claimed one, and any that share the bit,
 *              which sleep again).
 *   broadcast  under the lock: claim every record, move seq on.  Then, by
 *              the mutex's owner, move every sleeper onto the mutex word
 *              (FUTEX_CMP_REQUEUE; seq marked), else wake them.
 *   return     0 once the record is claimed, never otherwise: no signal
 *              goes to two waiters, or to one that came after it (but
 *              for the hand-on of a cancelled waiter, below).
 *   deadline   under the lock: a record still queued leaves it (ETIMEDOUT);
 *              one a signal claimed first returns 0.
 *   cancel     under the lock: a waiter a signal claimed while others
 *              were queued claims the first record in its stead (it must
 *              not consume the signal), an unclaimed one leaves the queue.
 *
 * The claim stores SIGNALLED before seq moves (both release), and a
 * waiter reads seq before its record (both acquire): a waiter that has
 * not seen the claim sleeps with a seq the claim has moved (EAGAIN) or is
 * asleep when the wake comes.  The signaller touches the record last at
 * that store, and the condition last at its release of the lock (the
 * wake after it is a system call on the address, harmless if the memory
 * is gone); a claimed waiter that finds the lock still held by its
 * claimer (the record names it) takes it once before it leaves, so that
 * freeing or reusing the condition's memory after its return never meets
 * a signaller inside it (queue_settle; destroy takes the lock itself, in
 * cond_pi_revoke).  A requeuing broadcast moves the sleepers and marks
 * the mutex after its release: it holds the mutex, so none of the
 * waiters it claimed can have returned yet.
 *
 * Each protocol acts on its own records only (cond_queue.h); a queue that
 * mixed both would take waits with two mutexes at once, which POSIX
 * leaves undefined.  A signal, broadcast or wait on a private condition
 * called from a signal handler that interrupted its own thread inside a
 * call on the same condition (none of them is async-signal-safe) never
 * returns: it needs the condition's lock, which its thread holds.
 *
 * A process-shared condition cannot reach a record on the stack of a
 * waiter in another process: its waiters are counted in groups by
 * generation (cond_state.h), under the condition's lock, which is then a
 * process-shared PI lock:
 *
 *   wait       holding the mutex, under the lock: register in G2, read
 *              seq.  Unlock, sleep while seq is unchanged with the bit of
 *              the waiter's generation.  After any return, under the lock:
 *              if signalled (group_take), return 0; else read seq and
 *              sleep again.
 *   signal     under the lock: a token to G1 (group_signal), seq moves on.
 *              After the lock, wake one sleeper of G1's bits, and every
 *              sleeper of a group the signal closed.
 *   broadcast  under the lock: every group closes, seq moves on; then wake
 *              every sleeper of their bits.
 *   deadline   under the lock: leave unsignalled (ETIMEDOUT) unless the
 *              waiter is signalled, then 0 (group_leave).  One that leaves
 *              G1 while a token is out then wakes a sleeper of G1: the
 *              kernel may have given it that token's wake just before a
 *              cancellation acted (group_passed_wake).
 *   cancel     under the lock, as a deadline; a signalled waiter then
 *              signals in its stead (it must not consume the signal).
 *
 * Why it is exact.  Every waiter of G1 inside holds a token or is counted
 * in waiting[G1], and a token goes only to a waiter of G1: G2 joins G1
 * only when G1 has no token out, so a waiter takes only a signal that came
 * after it registered (no signal goes to a waiter that came after it, the
 * theft POSIX forbids), and returns 0 only with a token or from a closed
 * group (no spurious return but a broadcast's).  A waiter that has read
 * seq under the lock sleeps only while nothing changed since (a token or
 * a closing moves seq), so a wake meant for it finds it asleep, or it
 * looks again.  A signal's wake reaches G1's sleepers only (G1 spans at
 * most 31 generations, so G2's bit is not among them); one woken for a
 * token another waiter of G1 took, awake meanwhile, sleeps again.  A
 * closed group's sleepers are woken by the closing, after its lock (none
 * can start to sleep after it: seq moved).  Until then a wake meant for
 * G1 may reach one of them instead, its bit the same as one of G1's 32
 * generations on: it returns, signalled anyway, and passes a wake on to
 * G1 while a token is out (group_passed_wake).  Priority: a
 * signal wakes the highest-priority sleeper of G1, and G2 joins G1 at
 * every signal that finds no token of G1 out and a waiter of G2 at a
 * real-time priority (ranked): only while a token is out, or while G1
 * spans GROUP_SPAN_MAX generations (a waiter left in it through 31
 * joins), can a waiter of G2 of higher priority wait for one of G1.
 *
 * The signaller touches the condition last at its release of the lock,
 * and a waiter returns only after taking the lock: destroying and freeing
 * the condition after a waiter's return never meets a signaller inside
 * it.  A process killed inside the lock leaves it to the next taker
 * (pi_lock_take); one killed in a wait, or inside the lock, may leave a
 * count too high: a signal may then go to a dead waiter, lost for the
 * others, as POSIX allows at a process death (NPTL's groups do the same).
 *
 * Broadcast and the mutex word.  Sleepers moved onto the mutex word are
 * woken by its unlock: the broadcaster marks the word as waited on
 * (mutex_cond_mark_waiters) before the move and the mutex as moved onto
 * (mutex_cond_moved) after it, and its release wakes every sleeper of the
 * word.  A moved waiter then relocks as any locker does: one that has to
 * sleep on the word again sets WAITERS itself.  The move takes every
 * sleeper of seq, also one that queued after the broadcast's claims (it
 * sleeps with the seq the broadcast made, which is marked): such a waiter,
 * woken from the mutex word unclaimed, passes the wake on to it and sleeps
 * on seq again.  A waiter knows it may have been moved if `generation`
 * changed since it registered (a requeuing broadcast counts itself before
 * its move, and a waiter reads it before registering) or if it slept with
 * a marked seq; such a waiter spins a moment before it sleeps on the mutex
 * word (SHORT_SPINS).  The move compares seq with the broadcast's own:
 * after a racing signal it fails and everybody is woken instead, so no
 * later signal's sleeper is ever moved unmarked.  (Masked wakes move
 * `generation` on too: a waiter then only spins without need.)  Only a
 * private condition moves: a process-shared one wakes its sleepers.
 *
 * seq and gen are 32 bits: a process-shared waiter kept off the CPU
 * between its look and its sleep while seq moves on 2^31 times, or while
 * 2^32 generations pass, could take a change for none.
 */
#include <limits.h>
#include <stddef.h>

#include "boost.h"
#include "cond_internal.h"
#include "cond_queue.h"
#include "cond_state.h"
#include "priority.h"
#include "stats.h"

static _Atomic uint32_t *seq_word(struct cond *c)
{
	return &c->seq;
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

/* What a waiter on the state word carries across the sleep. */
struct seq_wait {
	struct cond_link link; /* a private condition's record (cond_queue.h) */
	struct cond *c;
	struct mutex *m;
	uint32_t depth;
	uint32_t seq;	     /* the seq it sleeps with */
	uint32_t bit;	     /* the futex bit it sleeps with */
	uint32_t gen;	     /* process-shared: the generation it registered in */
	uint32_t generation; /* read as it registered (see the top) */
	uint32_t claimer;    /* the TID of the thread that claimed the record (set by it) */
	const void *outer;   /* boost_enter's result */
	bool queued;	     /* private: a record in the queue, not a count in a group */
	bool pass_on;	     /* claimed by a signal while others were queued (set by the claimer) */
	bool marked_sleep;   /* slept with a seq a requeuing broadcast made */
	bool requeue;	     /* a broadcast may move it onto m's word */
	bool shared;
	clockid_t clock;
	const struct timespec *deadline;
};

static struct seq_wait *wait_of(struct cond_link *l)
{
	return (struct seq_wait *)((char *)l - offsetof(struct seq_wait, link));
}

/* Broadcast: a requeue moves sleepers onto the mutex word. */
static void seq_requeue_or_wake(struct cond *c, struct mutex *m, uint32_t seq, bool shared, uint32_t bits)
{
	if (m) {
		/* Sleepers moved onto the mutex must be woken by its unlock. */
		mutex_cond_mark_waiters(m);
		int moved;
		if (futex_cmp_requeue(seq_word(c), 0, INT_MAX, mutex_cond_word(m), seq, shared, &moved) == 0) {
			event_requeued(c, m, moved);
			if (moved > 0)
				mutex_cond_moved(m);
			return;
		}
		/* EAGAIN: a signal moved seq on; its sleepers must not be
		 * moved unmarked.  Any other error: nobody was moved.  Either
		 * way, wake everybody. */
		bits = FUTEX_BITSET_MATCH_ANY;
	}
	futex_wake_bits(seq_word(c), INT_MAX, bits, shared, NULL);
}

/* ---- private conditions: a record per waiter ---- */

/* Under the lock, which every change of a private condition's state
 * takes: seq moves on (marked if requeue), release (see the top). */
static uint32_t queue_move_seq(struct cond *c, bool requeue)
{
	uint32_t seq = seq_next(atomic_load_explicit(seq_word(c), memory_order_relaxed), requeue);
	atomic_store_explicit(seq_word(c), seq, memory_order_release);
	return seq;
}

/* Under the lock: claims the first record and moves seq on; returns the
 * bit its waiter sleeps with, or 0 if the queue is empty.  The record is
 * not touched after its SIGNALLED (its waiter may be gone). */
static uint32_t queue_claim_first(struct cond *c, bool *shared)
{
	struct cond_link *l = atomic_load_explicit(&c->head, memory_order_relaxed);
	if (!l || l->pi)
		return 0; /* none, or cond_pi.c's (cond_queue.h) */
	struct seq_wait *w = wait_of(l);
	uint32_t bit = w->bit;
	*shared = w->shared;
	queue_remove(c, l);
	w->pass_on = atomic_load_explicit(&c->head, memory_order_relaxed) != NULL;
	w->claimer = self_tid();
	atomic_store_explicit(&l->state, LINK_SIGNALLED, memory_order_release);
	queue_move_seq(c, false);
	return bit;
}

static void queue_signal(struct cond *c)
{
	/* A waiter queues before it unlocks the mutex: a signal after that
	 * unlock sees it (acquire pairs with queue_insert's release). */
	if (!atomic_load_explicit(&c->head, memory_order_acquire))
		return;
	bool shared;
	pi_lock_take(&c->lock, false);
	uint32_t bit = queue_claim_first(c, &shared);
	pi_lock_release(&c->lock, false);
	if (bit)
		futex_wake_bits(seq_word(c), INT_MAX, bit, shared, NULL);
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
 * highest first.  One waiter is woken as a signal wakes it.
 */
static void queue_broadcast(struct cond *c)
{
	if (!atomic_load_explicit(&c->head, memory_order_acquire))
		return;
	pi_lock_take(&c->lock, false);
	struct cond_link *l = atomic_load_explicit(&c->head, memory_order_relaxed);
	if (!l || l->pi) {
		/* none, or cond_pi.c's (cond_queue.h) */
		pi_lock_release(&c->lock, false);
		return;
	}
	/* The records' waiters are inside: their mutex is alive. */
	struct seq_wait *first = wait_of(l);
	struct mutex *m = first->requeue && mutex_cond_owned(first->m) ? first->m : NULL;
	bool shared = first->shared;
	uint32_t bits = 0, count = 0, tid = self_tid();
	/* Ends: one turn per record queued. */
	while (l) {
		struct cond_link *next = l->next;
		bits |= wait_of(l)->bit;
		count++;
		wait_of(l)->pass_on = false; /* everybody was woken */
		wait_of(l)->claimer = tid;
		atomic_store_explicit(&l->state, LINK_SIGNALLED, memory_order_release);
		l = next;
	}
	atomic_store_explicit(&c->head, NULL, memory_order_relaxed);
	if (count == 1)
		m = NULL;
	uint32_t seq = queue_move_seq(c, m != NULL);
	if (m)
		/* Before the move: a waiter it moves sees this (the futex call
		 * orders it). */
		atomic_fetch_add_explicit(&c->generation, COND_GENERATION_STEP, memory_order_relaxed);
	pi_lock_release(&c->lock, false);
	seq_requeue_or_wake(c, m, seq, shared, bits);
}

/* The waiter's wait order changed since it queued (a PP ceiling given
 * back): its record moves to its new place, unless a signal claimed it
 * meanwhile.  Only the waiter writes its record's priority. */
static void queue_reorder(struct cond *c, struct cond_link *l)
{
	int priority = priority_wait_order();
	if (priority == l->priority)
		return;
	pi_lock_take(&c->lock, false);
	if (atomic_load_explicit(&l->state, memory_order_relaxed) == LINK_WAITING) {
		queue_remove(c, l);
		l->priority = priority;
		queue_insert(c, l);
	}
	pi_lock_release(&c->lock, false);
}

/*
 * Claimed: the claimer may still hold the lock, in the middle of its
 * claims.  While it holds the lock only FUTEX_WAITERS changes in the
 * word; the TID part changes first at the claimer's release (its CAS, or
 * the kernel's hand-off in its FUTEX_UNLOCK_PI, which touches the word no
 * more after that write).  Every write to the word is a read-modify-write,
 * so whatever we read after that release is in its release sequence
 * (acquire): once the lock is free or another thread's, nothing but a
 * system call of the claimer's can touch the condition after we leave
 * it.  Only a lock the claimer still holds is taken and given back (a
 * claimer that took it again, or a reused TID, costs a needless take).
 * Taking it whoever holds it would queue the waiters a broadcast woke
 * behind one another on it (each woken one finds it held by another that
 * went back to wait) in a chain of hand-offs, each to a thread that has
 * yet to run.
 */
static void queue_settle(struct cond *c, const struct seq_wait *w)
{
	uint32_t owner = atomic_load_explicit(&c->lock, memory_order_acquire) & FUTEX_TID_MASK;
	if (owner != w->claimer)
		return; /* free, or another's: see above */
	pi_lock_take(&c->lock, false);
	pi_lock_release(&c->lock, false);
}

/* ---- process-shared conditions: groups of waiters ---- */

/* After the lock: the wakes a signal or broadcast left.  A closed group's
 * sleepers first: one of them may have taken the wake of G1. */
static void group_wake_up(struct cond *c, struct group_wake wake)
{
	if (wake.all)
		futex_wake_bits(seq_word(c), INT_MAX, wake.all, true, NULL);
	if (wake.one)
		futex_wake_bits(seq_word(c), 1, wake.one, true, NULL);
}

static void group_signal_or_broadcast(struct cond *c, bool broadcast)
{
	/* A waiter counts itself in waiters before it registers: a signal
	 * that comes after its registration (in the order the mutex or
	 * anything else sets) sees it inside. */
	if (!cond_inside(c))
		return;
	struct group_wake wake;
	pi_lock_take(&c->lock, true);
	bool any = broadcast ? group_broadcast(&c->groups, &wake) : group_signal(&c->groups, &wake);
	if (any)
		atomic_store_explicit(seq_word(c), seq_next(atomic_load_explicit(seq_word(c), memory_order_relaxed), false),
				      memory_order_relaxed);
	pi_lock_release(&c->lock, true);
	if (any)
		group_wake_up(c, wake);
}

/* Under the lock, after the kernel returned (woken: 0): signalled?  Else
 * the seq to sleep with.  *owed: the bits of a wake to pass on. */
static bool group_look(struct seq_wait *w, bool woken, uint32_t *owed)
{
	struct cond_groups *g = &w->c->groups;
	*owed = woken && group_of(g, w->gen) < 0 ? group_passed_wake(g, w->gen) : 0;
	if (group_take(g, w->gen))
		return true;
	w->seq = atomic_load_explicit(seq_word(w->c), memory_order_relaxed);
	return false;
}

/* The registration, holding the mutex. */
static void group_enter(struct seq_wait *w)
{
	bool ranked = priority_wait_order() > 0;
	pi_lock_take(&w->c->lock, true);
	w->gen = group_register(&w->c->groups, ranked);
	w->seq = atomic_load_explicit(seq_word(w->c), memory_order_relaxed);
	pi_lock_release(&w->c->lock, true);
	w->bit = group_bit(w->gen);
}

/* Gives up (deadline, cancellation): false if signalled. */
static bool group_give_up(struct seq_wait *w)
{
	pi_lock_take(&w->c->lock, true);
	bool closed = group_of(&w->c->groups, w->gen) < 0;
	bool left = group_leave(&w->c->groups, w->gen);
	uint32_t owed = left || closed ? group_passed_wake(&w->c->groups, w->gen) : 0;
	pi_lock_release(&w->c->lock, true);
	if (owed)
		futex_wake_bits(seq_word(w->c), 1, owed, true, NULL);
	return left;
}

bool cond_seq_blocked(struct cond *c)
{
	pi_lock_take(&c->lock, true);
	bool blocked = group_blocked(&c->groups);
	pi_lock_release(&c->lock, true);
	return blocked;
}

/* ---- both ---- */

void cond_seq_signal(struct cond *c)
{
	if (cond_pshared(c))
		group_signal_or_broadcast(c, false);
	else
		queue_signal(c);
}

void cond_seq_broadcast(struct cond *c)
{
	if (cond_pshared(c))
		group_signal_or_broadcast(c, true);
	else
		queue_broadcast(c);
}

/* May a broadcast have moved it onto the mutex word?  (See the top.) */
static bool seq_maybe_moved(struct seq_wait *w)
{
	return w->requeue && (w->marked_sleep ||
			      atomic_load_explicit(&w->c->generation, memory_order_relaxed) != w->generation);
}

/* Done with the condition: leave it, then take the mutex back. */
static int seq_return(struct seq_wait *w, int result)
{
	bool moved = seq_maybe_moved(w);
	cond_leave_many(w->c, 1);
	boost_leave(w->outer);
	int e = mutex_cond_attach(w->m, w->depth, moved);
	return e ? e : result;
}

/* One sleep on seq (cond_sleep_cancellable). */
static int seq_futex_wait(void *arg)
{
	struct seq_wait *w = arg;
	return futex_wait_bits(seq_word(w->c), w->seq, w->bit, w->shared, w->clock, w->deadline);
}

/* A private condition's waiter: sleeps until its record is claimed or
 * the deadline; returns with the mutex held.  Ends: every turn sleeps or
 * finds the record claimed, and a turn that returns unclaimed (a wake of
 * a shared bit, a handler, seq moved for another) needs an event from
 * outside. */
static int queue_sleep(struct seq_wait *w)
{
	struct cond *c = w->c;
	for (;;) {
		/* seq before the record: see the top. */
		w->seq = atomic_load_explicit(seq_word(c), memory_order_acquire);
		if (atomic_load_explicit(&w->link.state, memory_order_acquire) == LINK_SIGNALLED) {
			queue_settle(c, w);
			return seq_return(w, 0);
		}
		w->marked_sleep |= seq_by_requeue(w->seq);
		int r = cond_sleep_cancellable(seq_futex_wait, w);
		if (r == 0 && seq_maybe_moved(w) &&
		    atomic_load_explicit(&w->link.state, memory_order_acquire) != LINK_SIGNALLED)
			/* Perhaps woken from the mutex word by an unlock that
			 * woke one sleeper there: that one is owed it. */
			mutex_cond_wake(w->m, 1);
		if (r == 0 || r == EAGAIN || r == EINTR)
			continue;
		/* ETIMEDOUT; EINVAL, which nothing but a broken object gives */
		pi_lock_take(&c->lock, false);
		bool claimed = atomic_load_explicit(&w->link.state, memory_order_relaxed) == LINK_SIGNALLED;
		if (!claimed)
			queue_remove(c, &w->link);
		pi_lock_release(&c->lock, false);
		return seq_return(w, claimed ? 0 : r);
	}
}

/* A process-shared condition's waiter: sleeps until signalled or the
 * deadline; returns with the mutex held.  Ends: every turn sleeps, and a
 * turn that returns unsignalled (a token another waiter took, a wake of a
 * closed group's aliased bit, a handler, seq moved for another) needs an
 * event from outside. */
static int group_sleep(struct seq_wait *w)
{
	for (;;) {
		int r = cond_sleep_cancellable(seq_futex_wait, w);
		if (r == 0 || r == EAGAIN || r == EINTR) {
			uint32_t owed;
			pi_lock_take(&w->c->lock, true);
			bool signalled = group_look(w, r == 0, &owed);
			pi_lock_release(&w->c->lock, true);
			if (owed)
				futex_wake_bits(seq_word(w->c), 1, owed, true, NULL);
			if (signalled)
				return seq_return(w, 0);
			continue;
		}
		/* ETIMEDOUT; EINVAL, which nothing but a broken object gives */
		return seq_return(w, group_give_up(w) ? r : 0);
	}
}

/* Cancelled in the sleep.  A waiter a signal claimed while others were
 * queued hands its claim on to the first record (it must not consume the
 * signal); an unclaimed one leaves the queue.  Process-shared: a
 * signalled one signals in its stead, an unsignalled one leaves its
 * group (and passes on a wake the kernel may have given it: see
 * group_passed_wake). */
static void seq_cancelled(void *arg)
{
	struct seq_wait *w = arg;
	struct cond *c = w->c;
	if (w->queued) {
		bool shared = false;
		uint32_t bit = 0;
		pi_lock_take(&c->lock, false);
		if (atomic_load_explicit(&w->link.state, memory_order_relaxed) != LINK_SIGNALLED)
			queue_remove(c, &w->link);
		else if (w->pass_on)
			bit = queue_claim_first(c, &shared);
		pi_lock_release(&c->lock, false);
		if (bit)
			futex_wake_bits(seq_word(c), INT_MAX, bit, shared, NULL);
	} else if (!group_give_up(w)) {
		group_signal_or_broadcast(c, false);
	}
	seq_return(w, 0);
}

int cond_seq_wait(struct cond *c, struct mutex *m, clockid_t clock, const struct timespec *deadline)
{
	struct seq_wait w = { .c = c, .m = m, .clock = clock, .deadline = deadline };
	w.queued = !cond_pshared(c);
	w.requeue = requeue_target(c, m) != NULL;
	w.shared = seq_shared(c, m);
	w.outer = boost_enter(c);
	/* release: a destroyer that sees us counted finds us inside c. */
	atomic_fetch_add_explicit(&c->waiters, 1, memory_order_release);
	if (w.queued) {
		w.link.priority = priority_wait_order();
		w.link.pi = false;
		atomic_init(&w.link.state, LINK_WAITING);
		w.bit = 1u << (self_tid() % 32);
		pi_lock_take(&c->lock, false);
		queue_insert(c, &w.link);
		/* A requeuing broadcast moves it on under the lock: it changes
		 * after this only for a broadcast that came after us. */
		w.generation = atomic_load_explicit(&c->generation, memory_order_relaxed);
		pi_lock_release(&c->lock, false);
	} else {
		group_enter(&w);
	}

	w.depth = mutex_cond_detach(m);
	if (w.queued && kind_cond_detach_drops_ceiling(mutex_kind(m)))
		queue_reorder(c, &w.link);

	int r;
	pthread_cleanup_push(seq_cancelled, &w);
	r = w.queued ? queue_sleep(&w) : group_sleep(&w);
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
