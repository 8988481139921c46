/*
 * The mutex object, laid over glibc's pthread_mutex_t (40 bytes on x86_64,
 * 48 on aarch64, same offsets for everything we use).
 *
 *   off  glibc name  ours
 *    0   __lock      word: the futex word, for every kind
 *    4   __count     depth: extra recursive locks held (0 = locked once);
 *                    in glibc's format (below), glibc's __count
 *    8   __owner     owner: the holder's TID, 0 when free, OWNER_INCONSISTENT
 *                    after EOWNERDEAD until consistent, OWNER_NOTRECOVERABLE
 *                    for good (glibc's values, for every kind: glibc's own
 *                    readers and gdb's pretty printers find the owner)
 *   12   __nusers    ceiling (PP, low 16 bits) and owner_ceiling (high 16);
 *                    in glibc's format, glibc's user count
 *   16   __kind      kind: type and protocol bits, glibc's encoding, and
 *                    KIND_INIT
 *   20   __spins     owner_cpu: PI kinds, the CPU its owner took it on,
 *                    + 1, or 0 (unknown); a hint for pi_spin.
 *                    moved: the kinds a condition moves sleepers onto
 *                    (kind_cond_requeue), 1 from such a move until the
 *                    release that wakes them (mutex_wake_count)
 *   22   __elision   owner_fork: the owner_code (self.h) of the process
 *                    its owner took it in, 0 while it is free
 *   24   __list      link: robust-list node (prev 24, next 32)
 *
 * glibc's static initializers are all-zero but for the kind, which is the
 * type (0..3) at offset 16, so they are valid free mutexes here.
 *
 * Private mutexes: the word, for every kind and protocol, is the owner's
 * TID, plus WORD_WAITERS when a thread may sleep on it and WORD_OWNER_DIED
 * when a robust owner died.  This is the kernel's PI-futex and robust-list
 * format, so one encoding serves plain, PI, robust and PP mutexes, and a
 * mutex can be locked through the PI protocol without any change to its
 * bytes.  NORMAL mutexes store the TID too although nobody checks it at
 * unlock (glibc lets any thread unlock them, and ptsematest relies on it).
 *
 * Process-shared mutexes are glibc's format exactly (kind_glibc_format), so
 * that processes without the library share them (mutex_shared.c): plain
 * words 0/1/2 (free, held, held with sleepers), PP words the same below
 * the ceiling << 19, robust and PI words the TID format above; __count is
 * glibc's (1 once locked, the recursion count of a RECURSIVE one), an
 * unrecoverable robust mutex is free with __owner OWNER_NOTRECOVERABLE, and
 * __nusers counts lock holds.  A robust PP one, which glibc cannot make,
 * keeps the private format.
 *
 * owner_fork tells, in a fork child, a word that names one of its threads
 * from one that a thread of an ancestor process with the same TID left
 * (TIDs are reused): every acquisition stamps it after the word names the
 * new owner, every release clears it before the word is released, so a
 * word freshly taken reads 0 or the taker's stamp, never an ancestor's
 * (mutex_owned, mutex_take_from_fork_parent).
 */
#ifndef RTPTHREAD_MUTEX_H
#define RTPTHREAD_MUTEX_H

#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/single_threaded.h>
#include <time.h>

#include "futex.h"
#include "self.h"

#define WORD_WAITERS FUTEX_WAITERS	  /* 0x80000000 */
#define WORD_OWNER_DIED FUTEX_OWNER_DIED /* 0x40000000 */
#define WORD_TID_MASK FUTEX_TID_MASK	  /* 0x3fffffff */
/* No TID is this large (PID_MAX_LIMIT is 4M), so no dying thread and no
 * user-space CAS from 0 ever matches it: an unrecoverable robust mutex. */
#define WORD_NOTRECOVERABLE WORD_TID_MASK

/* Kind bits, as glibc encodes __kind. */
#define KIND_TYPE_MASK 0x3 /* PTHREAD_MUTEX_{NORMAL,RECURSIVE,ERRORCHECK,ADAPTIVE_NP} */
#define KIND_ROBUST 0x10
#define KIND_PI 0x20
#define KIND_PP 0x40
#define KIND_PSHARED 0x80
#define KIND_ELISION 0x300 /* glibc's elision hints: accepted, ignored */
/* Ours: set by mutex_init, or at the first use of a mutex nobody
 * initialized (a static initializer: all zero but the type), which then
 * gets the default protocol (mutex_adopt).  The fast paths require it, so
 * that first use always reaches the slow path. */
