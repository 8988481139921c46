/*
 * Per-thread identity: the TID (which every owner-tracked lock word
 * stores) and the kernel robust-list head (see robust.c), both fetched
 * lazily, so they work in threads that ran before our constructor and in
 * threads we did not create.
 *
 * The TID is read where glibc keeps it, in its thread descriptor: glibc
 * has the kernel write it there at thread creation and in every fork
 * child (CLONE_CHILD_SETTID), _Fork() included, which runs no atfork
 * handler.  The descriptor is not ABI, so self_init finds the field at
 * load and checks it (it sits 16 bytes before the robust-list head glibc
 * registered, which get_robust_list reports, and must hold our TID);
 * reading it is then one load at a fixed offset from the thread pointer.
 *
 * Until then, or if the check fails (another C library layout), the TID
 * is cached in our own TLS, and a fork child notices its new TID through
 * fork_canary: a word in a page the kernel zeroes in a fork child
 * (MADV_WIPEONFORK), 1 in the process that set it up, 0 in a child until
 * the child's first self_tid_fetch re-arms it.
 */
#ifndef RTPTHREAD_SELF_H
#define RTPTHREAD_SELF_H

#include <stdatomic.h>
#include <stdint.h>
#include <sys/types.h>

#define TLS_FAST __attribute__((tls_model("initial-exec")))
#define HIDDEN __attribute__((visibility("hidden")))

extern long glibc_tid_offset HIDDEN; /* from the thread pointer; 0: not found */
extern __thread uint32_t self_tid_cache TLS_FAST HIDDEN;
extern _Atomic uint32_t *fork_canary HIDDEN;

uint32_t self_tid_fetch(void) HIDDEN;
/*
 * Fork generations.  fork_generation counts the fork() calls between the
 * process that loaded the library and this one: 0 there, 1 in its fork
 * children, 2 in theirs.  Objects that a thread of another process may
 * have left in this one's memory (a mutex word naming a thread of the
 * parent, a condition queue of the parent's waiters) carry the
 * generation that wrote them, so a child tells them from its own in one
 * compare (mutex_owned, cond_fork_check).  owner_code is the mutex's
 * stamp of it: never 0 (a free mutex), wrapping after 65,535 nested forks.
 * _Fork() runs no atfork handler: its child keeps its parent's
 * generation (docs/fork.md).
 */
extern uint32_t fork_generation HIDDEN;
extern uint16_t owner_code HIDDEN;
/* In a fork child: the TID of the thread that forked (in the parent) and
 * of its replica here; 0 in a process that did not come from fork(). */
extern uint32_t fork_parent_tid HIDDEN, fork_replica_tid HIDDEN;
/* The atfork prepare handler: keeps the forking thread's TID for the
 * child. */
void self_before_fork(void) HIDDEN;
/* The atfork child handler: only the calling thread exists. */
void self_after_fork(void) HIDDEN;
/* Finds glibc's TID field and maps the canary page (at load). */
void self_init(void) HIDDEN;

/*
 * The CPU the calling thread runs on, + 1, in one load, or 0 where unknown:
 * the cpu_id the kernel keeps current in glibc's rseq area (glibc 2.35 and
 * later register one per thread; self_init finds it through __rseq_offset,
 * which a glibc without it lacks).  A hint: the thread may have moved by
 * the time the caller uses it.
 */
extern long rseq_cpu_offset HIDDEN; /* from the thread pointer; 0: none */

static inline uint16_t self_cpu_hint(void)
{
	long offset = rseq_cpu_offset;
	if (__builtin_expect(offset == 0, 0))
		return 0;
#if defined(__x86_64__)
	int32_t cpu = *(const volatile __seg_fs int32_t *)offset;
#else
	int32_t cpu = *(const volatile int32_t *)((const char *)__builtin_thread_pointer() + offset);
#endif
	/* Negative: not registered (RSEQ_CPU_ID_UNINITIALIZED, _FAILED). */
	return cpu >= 0 && cpu < UINT16_MAX ? (uint16_t)(cpu + 1) : 0;
}

/* The TID where glibc's field was found (self_init), in one load, else 0:
 * for fast paths that hand the rest to a slow path, which calls
 * self_tid(), so that they need no stack frame for self_tid_fetch. */
static inline uint32_t self_tid_or_zero(void)
{
	long offset = glibc_tid_offset;
	if (__builtin_expect(offset == 0, 0))
		return 0;
#if defined(__x86_64__)
	return *(const __seg_fs uint32_t *)offset;
#else
	return *(const uint32_t *)((const char *)__builtin_thread_pointer() + offset);
#endif
}

static inline uint32_t self_tid(void)
{
	uint32_t tid = self_tid_or_zero();
	if (__builtin_expect(tid != 0, 1))
		return tid;
	tid = self_tid_cache;
	/* relaxed: only a fork zeroes the canary, and then in the child */
	if (__builtin_expect(tid == 0 || atomic_load_explicit(fork_canary, memory_order_relaxed) == 0, 0))
		tid = self_tid_fetch();
	return tid;
}

#endif
