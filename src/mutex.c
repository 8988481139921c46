/*
 * Mutexes: init/destroy and the dispatch of lock and unlock to the
 * protocol of each kind: the word protocol (mutex_word.h) for plain and
 * robust mutexes, mutex_pi.c for PI, mutex_pp.c for PP.
 */
#include "attr.h"
#include "clock.h"
#include "mutex_internal.h"
#include "mutex_word.h"
#include "robust.h"

int mutex_init(struct mutex *m, const pthread_mutexattr_t *attr)
{
	unsigned value = attr ? attr_value(attr) : 0;
	int protocol = (int)((value & MUTEXATTR_PROTOCOL_MASK) >> MUTEXATTR_PROTOCOL_SHIFT);
	int kind = (int)(value & MUTEXATTR_TYPE_MASK);

	if (protocol == PTHREAD_PRIO_INHERIT)
		kind |= KIND_PI;
	else if (protocol == PTHREAD_PRIO_PROTECT)
		kind |= KIND_PP;
	else if (protocol != PTHREAD_PRIO_NONE)
		return EINVAL;
	if (value & MUTEXATTR_ROBUST)
		kind |= KIND_ROBUST;
	if (value & MUTEXATTR_PSHARED)
		kind |= KIND_PSHARED;

	atomic_store_explicit(&m->word, 0, memory_order_relaxed);
	m->depth = 0;
	atomic_store_explicit(&m->robust, ROBUST_CONSISTENT, memory_order_relaxed);
	atomic_store_explicit(&m->ceiling, (uint16_t)mutexattr_ceiling(value), memory_order_relaxed);
	m->owner_ceiling = 0;
	m->spins = 0;
	m->unused = 0;
	m->link.prev = NULL;
	m->link.next = NULL;
	atomic_store_explicit(&m->kind, kind, memory_order_release);
	return 0;
}

int mutex_destroy(struct mutex *m)
{
	int kind = mutex_kind(m);
	if (!kind_valid(kind))
		return EINVAL;
	uint32_t word = atomic_load_explicit(&m->word, memory_order_relaxed);
	if ((word & WORD_TID_MASK) != 0 && word != WORD_NOTRECOVERABLE)
		return EBUSY;
	atomic_store_explicit(&m->kind, KIND_DESTROYED, memory_order_relaxed);
	return 0;
}

int mutex_consistent(struct mutex *m)
{
	int kind = mutex_kind(m);
	if (!kind_valid(kind) || !(kind & KIND_ROBUST))
		return EINVAL;
	if ((atomic_load_explicit(&m->word, memory_order_relaxed) & WORD_TID_MASK) != self_tid() ||
	    atomic_load_explicit(&m->robust, memory_order_relaxed) != ROBUST_INCONSISTENT)
		return EINVAL;
	atomic_store_explicit(&m->robust, ROBUST_CONSISTENT, memory_order_relaxed);
	return 0;
}

/*
 * The caller already holds m.  RECURSIVE counts, ERRORCHECK refuses; a
 * NORMAL or ADAPTIVE mutex deadlocks as POSIX says, but on its word, so
 * that another thread's unlock releases it as in glibc (rt-tests'
 * ptsematest relocks its own mutex and has it unlocked by the receiver).
 * Returns -1 for "go on and wait on the word".
 */
static int relock(struct mutex *m, int kind, const struct lock_request *req)
{
	switch (kind_type(kind)) {
	case PTHREAD_MUTEX_RECURSIVE:
		if (m->depth == UINT32_MAX)
			return EAGAIN;
		m->depth++;
		return 0;
	case PTHREAD_MUTEX_ERRORCHECK:
		return req->try ? EBUSY : EDEADLK;
	default:
		if (req->try)
			return EBUSY;
		if (kind & (KIND_PI | KIND_PP | KIND_ROBUST)) {
			/* Only the owner can unlock these: wait for ever. */
			int r = deadline_check(req->deadline);
			return r ? r : sleep_until(req->clock, req->deadline);
		}
		return -1;
	}
}

