/*
 * Priority inheritance: the word is the kernel's PI futex word (owner TID
 * | FUTEX_WAITERS | FUTEX_OWNER_DIED), taken and released by CAS when
 * uncontended and by FUTEX_LOCK_PI / FUTEX_UNLOCK_PI otherwise.  Blocked
 * lockers sleep on the kernel's rt_mutex, which boosts the owner and hands
 * the word over directly (no barging: the kernel writes the new owner's
 * TID), highest priority first.
 *
 * Robust PI: entries carry bit 0 in the robust list; at the owner's death
 * the kernel gives the word to the top waiter with OWNER_DIED set, or, with
 * no waiter, leaves OWNER_DIED alone in the word for the next locker's
 * FUTEX_LOCK_PI to take over.  An unrecoverable PI mutex cannot simply
 * hold WORD_NOTRECOVERABLE while the kernel has waiters queued on it:
 * unlock hands it to the top waiter, which sees __owner
 * OWNER_NOTRECOVERABLE, passes it on the same way and returns
 * ENOTRECOVERABLE; the last one out leaves WORD_NOTRECOVERABLE in the word
 * (a TID no task has: FUTEX_LOCK_PI on it fails with ESRCH, and we report
 * ENOTRECOVERABLE).  In glibc's format (process-shared) the last one out
 * leaves 0, as glibc does, and lockers look at __owner first.
 *
 * An owner that died without the kernel cleaning the word (a non-robust
 * one, or a robust one that died before linking the mutex) leaves its TID
 * there.  The kernel hands such a mutex to the waiters queued at the
 * death; a later FUTEX_LOCK_PI fails with ESRCH, and the locker takes the
 * word over with OWNER_DIED itself: the same outcome on both paths, 0 for
 * a non-robust mutex and EOWNERDEAD for a robust one, never a retry loop.
 * (glibc blocks such a locker for ever.)
 *
 * A convertible mutex (PI from the configuration, mutex_internal.h) may
 * turn plain at any time: a thread that does not hold it unlocks it
 * (mutex.c, mutex_unlock_foreign).  That thread cannot give the word to
 * the lockers asleep in FUTEX_LOCK_PI (FUTEX_UNLOCK_PI by a non-owner is
 * EPERM, and no futex operation wakes a PI waiter otherwise), so they do
 * not sleep for ever: each sleep ends after CONVERTIBLE_POLL_NS, and a
 * locker that wakes and finds the mutex plain leaves the PI protocol:
 *   - without the word: it wakes every plain sleeper on the word (a
 *     FUTEX_WAKE meant for them failed with EINVAL while PI waiters were
 *     queued, so a wake-up may be owed) and locks again as plain;
 *   - with the word (the kernel gave it): it sets WAITERS in it, since
 *     plain sleepers may be queued behind it and its plain unlock must
 *     wake one.
 * The last PI waiter to leave thus wakes every plain sleeper after the
 * kernel's queue is empty; no new PI waiter comes after the conversion
 * but those that read the kind before it, and each of them leaves the
 * same way within one period.  A mutex that never turns plain costs one
 * wake-up per period per waiter that sleeps that long, and such a waiter
 * queues again behind its equals.
 */
#include <limits.h>

#include "clock.h"
#include "mutex_internal.h"
#include "probe.h"
#include "stats.h"
#include "robust.h"

static int pi_kernel_lock(struct mutex *m, bool shared, const struct lock_request *req)
{
	if (req->try)
		return futex_trylock_pi(&m->word, shared);
	int r = futex_lock_pi(&m->word, shared, req->clock, req->deadline);
	if (r == ENOSYS && req->clock == CLOCK_MONOTONIC && req->deadline) {
		/* Kernel before 5.14: no LOCK_PI2; LOCK_PI only knows REALTIME. */
		struct timespec realtime = deadline_convert(req->deadline, CLOCK_MONOTONIC, CLOCK_REALTIME);
		r = futex_lock_pi(&m->word, shared, CLOCK_REALTIME, &realtime);
	}
	return r;
}

/* The word is ours (the kernel wrote our TID): take OWNER_DIED out of it. */
static int pi_owner_died(struct mutex *m, bool robust)
{
	uint32_t v = atomic_load_explicit(&m->word, memory_order_relaxed);
	if (!(v & WORD_OWNER_DIED))
		return 0;
	atomic_fetch_and_explicit(&m->word, ~WORD_OWNER_DIED, memory_order_relaxed);
	return robust ? EOWNERDEAD : 0;
}

