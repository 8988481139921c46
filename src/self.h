/*
 * Per-thread identity, kept in initial-exec TLS so that reading it is one
 * load from %fs: the TID (which every owner-tracked lock word stores) and
 * the kernel robust-list head (see robust.c).  Both are fetched lazily, so
 * they work in threads that ran before our constructor and in threads we
 * did not create.  fork() gives the child a new TID: self_forget_tid()
 * runs as a pthread_atfork child handler.
 */
#ifndef RTPTHREAD_SELF_H
#define RTPTHREAD_SELF_H

#include <stdint.h>
#include <sys/types.h>

#define TLS_FAST __attribute__((tls_model("initial-exec")))
#define HIDDEN __attribute__((visibility("hidden")))

extern __thread uint32_t self_tid_cache TLS_FAST HIDDEN;

uint32_t self_tid_fetch(void) HIDDEN;
void self_forget_tid(void) HIDDEN;

static inline uint32_t self_tid(void)
{
	uint32_t tid = self_tid_cache;
	if (__builtin_expect(tid == 0, 0))
		tid = self_tid_fetch();
	return tid;
}

#endif
