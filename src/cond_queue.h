/*
 * The queue of waiter records of a private condition (c->head, under
 * c->lock): each waiter of cond_pi.c and each waiter of cond_seq.c on a
 * private condition links a record of its own, on its stack, embedding a
 * struct cond_link.  All the records queued at one time belong to one of
 * the two: the waiters of a condition share one mutex, whose kind picks
 * the protocol (cond_queue_pi).
 *
 * The queue is one list in priority order, cut into levels: the links of
 * one priority, in arrival order (FIFO among equals, the kernel's own
 * order).  The first link of a level keeps a pointer to the level's last
 * link (level_last), the last link one to its first (level_first); a
 * level of one link points to itself both ways, and these two pointers
 * mean nothing in any other link.  So an insertion steps over whole
 * levels, never over the waiters of a level: its cost under the lock
 * grows with the number of distinct priorities queued (at most
 * PRIORITY_MAX + 2: SCHED_OTHER, 1..99, SCHED_DEADLINE), never with the
 * number of waiters, and a removal is O(1).
 *
 * A signal or broadcast picks its protocol by a look at the queue
 * without the lock (cond_queue_pi); a waiter of the other protocol may
 * queue before it takes the lock, so each protocol acts only on its own
 * records (pi, read from the first record).  Finding the other's, it does
 * nothing: when it looked, nobody was queued, so nobody had yet unlocked
 * the mutex to wait.  A queue that held both at once would take waits
 * with two mutexes at once, which POSIX leaves undefined.
 *
 * state: WAITING until a signal or broadcast claims the record
 * (SIGNALLED) or its waiter gives up (LEAVING, cond_pi.c only: a
 * cond_seq.c waiter leaves under the lock in one step).  A claimed or
 * leaving record is unqueued by whoever moved it on, under the lock.
 */
#ifndef RTPTHREAD_COND_QUEUE_H
#define RTPTHREAD_COND_QUEUE_H

#include "cond_internal.h"
#include "pi_lock.h"

enum link_state { LINK_WAITING, LINK_SIGNALLED, LINK_LEAVING };

struct cond_link {
	struct cond_link *prev, *next;		    /* the queue, under the lock */
	struct cond_link *level_first, *level_last; /* see the top, under the lock */
	int priority;				    /* priority_wait_order() */
	_Atomic uint32_t state;			    /* enum link_state */
	bool pi;				    /* a record of cond_pi.c */
};

static inline bool link_starts_level(const struct cond_link *n)
{
	return !n->prev || n->prev->priority != n->priority;
}

static inline bool link_ends_level(const struct cond_link *n)
{
	return !n->next || n->next->priority != n->priority;
}

/* Under the lock. */
static inline void queue_insert(struct cond *c, struct cond_link *n)
{
	struct cond_link *prev = NULL, *at = atomic_load_explicit(&c->head, memory_order_relaxed);
	/* at is the first link of a level, prev the last of the one before.
	 * Ends: one turn per priority level queued, a bounded number. */
	while (at && at->priority >= n->priority) {
		DEBUG_ASSERT(link_starts_level(at) && link_ends_level(at->level_last));
		prev = at->level_last;
		at = prev->next;
		DEBUG_ASSERT(!at || at->priority < prev->priority);
	}
	if (prev && prev->priority == n->priority) {
		/* behind every equal one: FIFO, the kernel's order */
		n->level_first = prev->level_first;
		n->level_first->level_last = n;
	} else {
		n->level_first = n;
		n->level_last = n;
	}
	n->prev = prev;
	n->next = at;
	if (at)
		at->prev = n;
	if (prev)
		prev->next = n;
	else
		atomic_store_explicit(&c->head, n, memory_order_release);
}

/* Under the lock; n is queued. */
static inline void queue_remove(struct cond *c, struct cond_link *n)
{
	DEBUG_ASSERT(n->prev ? n->prev->next == n : atomic_load_explicit(&c->head, memory_order_relaxed) == n);
	DEBUG_ASSERT(!n->next || (n->next->prev == n && n->next->priority <= n->priority));
	bool first = link_starts_level(n), last = link_ends_level(n);
	if (first && !last) {
		/* the next link heads the level now */
		struct cond_link *head = n->next;
		head->level_last = n->level_last;
		head->level_last->level_first = head;
	} else if (last && !first) {
		/* the previous link ends the level now */
		struct cond_link *tail = n->prev;
		tail->level_first = n->level_first;
		tail->level_first->level_last = tail;
	}
	if (n->next)
		n->next->prev = n->prev;
	if (n->prev)
		n->prev->next = n->next;
	else
		atomic_store_explicit(&c->head, n->next, memory_order_relaxed);
}

/* Do the queued records belong to cond_pi.c?  The mutex a private wait
 * names before it queues (c->mutex) picks the protocol, as it did for
 * the wait; the caller saw a record queued (acquire), so it sees that
 * wait's mutex. */
static inline bool cond_queue_pi(struct cond *c)
{
	struct mutex *m = atomic_load_explicit(&c->mutex, memory_order_relaxed);
	return m && kind_cond_requeue_pi(mutex_kind(m));
}

/* Is a queued waiter blocked (neither claimed nor leaving)?  destroy's
 * EBUSY, for both protocols. */
static inline bool cond_queue_blocked(struct cond *c)
{
	if (!atomic_load_explicit(&c->head, memory_order_acquire))
		return false;
	bool blocked = false;
	pi_lock_take(&c->lock, false);
	for (struct cond_link *n = atomic_load_explicit(&c->head, memory_order_relaxed); n && !blocked; n = n->next)
		blocked = atomic_load_explicit(&n->state, memory_order_relaxed) == LINK_WAITING;
	pi_lock_release(&c->lock, false);
	return blocked;
}

#endif
