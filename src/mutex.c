/*
 * Mutexes: init/destroy and the dispatch of lock and unlock to the
 * protocol of each kind: the word protocol (mutex_word.h) for plain and
 * robust mutexes, mutex_pi.c for PI, mutex_pp.c for PP, and
 * mutex_shared.c for the process-shared plain and PP ones (glibc's 0/1/2
 * word; see mutex.h).  Calls go one way: from here to those, and from
 * all of them to mutex_defaults.c (spin counts, default protocol,
 * adoption) and mutex_fork.c (fork ownership), which call none of them.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <unistd.h>

#include "attr.h"
#include "clock.h"
#include "mutex_internal.h"
#include "mutex_word.h"
#include "probe.h"
#include "stats.h"
#include "robust.h"

int mutex_init(struct mutex *m, const pthread_mutexattr_t *attr)
{
	unsigned value = attr ? attr_value(attr) : 0;
	int protocol = (int)((value & MUTEXATTR_PROTOCOL_MASK) >> MUTEXATTR_PROTOCOL_SHIFT);
	int kind = (int)(value & MUTEXATTR_TYPE_MASK) | KIND_INIT;
	int ceiling = mutexattr_ceiling(value);

	if (protocol == PTHREAD_PRIO_INHERIT)
		kind |= KIND_PI;
	else if (protocol == PTHREAD_PRIO_PROTECT)
		kind |= KIND_PP;
	else if (protocol != PTHREAD_PRIO_NONE)
		return EINVAL;
	else if (!(value & MUTEXATTR_PROTOCOL_SET))
		kind |= mutex_default_kind;
	if ((kind & KIND_PP) && protocol == PTHREAD_PRIO_NONE)
		ceiling = mutex_default_ceiling;
	if (value & MUTEXATTR_ROBUST)
		kind |= KIND_ROBUST;
	if (value & MUTEXATTR_PSHARED)
		kind |= KIND_PSHARED;

	uint32_t word = 0;
	m->depth = 0;
	atomic_store_explicit(&m->owner, 0, memory_order_relaxed);
	if (kind_glibc_format(kind)) {
		m->nusers = 0;
		if (kind & KIND_PP)
			word = (uint32_t)ceiling << LLL_CEILING_SHIFT;
	} else {
		atomic_store_explicit(&m->ceiling, (uint16_t)ceiling, memory_order_relaxed);
		m->owner_ceiling = 0;
	}
	atomic_store_explicit(&m->word, word, memory_order_relaxed);
	atomic_store_explicit(&m->owner_cpu, 0, memory_order_relaxed);
	atomic_store_explicit(&m->owner_fork, 0, memory_order_relaxed);
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
	bool held = kind_lll_word(kind) ? (word & ~LLL_CEILING_MASK) != 0 : (word & WORD_TID_MASK) != 0;
	/* An unrecoverable mutex is never busy: nobody can use it any more.
	 * (glibc 2.36's robust trylock on one returns ENOTRECOVERABLE but
	 * leaves its TID in the word, in glibc's format.) */
	bool unrecoverable = word == WORD_NOTRECOVERABLE ||
			     atomic_load_explicit(&m->owner, memory_order_relaxed) == OWNER_NOTRECOVERABLE;
	if (held && !unrecoverable)
		return EBUSY;
	atomic_store_explicit(&m->kind, KIND_DESTROYED, memory_order_relaxed);
	return 0;
}

int mutex_consistent(struct mutex *m)
{
	int kind = mutex_kind(m);
	if (!kind_valid(kind) || !(kind & KIND_ROBUST))
		return EINVAL;
	uint32_t tid = self_tid();
	if (!mutex_owned(m, kind, tid) || atomic_load_explicit(&m->owner, memory_order_relaxed) != OWNER_INCONSISTENT)
		return EINVAL;
	atomic_store_explicit(&m->owner, (int32_t)tid, memory_order_relaxed);
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
		/* Our depth or glibc's __count: either way one more. */
		if (m->depth == UINT32_MAX)
			return EAGAIN;
		m->depth++;
		return 0;
	case PTHREAD_MUTEX_ERRORCHECK:
		return req->try ? EBUSY : EDEADLK;
	default:
		if (req->try)
			return EBUSY;
		if ((kind & (KIND_PI | KIND_PP | KIND_ROBUST)) && !kind_convertible(kind)) {
			/* Only the owner can unlock these: wait for ever. */
			int r = deadline_check(req->deadline);
			return r ? r : sleep_until(req->clock, req->deadline);
		}
		return -1;
	}
}

static int mutex_acquire(struct mutex *m, const struct lock_request *req)
{
	int kind = mutex_kind_adopted(m);
	if (!kind_valid(kind))
		return EINVAL;
	uint32_t tid = self_tid();
	if (mutex_owned(m, kind, tid)) {
		int r = relock(m, kind, req);
		if (r >= 0)
			return r;
	}
	int r;
	if (kind & KIND_PI) {
		r = pi_lock(m, kind, tid, req);
		if (r == PI_TURNED_PLAIN)
			r = word_lock(m, mutex_kind(m), tid, req);
	} else if (kind_lll_word(kind))
		r = lll_lock(m, kind, tid, req);
	else if (kind & KIND_PP)
		r = pp_lock(m, kind, tid, req);
	else
		r = word_lock(m, kind, tid, req);
	if (r == EOWNERDEAD)
		event_owner_died(m);
	return r;
}

