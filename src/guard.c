/*
 * The guards of C++ function-local statics (__cxa_guard_acquire, _release,
 * _abort) with priority inheritance: a thread that waits for a static's
 * initializer boosts it.
 *
 * The guard is the Itanium C++ ABI's 64-bit object.  Code compiled by g++
 * tests byte 0 inline (an acquire load; non-zero: initialized) and calls
 * us only when it reads 0.  The two 32-bit halves:
 *
 *   state (bytes 0-3), libstdc++'s own encoding (libsupc++/guard.cc),
 *   kept so that a thread running libstdc++'s copy of these functions on
 *   the same guard still agrees with us:
 *     0                        not initialized (or the initializer threw)
 *     GUARD_DONE      0x1      initialized (byte 0 = 1)
 *     GUARD_PENDING   0x100    an initializer runs
 *     | GUARD_WAITING 0x10000  libstdc++-style sleepers FUTEX_WAIT on
 *                              state (shared futex ops, as libstdc++'s)
 *   owner (bytes 4-7), unused by libstdc++: a PI futex word, 0 or the TID
 *   of our initializer (| FUTEX_WAITERS).
 *
 * Our initializer takes owner first, then moves state 0 -> PENDING, and
 * leaves state (DONE or 0) before it releases owner.  So PENDING with a
 * TID in owner means our initializer runs: waiters FUTEX_LOCK_PI owner and
 * boost it; when the kernel hands them owner they read state again and
 * release owner (DONE), or keep it and initialize (0: the initializer
 * threw; the remaining waiters now boost them).  PENDING with owner 0 means
 * libstdc++'s initializer (or ours between its two steps): wait as
 * libstdc++ does, setting WAITING, unboosted.  Our release wakes state's
 * sleepers when WAITING was set, as libstdc++'s does.
 *
 * fork(): in a child, owner may name a thread of the parent that was
 * initializing the static.  The kernel would let a waiter block on that
 * task (and boost it) for ever; libstdc++'s child waits for ever too.  A
 * waiter first checks that owner's TID is a thread of its own process
 * (tgkill signal 0: ESRCH otherwise); if not, it takes owner and state
 * over and runs the initializer, as a fork child does with pthread_once.
 */
#include <dlfcn.h>
#include <stdlib.h>

#include "once.h"
#include "pi_word.h"

#define GUARD_DONE 0x1u
#define GUARD_PENDING 0x100u
#define GUARD_WAITING 0x10000u

static _Atomic uint32_t *guard_state(uint64_t *guard)
{
	return (_Atomic uint32_t *)guard;
}

static _Atomic uint32_t *guard_owner(uint64_t *guard)
{
	return (_Atomic uint32_t *)guard + 1;
}

/*
 * The initializer of a static reached its own guard again (undefined
 * behaviour in C++).  libstdc++ throws __gnu_cxx::recursive_init_error
 * when the process has one thread, and otherwise waits for itself for
 * ever.  g++ declares __cxa_guard_acquire nothrow, so that exception ends
 * in std::terminate ("terminate called after throwing an instance of
 * ...") and abort.  C cannot throw, but libstdc++ can: when it is loaded
 * (it is in every program that calls this), a std::logic_error goes
 * through __cxa_throw (recursive_init_error's type is not exported), so
 * the program ends as libstdc++'s single-threaded path ends it, whatever
 * its threads, instead of hanging.  Without libstdc++: abort().
 */
static _Noreturn void guard_recursive(void)
{
	void *(*allocate)(size_t) = (void *(*)(size_t))dlsym(RTLD_DEFAULT, "__cxa_allocate_exception");
	void (*construct)(void *, const char *) =
		(void (*)(void *, const char *))dlsym(RTLD_DEFAULT, "_ZNSt11logic_errorC1EPKc");
	void *type = dlsym(RTLD_DEFAULT, "_ZTISt11logic_error");
	void (*destroy)(void *) = (void (*)(void *))dlsym(RTLD_DEFAULT, "_ZNSt11logic_errorD1Ev");
	void (*throw_it)(void *, void *, void (*)(void *)) =
		(void (*)(void *, void *, void (*)(void *)))dlsym(RTLD_DEFAULT, "__cxa_throw");
	if (allocate && construct && type && destroy && throw_it) {
		/* sizeof(std::logic_error): a vtable pointer and a COW string */
		void *object = allocate(2 * sizeof(void *));
		construct(object, "recursive initialization of a function-local static");
		throw_it(object, type, destroy);
	}
	abort();
}

/* Whether tid names a thread of this process (a fork child's guards may
 * name a thread of its parent). */
