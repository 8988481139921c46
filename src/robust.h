/*
 * The robust list (see robust.c for the ABI and why we share glibc's
 * head).  Only the owning thread touches its list, so plain stores do;
 * compiler fences keep them in the order the kernel may observe if the
 * thread dies between two of them.  Inline: they are on the uncontended
 * path of every robust mutex.
 */
#ifndef RTPTHREAD_ROBUST_H
#define RTPTHREAD_ROBUST_H

#include <stdbool.h>
#include <stddef.h>

#include "debug.h"
#include "mutex.h"

struct robust_head { /* the kernel's struct robust_list_head */
	void *list;
	long futex_offset;
	void *list_op_pending;
};

#define FUTEX_OFFSET ((long)offsetof(struct mutex, word) - (long)offsetof(struct mutex, link.next))

_Static_assert(FUTEX_OFFSET == -32, "glibc's robust list places the word 32 bytes before the entry");

extern __thread struct robust_head *robust_head_cache TLS_FAST HIDDEN;
struct robust_head *robust_head_fetch(void) HIDDEN;
/* Finds glibc's head's offset from the thread pointer (at load). */
void robust_init(void) HIDDEN;
/* pthread_atfork child handler: the kernel gives a fork child no robust
 * list (glibc registers its head again, a head of ours is not), so the
 * next robust_head() asks the kernel again. */
static inline void robust_after_fork(void)
{
	robust_head_cache = NULL;
}

static inline struct robust_head *robust_head(void)
{
	struct robust_head *head = robust_head_cache;
	return __builtin_expect(head != NULL, 1) ? head : robust_head_fetch();
}

/* The node whose next field an entry points at (bit 0: PI). */
static inline struct robust_link *robust_node_of(void *entry)
{
	return (struct robust_link *)((char *)((uintptr_t)entry & ~(uintptr_t)1) -
				      offsetof(struct robust_link, next));
}

static inline void *robust_entry_of(struct mutex *m, bool pi)
{
	return (void *)((uintptr_t)&m->link.next | (pi ? 1u : 0u));
}

/* Bracket an acquire or release of a robust mutex: the kernel finishes the
 * operation for us (marks the word OWNER_DIED, wakes a waiter) if the thread
 * dies between set and clear.  head is robust_head(), fetched once per
 * operation by the caller: the fences make the compiler reload TLS. */
static inline void robust_pending_set(struct robust_head *head, struct mutex *m, bool pi)
{
	head->list_op_pending = robust_entry_of(m, pi);
	atomic_signal_fence(memory_order_seq_cst);
}

static inline void robust_pending_clear(struct robust_head *head)
{
	atomic_signal_fence(memory_order_seq_cst);
	head->list_op_pending = NULL;
}

/* Link a just-acquired mutex in at the head of the calling thread's list. */
static inline void robust_enqueue(struct robust_head *head, struct mutex *m, bool pi)
{
	struct robust_link *first = robust_node_of(head->list);

	m->link.next = head->list;
	m->link.prev = robust_node_of(head);
	first->prev = &m->link;
	/* The node is complete before the kernel can reach it. */
	atomic_signal_fence(memory_order_seq_cst);
	head->list = robust_entry_of(m, pi);
}

static inline void robust_dequeue(struct mutex *m)
{
	struct robust_link *next = robust_node_of(m->link.next);
	struct robust_link *prev = m->link.prev;

	/* m is on the caller's list, linked both ways. */
	DEBUG_ASSERT(prev != NULL && robust_node_of(prev->next) == &m->link);
	DEBUG_ASSERT(next->prev == &m->link);
	next->prev = prev;
	prev->next = m->link.next; /* keeps the PI bit of the next entry */
	/* Unlinked before the node is cleared: the kernel never follows NULL. */
	atomic_signal_fence(memory_order_seq_cst);
	m->link.next = NULL;
	m->link.prev = NULL;
}

#endif
