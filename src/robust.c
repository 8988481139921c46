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

__thread struct robust_head *robust_head_cache TLS_FAST;

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

struct robust_head *robust_head_fetch(void)
{
	struct robust_head *head = NULL;
	size_t len = 0;
	long r = raw_syscall6(SYS_get_robust_list, 0, (long)&head, (long)&len, 0, 0, 0);
	if (r != 0 || head == NULL || len != sizeof *head || head->futex_offset != FUTEX_OFFSET)
		head = head_register_own();
	robust_head_cache = head;
	return head;
}