#define KIND_INIT 0x1000
/* Ours: the protocol bits came from the configuration (protocol=inherit,
 * protect or report), not from the program's attributes.  Such a NORMAL
 * or ADAPTIVE mutex keeps glibc's leniency: a thread that does not hold
 * it may unlock it, which turns it into the plain mutex the program asked
 * for (mutex.c, mutex_unlock_foreign).  A PP lock by a SCHED_DEADLINE
 * thread, which the program cannot have meant, changes nothing for such a
 * mutex (priority.h).  Every fast path ignores it. */
#define KIND_DEFAULTED 0x2000
#define KIND_DESTROYED (-1)

/* glibc's PP word: the ceiling above the 0/1/2 lock state. */
#define LLL_CEILING_SHIFT 19
#define LLL_CEILING_MASK 0xfff80000u

/* __owner of a robust mutex whose owner died (glibc's values). */
#define OWNER_INCONSISTENT INT32_MAX
#define OWNER_NOTRECOVERABLE (INT32_MAX - 1)

struct robust_link {
	struct robust_link *prev;
	void *next; /* an entry: &next of the following node, bit 0 = PI */
};

struct mutex {
	_Atomic uint32_t word;
	uint32_t depth;
	_Atomic int32_t owner;
	union {
		struct {
			_Atomic uint16_t ceiling;
			uint16_t owner_ceiling;
		};
		uint32_t nusers; /* glibc's format only */
	};
	_Atomic int32_t kind;
	union {
		_Atomic uint16_t owner_cpu; /* PI */
		_Atomic uint16_t moved;	    /* kind_cond_requeue */
	};
	_Atomic uint16_t owner_fork;
	struct robust_link link;
};

static inline struct mutex *mutex_of(pthread_mutex_t *m)
{
	return (struct mutex *)m;
}

static inline int mutex_kind(const struct mutex *m)
{
	return atomic_load_explicit(&m->kind, memory_order_relaxed);
}

/* After the word names the caller: stamp it with this process. */
/* After the word names the new owner tid: __owner for glibc's readers
 * (ours go by the word) and the fork stamp.  Relaxed: the holder alone
 * writes them, and the release of the unlock orders them. */
static inline __attribute__((always_inline)) void mutex_stamp_owner(struct mutex *m, uint32_t tid)
{
	atomic_store_explicit(&m->owner, (int32_t)tid, memory_order_relaxed);
	atomic_store_explicit(&m->owner_fork, owner_code, memory_order_relaxed);
}

/* A PI kind just taken: where its owner runs, for pi_spin (mutex_pi.c).
 * Relaxed: a hint, read by lockers that may see an older one. */
static inline __attribute__((always_inline)) void mutex_stamp_cpu(struct mutex *m)
{
	atomic_store_explicit(&m->owner_cpu, self_cpu_hint(), memory_order_relaxed);
}

/* Before the release that frees the word (which orders these stores). */
static inline __attribute__((always_inline)) void mutex_clear_owner(struct mutex *m)
{
	atomic_store_explicit(&m->owner, 0, memory_order_relaxed);
	atomic_store_explicit(&m->owner_fork, 0, memory_order_relaxed);
}

static inline int kind_type(int kind)
{
	return kind & KIND_TYPE_MASK;
}

/* Robust words must be waited on and woken as shared futexes: the kernel's
 * wake-up at the owner's death is shared. */
static inline bool kind_shared(int kind)
{
	return (kind & (KIND_PSHARED | KIND_ROBUST)) != 0;
}

/* Process-shared, and so in glibc's format (see the top): all but robust
 * PP, which glibc refuses to make. */
static inline bool kind_glibc_format(int kind)
{
	return __builtin_expect((kind & KIND_PSHARED) != 0, 0) &&
	       (kind & (KIND_ROBUST | KIND_PP)) != (KIND_ROBUST | KIND_PP);
}

