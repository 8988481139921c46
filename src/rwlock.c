/*
 * Reader-writer locks with priority inheritance (layout in rwlock.h).
 *
 * Writers serialize through the writer word, a PI futex: a writer takes
 * it (CAS 0 -> TID, else FUTEX_LOCK_PI), sets RW_WRITER in state, waits
 * until no reader is inside, sets RW_HELD, and at unlock clears state and
 * then releases the word.  A reader that must wait queues on the same word
 * with FUTEX_LOCK_PI; once it owns the word no writer is present (only the
 * word's holder sets RW_WRITER, and clears it before letting go), so it
 * counts itself in and passes the word on.  Whoever blocks behind a writer,
 * writer or reader, therefore boosts it, through the kernel's rt_mutex,
 * which also orders them by priority.  Only real-time callers queue there:
 * a SCHED_OTHER waiter would boost nobody, and a hand-off to it makes
 * everyone wait until it runs, so it sleeps on state (RW_QUEUE) and takes
 * the word once it is free (writer_word_wait).
 *
 * Readers inside the lock are counted in one of two ways:
 * - a slot: the reader CASes its TID into a free slot (0 -> TID), then
 *   loads state; without RW_WRITER it is in.  A writer that waits for
 *   readers FUTEX_LOCK_PIs each occupied slot in turn, boosting that
 *   reader, takes the slot when the reader leaves and frees it again.
 *   With RW_SLOTS slots, up to RW_SLOTS readers are boosted at once.
 * - anonymously, in RW_READERS: when every slot is taken, and for readers
 *   that enter while a writer already waits (prefer-reader kinds, and the
 *   re-entry rule of PREFER_WRITER_NP).  The writer sleeps on state
 *   (RW_DRAIN) until the last of them leaves; they are not boosted.
 *
 * Why a slot reader that sees no RW_WRITER is safe: the reader's CAS on its
 * slot and its load of state, and the writer's fetch_or of RW_WRITER and
 * its loads of the slots, are all seq_cst.  In their single total order,
 * either the reader's load comes first (then its slot is set before the
 * writer looks at the slots, and the writer waits for it) or the writer's
 * fetch_or does (then the reader sees RW_WRITER, frees its slot and takes
 * the anonymous path).  A reader that sees RW_WRITER never stays in through
 * its slot, because the writer may have looked at the slots already: it
 * enters only by a CAS on state that requires RW_HELD clear, and the
 * writer sets RW_HELD by a CAS that requires RW_READERS == 0, so one of
 * the two CASes fails and the loser looks again.
 *
 * Kinds.  PTHREAD_RWLOCK_PREFER_READER_NP (the default): a reader enters
 * unless a writer holds the lock, so a thread that already holds a read
 * lock never deadlocks behind a waiting writer (glibc's reason for this
 * default).  PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP: no reader enters
 * while a writer waits (a thread that re-reads then deadlocks, as with
 * glibc, unless the kernel's chain walk sees the cycle and one side gets
 * EDEADLK).  PTHREAD_RWLOCK_PREFER_WRITER_NP (glibc treats it as prefer
 * reader): no new reader enters while a writer waits, but a thread that
 * holds any read lock still does, so re-reading never deadlocks.
 *
 * Ownership is by TID: a read lock is released by the thread that took it
 * (POSIX leaves other threads undefined; here such an unlock finds no slot
 * of its own and, with no anonymous reader either, says EPERM).
 */
#include "rwlock.h"

#include <stddef.h>
#include <sched.h>
#include <string.h>

#include "clock.h"
#include "futex.h"

#define PI_TID_MASK FUTEX_TID_MASK
#define PI_WAITERS FUTEX_WAITERS

enum { KIND_PREFER_READER, KIND_PREFER_WRITER, KIND_PREFER_WRITER_NONRECURSIVE };

/* Read locks this thread holds, on every rwlock: PREFER_WRITER_NP lets such
 * a thread in while a writer waits. */
__thread unsigned rwlock_reads_held TLS_FAST;

static inline bool rw_shared(const struct rwlock *rw)
{
	return rw->flags & RW_FLAG_PSHARED;
}

static inline unsigned rw_kind(const struct rwlock *rw)
{
	return rw->flags & RW_KIND_MASK;
}

/* A TID found in one of our words is the caller's: its own, or, in a fork
 * child, the forking thread's (the child's copy of a private lock still
 * names the parent's TID; a process-shared one is really the parent's). */