/*
 * The one take-over of a dead owner's word (mutex_internal.h): by a locker
 * after FUTEX_LOCK_PI said ESRCH (tid its own), or by a condition's mover
 * after FUTEX_CMP_REQUEUE_PI did (tid 0: the kernel hands the word to the
 * sleeper it moves).  The kernel gives such a mutex to the waiters that
 * were already queued when the owner died; a locker that comes later
 * takes it over here the same way.  Acquire: a locker owns the word on
 * success.
 */
bool pi_take_from_dead_owner(struct mutex *m, uint32_t tid)
{
	uint32_t v = atomic_load_explicit(&m->word, memory_order_relaxed);
	if ((v & WORD_TID_MASK) == 0 || (v & WORD_TID_MASK) == tid || v == WORD_NOTRECOVERABLE)
		return false;
	return atomic_compare_exchange_strong_explicit(&m->word, &v, tid | (v & WORD_WAITERS) | WORD_OWNER_DIED,
						       memory_order_acquire, memory_order_relaxed);
}

/*
 * Before FUTEX_LOCK_PI: wait a bounded while for the owner to let go, and
 * take the word with the CAS.  Why: once a locker is queued, every unlock
 * is a FUTEX_UNLOCK_PI that hands the word to it, and the kernel leaves
 * WAITERS in the word it hands over even when nobody else is queued.  Two
 * threads that take a short critical section in turn then convoy through
 * the kernel: each finds the word with WAITERS, queues, and is handed the
 * word with WAITERS again, two system calls and a hand-off per pair for
 * as long as their timing holds (hundreds to thousands of pairs on a VM,
 * started by any interrupt that stretches one critical section).  A
 * locker that waits here for the owner's release never queues: the
 * owner's unlock (a CAS, or FUTEX_UNLOCK_PI with nobody queued) leaves 0,
 * and the locker takes it, so the pair leaves the kernel at once.
 *
 * The spin watches one owner, the one it found.  If the word goes to
 * another thread with WAITERS, the owner handed it to a queued locker: the
 * kernel's queue decides from then on, in priority order, and the spinner
 * joins it.  A spin is thus the same as arriving up to mutex_short_spins
 * pauses later; no thread queued before it loses its turn, and a
 * high-priority locker whose owner cannot run boosts it after that bound.
 * No spin when the owner took the word on the CPU the locker runs on
 * (mutex_stamp_cpu): it cannot run while the locker spins there, unless
 * it moved since, and the locker boosts it at once instead.  Ends: the
 * count (0 on one CPU).  true if it took the word.
 */
static bool pi_spin(struct mutex *m, uint32_t tid, uint32_t owner)
{
	/* Acquire: the owner named in the word took it after the last release,
	 * which cleared owner_cpu first (pi_release); so the hint read here is
	 * that owner's or 0 (not stamped yet: spin), never a former owner's. */
	atomic_thread_fence(memory_order_acquire);
	uint16_t cpu = self_cpu_hint();
	if (cpu != 0 && cpu == atomic_load_explicit(&m->owner_cpu, memory_order_relaxed))
		return false;
	for (int spins = mutex_short_spins; spins > 0; spins--) {
		cpu_relax();
		uint32_t v = atomic_load_explicit(&m->word, memory_order_relaxed);
		if (v == 0) {
			if (atomic_compare_exchange_strong_explicit(&m->word, &v, tid, memory_order_acquire,
								    memory_order_relaxed))
				return true;
		} else if ((v & WORD_TID_MASK) != owner && (v & WORD_WAITERS)) {
			return false;
		} else if ((v & WORD_TID_MASK) == 0) {
			return false; /* OWNER_DIED: only the kernel hands it over */
		}
	}
	return false;
}

/* now + ns on clock, or the caller's deadline if that comes first. */
static const struct timespec *poll_deadline(const struct lock_request *req, struct timespec *poll)
{
	clock_gettime(req->clock, poll);
	poll->tv_nsec += CONVERTIBLE_POLL_NS;
	if (poll->tv_nsec >= 1000000000) {
		poll->tv_nsec -= 1000000000;
		poll->tv_sec++;
	}
	if (req->deadline && (req->deadline->tv_sec < poll->tv_sec ||
			      (req->deadline->tv_sec == poll->tv_sec && req->deadline->tv_nsec <= poll->tv_nsec)))
		return req->deadline;
	return poll;
}

/* A convertible mutex turned plain while we were in the PI protocol (r:
 * what the kernel said last, 0 if it gave us the word). */
static int pi_left_for_plain(struct mutex *m, int kind, int r)
{
	bool shared = kind_shared(kind);
	if (r == 0) {
		pi_owner_died(m, false); /* not robust: OWNER_DIED only goes */
		atomic_fetch_or_explicit(&m->word, WORD_WAITERS, memory_order_relaxed);
		return 0;
	}
	futex_wake(&m->word, INT_MAX, shared);
	return PI_TURNED_PLAIN;
}