/* A kind whose uncontended lock is one CAS 0 -> TID and the owner's
 * store, and nothing else (private, not robust, not PP). */
static inline bool kind_is_simple(int kind)
{
	return (kind & ~(KIND_TYPE_MASK | KIND_PI | KIND_ELISION | KIND_DEFAULTED)) == KIND_INIT;
}

/* NORMAL and ADAPTIVE without PI, PP or robustness: any thread may unlock
 * them, as in glibc (rt-tests' ptsematest relies on it). */
static inline bool kind_unlocks_unchecked(int kind)
{
	int bits = kind & ~(KIND_PSHARED | KIND_ELISION | KIND_INIT | KIND_DEFAULTED);
	return bits == PTHREAD_MUTEX_NORMAL || bits == PTHREAD_MUTEX_ADAPTIVE_NP;
}

int mutex_lock_slow(struct mutex *m, clockid_t clock, const struct timespec *deadline) HIDDEN;
/* An untimed lock that mutex_take_free did not take: a free robust one
 * (private, without PI or PP) taken with the robust list, without the
 * slow path's stack frame; the rest is mutex_lock_slow's. */
int mutex_lock_untimed(struct mutex *m) HIDDEN;
int mutex_trylock_slow(struct mutex *m) HIDDEN;
int mutex_unlock_slow(struct mutex *m) HIDDEN;
int mutex_init(struct mutex *m, const pthread_mutexattr_t *attr) HIDDEN;
int mutex_destroy(struct mutex *m) HIDDEN;
int mutex_consistent(struct mutex *m) HIDDEN;
/* Gives a mutex nobody initialized its kind (KIND_INIT); returns it
 * (mutex_defaults.c, as the two setters below). */
int mutex_adopt(struct mutex *m) HIDDEN;

/* m's kind, adopted first if it never was (one bit test otherwise). */
static inline int mutex_kind_adopted(struct mutex *m)
{
	int kind = mutex_kind(m);
	return __builtin_expect(kind & KIND_INIT, 1) ? kind : mutex_adopt(m);
}
/* The protocol (0, KIND_PI or KIND_PP, with KIND_DEFAULTED, or
 * KIND_DEFAULTED alone for protocol=report) and PP ceiling that mutexes
 * get when their attributes chose none; set once at load. */
void mutex_set_default_protocol(int protocol, int ceiling) HIDDEN;
/* How many times a contended lock spins before it sleeps, set once at
 * load: spins for the plain kinds (the spin configuration, 0 by default;
 * ADAPTIVE ones at least ADAPTIVE_SPINS); SHORT_SPINS, with more than one
 * CPU, for PI lockers (mutex_pi.c says why) and for waiters a broadcast
 * moved onto a word (mutex_word.h).  A spin is a pause and a load: 40
 * are about a microsecond, enough for an owner's short critical section
 * and far less than one wake-up of a sleeper on a VM.  A PI locker on
 * its owner's CPU, where the spin cannot succeed, does not spin (spinning
 * there cost pi_stress 3% of its rate, 100 spins 10%); with them,
 * cond-perf -k's moved waiters sleep about once each (the minimum) where
 * without a fifth of them sleep again, and 200 saved no more. */
#define SHORT_SPINS 40
void mutex_set_spin(int spins, int cpus) HIDDEN;

/*
 * May a plain load and store take and release a word of this kind?  Yes
 * while the process has one thread and the word is private: nobody else
 * looks at it, so the lock prefix of a CAS or an exchange buys nothing
 * (glibc does the same for its private mutexes).  glibc clears
 * __libc_single_threaded in pthread_create before the new thread exists,
 * and only a thread alone writes it, so reading true means alone; the
 * clone orders every store before it ahead of the new thread's first
 * load, so a word taken this way is seen held by the next thread.  PI
 * words need the kernel only when there are waiters, which a thread alone
 * cannot have; robust words stay on atomics (the kernel reads them with
 * the robust list).  A thread made without pthread_create (a raw clone)
 * clears nothing: with it, as with glibc's own locks, private mutexes are
 * not safe.
 */
static inline bool mutex_word_unshared(int kind)
{
	return __libc_single_threaded && !(kind & (KIND_PSHARED | KIND_ROBUST));
}