static bool tid_is_self(uint32_t word_tid, uint32_t tid, bool shared)
{
	return word_tid == tid ||
	       (fork_parent_tid != 0 && !shared && tid == fork_replica_tid && word_tid == fork_parent_tid);
}

/* FUTEX_LOCK_PI with the LOCK_PI2 fallback of kernels before 5.14.  0 once
 * the caller owns the word, else ETIMEDOUT, EDEADLK (a cycle, or the
 * caller's own TID), ESRCH (a dead owner). */
static int pi_lock(_Atomic uint32_t *word, bool shared, clockid_t clock, const struct timespec *deadline)
{
	for (;;) { /* Ends: EAGAIN (owner exiting) and EINTR are transient */
		int r = futex_lock_pi(word, shared, clock, deadline);
		if (r == ENOSYS && clock == CLOCK_MONOTONIC && deadline) {
			struct timespec realtime = deadline_convert(deadline, CLOCK_MONOTONIC, CLOCK_REALTIME);
			r = futex_lock_pi(word, shared, CLOCK_REALTIME, &realtime);
		}
		if (r != EAGAIN && r != EINTR)
			return r;
	}
}

/* Frees a PI word the caller owns: a CAS while nobody waits, else the
 * kernel hands it to the top waiter.  release: what the owner wrote under
 * it is visible to the next owner. */
static int pi_release(_Atomic uint32_t *word, bool shared)
{
	uint32_t v = atomic_load_explicit(word, memory_order_relaxed);
	if (!(v & PI_WAITERS) &&
	    atomic_compare_exchange_strong_explicit(word, &v, 0, memory_order_release, memory_order_relaxed))
		return 0;
	return futex_unlock_pi(word, shared);
}

/* Before sleeping, a contended call re-checks its condition this many
 * times, a pause each: a critical section often ends within that, and a
 * sleep costs two system calls.  Bounded: at most a few microseconds
 * before the thread blocks (and boosts). */
#define RW_SPINS 100

static inline void cpu_relax(void)
{
#if defined(__x86_64__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ volatile("yield" ::: "memory");
#endif
}

/* Spins (bounded) while *word & mask is nonzero; whether it became 0. */
static bool spin_until_clear(_Atomic uint32_t *word, uint32_t mask)
{
	for (int i = 0; i < RW_SPINS; i++) {
		if (!(atomic_load_explicit(word, memory_order_relaxed) & mask))
			return true;
		cpu_relax();
	}
	return false;
}

/* Who sleeps on state, as futex bit masks: the writer waiting for the
 * anonymous readers (RW_DRAIN), the threads waiting for the writer word
 * (RW_QUEUE). */
#define WAKE_DRAIN 1u
#define WAKE_QUEUE 2u

/* Whether the caller runs at a real-time priority, the only one a PI
 * futex passes on (a SCHED_OTHER waiter boosts nobody).  One syscall. */
static bool self_realtime(void)
{
	int policy = sched_getscheduler(0) & ~SCHED_RESET_ON_FORK;
	return policy == SCHED_FIFO || policy == SCHED_RR || policy == 6 /* SCHED_DEADLINE */;
}

/* Frees the writer word the caller holds (the kernel hands it to the top
 * PI waiter, if any), then wakes the threads that sleep on state for it.
 * seq_cst on both sides: a sleeper sets RW_QUEUE and then looks at the
 * word again, so either it sees the word change or we see RW_QUEUE. */
static int writer_word_release(struct rwlock *rw, bool shared)
{
	uint32_t v = atomic_load_explicit(&rw->writer, memory_order_relaxed);
	int r = 0;
	if ((v & PI_WAITERS) ||
	    !atomic_compare_exchange_strong_explicit(&rw->writer, &v, 0, memory_order_seq_cst, memory_order_relaxed))
		r = futex_unlock_pi(&rw->writer, shared);
	if (atomic_load_explicit(&rw->state, memory_order_seq_cst) & RW_QUEUE) {
		atomic_fetch_and_explicit(&rw->state, ~RW_QUEUE, memory_order_relaxed);
		int w = futex_wake_bits(&rw->state, INT_MAX, WAKE_QUEUE, shared, NULL);
		if (r == 0)
			r = w;
	}
	return r;
}