/*
 * The uncontended lock of a robust mutex (no PI, no PP): the CAS between
 * the pending mark and the list link, without the request machinery.
 * Anything else (held, OWNER_DIED, NOTRECOVERABLE, a thread whose TID or
 * list head is not at hand yet) goes the long way.  It calls nothing, so
 * that mutex_lock_untimed needs no stack frame.
 */
static inline __attribute__((always_inline)) bool robust_take_free(struct mutex *m, int kind)
{
	if ((kind & ~(KIND_TYPE_MASK | KIND_ELISION)) != (KIND_INIT | KIND_ROBUST))
		return false;
	uint32_t expected = 0, tid = self_tid_or_zero();
	struct robust_head *head = robust_head_cache;
	if (__builtin_expect(tid == 0 || head == NULL, 0))
		return false;
	robust_pending_set(head, m, false);
	bool taken = atomic_compare_exchange_strong_explicit(&m->word, &expected, tid, memory_order_acquire,
							     memory_order_relaxed);
	if (taken) {
		mutex_stamp_owner(m, tid);
		robust_enqueue(head, m, false);
	}
	robust_pending_clear(head);
	return taken;
}

/* Fires the "acquired" probe of a lock that left the inline fast path
 * (preload/symbols.c fires it for the fast path): here, so that the entry
 * points can tail-call us and keep nothing alive across the call. */
static inline int lock_acquired(struct mutex *m, const struct timespec *deadline, int r)
{
	if (r == 0) {
		if (deadline)
			PROBE1(mutex_timedlock_acquired, m);
		else
			PROBE1(mutex_acquired, m);
	}
	return r;
}

/* The return address is the program's: every lock entry point tail-calls
 * this (as mutex_unlock_slow), directly or through mutex_lock_untimed.
 * An untimed lock tried robust_take_free there already. */
__attribute__((noinline)) int mutex_lock_slow(struct mutex *m, clockid_t clock, const struct timespec *deadline)
{
	stats_note_caller(__builtin_extract_return_addr(__builtin_return_address(0)));
	if (deadline && robust_take_free(m, mutex_kind(m)))
		return lock_acquired(m, deadline, 0);
	struct lock_request req = { .try = false, .clock = clock, .deadline = deadline };
	return lock_acquired(m, deadline, mutex_acquire(m, &req));
}

int mutex_lock_untimed(struct mutex *m)
{
	if (robust_take_free(m, mutex_kind(m)))
		return lock_acquired(m, NULL, 0);
	return mutex_lock_slow(m, CLOCK_REALTIME, NULL);
}

/*
 * The door's attach (mutex_cond.h).  A waiter a broadcast may have moved
 * spins a moment before it sleeps on the word again (word_spins).  It
 * takes the word as any locker does: the release that woke it woke every
 * sleeper (mutex_wake_count), and one that sleeps since sets WAITERS
 * itself.  A robust owner's death wakes one sleeper instead, but the
 * kernel keeps WAITERS in the word, and whoever takes it keeps it too.
 */
int mutex_cond_attach(struct mutex *m, uint32_t saved, bool moved)
{
	struct lock_request req = { .try = false, .moved = moved, .clock = CLOCK_REALTIME };
	int r = mutex_acquire(m, &req);
	int kind = mutex_kind(m);
	if (r != 0 && r != EOWNERDEAD)
		return r;
	mutex_set_extra_holds(m, kind, saved);
	return r;
}

int mutex_trylock_slow(struct mutex *m)
{
	if (robust_take_free(m, mutex_kind(m)))
		return 0;
	struct lock_request req = { .try = true, .clock = CLOCK_REALTIME, .deadline = NULL };
	return mutex_acquire(m, &req);
}

/* "name+0xoffset (object)" for address, or the object and offset only. */
static void describe(char *out, size_t size, const void *address)
{
	Dl_info info;
	if (address == NULL || !dladdr(address, &info) || info.dli_fname == NULL) {
		snprintf(out, size, "%p", address);
	} else if (info.dli_sname != NULL && info.dli_saddr != NULL) {
		snprintf(out, size, "%s+0x%lx (%s)", info.dli_sname,
			 (unsigned long)((const char *)address - (const char *)info.dli_saddr), info.dli_fname);
	} else {
		snprintf(out, size, "%s+0x%lx", info.dli_fname,
			 (unsigned long)((const char *)address - (const char *)info.dli_fbase));
	}
}

/* One line on stderr, once per mutex (the thread whose CAS turned it). */
static void report_turned_plain(struct mutex *m, int kind, const void *caller)
{
	char where[256], what[256], line[768];
	describe(where, sizeof where, caller);
	describe(what, sizeof what, m);
	int n = snprintf(line, sizeof line,
			 "rtpthread: mutex %s (%s from the configuration) unlocked by thread %u, which does not "
			 "hold it, at %s: it is now the plain mutex the program asked for, as glibc allows\n",
			 what, (kind & KIND_PI) ? "inherit" : "protect", (unsigned)self_tid(), where);
	if (n > 0) {
		ssize_t written = write(STDERR_FILENO, line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1);
		(void)written; /* a lost warning changes nothing else */
	}
}