/*
 * Fast paths.  Acquire on success pairs with the release in unlock; a CAS
 * that fails needs no ordering because the slow path starts over.
 */

/* A process-shared NORMAL, ERRORCHECK or ADAPTIVE mutex taken from free
 * (glibc's format, mutex_shared.c): 0 -> 1, then what glibc records of a
 * lock; false for any other kind (RECURSIVE relocks, PP raises: the slow
 * path). */
static inline bool mutex_take_free_shared(struct mutex *m, int kind, uint32_t tid)
{
	int bits = kind & ~(KIND_ELISION | KIND_INIT | KIND_PSHARED);
	if ((kind & (KIND_INIT | KIND_PSHARED)) != (KIND_INIT | KIND_PSHARED) ||
	    (bits != PTHREAD_MUTEX_NORMAL && bits != PTHREAD_MUTEX_ERRORCHECK && bits != PTHREAD_MUTEX_ADAPTIVE_NP))
		return false;
	uint32_t expected = 0;
	if (!atomic_compare_exchange_strong_explicit(&m->word, &expected, 1, memory_order_acquire,
						     memory_order_relaxed))
		return false;
	atomic_store_explicit(&m->owner, (int32_t)tid, memory_order_relaxed);
	m->depth = 1;
	m->nusers++;
	return true;
}

static inline __attribute__((always_inline)) bool mutex_take_free(struct mutex *m)
{
	int kind = mutex_kind(m);
	uint32_t expected = 0;
	/* A thread whose TID is not at hand yet takes the slow path, which
	 * fetches it: the fast path keeps no stack frame. */
	uint32_t tid = self_tid_or_zero();
	if (__builtin_expect(tid == 0, 0))
		return false;
	if (__builtin_expect(!kind_is_simple(kind), 0))
		return mutex_take_free_shared(m, kind, tid);
	if (mutex_word_unshared(kind)) {
		if (atomic_load_explicit(&m->word, memory_order_relaxed) != 0)
			return false;
		atomic_store_explicit(&m->word, tid, memory_order_relaxed);
	} else if (!atomic_compare_exchange_strong_explicit(&m->word, &expected, tid, memory_order_acquire,
							    memory_order_relaxed)) {
		return false;
	}
	mutex_stamp_owner(m, tid);
	if (kind & KIND_PI)
		mutex_stamp_cpu(m);
	return true;
}

static inline int mutex_lock(struct mutex *m)
{
	return mutex_take_free(m) ? 0 : mutex_lock_untimed(m);
}

static inline int mutex_trylock(struct mutex *m)
{
	return mutex_take_free(m) ? 0 : mutex_trylock_slow(m);
}

/*
 * How many sleepers a release that found WAITERS in the word (old, as it
 * took it) wakes.  After a holder's broadcast moved sleepers onto the word
 * (moved, set by mutex_cond_moved), all of them, in one call: woken while
 * the mutex is free, they run on every CPU at once and take it in turn (a
 * moved waiter spins SHORT_SPINS before it sleeps again), where a chain
 * of one wake-up per unlock pays the wake-up of an idle CPU at many links
 * (docs/rt-bench.md has the figures).  Since that release leaves nobody
 * asleep on the word, a moved waiter takes the word as any new locker
 * does, without WAITERS, and its unlock makes no wake call unless
 * somebody has slept since.  Every other release wakes one.
 *
 * moved is set by the holder after its move and read by the holder's
 * release (or, after a robust owner died, by the next owner's), which
 * wakes after any move made before it: another holder can only set moved
 * after it took the word, so a release that clears the new value still
 * wakes after that move.  A release by a thread that does not hold the
 * word (NORMAL and ADAPTIVE, as glibc allows) cannot know whether the
 * holder moved sleepers onto it: it wakes them all (mutex_cond_moved
 * covers one that came before the move).  A value left behind (a PI
 * mutex turned plain, a move followed by such a release, which wakes all
 * without clearing it) can only make one release wake more than one
 * sleeper: the others sleep again.
 */
