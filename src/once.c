/*
 * pthread_once and C11 call_once with priority inheritance: a thread that
 * waits for an initializer boosts it.
 *
 * The once word (pthread_once_t, once_flag: one int, static initializer 0)
 * cannot hold a PI futex itself: a waiter that the kernel hands a PI word
 * owns it, and a 32-bit TID word has no room left to say "done" at the
 * same time.  So the boost goes through a slot: a PI futex word in a table
 * of ONCE_SLOTS words, and the once word names the slot.
 *
 *   0                      never run, or the initializer was cancelled
 *   2 (ONCE_DONE)          done: glibc's own value, so a word glibc
 *                          completed is done here too, and glibc's test
 *                          (bit 1) sees ours as done
 *   slot << 2 | 1          in progress; the initializer holds slot
 *                          (1..ONCE_SLOTS-1: bits 2-11, bits 12-31 zero)
 *   gen << 12 | 1          in progress without a slot (the table is full
 *                          or could not be mapped): waiters FUTEX_WAIT on
 *                          the word unboosted; gen (1..0xfffff) is derived
 *                          from the process ID, so a fork child tells an
 *                          initializer of its parent from one of its own
 *
 * Bit 0 set and bit 1 clear while in progress, as glibc's words are.
 *
 * Slot word: 0 free, else the TID of its holder (| FUTEX_WAITERS).
 * Invariant: a thread writes slot << 2 | 1 into a once word only while it
 * holds the slot, and releases the slot only after it has stored 0 or
 * ONCE_DONE there.  Hence a thread that holds slot s and still reads
 * s << 2 | 1 in a once word knows that word's initializer is gone: a
 * waiter that got s from the kernel either sees the word changed, or takes
 * over (the initializer was in another process: fork, below).
 *
 * Waiting: FUTEX_LOCK_PI on the slot; the initializer is boosted by every
 * waiter.  Done: the initializer stores ONCE_DONE, then releases the slot;
 * the kernel hands it to the top waiter, which sees ONCE_DONE and releases
 * it in turn (each boosted by those still queued).  Cancelled, or left by
 * a C++ exception: the initializer stores 0 and releases the slot; the
 * waiter handed the slot keeps it and becomes the initializer, still
 * boosted by the others.  A waiter may find its slot reused for another
 * once object by then: it waits for that initializer (boosting it) and
 * then reads its own word again.
 *
 * fork(): the table lives in a page with MADV_WIPEONFORK, and the
 * library's atfork child handler clears it too, so in a child every slot
 * is free.  A once word left in progress by a thread that does
 * not exist in the child names a slot that nobody holds: the child takes
 * the slot and the word over and runs the initializer, as glibc's fork
 * generation makes it do.  The thread that forked, if it was running an
 * initializer, still finishes it in the child (as in glibc).
 *
 * Only this file reads or writes these words: a word is assumed never to
 * be in progress under glibc's pthread_once and ours at once (with the
 * library preloaded from the start, every call comes here).
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <sys/mman.h>
#include <unistd.h>

#include "once.h"
#include "pi_word.h"
#include "self.h"

/* The unwinder's entry points, present when libgcc_s was loaded with the
 * library (every C++ program: libstdc++ needs it).  Weak, so that the
 * library needs no libgcc_s. */
extern void __gcc_personality_v0(void) __attribute__((weak));
__asm__(".weak _Unwind_Resume");

/* glibc's cancellation-handler registration, which its pthread_cleanup_push
 * uses in code compiled without exceptions (pthread.h declares them only
 * there; this file has -fexceptions for once_unwound). */
extern void __pthread_register_cancel(__pthread_unwind_buf_t *buf);
extern void __pthread_unregister_cancel(__pthread_unwind_buf_t *buf);
extern _Noreturn void __pthread_unwind_next(__pthread_unwind_buf_t *buf);
extern int __sigsetjmp(struct __jmp_buf_tag *env, int savemask) __attribute__((returns_twice));

#define ONCE_DONE 2u
#define ONCE_BUSY 1u
#define ONCE_SLOTS 1024u /* one page of words */
#define SLOT_SHIFT 2
#define SLOT_MASK (ONCE_SLOTS - 1)
#define GEN_SHIFT 12
#define GEN_MAX 0xfffffu

/* Set when FUTEX_LOCK_PI is ENOSYS (a kernel without PI futexes): new
 * initializers then take no slot, and a finishing one wakes the word. */
static _Atomic bool pi_missing;

/* The slot table: 0 until mapped, 1 when it cannot be, else its address. */
static _Atomic uintptr_t slot_table_addr;

