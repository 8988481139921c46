/*
 * Masked waits: many channels on one condition variable, and waits for
 * any of several conditions (the rtpthread.h extensions).
 *
 * A masked waiter sleeps on the condition's `generation` word with
 * FUTEX_WAIT_BITSET and its mask as the bit set.  A masked wake moves
 * generation on and wakes with FUTEX_WAKE_BITSET and its own mask: the
 * kernel wakes only the sleepers whose mask meets it, highest priority
 * first, and leaves the others asleep.
 *
 *   wait    holding the mutex: COND_MASKED set, counted in waiters,
 *           generation read (its registration); unlock; sleep while
 *           generation equals the registration.
 *   wake    if anybody is inside: generation + 2 (bit 0 stays clear: see
 *           cond_internal.h), then wake every sleeper the mask meets.
 *   return  when the kernel woke it with generation moved on, or when
 *           generation moved before it slept (EAGAIN: it cannot tell
 *           whose mask that was, and returns; a spurious wake-up, but no
 *           sleep).  Woken with generation unchanged: the wake was for
 *           waiters that registered before it, who are all woken too;
 *           it sleeps again.
 *
 * Why no wake-up is lost.  A wake that comes after a waiter's unlock
 * moves generation past the registration (read before that unlock, so
 * coherence orders the increment after it): the waiter sees the change
 * before it sleeps, or is asleep when the wake looks for it.
 *
 * Why every sleeper the mask meets, for a signal too.  A wake is not
 * counted against any waiter, so nothing tells a sleeper that registered
 * after the increment from one that registered before; waking only one
 * could pick the later and leave the earlier asleep.  Waking all of them
 * loses none and needs no hand-over (POSIX lets a signal wake more than
 * one).  A masked wake-up is never consumed: a waiter woken by two
 * conditions at once takes nothing from anybody, so nothing is passed on.
 *
 * Wait for any: one registration on each condition and one futex_waitv(2)
 * on all their generation words.  It takes one mutex because a waiter
 * must release exactly one lock after registering everywhere: with one
 * mutex per condition a wake-up could come between two unlocks, or the
 * waiter would have to hold them all, in some order, to register.
 *
 * No requeue onto the mutex: FUTEX_CMP_REQUEUE ignores bit sets and would
 * move sleepers the mask does not meet.  Woken waiters take the mutex
 * themselves (on the kernel's rt_mutex for a PI mutex).
 */
#include <limits.h>

#include "api.h"
#include "clock.h"
#include "cond_internal.h"
#include "rtpthread.h"

_Static_assert(RTPTHREAD_WAITANY_MAX == FUTEX_WAITV_MAX, "the public limit is the kernel's");

void cond_mask_wake(struct cond *c, uint32_t mask)
{
	/* A waiter is counted before it unlocks the mutex: a wake that
	 * comes after that unlock sees it. */
	if (!cond_inside(c))
		return;
	atomic_fetch_add_explicit(&c->generation, COND_GENERATION_STEP, memory_order_relaxed);
	futex_wake_bits(&c->generation, INT_MAX, mask, cond_pshared(c), NULL);
}

/* Counts the caller in as a masked waiter and returns its registration.
 * The flag is set first: a signal that sees the registration sees it. */
static uint32_t mask_register(struct cond *c)
{
	if (!(atomic_load_explicit(&c->flags, memory_order_relaxed) & COND_MASKED))
		atomic_fetch_or_explicit(&c->flags, COND_MASKED, memory_order_relaxed);
	atomic_fetch_add_explicit(&c->waiters, 1, memory_order_relaxed);
	return atomic_load_explicit(&c->generation, memory_order_relaxed);
}

static bool mask_moved(struct cond *c, uint32_t registered)
{
	return atomic_load_explicit(&c->generation, memory_order_acquire) != registered;
}

/* Takes the mutex back, at the depth it had. */
static int mask_relock(struct mutex *m, uint32_t depth, int result)
{
	int e = mutex_cond_attach(m, depth, false);
	return e ? e : result;
}

struct mask_wait {
	struct cond *c;
	struct mutex *m;
	uint32_t depth;
	uint32_t mask;
	uint32_t registered;
	clockid_t clock;
	const struct timespec *deadline;
};

/* One sleep on generation (cond_sleep_cancellable). */
static int mask_futex_wait(void *arg)
{
	struct mask_wait *w = arg;
	return futex_wait_bits(&w->c->generation, w->registered, w->mask, cond_pshared(w->c), w->clock, w->deadline);
}

/* 0 once generation moved on, or ETIMEDOUT.  A kernel time-out means no
 * wake the mask meets came while it slept, and generation was unchanged
 * when it lay down.  Ends: a turn that neither returns nor times out was
 * a wake for earlier waiters or a handler, each an event from outside. */
static int mask_sleep(struct mask_wait *w)
{
	for (;;) {
		int r = cond_sleep_cancellable(mask_futex_wait, w);
		if (r == ETIMEDOUT || r == EINVAL)
			return r; /* EINVAL: nothing but a broken object gives it */
		if (mask_moved(w->c, w->registered))
			return 0;
	}
}