/*
 * A convertible mutex (kind_convertible: PI or PP from the configuration,
 * NORMAL or ADAPTIVE, not robust) unlocked by a thread that does not hold
 * it: glibc lets any thread unlock such a mutex, and programs use it as a
 * semaphore (rt-tests' ptsematest).  Neither protocol allows it (only
 * the owner can give a PI word back to the kernel or drop the ceiling it
 * raised to), so the mutex turns into the plain one the program asked
 * for, for good:
 *   1. the kind loses its protocol (one CAS: the thread that wins it
 *      reports; a loser finds the kind plain already and goes on);
 *   2. the word is released as glibc's unlock does, whoever holds it,
 *      but to WAITERS rather than 0 when lockers may sleep: the next
 *      owner's unlock then wakes a plain sleeper, whose FUTEX_WAKE from
 *      here may fail (EINVAL) while PI waiters are still queued in the
 *      kernel.  Those leave by themselves (mutex_pi.c) within one period.
 *      The wake is for every sleeper, as any release by a thread that
 *      does not hold the word (mutex_wake_count): a PP one's holder may
 *      have moved a condition's sleepers onto it.
 * The owner keeps a PP ceiling's raise (only it can drop it).
 */
static __attribute__((noinline, cold)) int mutex_unlock_foreign(struct mutex *m, int kind, const void *caller)
{
	int plain = kind & ~(KIND_PI | KIND_PP | KIND_DEFAULTED);
	int seen = kind;
	if (atomic_compare_exchange_strong_explicit(&m->kind, &seen, plain, memory_order_release,
						    memory_order_relaxed))
		report_turned_plain(m, kind, caller);
	else if (seen != plain)
		return kind_valid(seen) ? EPERM : EINVAL; /* destroyed, or made anew */
	uint32_t old = atomic_exchange_explicit(&m->word, WORD_WAITERS, memory_order_release);
	if (old & WORD_WAITERS)
		futex_wake(&m->word, INT_MAX, kind_shared(kind));
	return 0;
}

/* The unlock of an initialized kind: the owner check, as glibc does (PP
 * included: a non-owner cannot give back a ceiling it never took), then
 * the protocol's release. */
static inline int mutex_unlock_checked(struct mutex *m, int kind, const void *caller)
{
	if (!kind_valid(kind))
		return EINVAL;
	uint32_t tid = self_tid();
	if (!mutex_owned(m, kind, tid))
		return kind_convertible(kind) ? mutex_unlock_foreign(m, kind, caller) : EPERM;
	if (mutex_extra_holds(m, kind) > 0) {
		m->depth--;
		return 0;
	}
	if (kind & KIND_PI)
		pi_unlock(m, kind, tid);
	else if (kind_lll_word(kind))
		return lll_unlock(m, kind);
	else if (kind & KIND_PP)
		return pp_unlock(m, kind);
	else
		word_unlock(m, kind);
	return 0;
}

/* A mutex without KIND_INIT (NPTL's own init, or a static one never
 * locked): NORMAL and ADAPTIVE ones unlock as the fast path does. */
static __attribute__((noinline, cold)) int mutex_unlock_unadopted(struct mutex *m, const void *caller)
{
	int kind = mutex_adopt(m);
	if (kind_valid(kind) && kind_unlocks_unchecked(kind)) {
		if (kind_lll_word(kind))
			return lll_unlock(m, kind);
		word_unlock(m, kind);
		return 0;
	}
	return mutex_unlock_checked(m, kind, caller);
}

/* An inconsistent one (EOWNERDEAD, never made consistent) becomes
 * unrecoverable in the slow path. */
int mutex_unlock_robust_private(struct mutex *m, int kind)
{
	if (!mutex_owned_private(m) || atomic_load_explicit(&m->owner, memory_order_relaxed) == OWNER_INCONSISTENT)
		return mutex_unlock_slow(m);
	if (m->depth > 0) {
		m->depth--;
		return 0;
	}
	mutex_record_release(m, kind);
	word_unlock_robust(m, kind, 0, false);
	return 0;
}

/* The entry point's caller: mutex_unlock_slow is a tail call of every
 * unlock entry point, so its return address is in the program. */
int mutex_unlock_slow(struct mutex *m)
{
	const void *caller = __builtin_extract_return_addr(__builtin_return_address(0));
	int kind = mutex_kind(m);
	if (__builtin_expect(!(kind & KIND_INIT), 0))
		return mutex_unlock_unadopted(m, caller);
	/* Process-shared NORMAL and ADAPTIVE: any thread may unlock, as in
	 * glibc (the private ones never get here). */
	if (kind_lll_word(kind) && kind_unlocks_unchecked(kind))
		return lll_unlock(m, kind);
	return mutex_unlock_checked(m, kind, caller);
}
