/*
 * Condition variables on one futex word, woken in the kernel's order
 * (highest priority first, FIFO among equals) and moved onto the mutex by
 * requeue instead of woken in a herd.
 *
 * Fields (all-zero = PTHREAD_COND_INITIALIZER: private, CLOCK_REALTIME):
 *   seq      the futex word waiters sleep on; +1 by every signal or
 *            broadcast that finds a waiter.
 *   pending  waiters that no signal or broadcast has yet been sent to.
 *   waiters  threads between registration and leaving the condition (what
 *            destroy waits for), | COND_DESTROYING while destroy waits.
 *   flags    COND_PSHARED, COND_MONOTONIC from the attribute.
 *   mutex    the waiters' mutex: the requeue target (private conditions:
 *            in a process-shared one the address means nothing elsewhere).
 *
 * A waiter, holding the mutex, reads seq, registers (pending+1, waiters+1),
 * unlocks, and sleeps while seq is unchanged: one futex call.  A signal
 * that finds pending > 0 takes one off it and wakes one sleeper with
 * FUTEX_WAKE_OP, which increments seq and wakes in one step under the
 * futex bucket lock; so the wake-up goes to the highest-priority thread
 * that was already asleep, never to one that read seq after the signal.
 * A waiter that registered but was not yet asleep sees seq changed and
 * returns too (EAGAIN from the kernel): the only source of spurious
 * wake-ups, and a narrow one.  A broadcast zeroes pending, increments seq
 * and moves every sleeper onto the mutex word (FUTEX_CMP_REQUEUE), waking
 * one only when the broadcaster does not hold the mutex: each unlock then
 * wakes the next, in priority order.  The mutex word gets WORD_WAITERS
 * before the move, and every waiter relocks as contended, so the chain of
 * wake-ups cannot break.
 *
 * With a PI mutex, waiters sleep in FUTEX_WAIT_REQUEUE_PI and are moved
 * with FUTEX_CMP_REQUEUE_PI (FUTEX_WAKE on such waiters is EINVAL): the
 * kernel takes the mutex for the top waiter if it is free and queues the
 * others on its rt_mutex, where they boost the owner; a waiter returns
 * from the kernel owning the mutex.  There is no kernel operation that
 * increments and requeues-PI atomically, so a signal sent WITHOUT holding
 * the mutex may go to a thread that started waiting during the signal
 * call; with the mutex held (the usual real-time pattern) it cannot.
 *
 * A timed-out waiter takes itself off pending, unless a signal already
 * took it off, in which case the wake-up was meant for it and it returns
 * 0: no signal is lost to a timeout.  A cancelled waiter passes on a
 * wake-up it may have taken.
 */
#include <limits.h>
#include <pthread.h>

#include "api.h"
#include "attr.h"
#include "clock.h"
#include "mutex_internal.h"
#include "robust.h"

#define COND_PSHARED CONDATTR_PSHARED
#define COND_MONOTONIC CONDATTR_MONOTONIC
#define COND_DESTROYED 0x80000000u
#define COND_DESTROYING 0x80000000u

struct cond {
	_Atomic uint32_t seq;
	_Atomic uint32_t pending;
	_Atomic uint32_t waiters;
	_Atomic uint32_t flags;
	struct mutex *_Atomic mutex;
};

_Static_assert(sizeof(struct cond) <= sizeof(pthread_cond_t), "struct cond fits pthread_cond_t");
_Static_assert(_Alignof(struct cond) <= _Alignof(pthread_cond_t), "struct cond alignment");

static struct cond *cond_of(pthread_cond_t *c)
{
	return (struct cond *)c;
}

static bool cond_pshared(struct cond *c)
{
	return atomic_load_explicit(&c->flags, memory_order_relaxed) & COND_PSHARED;
}

/* How waiters of c sleep, decided from the mutex they registered with. */
struct cond_mode {
	struct mutex *mutex; /* requeue target, or NULL: wake instead */
	bool shared;	     /* futex flag for seq, and for the mutex word */
	bool pi;	     /* FUTEX_WAIT_REQUEUE_PI / FUTEX_CMP_REQUEUE_PI */
};

static struct cond_mode cond_mode(struct cond *c, struct mutex *m)
{
	int kind = mutex_kind(m);
	struct cond_mode mode = { .mutex = m, .shared = kind_shared(kind), .pi = kind & KIND_PI };
	if (cond_pshared(c)) {
		mode.mutex = NULL;
		mode.shared = true;
		mode.pi = false;
	}
	return mode;
}

int rt_cond_init(pthread_cond_t *cond, const pthread_condattr_t *attr)
{
	struct cond *c = cond_of(cond);
	unsigned value = attr ? attr_value(attr) : 0;
	if (value & ~(unsigned)(COND_PSHARED | COND_MONOTONIC))
		return EINVAL;
	atomic_store_explicit(&c->seq, 0, memory_order_relaxed);
	atomic_store_explicit(&c->pending, 0, memory_order_relaxed);
	atomic_store_explicit(&c->waiters, 0, memory_order_relaxed);
	atomic_store_explicit(&c->mutex, NULL, memory_order_relaxed);
	atomic_store_explicit(&c->flags, value, memory_order_release);
	return 0;
}