static int mutex_acquire(struct mutex *m, const struct lock_request *req)
{
	int kind = mutex_kind(m);
	if (!kind_valid(kind))
		return EINVAL;
	uint32_t tid = self_tid();
	if ((atomic_load_explicit(&m->word, memory_order_relaxed) & WORD_TID_MASK) == tid) {
		int r = relock(m, kind, req);
		if (r >= 0)
			return r;
	}
	if (kind & KIND_PI)
		return pi_lock(m, kind, tid, req);
	if (kind & KIND_PP)
		return pp_lock(m, kind, tid, req);
	return word_lock(m, kind, tid, req);
}

/*
 * The uncontended lock of a robust mutex (no PI, no PP): the CAS between
 * the pending mark and the list link, without the request machinery.
 * Anything else (held, OWNER_DIED, NOTRECOVERABLE) goes the long way.
 */
static inline __attribute__((always_inline)) bool robust_take_free(struct mutex *m, int kind)
{
	if ((kind & ~(KIND_TYPE_MASK | KIND_PSHARED | KIND_ELISION)) != KIND_ROBUST)
		return false;
	uint32_t expected = 0;
	struct robust_head *head = robust_head();
	robust_pending_set(head, m, false);
	bool taken = atomic_compare_exchange_strong_explicit(&m->word, &expected, self_tid(),
							     memory_order_acquire, memory_order_relaxed);
	if (taken)
		robust_enqueue(head, m, false);
	robust_pending_clear(head);
	return taken;
}

int mutex_lock_slow(struct mutex *m, clockid_t clock, const struct timespec *deadline)
{
	if (robust_take_free(m, mutex_kind(m)))
		return 0;
	struct lock_request req = { .try = false, .clock = clock, .deadline = deadline };
	return mutex_acquire(m, &req);
}

/*
 * Pipelined hand-off: a broadcast leaves the other waiters asleep on this
 * word, to be woken one per unlock.  Waking the next one as soon as we own
 * the word overlaps its wake-up latency (an idle CPU's exit from idle, on a
 * VM tens of microseconds) with our critical section instead of adding it
 * after: at most two of them are ever awake for the word, never a herd.
 * PI words are handed over by the kernel and need none of this.
 */
int mutex_cond_relock(struct mutex *m, bool contended)
{
	struct lock_request req = { .try = false, .contended = contended, .clock = CLOCK_REALTIME };
	int r = mutex_acquire(m, &req);
	int kind = mutex_kind(m);
	if ((r == 0 || r == EOWNERDEAD) && !(kind & KIND_PI) &&
	    (atomic_load_explicit(&m->word, memory_order_relaxed) & WORD_WAITERS))
		futex_wake(&m->word, 1, kind_shared(kind));
	return r;
}

int mutex_trylock_slow(struct mutex *m)
{
	if (robust_take_free(m, mutex_kind(m)))
		return 0;
	struct lock_request req = { .try = true, .clock = CLOCK_REALTIME, .deadline = NULL };
	return mutex_acquire(m, &req);
}

int mutex_timedlock(struct mutex *m, clockid_t clock, const struct timespec *deadline)
{
	return mutex_take_free(m) ? 0 : mutex_lock_slow(m, clock, deadline);
}

int mutex_unlock_slow(struct mutex *m)
{
	int kind = mutex_kind(m);
	if (!kind_valid(kind))
		return EINVAL;
	uint32_t tid = self_tid();
	/* Only NORMAL/ADAPTIVE without PI or robustness reach the fast path;
	 * everything here checks the owner, as glibc does (PP included: a
	 * non-owner cannot give back a ceiling it never took). */
	if ((atomic_load_explicit(&m->word, memory_order_relaxed) & WORD_TID_MASK) != tid)
		return EPERM;
	if (m->depth > 0) {
		m->depth--;
		return 0;
	}
	if (kind & KIND_PI)
		pi_unlock(m, kind, tid);
	else if (kind & KIND_PP)
		pp_unlock(m, kind);
	else
		word_unlock(m, kind);
	return 0;
}