static bool turned_plain(struct mutex *m, int kind)
{
	return kind_convertible(kind) && !(mutex_kind(m) & KIND_PI);
}

/* wait: where to count a sleep (statistics on), or NULL. */
static int pi_acquire(struct mutex *m, int kind, uint32_t tid, const struct lock_request *req,
		      struct stats_wait *wait)
{
	bool shared = kind_shared(kind);
	bool robust = kind & KIND_ROBUST;
	bool deadline_checked = false;

	/* Ends: each turn blocks in the kernel until the word is ours, the
	 * deadline passes, or an error is final; it turns again only when
	 * the word changed under us (another thread's progress), or, for a
	 * convertible mutex, when a poll period is over (a sleep of its own:
	 * the loop ends when the owner releases or the mutex turns plain). */
	for (;;) {
		uint32_t v = 0;
		if (turned_plain(m, kind))
			return pi_left_for_plain(m, kind, EAGAIN);
		if (atomic_compare_exchange_strong_explicit(&m->word, &v, tid, memory_order_acquire,
							    memory_order_relaxed))
			return 0;
		if (robust && v == WORD_NOTRECOVERABLE)
			return ENOTRECOVERABLE;
		/* Held by someone else: only the kernel can take it over (a
		 * free word with OWNER_DIED or WAITERS left in it included). */
		if (req->try && (v & WORD_TID_MASK) != 0)
			return EBUSY;
		if (!req->try && (v & WORD_TID_MASK) != 0 && pi_spin(m, tid, v & WORD_TID_MASK))
			return 0;
		if (!req->try && !deadline_checked) {
			int r = deadline_check(req->deadline);
			if (r)
				return r;
			deadline_checked = true;
		}
		if ((v & WORD_TID_MASK) == 0)
			mutex_forget_ancestor_owner(m); /* the kernel may give it to us */
		if (!req->try) {
			PROBE2(mutex_contended, m, v & WORD_TID_MASK);
			PROBE2(pi_boost, m, v & WORD_TID_MASK);
			if (wait)
				stats_wait_begin(wait, v & WORD_TID_MASK, true);
		}
		struct lock_request polled = *req;
		struct timespec poll;
		bool polling = kind_convertible(kind) && !req->try;
		if (polling)
			polled.deadline = poll_deadline(req, &poll);
		int r = pi_kernel_lock(m, shared, &polled);
		if (turned_plain(m, kind))
			return pi_left_for_plain(m, kind, r);
		if (polling && r == ETIMEDOUT && polled.deadline == &poll)
			continue; /* a period is over: look again */
		switch (r) {
		case 0:
			return pi_owner_died(m, robust);
		case EAGAIN:	/* owner exiting, or (trylock) held: */
			if (req->try)
				return EBUSY;
			continue;
		case EINTR:
			continue;
		case ESRCH:
			if (robust && atomic_load_explicit(&m->word, memory_order_relaxed) == WORD_NOTRECOVERABLE)
				return ENOTRECOVERABLE;
			mutex_forget_ancestor_owner(m);
			if (!pi_take_from_dead_owner(m, tid))
				continue; /* the word changed: another thread got further */
			return pi_owner_died(m, robust);
		case EDEADLK:
			if (req->try)
				return EBUSY;
			if (!polling)
				return sleep_until(req->clock, req->deadline);
			/* Our own: only a foreign unlock frees it (a semaphore). */
			r = sleep_until(req->clock, polled.deadline);
			if (r == ETIMEDOUT && polled.deadline == &poll)
				continue;
			return r;
		default:
			return r; /* ETIMEDOUT, EINVAL */
		}
	}
}

static void pi_release(struct mutex *m, bool shared, uint32_t tid, uint32_t value)
{
	/* Before the word goes (the release orders it): a locker that sees the
	 * next owner's TID finds that owner's CPU or 0, never ours. */
	atomic_store_explicit(&m->owner_cpu, 0, memory_order_relaxed);
	uint32_t expected = tid;
	if (!atomic_compare_exchange_strong_explicit(&m->word, &expected, value, memory_order_release,
						     memory_order_relaxed)) {
		/* Only the owner releases, and the kernel hands the word to
		 * the top waiter (FUTEX_UNLOCK_PI fails only for a non-owner). */
		DEBUG_ASSERT((expected & WORD_TID_MASK) == tid);
		int r = futex_unlock_pi(&m->word, shared);
		DEBUG_ASSERT(r == 0);
		(void)r;
	}
}