/* Safe once every waiter has been sent a wake-up: waits for the woken
 * ones to stop touching the object (they may not have run yet). */
int rt_cond_destroy(pthread_cond_t *cond)
{
	struct cond *c = cond_of(cond);
	uint32_t flags = atomic_load_explicit(&c->flags, memory_order_relaxed);
	if (flags & COND_DESTROYED)
		return EINVAL;
	if (atomic_load_explicit(&c->pending, memory_order_acquire) != 0)
		return EBUSY;
	bool shared = flags & COND_PSHARED;
	uint32_t v = atomic_fetch_or_explicit(&c->waiters, COND_DESTROYING, memory_order_acquire);
	while (v & ~COND_DESTROYING) {
		futex_wait(&c->waiters, v | COND_DESTROYING, shared, CLOCK_MONOTONIC, NULL);
		v = atomic_load_explicit(&c->waiters, memory_order_acquire);
	}
	atomic_store_explicit(&c->flags, COND_DESTROYED, memory_order_relaxed);
	atomic_store_explicit(&c->waiters, 0, memory_order_relaxed);
	return 0;
}

/* The last thing a waiter does to the condition. */
static void cond_leave(struct cond *c)
{
	uint32_t old = atomic_fetch_sub_explicit(&c->waiters, 1, memory_order_release);
	if (old == (COND_DESTROYING | 1))
		futex_wake(&c->waiters, 1, cond_pshared(c));
}

/* A waiter leaving without a wake-up delivered to it by the kernel
 * (timeout, cancellation, seq changed before it slept): takes itself off
 * pending.  false: pending was already 0, i.e. a signal counted us. */
static bool cond_unregister(struct cond *c)
{
	uint32_t p = atomic_load_explicit(&c->pending, memory_order_relaxed);
	while (p != 0)
		if (atomic_compare_exchange_weak_explicit(&c->pending, &p, p - 1, memory_order_relaxed,
							  memory_order_relaxed))
			return true;
	return false;
}

/* Takes n (1 or all) off pending; false if nobody was waiting. */
static bool cond_claim(struct cond *c, bool all)
{
	uint32_t p = atomic_load_explicit(&c->pending, memory_order_acquire);
	do {
		if (p == 0)
			return false;
	} while (!atomic_compare_exchange_weak_explicit(&c->pending, &p, all ? 0 : p - 1,
							 memory_order_acquire, memory_order_relaxed));
	return true;
}

/* Moves sleepers to a PI mutex: the kernel takes it for the top one if it
 * is free.  Retries while seq moves under us (another signal). */
static void cond_requeue_pi(struct cond *c, struct mutex *m, bool shared, int requeue_count)
{
	for (;;) {
		uint32_t seq = atomic_load_explicit(&c->seq, memory_order_relaxed);
		int r = futex_cmp_requeue_pi(&c->seq, requeue_count, &m->word, seq, shared);
		if (r != -EAGAIN)
			return;
	}
}

int rt_cond_signal(pthread_cond_t *cond)
{
	struct cond *c = cond_of(cond);
	if (!cond_claim(c, false))
		return 0;
	struct mutex *m = atomic_load_explicit(&c->mutex, memory_order_relaxed);
	struct cond_mode mode = cond_mode(c, m);
	if (mode.pi && mode.mutex) {
		atomic_fetch_add_explicit(&c->seq, 1, memory_order_release);
		cond_requeue_pi(c, m, mode.shared, 0);
	} else {
		futex_increment_wake_one(&c->seq, mode.shared);
	}
	return 0;
}

int rt_cond_broadcast(pthread_cond_t *cond)
{
	struct cond *c = cond_of(cond);
	if (!cond_claim(c, true))
		return 0;
	struct mutex *m = atomic_load_explicit(&c->mutex, memory_order_relaxed);
	struct cond_mode mode = cond_mode(c, m);
	atomic_fetch_add_explicit(&c->seq, 1, memory_order_release);
	if (!mode.mutex) {
		futex_wake(&c->seq, INT_MAX, mode.shared);
		return 0;
	}
	if (mode.pi) {
		cond_requeue_pi(c, m, mode.shared, INT_MAX);
		return 0;
	}
	/* Sleepers moved onto the mutex must be woken by its unlock. */
	uint32_t word = atomic_fetch_or_explicit(&m->word, WORD_WAITERS, memory_order_relaxed);
	int wake = (word & WORD_TID_MASK) == self_tid() ? 0 : 1;
	for (;;) {
		uint32_t seq = atomic_load_explicit(&c->seq, memory_order_relaxed);
		if (futex_cmp_requeue(&c->seq, wake, INT_MAX, &m->word, seq, mode.shared) != -EAGAIN)
			return 0;
	}
}

/* What a waiter carries across the sleep, for its cancellation handler. */
struct cond_wait {
	struct cond *c;
	struct mutex *m;
	uint32_t depth;
	uint32_t seq;
	struct cond_mode mode;
	clockid_t clock;
	const struct timespec *deadline;
};

