/*
 * Condition waits with a priority-inheritance mutex (private conditions):
 * every waiter sleeps on a record of its own, so that after any return
 * from the kernel it knows whether it was moved onto the mutex.
 *
 * The record (struct cond_node) lives on the waiter's stack, queued on the
 * condition in priority order (highest first, FIFO among equals, the
 * kernel's own order) under the condition's PI lock; queueing costs the
 * same with one waiter or thousands (queue_insert).  The waiter sleeps in
 * FUTEX_WAIT_REQUEUE_PI on node.word.  A signal takes the first node that
 * is still waiting, a broadcast all of them; for each, under the lock:
 *
 *   claim   node.mover = the mover's TID (a PI lock the mover holds), then
 *           node.state WAITING -> SIGNALLED by CAS; the node leaves the
 *           queue and the mover counts it out of the condition's waiters.
 *   move    after the lock is dropped: node.word = MOVED and
 *           FUTEX_CMP_REQUEUE_PI of node.word onto the node's mutex.  The
 *           kernel takes the mutex for the waiter if it is free (it
 *           returns owning it), else queues it on the rt_mutex, where it
 *           boosts the owner.  Then the mover releases node.mover.
 *
 * States of a node, and who moves it on (no other transition exists):
 *
 *   WAITING   -> SIGNALLED  a signal or broadcast (the mover), under the lock
 *   WAITING   -> LEAVING    the waiter, at its deadline or cancellation; it
 *                           then unqueues itself under the lock
 *
 * What the waiter does after the kernel returns:
 *
 *   0                   it owns the mutex: it was moved.
 *   any other, SIGNALLED   it was signalled: perhaps moved and then hit by a
 *                       handler, a deadline or cancellation on the
 *                       rt_mutex (the kernel then returns without the
 *                       mutex), perhaps not asleep when the move came.
 *                       Either way the wake-up is its own: it takes the
 *                       mutex itself and returns 0.
 *   ETIMEDOUT, WAITING  CAS to LEAVING; if a mover won the race, as above.
 *   EAGAIN/EINTR, WAITING  a spurious return: sleep again.
 *
 * The mover touches the node until it releases node.mover, and a requeue
 * on memory its owner left could move an unrelated sleeper; so before
 * its record goes out of scope a signalled waiter waits for node.mover to
 * be free (FUTEX_LOCK_PI on it when it is not, which boosts the mover).
 * The move itself reads nothing of the condition, and a signalled waiter
 * touches the condition again only through the passing hand-shake below
 * (its mover counted it out): so destroying and freeing the condition
 * right after a signal or broadcast is safe even while the destroyer
 * holds the mutex the waiters are queued on.
 *
 * A waiter cancelled after a signal claimed it has taken that wake-up.  It
 * passes it on when other waiters were queued at the time of the claim.
 * Such a node is PASS_PENDING and linked on the condition's `passing`
 * list by its signal.  Its waiter, once the mover is done, turns it
 * PASS_BUSY by CAS and then, under the lock, unlinks it (and, cancelled,
 * claims the next waiter).  destroy turns every PENDING node REVOKED
 * instead (its waiter then never touches the condition) and waits for the
 * BUSY ones, which it counts into waiters: they need the lock, never the
 * mutex, so destroy cannot wait on a waiter queued on the destroyer's
 * mutex.
 *
 * A broadcast moves its nodes one requeue each, in priority order: the
 * highest waiter gets the mutex (or boosts its owner) first.  A move that
 * fails because the mutex names an owner that died without a robust-list
 * entry (ESRCH) clears that owner from the word, as the kernel does for a
 * robust owner, and moves again: the waiter then owns the mutex.
 *
 * In a fork child the queue and the passing list name records on the
 * stacks of threads the child lacks: cond_fork_check (cond_internal.h)
 * empties both before any of this code runs on the condition there.
 */
#include <limits.h>

#include "cond_internal.h"
#include "cond_queue.h"
#include "pi_lock.h"
#include "stats.h"
#include "priority.h"

enum node_pass { PASS_NONE, PASS_PENDING, PASS_BUSY, PASS_REVOKED };

#define NODE_ASLEEP 0u
#define NODE_MOVED 1u

struct cond_node {
	struct cond_link link;	       /* queued on the condition (cond_queue.h) */
	struct cond_node *moved_next;  /* a broadcast's own list, after the lock */
	_Atomic uint32_t word;	       /* the waiter sleeps on it */
	_Atomic uint32_t mover;	       /* PI lock: the mover's TID while it may touch the node */
	_Atomic uint32_t pass;	       /* enum node_pass */
	bool pass_counted;	       /* destroy counted it into waiters (under lock) */
	struct cond_node *pass_prev, *pass_next; /* the condition's passing list, under its lock */
	struct mutex *mutex;
	int kind;
};

static struct cond_node *node_of(struct cond_link *l)
{
	return (struct cond_node *)((char *)l - offsetof(struct cond_node, link));
}

struct node_wait {
	struct cond *c;
	struct cond_node node;
	uint32_t depth;
	clockid_t clock;
	const struct timespec *deadline;
};