/* Robust bookkeeping once pi_acquire or the kernel settled: r is 0 or
 * EOWNERDEAD when the caller owns the word. */
static int pi_robust_finish(struct mutex *m, int kind, uint32_t tid, int r)
{
	if ((r == 0 || r == EOWNERDEAD) &&
	    atomic_load_explicit(&m->owner, memory_order_relaxed) == OWNER_NOTRECOVERABLE) {
		/* Handed over by an unlock that made it unrecoverable (or, in
		 * glibc's format, free but unrecoverable): pass it on. */
		pi_release(m, true, tid, kind_glibc_format(kind) ? 0 : WORD_NOTRECOVERABLE);
		r = ENOTRECOVERABLE;
	} else if (r == 0 || r == EOWNERDEAD) {
		robust_enqueue(robust_head(), m, true);
	}
	robust_pending_clear(robust_head());
	return r;
}

int pi_lock(struct mutex *m, int kind, uint32_t tid, const struct lock_request *req)
{
	struct stats_wait counted = { .start = 0 }, *wait = stats_enabled ? &counted : NULL;
	int r;
	if (!(kind & KIND_ROBUST)) {
		r = pi_acquire(m, kind, tid, req, wait);
	} else if (kind_glibc_format(kind) &&
		   atomic_load_explicit(&m->owner, memory_order_relaxed) == OWNER_NOTRECOVERABLE) {
		r = ENOTRECOVERABLE; /* a free word in glibc's format: see mutex_word.h */
	} else {
		robust_pending_set(robust_head(), m, true);
		r = pi_robust_finish(m, kind, tid, pi_acquire(m, kind, tid, req, wait));
	}
	mutex_record_owner(m, kind, tid, r);
	if (r == 0 || r == EOWNERDEAD)
		mutex_stamp_cpu(m);
	if (wait)
		stats_wait_end(wait, m);
	return r;
}

/* A robust one that is inconsistent is pi_unlock's too. */
int mutex_unlock_pi_private(struct mutex *m, int kind)
{
	uint32_t tid = mutex_owned_private(m);
	if (!tid)
		return mutex_unlock_slow(m);
	if (m->depth > 0) {
		m->depth--;
		return 0;
	}
	pi_unlock(m, kind, tid);
	return 0;
}

/* After FUTEX_WAIT_REQUEUE_PI made the caller the owner of a PI mutex
 * (robust_pending_set already done for a robust one): the bookkeeping
 * pi_lock would have done.  0, EOWNERDEAD or ENOTRECOVERABLE. */
static int pi_taken_by_kernel(struct mutex *m, int kind, uint32_t tid)
{
	bool robust = kind & KIND_ROBUST;
	int r = pi_owner_died(m, robust);
	r = robust ? pi_robust_finish(m, kind, tid, r) : r;
	mutex_record_owner(m, kind, tid, r);
	if (r == 0 || r == EOWNERDEAD)
		mutex_stamp_cpu(m);
	if (r == EOWNERDEAD)
		event_owner_died(m);
	return r;
}

/* The door's attach after requeue-PI (mutex_cond.h).  The kernel gave us
 * the mutex if the word names us; else we lock it ourselves, whatever the
 * wait's deadline. */
int mutex_cond_attach_pi(struct mutex *m, int kind, uint32_t saved)
{
	if ((atomic_load_explicit(&m->word, memory_order_relaxed) & WORD_TID_MASK) != self_tid()) {
		if (kind & KIND_ROBUST)
			robust_pending_clear(robust_head());
		return mutex_cond_attach(m, saved, false);
	}
	int r = pi_taken_by_kernel(m, kind, self_tid());
	if (r == 0 || r == EOWNERDEAD)
		mutex_set_extra_holds(m, kind, saved);
	return r;
}

void pi_unlock(struct mutex *m, int kind, uint32_t tid)
{
	bool shared = kind_shared(kind);
	if (!(kind & KIND_ROBUST)) {
		mutex_record_release(m, kind);
		pi_release(m, shared, tid, 0);
		return;
	}
	uint32_t value = 0;
	if (atomic_load_explicit(&m->owner, memory_order_relaxed) == OWNER_INCONSISTENT) {
		if (kind_glibc_format(kind))
			m->nusers--;
		else
			value = WORD_NOTRECOVERABLE;
		atomic_store_explicit(&m->owner, OWNER_NOTRECOVERABLE, memory_order_relaxed);
	} else {
		mutex_record_release(m, kind);
	}
	struct robust_head *head = robust_head();
	robust_pending_set(head, m, true);
	robust_dequeue(m);
	pi_release(m, shared, tid, value);
	robust_pending_clear(head);
}