/* The writer word for a thread that boosts nobody: it sleeps on state
 * instead of queueing on the rt_mutex, so that the word is never handed
 * to a sleeping thread (a hand-off makes everyone wait until that thread
 * runs); whoever frees the word wakes it, and it takes the word if it is
 * still free. */
static int writer_word_wait(struct rwlock *rw, uint32_t tid, bool shared, clockid_t clock,
			    const struct timespec *deadline)
{
	/* Ends: each pass takes the word, times out, or sleeps until state
	 * changes (the word's release wakes it); a failed CAS means another
	 * thread changed the word. */
	for (;;) {
		uint32_t v = 0;
		if (atomic_compare_exchange_strong_explicit(&rw->writer, &v, tid, memory_order_acquire,
							    memory_order_relaxed))
			return 0;
		uint32_t s = atomic_load_explicit(&rw->state, memory_order_relaxed);
		if (!(s & RW_QUEUE)) {
			if (!atomic_compare_exchange_strong_explicit(&rw->state, &s, s | RW_QUEUE, memory_order_seq_cst,
								     memory_order_relaxed))
				continue;
			s |= RW_QUEUE;
		}
		if (atomic_load_explicit(&rw->writer, memory_order_seq_cst) == 0)
			continue;
		int r = futex_wait_bits(&rw->state, s, WAKE_QUEUE, shared, clock, deadline);
		if (r == ETIMEDOUT || r == EINVAL)
			return r;
	}
}

/* Takes the writer word; blocking boosts its holder. */
static int writer_word_lock(struct rwlock *rw, uint32_t tid, bool shared, clockid_t clock,
			    const struct timespec *deadline)
{
	uint32_t v = 0;
	if (atomic_compare_exchange_strong_explicit(&rw->writer, &v, tid, memory_order_acquire,
						    memory_order_relaxed))
		return 0;
	v = 0;
	if (spin_until_clear(&rw->writer, PI_TID_MASK) &&
	    atomic_compare_exchange_strong_explicit(&rw->writer, &v, tid, memory_order_acquire,
						    memory_order_relaxed))
		return 0;
	int r = deadline_check(deadline);
	if (r == 0 && !self_realtime())
		return writer_word_wait(rw, tid, shared, clock, deadline);
	if (r == 0)
		r = pi_lock(&rw->writer, shared, clock, deadline);
	/* A holder that died: nobody will ever release the word.  glibc
	 * blocks for ever there too; a deadline still ends the wait. */
	if (r == ESRCH)
		r = sleep_until(clock, deadline);
	return r;
}

/* ----- readers ----- */

/* Claims a free slot for tid, starting at tid's own: its index, or -1 when
 * every slot is taken.  seq_cst: see the top of the file. */
static int slot_claim(struct rwlock *rw, uint32_t tid)
{
	unsigned i = rwlock_slot_home(tid);
	for (unsigned n = 0; n < RW_SLOTS; n++) {
		uint32_t v = atomic_load_explicit(&rw->slot[i], memory_order_relaxed);
		if (v == 0 && atomic_compare_exchange_strong_explicit(&rw->slot[i], &v, tid, memory_order_seq_cst,
								      memory_order_relaxed))
			return (int)i;
		if (++i == RW_SLOTS)
			i = 0;
	}
	return -1;
}

/* The slot holding tid, or -1. */
static int slot_find(struct rwlock *rw, uint32_t tid)
{
	unsigned i = rwlock_slot_home(tid);
	for (unsigned n = 0; n < RW_SLOTS; n++) {
		if ((atomic_load_explicit(&rw->slot[i], memory_order_relaxed) & PI_TID_MASK) == tid)
			return (int)i;
		if (++i == RW_SLOTS)
			i = 0;
	}
	return -1;
}

/* Whether a reader may enter with state s (RW_HELD aside, see below). */
static bool reader_may_enter(uint32_t s, unsigned kind)
{
	if (!(s & RW_WRITER))
		return true;
	/* A writer waits for the readers inside, or holds the lock. */
	if (kind == KIND_PREFER_WRITER)
		return rwlock_reads_held > 0;
	return kind != KIND_PREFER_WRITER_NONRECURSIVE;
}

/* A reader that must wait for a writer: queue on the writer word (boosting
 * the writer), then, owning it, count in and pass the word on. */