static _Atomic uint32_t *slot_table(void)
{
	uintptr_t a = atomic_load_explicit(&slot_table_addr, memory_order_acquire);
	if (__builtin_expect(a > 1, 1))
		return (_Atomic uint32_t *)a;
	if (a == 1)
		return NULL;
	uintptr_t mapped = 1;
	long page = raw_syscall6(SYS_mmap, 0, ONCE_SLOTS * 4, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
				 -1, 0);
	if (page < 0 && page > -4096)
		page = 0;
	else if (raw_syscall6(SYS_madvise, page, ONCE_SLOTS * 4, MADV_WIPEONFORK, 0, 0, 0) != 0) {
		/* Before 4.14 a child would inherit slots held by threads of
		 * its parent, and block on them for ever: no slots at all. */
		raw_syscall6(SYS_munmap, page, ONCE_SLOTS * 4, 0, 0, 0, 0);
		page = 0;
	}
	if (page)
		mapped = (uintptr_t)page;
	/* release: the winner's zeroed page is what readers index */
	if (!atomic_compare_exchange_strong_explicit(&slot_table_addr, &a, mapped, memory_order_acq_rel,
						     memory_order_acquire) && page)
		raw_syscall6(SYS_munmap, page, ONCE_SLOTS * 4, 0, 0, 0, 0);
	else
		a = mapped;
	return a > 1 ? (_Atomic uint32_t *)a : NULL;
}

void once_after_fork(void)
{
	uintptr_t a = atomic_load_explicit(&slot_table_addr, memory_order_acquire);
	if (a <= 1)
		return;
	_Atomic uint32_t *table = (_Atomic uint32_t *)a;
	/* The child's only thread: nobody else reads the table. */
	for (unsigned s = 0; s < ONCE_SLOTS; s++)
		atomic_store_explicit(&table[s], 0, memory_order_relaxed);
}

/* A free slot for tid, or 0.  Ends: one pass over the table. */
static unsigned slot_take_free(_Atomic uint32_t *table, uint32_t tid)
{
	unsigned start = tid % (ONCE_SLOTS - 1);
	for (unsigned i = 0; i < ONCE_SLOTS - 1; i++) {
		unsigned s = 1 + (start + i) % (ONCE_SLOTS - 1);
		uint32_t v = 0;
		if (atomic_load_explicit(&table[s], memory_order_relaxed) == 0 &&
		    atomic_compare_exchange_strong_explicit(&table[s], &v, tid, memory_order_acquire,
							    memory_order_relaxed))
			return s;
	}
	return 0;
}

static unsigned word_slot(uint32_t w)
{
	return (w >> SLOT_SHIFT) & SLOT_MASK;
}

/* This process's generation for slotless words: never 0, and a fork
 * child's differs from its parent's unless their process IDs are equal
 * modulo GEN_MAX (glibc's fork generation wraps too). */
static uint32_t own_gen(void)
{
	return (uint32_t)getpid() % GEN_MAX + 1;
}

/* One run of an initializer, on the running thread's stack; the thread's
 * runs form a list (innermost first) to tell recursion from a wait. */
struct once_run {
	_Atomic uint32_t *word;
	unsigned slot;
	bool finished;
	bool registered; /* cancel is registered with glibc */
	struct once_run *outer;
	__pthread_unwind_buf_t cancel;
};

static __thread struct once_run *running TLS_FAST;

static bool running_here(_Atomic uint32_t *word)
{
	for (struct once_run *r = running; r; r = r->outer)
		if (r->word == word)
			return true;
	return false;
}

/* Publishes the outcome (ONCE_DONE, or 0 to let another thread run the
 * initializer), then lets the waiters go.  release: the initializer's
 * writes happen before any load that sees ONCE_DONE. */
static void once_finish(struct once_run *run, uint32_t outcome)
{
	run->finished = true;
	running = run->outer;
	atomic_store_explicit(run->word, outcome, memory_order_release);
	if (run->slot == 0 || atomic_load_explicit(&pi_missing, memory_order_relaxed))
		futex_wake(run->word, INT_MAX, false); /* only EFAULT: the word is ours */
	if (run->slot == 0)
		return;
	/* self_tid() now, not at the start: in a fork child the thread that
	 * forked has a new TID and its slot was wiped, so nothing is given. */
	pi_word_give(&slot_table()[run->slot], self_tid(), false);
}

/* The initializer was left by unwinding (a C++ exception, or cancellation
 * where the unwinder runs this handler): the word goes back to 0, as
 * glibc's cleanup handler sets it. */
static void once_unwound(struct once_run **run)
{
	if (!(*run)->finished) {
		if ((*run)->registered)
			__pthread_unregister_cancel(&(*run)->cancel);
		once_finish(*run, 0);
	}
}

/*
 * Runs init, resetting the word if the thread is cancelled or a C++
 * exception passes.  With the personality routine (libgcc_s loaded), as
 * glibc's pthread_once does: once_unwound is a cleanup handler that the
 * unwinder runs for both, after the initializer's own frames.  Without it
 * nothing can throw, and cancellation goes through glibc's registration of
 * a setjmp buffer (what pthread_cleanup_push does in C built without
 * exceptions): glibc's unwinder longjmps there.
 */