/* Under the lock.  The mover's TID goes into node.mover before the CAS
 * publishes SIGNALLED (release), so a waiter that sees SIGNALLED sees the
 * lock held or already released.  false: the waiter is leaving. */
static bool node_claim(struct cond_node *n)
{
	uint32_t expected = LINK_WAITING;
	atomic_store_explicit(&n->mover, self_tid(), memory_order_relaxed);
	if (atomic_compare_exchange_strong_explicit(&n->link.state, &expected, LINK_SIGNALLED, memory_order_release,
						    memory_order_relaxed))
		return true;
	atomic_store_explicit(&n->mover, 0, memory_order_relaxed);
	return false;
}

static void passing_link(struct cond *c, struct cond_node *n)
{
	atomic_store_explicit(&n->pass, PASS_PENDING, memory_order_relaxed);
	n->pass_counted = false;
	n->pass_prev = NULL;
	n->pass_next = c->passing;
	if (c->passing)
		c->passing->pass_prev = n;
	c->passing = n;
}

static void passing_unlink(struct cond *c, struct cond_node *n)
{
	if (n->pass_next)
		n->pass_next->pass_prev = n->pass_prev;
	if (n->pass_prev)
		n->pass_prev->pass_next = n->pass_next;
	else
		c->passing = n->pass_next;
}

/* Under the lock: the first waiting node, claimed and unqueued (linked
 * for passing on if others stay queued), or NULL.  Skips leaving nodes:
 * at most the number of waiters. */
static struct cond_node *claim_first(struct cond *c)
{
	struct cond_link *l = atomic_load_explicit(&c->head, memory_order_relaxed);
	if (l && !l->pi)
		return NULL; /* cond_seq.c's records (cond_queue.h) */
	while (l && !node_claim(node_of(l)))
		l = l->next;
	if (!l)
		return NULL;
	queue_remove(c, l);
	struct cond_node *n = node_of(l);
	if (atomic_load_explicit(&c->head, memory_order_relaxed))
		passing_link(c, n);
	return n;
}

/*
 * Moves a claimed node's waiter onto its mutex, then lets go of the node.
 * The loop ends: it repeats only after clearing a dead owner, and the
 * word then names no owner, so the next ESRCH needs another thread to
 * take the mutex and die in between.  Other failures (EINVAL, EFAULT) come
 * only from a mutex that was unmapped or changed kind under its waiters.
 */
static void node_move(struct cond *c, struct cond_node *n)
{
	struct mutex *m = n->mutex;
	bool shared = kind_shared(n->kind);
	atomic_store_explicit(&n->word, NODE_MOVED, memory_order_release);
	int moved, r;
	do
		r = futex_cmp_requeue_pi(&n->word, 0, mutex_cond_word(m), NODE_MOVED, shared, &moved);
	while (r == ESRCH && pi_take_from_dead_owner(m, 0));
	if (r == 0)
		event_requeued(c, m, moved);
	pi_lock_release(&n->mover, false);
}

void cond_pi_signal(struct cond *c)
{
	pi_lock_take(&c->lock, false);
	struct cond_node *n = claim_first(c);
	pi_lock_release(&c->lock, false);
	if (n) {
		cond_leave_many(c, 1); /* our last touch of c */
		node_move(c, n);
	}
}

void cond_pi_broadcast(struct cond *c)
{
	struct cond_node *first = NULL, **tail = &first;
	uint32_t count = 0;
	pi_lock_take(&c->lock, false);
	struct cond_link *l = atomic_load_explicit(&c->head, memory_order_relaxed);
	if (l && !l->pi)
		l = NULL; /* cond_seq.c's records (cond_queue.h) */
	while (l) {
		struct cond_link *next = l->next;
		struct cond_node *claimed = node_of(l);
		if (node_claim(claimed)) {
			queue_remove(c, l);
			*tail = claimed;
			tail = &claimed->moved_next;
			count++;
		}
		l = next;
	}
	*tail = NULL;
	pi_lock_release(&c->lock, false);
	if (count)
		cond_leave_many(c, count); /* our last touch of c */
	/* Highest priority first.  A node may vanish once moved: read its
	 * successor before. */
	for (struct cond_node *n = first; n;) {
		struct cond_node *next = n->moved_next;
		node_move(c, n);
		n = next;
	}
}

void cond_pi_revoke(struct cond *c)
{
	uint32_t busy = 0;
	pi_lock_take(&c->lock, false);
	struct cond_node *n = c->passing;
	while (n) {
		struct cond_node *next = n->pass_next;
		uint32_t expected = PASS_PENDING;
		if (atomic_compare_exchange_strong_explicit(&n->pass, &expected, PASS_REVOKED, memory_order_relaxed,
							    memory_order_relaxed)) {
			passing_unlink(c, n); /* its waiter never looks at c again */
		} else if (!n->pass_counted) {
			n->pass_counted = true; /* BUSY: it unlinks itself, then leaves */
			busy++;
		}
		n = next;
	}
	if (busy)
		atomic_fetch_add_explicit(&c->waiters, busy, memory_order_relaxed);
	pi_lock_release(&c->lock, false);
}