static void cond_wait_cancelled(void *arg)
{
	struct cond_wait *w = arg;
	/* A wake-up we may have taken goes to the next waiter. */
	if (!cond_unregister(w->c)) {
		atomic_fetch_add_explicit(&w->c->pending, 1, memory_order_relaxed);
		rt_cond_signal((pthread_cond_t *)w->c);
	}
	cond_leave(w->c);
	uint32_t tid = self_tid();
	if ((atomic_load_explicit(&w->m->word, memory_order_relaxed) & WORD_TID_MASK) != tid)
		mutex_cond_relock(w->m);
	w->m->depth = w->depth;
}

/* Sleep on seq until woken; returns 0 (woken or counted by a signal),
 * ETIMEDOUT, or for a PI wait -1 when the kernel handed us the mutex. */
static int cond_sleep(const struct cond_wait *w)
{
	struct cond *c = w->c;
	struct cond_mode mode = w->mode;
	uint32_t seq = w->seq;
	for (;;) {
		int old_type, r;
		pthread_setcanceltype(PTHREAD_CANCEL_ASYNCHRONOUS, &old_type);
		if (mode.pi && mode.mutex)
			r = futex_wait_requeue_pi(&c->seq, seq, &w->m->word, mode.shared, w->clock,
						  w->deadline);
		else
			r = futex_wait(&c->seq, seq, mode.shared, w->clock, w->deadline);
		pthread_setcanceltype(old_type, NULL);

		if (r == 0)
			return mode.pi && mode.mutex ? -1 : 0;
		if (r == EINTR)
			continue;
		if (r == EAGAIN) {
			/* seq moved before we slept (or, PI, a signal after the
			 * requeue): a wake-up was sent after we registered. */
			if (atomic_load_explicit(&c->seq, memory_order_relaxed) == seq)
				continue;
			cond_unregister(c);
			return 0;
		}
		/* ETIMEDOUT, or EINVAL from the kernel: leave as timed out
		 * unless a signal had already counted us. */
		return cond_unregister(c) ? r : 0;
	}
}

/* The sleep, as a cancellation point: setjmp-based cleanup kept apart. */
static int cond_sleep_cancellable(struct cond_wait *w)
{
	int result;
	pthread_cleanup_push(cond_wait_cancelled, w);
	result = cond_sleep(w);
	pthread_cleanup_pop(0);
	return result;
}

int rt_cond_wait(pthread_cond_t *cond, pthread_mutex_t *mutex, clockid_t clock,
		 const struct timespec *deadline, int use_attr_clock)
{
	struct cond *c = cond_of(cond);
	struct mutex *m = mutex_of(mutex);
	uint32_t flags = atomic_load_explicit(&c->flags, memory_order_relaxed);
	int kind = mutex_kind(m);
	if ((flags & COND_DESTROYED) || !kind_valid(kind))
		return EINVAL;
	if (use_attr_clock)
		clock = (flags & COND_MONOTONIC) ? CLOCK_MONOTONIC : CLOCK_REALTIME;
	int r = deadline_check(deadline);
	if (r)
		return r;
	uint32_t tid = self_tid();
	bool owner_checked = !kind_is_simple(kind) || kind_type(kind) == PTHREAD_MUTEX_RECURSIVE ||
			     kind_type(kind) == PTHREAD_MUTEX_ERRORCHECK || (kind & KIND_PI);
	if (owner_checked && (atomic_load_explicit(&m->word, memory_order_relaxed) & WORD_TID_MASK) != tid)
		return EPERM;

	pthread_testcancel();
	struct cond_mode mode = cond_mode(c, m);
	struct cond_wait w = { .c = c, .m = m, .depth = m->depth, .mode = mode, .clock = clock,
			       .deadline = deadline };
	if (!cond_pshared(c))
		atomic_store_explicit(&c->mutex, m, memory_order_relaxed);
	atomic_fetch_add_explicit(&c->waiters, 1, memory_order_relaxed);
	w.seq = atomic_load_explicit(&c->seq, memory_order_relaxed);
	/* Release: a signaller that sees us in pending sees mutex too. */
	atomic_fetch_add_explicit(&c->pending, 1, memory_order_release);

	/* A recursive mutex is released whatever its depth, and gets it back. */
	m->depth = 0;
	mutex_unlock(m);
	/* The kernel may hand us a robust PI mutex inside the wait: if we die
	 * before robust_enqueue, the pending entry lets it mark OWNER_DIED. */
	if (mode.pi && mode.mutex && (kind & KIND_ROBUST))
		robust_pending_set(m, true);

	int result = cond_sleep_cancellable(&w);
	cond_leave(c);

	int relock;
	if (result == -1) {
		relock = pi_taken_by_kernel(m, kind, tid);
		result = 0;
	} else {
		if (mode.pi && mode.mutex && (kind & KIND_ROBUST))
			robust_pending_clear();
		relock = mutex_cond_relock(m);
	}
	if (relock == 0 || relock == EOWNERDEAD)
		m->depth = w.depth;
	return relock ? relock : result;
}