static int reader_queue(struct rwlock *rw, uint32_t tid, bool shared, clockid_t clock,
			const struct timespec *deadline)
{
	int r = writer_word_lock(rw, tid, shared, clock, deadline);
	if (r)
		return r;
	/* No writer now: only the holder of the word sets RW_WRITER. */
	if (slot_claim(rw, tid) < 0) {
		uint32_t s = atomic_load_explicit(&rw->state, memory_order_relaxed);
		do { /* Ends: only other anonymous readers change state now */
			if ((s & RW_READERS) == RW_READERS) {
				writer_word_release(rw, shared);
				return EAGAIN;
			}
		} while (!atomic_compare_exchange_weak_explicit(&rw->state, &s, s + 1, memory_order_acquire,
								memory_order_relaxed));
	}
	rwlock_reads_held++;
	return writer_word_release(rw, shared);
}

/*
 * Enters through RW_READERS, or waits.  RW_HELD normally keeps every reader
 * out, but a writer that found state 0 sets it before looking at the slots
 * (wrlock's fast path), so a reader that is inside through a slot can see
 * it: then the writer has not finished looking, will find that slot, and
 * must wait for it.  Such a reader, re-reading where the kind allows it,
 * clears RW_HELD as it enters, as the writer would.
 */
static int reader_enter_anonymous(struct rwlock *rw, uint32_t tid, int try, clockid_t clock,
				  const struct timespec *deadline)
{
	bool shared = rw_shared(rw);
	unsigned kind = rw_kind(rw);
	int spins = try ? 0 : RW_SPINS;
	int inside = -1; /* whether tid holds a slot: looked up once, if needed */
	uint32_t s = atomic_load_explicit(&rw->state, memory_order_relaxed);
	/* Ends: a CAS fails only when another thread changed state, which
	 * each thread does a bounded number of times per lock or unlock;
	 * the spins are bounded. */
	for (;;) {
		bool may = reader_may_enter(s, kind);
		if (may && (s & RW_HELD)) {
			if (inside < 0)
				inside = slot_find(rw, tid) >= 0;
			may = inside;
		}
		if (may) {
			if ((s & RW_READERS) == RW_READERS)
				return EAGAIN;
			if (atomic_compare_exchange_weak_explicit(&rw->state, &s, (s & ~RW_HELD) + 1,
								  memory_order_acquire, memory_order_relaxed)) {
				rwlock_reads_held++;
				return 0;
			}
			continue;
		}
		if (spins-- <= 0)
			break;
		cpu_relax();
		s = atomic_load_explicit(&rw->state, memory_order_relaxed);
	}
	if (try)
		return EBUSY;
	if ((s & RW_HELD) &&
	    tid_is_self(atomic_load_explicit(&rw->writer, memory_order_relaxed) & PI_TID_MASK, tid, shared))
		return EDEADLK;
	return reader_queue(rw, tid, shared, clock, deadline);
}

/* A writer that boosts nobody may sleep on state (RW_DRAIN) while readers
 * hold slots: the reader that frees the last slot, with no anonymous
 * reader left, wakes it. */
int rwlock_reader_left_drain(struct rwlock *rw, bool shared)
{
	if (!rwlock_slots_empty(rw))
		return 0;
	uint32_t s = atomic_load_explicit(&rw->state, memory_order_seq_cst);
	/* Ends: a CAS fails only when another thread changed state. */
	while ((s & RW_DRAIN) && (s & RW_READERS) == 0) {
		if (atomic_compare_exchange_weak_explicit(&rw->state, &s, s & ~RW_DRAIN, memory_order_relaxed,
							  memory_order_relaxed))
			return futex_wake_bits(&rw->state, 1, WAKE_DRAIN, shared, NULL);
	}
	return 0;
}

/* After a reader freed its slot (seq_cst, before the load of state). */
static inline int reader_left(struct rwlock *rw, bool shared)
{
	if (__builtin_expect(!(atomic_load_explicit(&rw->state, memory_order_seq_cst) & RW_DRAIN), 1))
		return 0;
	return rwlock_reader_left_drain(rw, shared);
}

static int slot_free(struct rwlock *rw, int i, bool shared)
{
	uint32_t v = atomic_load_explicit(&rw->slot[i], memory_order_relaxed);
	int r;
	if (!(v & PI_WAITERS) &&
	    atomic_compare_exchange_strong_explicit(&rw->slot[i], &v, 0, memory_order_seq_cst, memory_order_relaxed))
		r = 0;
	else
		r = futex_unlock_pi(&rw->slot[i], shared);
	int w = reader_left(rw, shared);
	return r ? r : w;
}

