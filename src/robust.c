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
 * as a node of a doubly linked list: removal is O(1).  The head is a
 * field of glibc's thread descriptor, at a fixed offset from the thread
 * pointer, which robust_init learns at load (from get_robust_list, on
 * the loading thread): a thread's first robust lock then finds its head
 * without a system call.  A thread nobody registered (raw clone) gets a
 * head of ours in TLS.
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

/* Where glibc keeps a thread's head, from the thread pointer; 0: unknown. */
static long glibc_head_offset;

static struct robust_head *head_at_thread_pointer(long offset)
{
	return (struct robust_head *)((char *)__builtin_thread_pointer() + offset);
}

/* At load: the head the kernel has registered for the loading thread,
 * if glibc's (our layout), gives its offset from the thread pointer,
 * the same in every thread glibc starts (it is a field of struct
 * pthread, which is not ABI: hence the check against the kernel here). */
void robust_init(void)
{
	struct robust_head *head = NULL;
	size_t len = 0;
	long r = raw_syscall6(SYS_get_robust_list, 0, (long)&head, (long)&len, 0, 0, 0);
	if (r != 0 || head == NULL || len != sizeof *head || head->futex_offset != FUTEX_OFFSET)
		return;
	long offset = (char *)head - (char *)__builtin_thread_pointer();
	if (offset == 0 || offset <= -65536 || offset >= 65536)
		return;
	glibc_head_offset = offset;
}

/* A thread's first robust operation.  Where robust_init found glibc's
 * head, it is read at that offset, with no system call: glibc has set
 * it up (list pointing at itself or at our entries, futex_offset -32)
 * and registered it before the thread's first instruction of user code.
 * Else (before our constructor ran, another C library) the kernel is
 * asked. */
struct robust_head *robust_head_fetch(void)
{
	struct robust_head *head = NULL;
	long offset = glibc_head_offset;
	if (offset != 0) {
		head = head_at_thread_pointer(offset);
		if (head->futex_offset == FUTEX_OFFSET && head->list != NULL) {
			robust_head_cache = head;
			return head;
		}
	}
	size_t len = 0;
	long r = raw_syscall6(SYS_get_robust_list, 0, (long)&head, (long)&len, 0, 0, 0);
	if (r != 0 || head == NULL || len != sizeof *head || head->futex_offset != FUTEX_OFFSET)
		head = head_register_own();
	robust_head_cache = head;
	return head;
}