static bool thread_of_this_process(uint32_t tid)
{
	long pid = raw_syscall6(SYS_getpid, 0, 0, 0, 0, 0, 0);
	return raw_syscall6(SYS_tgkill, pid, tid, 0, 0, 0, 0) != -ESRCH;
}

/* Takes owner for tid: 0, EOWNERDEAD (it named a thread of another
 * process, the parent of this fork child: taken over, no kernel call),
 * EDEADLK (tid holds it) or pi_word_take's error.  The check costs two
 * system calls, made only when owner is held, where the caller would
 * block anyway. */
static int guard_take_owner(_Atomic uint32_t *owner, uint32_t tid)
{
	uint32_t o = atomic_load_explicit(owner, memory_order_relaxed);
	if (o != 0 && (o & FUTEX_TID_MASK) != tid && !thread_of_this_process(o & FUTEX_TID_MASK) &&
	    atomic_compare_exchange_strong_explicit(owner, &o, tid, memory_order_acquire, memory_order_relaxed))
		return EOWNERDEAD;
	return pi_word_take(owner, tid, false);
}

/* Sleeps as libstdc++'s waiters do, on state holding s (PENDING set). */
static void guard_wait_state(_Atomic uint32_t *state, uint32_t s)
{
	if (!(s & GUARD_WAITING)) {
		if (!atomic_compare_exchange_strong_explicit(state, &s, s | GUARD_WAITING, memory_order_relaxed,
							     memory_order_relaxed))
			return; /* changed: read it again */
		s |= GUARD_WAITING;
	}
	futex_wait(state, s, true, CLOCK_REALTIME, NULL); /* 0, EAGAIN, EINTR: read again */
}

/*
 * Ends: every pass returns, or waits until the initializer (ours, boosted,
 * or libstdc++'s) or a thread between its two steps lets go, or retries
 * because state changed between a load and a CAS.
 */
int rt_guard_acquire(uint64_t *guard)
{
	/* acquire: pairs with the release that set byte 0 */
	if (atomic_load_explicit((_Atomic uint8_t *)guard, memory_order_acquire))
		return 0;
	_Atomic uint32_t *state = guard_state(guard), *owner = guard_owner(guard);
	uint32_t tid = self_tid();
	bool held = false;	/* owner is ours */
	bool pi = true;		/* PI futexes work (ENOSYS: wait as libstdc++) */
	for (;;) {
		uint32_t s = atomic_load_explicit(state, memory_order_acquire);
		if (s & 0xff) {
			if (held)
				pi_word_give(owner, tid, false);
			return 0;
		}
		if (s == 0) {
			if (held || !pi) {
				if (atomic_compare_exchange_strong_explicit(state, &s, GUARD_PENDING,
									    memory_order_acquire, memory_order_relaxed))
					return 1;
				continue;
			}
			int r = guard_take_owner(owner, tid);
			if (r == 0 || r == EOWNERDEAD)
				held = true;
			else if (r == EDEADLK)
				guard_recursive();
			else
				pi = false;
			continue;
		}
		if (held) {
			/* libstdc++'s initializer took state: it never uses owner. */
			pi_word_give(owner, tid, false);
			held = false;
		} else if (pi) {
			uint32_t o = atomic_load_explicit(owner, memory_order_relaxed);
			if ((o & FUTEX_TID_MASK) == tid)
				guard_recursive();
			if (o != 0) {
				int r = guard_take_owner(owner, tid);
				if (r == EOWNERDEAD) {
					/* The initializer is in the parent: this thread
					 * runs it instead, if state is unchanged
					 * (WAITING kept: sleepers of this child). */
					held = true;
					if (atomic_compare_exchange_strong_explicit(state, &s, s, memory_order_acquire,
										    memory_order_relaxed))
						return 1;
					continue;
				}
				if (r == 0) {
					held = true;
					continue;
				}
				if (r == EDEADLK)
					guard_recursive();
				pi = false;
			}
		}
		guard_wait_state(state, s);
	}
}

/* Sets state to outcome, wakes libstdc++-style sleepers, hands owner on. */
static void guard_finish(uint64_t *guard, uint32_t outcome)
{
	_Atomic uint32_t *state = guard_state(guard);
	/* release: the static's construction happens before byte 0 reads 1 */
	uint32_t old = atomic_exchange_explicit(state, outcome, memory_order_acq_rel);
	if (old & GUARD_WAITING)
		futex_wake(state, INT_MAX, true);
	pi_word_give(guard_owner(guard), self_tid(), false);
}

void rt_guard_release(uint64_t *guard)
{
	guard_finish(guard, GUARD_DONE);
}

void rt_guard_abort(uint64_t *guard)
{
	guard_finish(guard, 0);
}