static int deadline_valid(clockid_t clock, const struct timespec *deadline)
{
	if (!deadline)
		return 0;
	if (!clock_supported(clock) || deadline->tv_nsec < 0 || deadline->tv_nsec >= 1000000000L)
		return EINVAL;
	return 0;
}

/* Everything but the home slot's fast path: out of line, so that the
 * fast path saves no registers. */
int rwlock_rdlock_slow(struct rwlock *rw, uint32_t tid, int home, int try, clockid_t clock,
		       const struct timespec *deadline)
{
	int i = home >= 0 ? home : slot_claim(rw, tid);
	if (i >= 0) {
		if (home < 0 && !(atomic_load_explicit(&rw->state, memory_order_seq_cst) & RW_WRITER)) {
			rwlock_reads_held++;
			return 0;
		}
		/* A writer is there and may have looked at the slots already. */
		int r = slot_free(rw, i, rw_shared(rw));
		if (r)
			return r;
	}
	return reader_enter_anonymous(rw, tid, try, clock, deadline);
}

int rwlock_rdlock_checked(struct rwlock *rw, int try, clockid_t clock, const struct timespec *deadline)
{
	if (deadline != NULL && deadline_valid(clock, deadline))
		return EINVAL;
	return rwlock_rdlock_slow(rw, self_tid(), -1, try, clock, deadline);
}

/* ----- writers ----- */


/* Gives up the writer role: readers may enter again, and the writer word
 * goes to the next thread queued on it. */
static void writer_withdraw(struct rwlock *rw, bool shared)
{
	atomic_fetch_and_explicit(&rw->state, ~(RW_WRITER | RW_HELD | RW_DRAIN), memory_order_release);
	writer_word_release(rw, shared);
}

/* Waits, boosting them, for the readers in slot i to leave.  0 when it
 * left (or the slot was free by the time the kernel looked). */
static int writer_wait_slot(struct rwlock *rw, int i, bool shared, clockid_t clock,
			    const struct timespec *deadline)
{
	int r = pi_lock(&rw->slot[i], shared, clock, deadline);
	if (r)
		return r;
	/* The slot is ours now: give it back to the readers. */
	return pi_release(&rw->slot[i], shared);
}

/* The caller holds the writer word and has set RW_WRITER: waits until no
 * reader is inside and sets RW_HELD. */
static int writer_wait_readers(struct rwlock *rw, int try, clockid_t clock, const struct timespec *deadline)
{
	bool shared = rw_shared(rw);
	unsigned dead = 0; /* slots whose reader died inside: never freed */
	int spins = RW_SPINS; /* one bounded spin per call */
	int realtime = -1;    /* whether the caller boosts anyone: asked once, if it must sleep */
	/* Ends: each pass waits for a slot reader to leave, or sleeps until
	 * the readers are gone; new readers stop entering through slots once
	 * RW_WRITER is set, and enter anonymously at most while the kind lets
	 * them (prefer-reader: as glibc, they can starve the writer). */
	for (;;) {
		int busy = -1;
		for (int i = 0; i < RW_SLOTS; i++) {
			if ((atomic_load_explicit(&rw->slot[i], memory_order_seq_cst) & PI_TID_MASK) &&
			    !(dead & 1u << i)) {
				busy = i;
				break;
			}
		}
		int r = 0;
		if (busy >= 0) {
			if (try) {
				writer_withdraw(rw, shared);
				return EBUSY;
			}
			if (spins > 0 && spin_until_clear(&rw->slot[busy], PI_TID_MASK)) {
				spins = 0;
				continue;
			}
			spins = 0;
			if (realtime < 0)
				realtime = self_realtime();
			if (realtime) {
				/* Boost the reader: lock its slot. */
				r = deadline_check(deadline);
				if (r == 0)
					r = writer_wait_slot(rw, busy, shared, clock, deadline);
				if (r == ESRCH) {
					dead |= 1u << busy;
					r = 0;
				}
				if (r) {
					writer_withdraw(rw, shared);
					return r;
				}
				continue;
			}
			/* Boosting nobody, sleep on state like for the anonymous
			 * readers: the last reader out wakes us (reader_left). */
			if ((atomic_load_explicit(&rw->slot[busy], memory_order_relaxed) & PI_TID_MASK) == self_tid()) {
				writer_withdraw(rw, shared);
				return EDEADLK; /* we hold a read lock */
			}
		}
		uint32_t s = atomic_load_explicit(&rw->state, memory_order_seq_cst);
		if (busy < 0 && (s & RW_READERS) == 0 && dead == 0) {
			if (atomic_compare_exchange_strong_explicit(&rw->state, &s, (s | RW_HELD) & ~RW_DRAIN,
								    memory_order_acquire, memory_order_relaxed))
				return 0;
			continue;
		}
		if (try) {
			writer_withdraw(rw, shared);
			return EBUSY;
		}
		if (spins > 0 && dead == 0) {
			spins = 0;
			spin_until_clear(&rw->state, RW_READERS);
			continue;
		}
		if (!(s & RW_DRAIN)) {
			if (!atomic_compare_exchange_strong_explicit(&rw->state, &s, s | RW_DRAIN, memory_order_seq_cst,
								     memory_order_relaxed))
				continue;
			s |= RW_DRAIN;
		}
		/* seq_cst: a slot reader frees its slot and then looks for
		 * RW_DRAIN; we set RW_DRAIN and then look at the slots again. */
		if (busy >= 0 && rwlock_slots_empty(rw))
			continue;
		r = deadline_check(deadline);
		if (r == 0)
			r = futex_wait_bits(&rw->state, s, WAKE_DRAIN, shared, clock, deadline);
		if (r == ETIMEDOUT || r == EINVAL) {
			writer_withdraw(rw, shared);
			return r;
		}
	}
}

