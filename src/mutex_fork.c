/*
 * Fork ownership: which thread of a fork child owns a private mutex whose
 * word an ancestor process wrote.  Below every mutex protocol file
 * (mutex_owned and the word and PI protocols call it; it calls none of
 * them).
 *
 * POSIX makes a fork child's only thread a replica of the forking one, and
 * pthread_atfork's classic use locks in the prepare handler and unlocks in
 * the child handler; but the words of what that thread held name the
 * parent's TID.  The replica's first owner check on such a mutex writes
 * its own TID in (and links a robust one into its robust list, which
 * glibc emptied for the child).  Only private mutexes: the child's copy is
 * its own, while a process-shared one is still held by the parent.
 *
 * A word is the forking thread's only if an ancestor process stamped it
 * (owner_fork neither 0 nor ours): a thread of this process that got the
 * forking thread's TID back and took the mutex here stamped it with ours,
 * or has not stamped it yet and then it reads 0 (the release before its
 * CAS cleared the stamp; acquire on the word orders that clear before
 * our read of the stamp).
 */
#include "mutex_internal.h"
#include "robust.h"

bool mutex_take_from_fork_parent(struct mutex *m, int kind, uint32_t tid)
{
	uint32_t word = atomic_load_explicit(&m->word, memory_order_acquire);
	if (tid != fork_replica_tid || (word & WORD_TID_MASK) != fork_parent_tid || (kind & KIND_PSHARED) ||
	    word == WORD_NOTRECOVERABLE)
		return false;
	uint16_t stamp = atomic_load_explicit(&m->owner_fork, memory_order_relaxed);
	if (stamp == 0 || stamp == owner_code)
		return false;
	if (!atomic_compare_exchange_strong_explicit(&m->word, &word, (word & ~WORD_TID_MASK) | tid,
						     memory_order_relaxed, memory_order_relaxed))
		return false;
	int32_t owner = atomic_load_explicit(&m->owner, memory_order_relaxed);
	if (owner != OWNER_INCONSISTENT && owner != OWNER_NOTRECOVERABLE)
		atomic_store_explicit(&m->owner, (int32_t)tid, memory_order_relaxed);
	atomic_store_explicit(&m->owner_fork, owner_code, memory_order_relaxed);
	if (kind & KIND_ROBUST)
		robust_enqueue(robust_head(), m, kind & KIND_PI);
	return true;
}

/* In a fork child: the word names tid, taken in this process (a thread of
 * an ancestor with the same TID left the others), or it is the forking
 * thread's and tid its replica. */
bool mutex_owned_in_child(struct mutex *m, int kind, uint32_t tid)
{
	uint32_t word = atomic_load_explicit(&m->word, memory_order_relaxed);
	if ((word & WORD_TID_MASK) == tid)
		return atomic_load_explicit(&m->owner_fork, memory_order_relaxed) == owner_code;
	return mutex_take_from_fork_parent(m, kind, tid);
}

/* A word whose owner is gone (TID cleared by the kernel or a dead owner's
 * take-over) may keep the stamp of an ancestor process: clear it before
 * taking the word, so that the new owner's word never reads as the
 * forking thread's.  A CAS: a stamp of this process is never touched. */
void mutex_forget_ancestor_owner(struct mutex *m)
{
	uint16_t stamp = atomic_load_explicit(&m->owner_fork, memory_order_relaxed);
	if (stamp != 0 && stamp != owner_code)
		atomic_compare_exchange_strong_explicit(&m->owner_fork, &stamp, 0, memory_order_relaxed,
							memory_order_relaxed);
}
