/*
 * Process-shared plain and PP mutexes in glibc's format, so that processes
 * without the library lock the same bytes (mutex.h has the layout):
 *
 *   word     PP: ceiling << LLL_CEILING_SHIFT in the high bits; plain: 0
 *            there.  The low bits are the lock state:
 *              0 free, 1 held, 2 held and a thread may sleep on it.
 *   lock:    CAS 0 -> 1 (-> 2 once we have slept: others may still sleep).
 *            Held: make it 2 (CAS 1 -> 2), FUTEX_WAIT (shared) while 2.
 *   unlock:  the state to 0; FUTEX_WAKE one (shared) if it was 2.  No
 *            hand-off: a woken thread competes with newcomers, as in glibc.
 *   __owner  the holder's TID (the word does not name it), for the owner
 *            checks of ERRORCHECK and RECURSIVE and for glibc's readers.
 *   __count  1 once locked, plus one per recursive relock.
 *   __nusers one per hold (glibc's destroy reads it).
 *
 * PP: the locker raises itself to the ceiling it reads in the word before
 * it competes, and drops it again on every failure; if the ceiling changes
 * while it waits (setprioceiling), it raises to the new one, drops the old
 * one and competes again.  Unlock drops the ceiling the word holds at that
 * time (an owner's setprioceiling moved its own priority with it).
 *
 * Robust and PI process-shared kinds keep the word protocols of
 * mutex_word.h and mutex_pi.c, whose TID word is glibc's format already.
 */
#include "mutex_internal.h"
#include "mutex_word.h"
#include "priority.h"

static inline uint32_t ceiling_mask(int kind)
{
	return (kind & KIND_PP) ? LLL_CEILING_MASK : 0;
}

/* Takes the word's state from 0, leaving the ceiling bits as they are.
 * raised: the ceiling the caller runs at (PP with raise), updated when the
 * ceiling changes; NULL to take the word without the ceiling protocol.
 * Ends: every turn takes the word, returns (a try, the deadline, a failed
 * raise), spins once of a bounded count, sleeps until the word changes, or
 * starts over because another thread changed the word (a CAS failed, the
 * ceiling moved). */
static int lll_acquire(struct mutex *m, int kind, const struct lock_request *req, int *raised,
		       struct stats_wait *wait)
{
	uint32_t mask = ceiling_mask(kind);
	uint32_t taken = 1;
	bool deadline_checked = false;
	int spins = word_spins(kind, req);

	for (;;) {
		uint32_t v = atomic_load_explicit(&m->word, memory_order_relaxed);
		uint32_t base = v & mask;
		if (raised && (int)(base >> LLL_CEILING_SHIFT) != *raised) {
			/* New ceiling first, then the old one away: never
			 * below either meanwhile. */
			int ceiling = (int)(base >> LLL_CEILING_SHIFT);
			int r = priority_raise(ceiling, kind & KIND_DEFAULTED);
			if (r)
				return r;
			if (*raised >= 0)
				priority_drop(*raised);
			*raised = ceiling;
			continue;
		}
		uint32_t state = v & ~mask;
		if (state == 0) {
			if (atomic_compare_exchange_weak_explicit(&m->word, &v, base | taken, memory_order_acquire,
								  memory_order_relaxed))
				return 0;
			continue;
		}
		if (req->try)
			return EBUSY;
		if (spins > 0) {
			spins--;
			cpu_relax();
			continue;
		}
		if (!deadline_checked) {
			int r = deadline_check(req->deadline);
			if (r)
				return r;
			deadline_checked = true;
		}
		if (state == 1 && !atomic_compare_exchange_weak_explicit(&m->word, &v, base | 2, memory_order_relaxed,
									 memory_order_relaxed))
			continue;
		PROBE2(mutex_contended, m, atomic_load_explicit(&m->owner, memory_order_relaxed));
		if (wait && wait->start == 0)
			stats_wait_begin(wait, (uint32_t)atomic_load_explicit(&m->owner, memory_order_relaxed), false);
		int r = futex_wait(&m->word, base | 2, true, req->clock, req->deadline);
		if (r == ETIMEDOUT || r == EINVAL)
			return r;
		taken = 2;
	}
}

int lll_lock(struct mutex *m, int kind, uint32_t tid, const struct lock_request *req)
{
	struct stats_wait counted = { .start = 0 }, *wait = stats_enabled ? &counted : NULL;
	int raised = -1;
	int r = lll_acquire(m, kind, req, (kind & KIND_PP) ? &raised : NULL, wait);
	if (r != 0 && raised >= 0)
		priority_drop(raised);
	mutex_record_owner(m, kind, tid, r);
	if (wait)
		stats_wait_end(wait, m);
	return r;
}

/* The state to 0, keeping the ceiling; the word it held. */
static uint32_t lll_release(struct mutex *m, int kind)
{
	uint32_t mask = ceiling_mask(kind);
	uint32_t old;
	if (!mask) {
		old = atomic_exchange_explicit(&m->word, 0, memory_order_release);
	} else {
		/* Ends: only a setprioceiling owner changes the ceiling bits,
		 * and lockers move the state 1 -> 2, once. */
		old = atomic_load_explicit(&m->word, memory_order_relaxed);
		while (!atomic_compare_exchange_weak_explicit(&m->word, &old, old & mask, memory_order_release,
							      memory_order_relaxed))
			;
	}
	if ((old & ~mask) > 1)
		futex_wake(&m->word, 1, true);
	return old;
}

/* 0, or the error of a PP drop the scheduler refused (the word is
 * released either way). */
int lll_unlock(struct mutex *m, int kind)
{
	mutex_record_release(m, kind);
	uint32_t old = lll_release(m, kind);
	return (kind & KIND_PP) ? priority_drop((int)(old >> LLL_CEILING_SHIFT)) : 0;
}

/* Moves the ceiling bits to ceiling, keeping the state.  Ends: the CAS
 * fails only when a locker changed the state meanwhile (1 -> 2). */
static void lll_store_ceiling(struct mutex *m, int ceiling)
{
	uint32_t v = atomic_load_explicit(&m->word, memory_order_relaxed);
	while (!atomic_compare_exchange_weak_explicit(&m->word, &v,
						      (v & ~LLL_CEILING_MASK) | ((uint32_t)ceiling << LLL_CEILING_SHIFT),
						      memory_order_relaxed, memory_order_relaxed))
		;
}

/* As rt_mutex_setprioceiling (mutex_pp.c) does for our format: the owner
 * changes it in place, with its priority; anyone else takes the word
 * without the ceiling protocol, changes it, and gives the word back. */
int lll_setprioceiling(struct mutex *m, int kind, int ceiling, int *old_ceiling)
{
	int old = (int)(atomic_load_explicit(&m->word, memory_order_relaxed) >> LLL_CEILING_SHIFT);
	if (mutex_owned(m, kind, self_tid())) {
		int r = priority_raise(ceiling, kind & KIND_DEFAULTED);
		if (r)
			return r;
		r = priority_drop(old);
		if (r)
			return r;
		lll_store_ceiling(m, ceiling);
	} else {
		struct lock_request req = { .try = false, .clock = CLOCK_REALTIME, .deadline = NULL };
		int r = lll_acquire(m, kind, &req, NULL, NULL);
		if (r)
			return r;
		old = (int)(atomic_load_explicit(&m->word, memory_order_relaxed) >> LLL_CEILING_SHIFT);
		lll_store_ceiling(m, ceiling);
		lll_release(m, kind);
	}
	if (old_ceiling)
		*old_ceiling = old;
	return 0;
}
