/*
 * Per-thread identity, kept in initial-exec TLS so that reading it is one
 * load from %fs: the TID (which every owner-tracked lock word stores) and
 * the kernel robust-list head (see robust.c).  Both are fetched lazily, so
 * they work in threads that ran before our constructor and in threads we
 * did not create.
 *
 * A fork child has a new TID.  fork() runs our pthread_atfork child
 * handler, but _Fork() runs none, and a child handler registered before
 * ours runs before it: so the cached TID is also checked against
 * fork_canary, a word in a page the kernel zeroes in a fork child
 * (MADV_WIPEONFORK, Linux 4.14).  It reads 1 in the process that set it
 * up, 0 in a child until the child's first self_tid_fetch re-arms it.
 */
#ifndef RTPTHREAD_SELF_H
#define RTPTHREAD_SELF_H

#include <stdatomic.h>
#include <stdint.h>
#include <sys/types.h>

#define TLS_FAST __attribute__((tls_model("initial-exec")))
#define HIDDEN __attribute__((visibility("hidden")))

extern __thread uint32_t self_tid_cache TLS_FAST HIDDEN;
extern _Atomic uint32_t *fork_canary HIDDEN;

uint32_t self_tid_fetch(void) HIDDEN;
void self_forget_tid(void) HIDDEN;
/* Maps the canary page (at load; harmless to call again). */
void self_init(void) HIDDEN;

static inline uint32_t self_tid(void)
{
	uint32_t tid = self_tid_cache;
	/* relaxed: only this thread's own fork can zero the canary, and it
	 * then runs in the child, which sees the child's memory */
	if (__builtin_expect(tid == 0 || atomic_load_explicit(fork_canary, memory_order_relaxed) == 0, 0))
		tid = self_tid_fetch();
	return tid;
}

#endif
