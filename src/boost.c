/*
 * Lending a destroyer's priority to the threads still inside an object.
 *
 * pthread_cond_destroy must not return while a woken waiter may still
 * touch the condition, and such a waiter may be a low-priority thread that
 * has not run since its wake-up: a busy middle-priority thread can keep it
 * off the CPU for as long as it likes (unbounded priority inversion).  So
 * the destroyer lends it its priority through the kernel's PI futexes.
 *
 * Every thread that has waited has a record in its TLS: the object it is
 * inside (or NULL) and a lender pointer; the record is in a registry of
 * BOOST_SLOTS slots (registered at the thread's first wait, taken out by
 * a key destructor at its exit).  A destroyer (boost_one_inside) finds a
 * record inside its object under the registry's PI lock, writes the
 * thread's TID into a word on its own stack, points the record's lender at
 * it and sleeps in FUTEX_LOCK_PI on it: to the kernel the word is a PI
 * mutex that thread owns, so the thread runs at the destroyer's priority
 * until it releases the word.  It does so in boost_leave, right after its
 * last touch of the object: clear the record's object, then take the
 * lender and release it (a CAS from its TID to 0, or FUTEX_UNLOCK_PI when
 * the destroyer already sleeps on it).
 *
 * The race between a destroyer lending and the thread leaving is a Dekker
 * pair, a seq_cst fence on each side between its write and its read: the
 * destroyer sets lender, then reads object; the thread clears object,
 * then reads lender.  Fences, not a seq_cst store and load: an aarch64
 * store-release and load-acquire (what those compile to) are ordered on
 * the hardware, but qemu-user on an x86 host lets the load pass the
 * store, and both sides then miss each other.  Either the
 * thread sees the lender (and releases the word), or the destroyer sees
 * the object cleared and takes its lender back by CAS; if that CAS fails,
 * the thread took the lender and releases the word.  The destroyer touches
 * the record only under the registry lock, which the exit destructor
 * takes too, so a record is never read after its thread's TLS is gone;
 * after the lock it touches only its own stack word.
 *
 * Limits: a thread beyond BOOST_SLOTS (or in a process where the key could
 * not be made) is not found, and its destroyer waits unboosted, as it
 * does for threads of other processes (process-shared objects).
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <time.h>

#include "boost.h"
#include "pi_lock.h"

#define BOOST_SLOTS 1024

struct inside {
	_Atomic(const void *) object;	      /* what the thread is inside, or NULL */
	_Atomic uint32_t *_Atomic lender;     /* a destroyer's word the thread owns */
	uint32_t tid;
	bool tried;			      /* registration attempted */
};

static __thread struct inside self_inside TLS_FAST;
static _Atomic uint32_t slots_lock; /* pi_lock.h */
static struct inside *slots[BOOST_SLOTS];
static pthread_key_t slot_key;
/* 0 before boost_init (the constructor: a wait may come first), 1 made,
 * -1 refused. */
static atomic_int slot_key_state;

static void slot_remove(void *arg)
{
	pi_lock_take(&slots_lock, false);
	for (int i = 0; i < BOOST_SLOTS; i++)
		if (slots[i] == arg)
			slots[i] = NULL;
	pi_lock_release(&slots_lock, false);
}

void boost_init(void)
{
	/* release: a thread that sees 1 sees the key. */
	atomic_store_explicit(&slot_key_state, pthread_key_create(&slot_key, slot_remove) == 0 ? 1 : -1,
			      memory_order_release);
}

/* At the thread's first wait after boost_init: findable if a slot is
 * free and the key exists (else nothing could take it out at exit). */
static void slot_add(struct inside *r)
{
	int key = atomic_load_explicit(&slot_key_state, memory_order_acquire);
	if (key == 0)
		return; /* before the constructor: try again at the next wait */
	r->tried = true;
	r->tid = self_tid();
	if (key < 0 || pthread_setspecific(slot_key, r) != 0)
		return;
	pi_lock_take(&slots_lock, false);
	for (int i = 0; i < BOOST_SLOTS; i++)
		if (!slots[i]) {
			slots[i] = r;
			break;
		}
	pi_lock_release(&slots_lock, false);
}

void boost_after_fork(void)
{
	struct inside *r = &self_inside;
	for (int i = 0; i < BOOST_SLOTS; i++)
		slots[i] = NULL;
	atomic_store_explicit(&slots_lock, 0, memory_order_relaxed);
	atomic_store_explicit(&r->object, NULL, memory_order_relaxed);
	atomic_store_explicit(&r->lender, NULL, memory_order_relaxed);
	if (r->tried) {
		r->tid = self_tid();
		if (atomic_load_explicit(&slot_key_state, memory_order_relaxed) > 0)
			slots[0] = r;
	}
}

