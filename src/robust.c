/*
 * The kernel robust-list ABI (set_robust_list(2)).  Each thread has one
 * registered head { list, futex_offset, list_op_pending }; list is a
 * circular singly linked list through "entries", each a pointer to a
 * mutex's link.next, bit 0 set when that mutex is a PI futex.  The futex
 * word of an entry is at entry + futex_offset.  At thread exit or death the
 * kernel walks the list and, for every word still holding the dying TID,
 * sets FUTEX_OWNER_DIED (keeping FUTEX_WAITERS) and wakes one waiter (a
 * shared wake), or hands a PI futex to its top waiter.
 *
 * We share glibc's head: glibc registers one in every thread it creates,
 * re-registers it in a fork child, and lays its mutexes out as we do
 * (word at 0, entry at 32, futex_offset -32), with a spare pointer just
 * before the head (struct pthread's robust_prev) so that the head can act
 * as a node of a doubly linked list: removal is O(1).  A thread nobody
 * registered (raw clone) gets a head of ours in TLS.
 *
 * Only the owning thread ever touches its list, so no atomics are needed;
 * compiler fences keep the stores in the order the kernel may observe them
 * if the thread dies between two of them.
 */
#include <stddef.h>

#include "robust.h"
#include "syscall.h"

struct robust_head {
	void *list;
	long futex_offset;
	void *list_op_pending;
};

#define FUTEX_OFFSET ((long)offsetof(struct mutex, word) - (long)offsetof(struct mutex, link.next))

_Static_assert(FUTEX_OFFSET == -32, "glibc's robust list places the word 32 bytes before the entry");

static __thread struct robust_head *head_cache TLS_FAST;

static __thread struct {
	void *prev; /* plays struct pthread's robust_prev */
	struct robust_head head;
} own_head TLS_FAST;

static struct robust_head *head_register_own(void)
{
	own_head.head.list = &own_head.head;
	own_head.head.futex_offset = FUTEX_OFFSET;
	own_head.head.list_op_pending = NULL;
	raw_syscall6(SYS_set_robust_list, (long)&own_head.head, sizeof own_head.head, 0, 0, 0, 0);
	return &own_head.head;
}

static struct robust_head *robust_head(void)
{
	struct robust_head *head = head_cache;
	if (__builtin_expect(head != NULL, 1))
		return head;
	size_t len = 0;
	long r = raw_syscall6(SYS_get_robust_list, 0, (long)&head, (long)&len, 0, 0, 0);
	if (r != 0 || head == NULL || len != sizeof *head || head->futex_offset != FUTEX_OFFSET)
		head = head_register_own();
	head_cache = head;
	return head;
}

static struct robust_link *node_of(void *entry)
{
	return (struct robust_link *)((char *)((uintptr_t)entry & ~(uintptr_t)1) -
				      offsetof(struct robust_link, next));
}

static void *entry_of(struct mutex *m, bool pi)
{
	return (void *)((uintptr_t)&m->link.next | (pi ? 1u : 0u));
}

void robust_pending_set(struct mutex *m, bool pi)
{
	struct robust_head *head = robust_head();
	head->list_op_pending = entry_of(m, pi);
	atomic_signal_fence(memory_order_seq_cst);
}

void robust_pending_clear(void)
{
	atomic_signal_fence(memory_order_seq_cst);
	robust_head()->list_op_pending = NULL;
}

void robust_enqueue(struct mutex *m, bool pi)
{
	struct robust_head *head = robust_head();
	struct robust_link *head_node = node_of(head);
	struct robust_link *first = node_of(head->list);

	m->link.next = head->list;
	m->link.prev = head_node;
	first->prev = &m->link;
	/* The node is complete before the kernel can reach it. */
	atomic_signal_fence(memory_order_seq_cst);
	head->list = entry_of(m, pi);
}

void robust_dequeue(struct mutex *m)
{
	struct robust_link *next = node_of(m->link.next);
	struct robust_link *prev = m->link.prev;

	next->prev = prev;
	prev->next = m->link.next; /* keeps the PI bit of the next entry */
	/* Unlinked before the node is cleared: the kernel never follows NULL. */
	atomic_signal_fence(memory_order_seq_cst);
	m->link.next = NULL;
	m->link.prev = NULL;
}