/*
 * A signalled waiter, done waiting for its mover: gives up its right to
 * pass the wake-up on (cancelled: uses it).  Nothing to do unless its
 * node is PENDING; REVOKED means destroy took the right and the condition
 * may be gone.  Once BUSY, destroy waits for us, so the condition lives
 * until our cond_leave_many.
 */
static void node_settle_pass(struct node_wait *w, bool cancelled)
{
	struct cond_node *n = &w->node, *next = NULL;
	uint32_t expected = PASS_PENDING;
	if (!atomic_compare_exchange_strong_explicit(&n->pass, &expected, PASS_BUSY, memory_order_acquire,
						    memory_order_relaxed))
		return;
	struct cond *c = w->c;
	pi_lock_take(&c->lock, false);
	passing_unlink(c, n);
	if (cancelled)
		next = claim_first(c);
	uint32_t leaving = (next ? 1 : 0) + (n->pass_counted ? 1 : 0);
	pi_lock_release(&c->lock, false);
	if (leaving)
		cond_leave_many(c, leaving); /* our last touch of c */
	if (next)
		node_move(c, next);
}

/* The mover is done with our node once node.mover is free. */
static void node_wait_for_mover(struct cond_node *n)
{
	if (atomic_load_explicit(&n->mover, memory_order_acquire) == 0)
		return;
	pi_lock_take(&n->mover, false);
	pi_lock_release(&n->mover, false);
}

/* WAITING -> LEAVING and out of the queue; false if a mover claimed us. */
static bool node_leave(struct node_wait *w)
{
	uint32_t expected = LINK_WAITING;
	if (!atomic_compare_exchange_strong_explicit(&w->node.link.state, &expected, LINK_LEAVING, memory_order_acquire,
						     memory_order_acquire))
		return false;
	pi_lock_take(&w->c->lock, false);
	queue_remove(w->c, &w->node.link);
	pi_lock_release(&w->c->lock, false);
	cond_leave_many(w->c, 1);
	return true;
}

/* Signalled, or leaving: take the mutex back, from the kernel or
 * ourselves, whatever the deadline. */
static int node_relock(struct node_wait *w)
{
	return mutex_cond_attach_pi(w->node.mutex, w->node.kind, w->depth);
}

/* One sleep on the node's word (cond_sleep_cancellable). */
static int node_futex_wait(void *arg)
{
	struct node_wait *w = arg;
	struct cond_node *n = &w->node;
	return futex_wait_requeue_pi(&n->word, NODE_ASLEEP, mutex_cond_word(n->mutex), kind_shared(n->kind), w->clock,
				     w->deadline);
}

/* Sleeps until signalled or the deadline; returns with the mutex held.
 * Ends: a turn that neither was signalled nor timed out was a spurious
 * return of the kernel (a handler before any move restarts inside it). */
static int node_sleep(struct node_wait *w)
{
	struct cond_node *n = &w->node;
	for (;;) {
		int r = cond_sleep_cancellable(node_futex_wait, w);
		/* MOVED (acquire) implies SIGNALLED: the mover published the
		 * state before it wrote the word. */
		bool signalled = r == 0 || atomic_load_explicit(&n->word, memory_order_acquire) == NODE_MOVED ||
				 atomic_load_explicit(&n->link.state, memory_order_acquire) == LINK_SIGNALLED;
		if (!signalled && (r == EAGAIN || r == EINTR))
			continue;
		if (signalled || !node_leave(w)) {
			node_wait_for_mover(n);
			node_settle_pass(w, false);
			return node_relock(w);
		}
		/* ETIMEDOUT, or EINVAL from a mutex that is not what it was */
		int e = node_relock(w);
		return e ? e : r;
	}
}

static void node_cancelled(void *arg)
{
	struct node_wait *w = arg;
	struct cond_node *n = &w->node;
	if (!mutex_cond_owned(n->mutex) && node_leave(w)) {
		node_relock(w);
		return;
	}
	node_wait_for_mover(n);
	node_settle_pass(w, true); /* before the mutex: destroy may wait for it */
	node_relock(w);
}

int cond_pi_wait(struct cond *c, struct mutex *m, int kind, clockid_t clock, const struct timespec *deadline)
{
	struct node_wait w = { .c = c, .clock = clock, .deadline = deadline };
	struct cond_node *n = &w.node;
	n->link.priority = priority_wait_order();
	n->link.pi = true;
	n->mutex = m;
	n->kind = kind;
	atomic_init(&n->word, NODE_ASLEEP);
	atomic_init(&n->link.state, LINK_WAITING);
	atomic_init(&n->mover, 0);
	atomic_init(&n->pass, PASS_NONE);

	pi_lock_take(&c->lock, false);
	queue_insert(c, &n->link);
	atomic_fetch_add_explicit(&c->waiters, 1, memory_order_relaxed);
	pi_lock_release(&c->lock, false);

	w.depth = mutex_cond_detach_pi(m, kind);

	int r;
	pthread_cleanup_push(node_cancelled, &w);
	r = node_sleep(&w);
	pthread_cleanup_pop(0);
	return r;
}