const void *boost_enter(const void *object)
{
	struct inside *r = &self_inside;
	if (__builtin_expect(!r->tried, 0))
		slot_add(r);
	const void *outer = atomic_load_explicit(&r->object, memory_order_relaxed);
	/* Relaxed: the caller's release RMW that counts it in the object
	 * publishes it to a destroyer that sees the count. */
	atomic_store_explicit(&r->object, object, memory_order_relaxed);
	return outer;
}

void boost_leave(const void *outer)
{
	struct inside *r = &self_inside;
	/* The Dekker pair (see the top).  release: our touches of the object
	 * come before a later reader of object that sees it cleared. */
	atomic_store_explicit(&r->object, outer, memory_order_release);
	atomic_thread_fence(memory_order_seq_cst);
	if (!atomic_load_explicit(&r->lender, memory_order_relaxed))
		return;
	_Atomic uint32_t *word = atomic_exchange_explicit(&r->lender, NULL, memory_order_seq_cst);
	if (!word)
		return; /* the destroyer took it back */
	uint32_t tid = r->tid;
	if (!atomic_compare_exchange_strong_explicit(word, &tid, 0, memory_order_release, memory_order_relaxed))
		futex_unlock_pi(word, false); /* it sleeps on the word: hand it over */
}

/* Points r's lender at word if r is inside object (under slots_lock).
 * false: not inside, or another destroyer lends to it already. */
static bool lend(struct inside *r, const void *object, _Atomic uint32_t *word)
{
	if (r == &self_inside || atomic_load_explicit(&r->object, memory_order_acquire) != object)
		return false;
	atomic_store_explicit(word, r->tid, memory_order_relaxed);
	_Atomic uint32_t *none = NULL;
	if (!atomic_compare_exchange_strong_explicit(&r->lender, &none, word, memory_order_seq_cst,
						     memory_order_relaxed))
		return false;
	atomic_thread_fence(memory_order_seq_cst); /* the Dekker pair (see the top) */
	if (atomic_load_explicit(&r->object, memory_order_acquire) == object)
		return true;
	/* It left meanwhile.  If it took the lender, it releases the word:
	 * sleeping on it then costs nothing and counts as its leave. */
	_Atomic uint32_t *mine = word;
	return !atomic_compare_exchange_strong_explicit(&r->lender, &mine, NULL, memory_order_seq_cst,
							memory_order_relaxed);
}

/* The kernel refused the PI futex (its thread is alive): take r's lender
 * back, or, if its thread took it, wait until that thread has released
 * the word (it sets it to 0, with a CAS or FUTEX_UNLOCK_PI), so that
 * nothing touches the word once the caller's frame is gone. */
static void lend_undo(struct inside *r, _Atomic uint32_t *word)
{
	bool taken_back = false;
	pi_lock_take(&slots_lock, false);
	for (int i = 0; i < BOOST_SLOTS; i++)
		if (slots[i] == r) {
			_Atomic uint32_t *mine = word;
			taken_back = atomic_compare_exchange_strong_explicit(&r->lender, &mine, NULL,
									     memory_order_seq_cst, memory_order_relaxed);
			break;
		}
	pi_lock_release(&slots_lock, false);
	if (taken_back)
		return;
	/* Ends: its thread took the lender and releases the word next.  The
	 * release wakes nobody (and a FUTEX_WAIT on a PI word would make its
	 * FUTEX_UNLOCK_PI fail), so poll, a millisecond at a time. */
	const struct timespec ms = { 0, 1000000 };
	while (atomic_load_explicit(word, memory_order_acquire) != 0)
		clock_nanosleep(CLOCK_MONOTONIC, 0, &ms, NULL);
}

bool boost_one_inside(const void *object)
{
	_Atomic uint32_t word = 0;
	struct inside *found = NULL;
	pi_lock_take(&slots_lock, false);
	for (int i = 0; i < BOOST_SLOTS && !found; i++)
		if (slots[i] && lend(slots[i], object, &word))
			found = slots[i];
	pi_lock_release(&slots_lock, false);
	if (!found)
		return false;
	/* Ends: the owner releases the word in boost_leave, the next thing it
	 * does after its last touch of the object, and never blocks before
	 * it; EINTR and EAGAIN (owner exiting: it cannot, inside a wait)
	 * try again. */
	for (;;) {
		int r = futex_lock_pi(&word, false, CLOCK_REALTIME, NULL);
		if (r == 0)
			break;
		/* ESRCH: the owner died inside (a raw exit); it never
		 * touches the word, and a thread reusing its TLS starts
		 * with no lender.  ENOSYS (a kernel without PI futexes),
		 * EDEADLK: it lives.  Either way the caller waits
		 * unboosted. */
		if (r == ESRCH)
			return false;
		if (r != EINTR && r != EAGAIN) {
			lend_undo(found, &word);
			return false;
		}
	}
	pi_lock_release(&word, false);
	return true;
}