static inline int mutex_wake_count(struct mutex *m, uint32_t old)
{
	if (__builtin_expect((old & WORD_TID_MASK) != self_tid(), 0))
		return INT_MAX;
	if (__builtin_expect(!atomic_load_explicit(&m->moved, memory_order_relaxed), 1))
		return 1;
	atomic_store_explicit(&m->moved, 0, memory_order_relaxed);
	return INT_MAX;
}

/* The release of a private word without PI, PP or robustness that the
 * caller may release (it holds it, or the kind lets anyone). */
static inline __attribute__((always_inline)) void mutex_release_private(struct mutex *m, int kind)
{
	mutex_clear_owner(m);
	/* Alone: nobody can sleep on a private word (a WAITERS bit left from
	 * before a fork names threads the child lacks). */
	if (mutex_word_unshared(kind)) {
		atomic_store_explicit(&m->word, 0, memory_order_relaxed);
		return;
	}
	uint32_t old = atomic_exchange_explicit(&m->word, 0, memory_order_release);
	if (__builtin_expect(old & WORD_WAITERS, 0))
		futex_wake(&m->word, mutex_wake_count(m, old), false);
}

/* The caller's TID if it holds the private word m, outside a fork child,
 * else 0.  The unlock fast paths' owner check: in a fork child, for a
 * caller that does not hold m and for a thread whose TID is not at hand
 * yet, mutex_unlock_slow decides (mutex_owned). */
static inline __attribute__((always_inline)) uint32_t mutex_owned_private(struct mutex *m)
{
	uint32_t tid = self_tid_or_zero();
	if (__builtin_expect(fork_generation != 0, 0) ||
	    (atomic_load_explicit(&m->word, memory_order_relaxed) & WORD_TID_MASK) != tid)
		return 0;
	return tid;
}

/* Robust, private, without PI or PP: the owner check on the word and the
 * release with the robust list, without the slow path's dispatch
 * (mutex.c); a tail call of the entry point. */
int mutex_unlock_robust_private(struct mutex *m, int kind) HIDDEN;
/* PI, private, without PP (mutex_pi.c). */
int mutex_unlock_pi_private(struct mutex *m, int kind) HIDDEN;

/* NORMAL and ADAPTIVE, private, without PI: release whoever holds it, as
 * glibc does. */
static inline __attribute__((always_inline)) int mutex_unlock(struct mutex *m)
{
	int kind = mutex_kind(m);
	int bits = kind & ~(KIND_ELISION | KIND_DEFAULTED);
	if (__builtin_expect(bits == (KIND_INIT | PTHREAD_MUTEX_NORMAL) || bits == (KIND_INIT | PTHREAD_MUTEX_ADAPTIVE_NP),
			     1)) {
		mutex_release_private(m, kind);
		return 0;
	}
	/* RECURSIVE and ERRORCHECK, private, without PI: the owner check on
	 * the word and the release, here. */
	if (bits == (KIND_INIT | PTHREAD_MUTEX_RECURSIVE) || bits == (KIND_INIT | PTHREAD_MUTEX_ERRORCHECK)) {
		if (!mutex_owned_private(m))
			return mutex_unlock_slow(m);
		if (m->depth > 0)
			m->depth--;
		else
			mutex_release_private(m, kind);
		return 0;
	}
	if ((bits & ~KIND_TYPE_MASK) == (KIND_INIT | KIND_ROBUST))
		return mutex_unlock_robust_private(m, kind);
	if ((bits & ~(KIND_TYPE_MASK | KIND_ROBUST)) == (KIND_INIT | KIND_PI))
		return mutex_unlock_pi_private(m, kind);
	/* Process-shared NORMAL and ADAPTIVE: glibc's release, by any thread. */
	if ((kind & ~KIND_ELISION) == (KIND_INIT | KIND_PSHARED | PTHREAD_MUTEX_NORMAL) ||
	    (kind & ~KIND_ELISION) == (KIND_INIT | KIND_PSHARED | PTHREAD_MUTEX_ADAPTIVE_NP)) {
		m->nusers--;
		atomic_store_explicit(&m->owner, 0, memory_order_relaxed);
		if (atomic_exchange_explicit(&m->word, 0, memory_order_release) > 1)
			futex_wake(&m->word, 1, true);
		return 0;
	}
	return mutex_unlock_slow(m);
}

#endif