/* A writer that did not get the lock at the first try. */
int rwlock_wrlock_slow(struct rwlock *rw, uint32_t tid, int try, clockid_t clock, const struct timespec *deadline)
{
	bool shared = rw_shared(rw);
	uint32_t v = atomic_load_explicit(&rw->writer, memory_order_relaxed);
	if (tid_is_self(v & PI_TID_MASK, tid, shared))
		return try ? EBUSY : EDEADLK;
	v = 0;
	if (!atomic_compare_exchange_strong_explicit(&rw->writer, &v, tid, memory_order_acquire,
						     memory_order_relaxed)) {
		if (try)
			return EBUSY;
		int r = writer_word_lock(rw, tid, shared, clock, deadline);
		if (r)
			return r;
	}
	/* seq_cst: ordered before the loads of the slots (top of the file).
	 * As in rwlock_wrlock when state is 0. */
	uint32_t s = 0;
	if (atomic_compare_exchange_strong_explicit(&rw->state, &s, RW_WRITER | RW_HELD, memory_order_seq_cst,
						    memory_order_relaxed)) {
		if (rwlock_slots_empty(rw) &&
		    atomic_load_explicit(&rw->state, memory_order_seq_cst) == (RW_WRITER | RW_HELD))
			return 0;
		atomic_fetch_and_explicit(&rw->state, ~RW_HELD, memory_order_relaxed);
	} else {
		atomic_fetch_or_explicit(&rw->state, RW_WRITER, memory_order_seq_cst);
	}
	return writer_wait_readers(rw, try, clock, deadline);
}

int rwlock_wrlock_readers_inside(struct rwlock *rw, int try, clockid_t clock, const struct timespec *deadline)
{
	atomic_fetch_and_explicit(&rw->state, ~RW_HELD, memory_order_relaxed);
	return writer_wait_readers(rw, try, clock, deadline);
}

int rwlock_wrlock_checked(struct rwlock *rw, int try, clockid_t clock, const struct timespec *deadline)
{
	if (deadline != NULL && deadline_valid(clock, deadline))
		return EINVAL;
	return rwlock_wrlock_tid(rw, self_tid(), try, clock, deadline);
}

/* ----- unlock ----- */

static int reader_leave_anonymous(struct rwlock *rw, bool shared)
{
	uint32_t s = atomic_load_explicit(&rw->state, memory_order_relaxed);
	uint32_t n;
	do { /* Ends: as in reader_enter_anonymous */
		if ((s & RW_READERS) == 0 || (s & RW_HELD))
			return EPERM;
		n = s - 1;
		if ((n & RW_READERS) == 0)
			n &= ~RW_DRAIN;
	} while (!atomic_compare_exchange_weak_explicit(&rw->state, &s, n, memory_order_release,
							memory_order_relaxed));
	/* The last anonymous reader out wakes the writer waiting for it. */
	if ((s & RW_DRAIN) && !(n & RW_DRAIN))
		return futex_wake_bits(&rw->state, 1, WAKE_DRAIN, shared, NULL);
	return 0;
}