static void once_execute(struct once_run *run, void (*init)(void))
{
	struct once_run *unwinding __attribute__((cleanup(once_unwound))) = run;
	(void)unwinding;
	running = run;
	if (!__gcc_personality_v0) {
		if (__sigsetjmp((struct __jmp_buf_tag *)(void *)run->cancel.__cancel_jmp_buf, 0)) {
			once_finish(run, 0);
			__pthread_unwind_next(&run->cancel);
		}
		__pthread_register_cancel(&run->cancel);
		run->registered = true;
	}
	init();
	if (run->registered)
		__pthread_unregister_cancel(&run->cancel);
	once_finish(run, ONCE_DONE);
}

/*
 * Ends: every pass returns, or changes the word by CAS (then whoever runs
 * the initializer finishes it), or sleeps until the word's initializer or
 * the slot's holder lets go, or sees the word changed since its last read.
 */
static int once_slow(_Atomic uint32_t *word, void (*init)(void))
{
	_Atomic uint32_t *table = slot_table();
	uint32_t tid = self_tid();
	unsigned held = 0; /* a slot this thread holds, kept to run the initializer */
	int result = 0;
	for (;;) {
		uint32_t w = atomic_load_explicit(word, memory_order_acquire);
		if (w & ONCE_DONE)
			break;
		if (w == 0) {
			if (!held && table && !atomic_load_explicit(&pi_missing, memory_order_relaxed))
				held = slot_take_free(table, tid);
			uint32_t mine = held ? held << SLOT_SHIFT | ONCE_BUSY : own_gen() << GEN_SHIFT | ONCE_BUSY;
			if (!atomic_compare_exchange_strong_explicit(word, &w, mine, memory_order_acquire,
								     memory_order_relaxed))
				continue;
			struct once_run run = { .word = word, .slot = held, .outer = running };
			once_execute(&run, init);
			return 0;
		}
		unsigned s = word_slot(w);
		if (s == 0) {
			/* A slotless initializer.  Another process's (the parent
			 * of this fork child): take the word over. */
			if ((w >> GEN_SHIFT) != own_gen()) {
				atomic_compare_exchange_strong_explicit(word, &w, 0, memory_order_relaxed,
									memory_order_relaxed);
				continue;
			}
			if (running_here(word)) {
				result = EDEADLK;
				break;
			}
			if (held) {
				pi_word_give(&table[held], tid, false);
				held = 0;
			}
			futex_wait(word, w, false, CLOCK_REALTIME, NULL); /* 0, EAGAIN, EINTR: read again */
			continue;
		}
		if (held == s) {
			/* The invariant: the initializer that wrote this is gone. */
			atomic_compare_exchange_strong_explicit(word, &w, 0, memory_order_relaxed, memory_order_relaxed);
			continue;
		}
		if (held) {
			pi_word_give(&table[held], tid, false);
			held = 0;
		}
		int r = table ? pi_word_take(&table[s], tid, false) : EINVAL;
		if (r == 0) {
			held = s;
			continue;
		}
		if (r == EDEADLK) {
			/* This thread holds s: it runs this word's initializer
			 * (a recursive call, which glibc never returns from), or
			 * another one, and this word is stale from a fork. */
			if (running_here(word)) {
				result = EDEADLK;
				break;
			}
			atomic_compare_exchange_strong_explicit(word, &w, 0, memory_order_relaxed, memory_order_relaxed);
			continue;
		}
		if (r == ENOSYS) {
			/* No PI futexes: sleep on the word, unboosted.  The
			 * initializer may have missed pi_missing and not wake
			 * it: the 10 ms bound covers that. */
			atomic_store_explicit(&pi_missing, true, memory_order_relaxed);
			struct timespec deadline;
			clock_gettime(CLOCK_MONOTONIC, &deadline);
			deadline.tv_nsec += 10000000;
			if (deadline.tv_nsec >= 1000000000) {
				deadline.tv_sec++;
				deadline.tv_nsec -= 1000000000;
			}
			futex_wait(word, w, false, CLOCK_MONOTONIC, &deadline); /* any result: read again */
			continue;
		}
		result = r; /* a slot word with no table: not a once word of this process */
		break;
	}
	if (held)
		pi_word_give(&table[held], tid, false);
	return result;
}

int rt_once(pthread_once_t *once, void (*init)(void))
{
	if (!once || !init)
		return EINVAL;
	_Atomic uint32_t *word = (_Atomic uint32_t *)once;
	/* acquire: pairs with once_finish's release of ONCE_DONE */
	if (__builtin_expect(atomic_load_explicit(word, memory_order_acquire) & ONCE_DONE, 1))
		return 0;
	return once_slow(word, init);
}