static void mask_cancelled(void *arg)
{
	struct mask_wait *w = arg;
	cond_leave_many(w->c, 1);
	mask_relock(w->m, w->depth, 0);
}

int cond_wait_mask(struct cond *c, struct mutex *m, uint32_t mask, clockid_t clock, const struct timespec *deadline)
{
	pthread_testcancel();
	struct mask_wait w = { .c = c, .m = m, .mask = mask, .clock = clock, .deadline = deadline };
	w.registered = mask_register(c);
	w.depth = mutex_cond_detach(m);

	int r;
	pthread_cleanup_push(mask_cancelled, &w);
	r = mask_sleep(&w);
	pthread_cleanup_pop(0);
	cond_leave_many(c, 1); /* our last touch of c */
	return mask_relock(m, w.depth, r);
}

int rt_cond_wait_mask(pthread_cond_t *cond, pthread_mutex_t *mutex, uint32_t mask, clockid_t clock,
		      const struct timespec *deadline, int use_attr_clock)
{
	struct cond *c = cond_of(cond);
	struct mutex *m = mutex_of(mutex);
	if (mask == 0 || (!use_attr_clock && !clock_supported(clock)))
		return EINVAL;
	struct wait_check check = cond_wait_check(c, m, deadline);
	if (check.error)
		return check.error;
	if (use_attr_clock)
		clock = (check.flags & COND_MONOTONIC) ? CLOCK_MONOTONIC : CLOCK_REALTIME;
	return cond_wait_mask(c, m, mask, clock, deadline);
}

/* futex_waitv(2) exists (5.16): asked once, with no words, which the
 * kernel refuses with EINVAL where it has the call. */
static bool waitv_supported(void)
{
	static _Atomic int known; /* 0 unknown, 1 yes, 2 no */
	int k = atomic_load_explicit(&known, memory_order_relaxed);
	if (k == 0) {
		int woken;
		k = futex_waitv(NULL, 0, CLOCK_MONOTONIC, NULL, &woken) == ENOSYS ? 2 : 1;
		atomic_store_explicit(&known, k, memory_order_relaxed);
	}
	return k == 1;
}

struct any_wait {
	pthread_cond_t *const *conds;
	unsigned count;
	struct mutex *m;
	uint32_t depth;
	clockid_t clock;
	const struct timespec *deadline;
	struct futex_waitv words[FUTEX_WAITV_MAX]; /* .val: each registration */
};

/* The first condition whose generation moved on, or -1. */
static int any_fired(struct any_wait *w)
{
	for (unsigned i = 0; i < w->count; i++)
		if (mask_moved(cond_of(w->conds[i]), (uint32_t)w->words[i].val))
			return (int)i;
	return -1;
}

static void any_leave(struct any_wait *w)
{
	for (unsigned i = 0; i < w->count; i++)
		cond_leave_many(cond_of(w->conds[i]), 1);
}

/* One sleep on every generation word (cond_sleep_cancellable). */
static int any_futex_wait(void *arg)
{
	struct any_wait *w = arg;
	int woken;
	return futex_waitv(w->words, w->count, w->clock, w->deadline, &woken);
}

/* The index of a condition that fired, or -ETIMEDOUT.  Ends as
 * mask_sleep does. */
static int any_sleep(struct any_wait *w)
{
	for (;;) {
		int r = cond_sleep_cancellable(any_futex_wait, w);
		if (r == ETIMEDOUT || r == EINVAL)
			return -r;
		int fired = any_fired(w);
		if (fired >= 0)
			return fired;
	}
}

static void any_cancelled(void *arg)
{
	struct any_wait *w = arg;
	any_leave(w);
	mask_relock(w->m, w->depth, 0);
}

int rt_cond_waitany(pthread_cond_t *const *conds, unsigned count, pthread_mutex_t *mutex, clockid_t clock,
		    const struct timespec *deadline, unsigned *index)
{
	if (!conds || !mutex || count == 0 || count > FUTEX_WAITV_MAX || !clock_supported(clock))
		return EINVAL;
	struct mutex *m = mutex_of(mutex);
	for (unsigned i = 0; i < count; i++) {
		if (!conds[i])
			return EINVAL;
		int error = cond_wait_check(cond_of(conds[i]), m, deadline).error;
		if (error)
			return error;
	}
	if (!waitv_supported())
		return ENOSYS;

	pthread_testcancel();
	struct any_wait w = { .conds = conds, .count = count, .m = m, .clock = clock, .deadline = deadline };
	for (unsigned i = 0; i < count; i++) {
		struct cond *c = cond_of(conds[i]);
		w.words[i] = futex_waitv_entry(&c->generation, mask_register(c), cond_pshared(c));
	}
	w.depth = mutex_cond_detach(m);

	int fired;
	pthread_cleanup_push(any_cancelled, &w);
	fired = any_sleep(&w);
	pthread_cleanup_pop(0);
	any_leave(&w); /* our last touch of the conditions */
	if (fired >= 0 && index)
		*index = (unsigned)fired;
	return mask_relock(m, w.depth, fired >= 0 ? 0 : -fired);
}