int rwlock_unlock_slow(struct rwlock *rw, uint32_t tid)
{
	if (tid == 0)
		tid = self_tid();
	bool shared = rw_shared(rw);
	if ((atomic_load_explicit(&rw->state, memory_order_relaxed) & RW_HELD) &&
	    tid_is_self(atomic_load_explicit(&rw->writer, memory_order_relaxed) & PI_TID_MASK, tid, shared)) {
		/* The caller holds the lock for writing.  Nobody enters now:
		 * readers enter only by CASes that need RW_HELD clear (or by
		 * one that clears it, which only a reader inside does, and
		 * there is none); others may only add RW_QUEUE, kept here for
		 * writer_word_release. */
		atomic_fetch_and_explicit(&rw->state, RW_QUEUE, memory_order_release);
		return writer_word_release(rw, shared);
	}
	int i = slot_find(rw, tid);
	if (__builtin_expect(i < 0, 0) && fork_parent_tid != 0 && !shared && tid == fork_replica_tid)
		i = slot_find(rw, fork_parent_tid);
	if (__builtin_expect(i >= 0, 1)) {
		if (rwlock_reads_held)
			rwlock_reads_held--;
		return slot_free(rw, i, shared);
	}
	int r = reader_leave_anonymous(rw, shared);
	if (r == 0 && rwlock_reads_held)
		rwlock_reads_held--;
	return r;
}

/* ----- life cycle and attributes ----- */

/* pthread_rwlockattr_t (8 bytes): the kind, then pshared, as glibc. */
struct rwlockattr {
	int kind;
	int pshared;
};

_Static_assert(sizeof(struct rwlockattr) <= sizeof(pthread_rwlockattr_t), "rwlockattr fits");

int rwlock_init(struct rwlock *rw, const pthread_rwlockattr_t *attr)
{
	struct rwlockattr a = { PTHREAD_RWLOCK_DEFAULT_NP, PTHREAD_PROCESS_PRIVATE };
	if (attr)
		memcpy(&a, attr, sizeof a);
	if (a.kind < PTHREAD_RWLOCK_PREFER_READER_NP || a.kind > PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP ||
	    (a.pshared != PTHREAD_PROCESS_PRIVATE && a.pshared != PTHREAD_PROCESS_SHARED))
		return EINVAL;
	memset(rw, 0, sizeof *rw);
	rw->flags = (uint32_t)a.kind | (a.pshared == PTHREAD_PROCESS_SHARED ? RW_FLAG_PSHARED : 0);
	return 0;
}

/* glibc's destroy checks nothing and returns 0; so does this one, leaving
 * the bytes alone (a later use of the lock behaves as before). */
int rwlock_destroy(struct rwlock *rw)
{
	(void)rw;
	return 0;
}

int rwlockattr_init(pthread_rwlockattr_t *attr)
{
	struct rwlockattr a = { PTHREAD_RWLOCK_DEFAULT_NP, PTHREAD_PROCESS_PRIVATE };
	memcpy(attr, &a, sizeof a);
	return 0;
}

int rwlockattr_destroy(pthread_rwlockattr_t *attr)
{
	(void)attr;
	return 0;
}

int rwlockattr_setkind(pthread_rwlockattr_t *attr, int kind)
{
	if (kind < PTHREAD_RWLOCK_PREFER_READER_NP || kind > PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP)
		return EINVAL;
	((struct rwlockattr *)attr)->kind = kind;
	return 0;
}

int rwlockattr_getkind(const pthread_rwlockattr_t *attr, int *kind)
{
	*kind = ((const struct rwlockattr *)attr)->kind;
	return 0;
}

int rwlockattr_setpshared(pthread_rwlockattr_t *attr, int pshared)
{
	if (pshared != PTHREAD_PROCESS_PRIVATE && pshared != PTHREAD_PROCESS_SHARED)
		return EINVAL;
	((struct rwlockattr *)attr)->pshared = pshared;
	return 0;
}

int rwlockattr_getpshared(const pthread_rwlockattr_t *attr, int *pshared)
{
	*pshared = ((const struct rwlockattr *)attr)->pshared;
	return 0;
}
