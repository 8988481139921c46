/*
 * once.c (pthread_once, call_once) and guard.c (the C++ ABI's guards of
 * function-local statics), exported by preload/once.c.
 */
#ifndef RTPTHREAD_ONCE_H
#define RTPTHREAD_ONCE_H

#include <pthread.h>
#include <stdint.h>

#include "self.h"

/* 0 once init has run to its end (here or in another thread); EINVAL
 * (NULL argument), EDEADLK (init called it again for the same word, where
 * glibc never returns).  Without PI futexes (ENOSYS) it works unboosted. */
int rt_once(pthread_once_t *once, void (*init)(void)) HIDDEN;
/* In a fork child (the atfork handler): every slot free, as
 * MADV_WIPEONFORK leaves them where the kernel honours it (qemu-user
 * accepts the advice and ignores it). */
void once_after_fork(void) HIDDEN;

/* The Itanium C++ ABI's 64-bit guard: 1 when the caller must run the
 * initializer (then release or abort follows), 0 when it is done. */
int rt_guard_acquire(uint64_t *guard) HIDDEN;
void rt_guard_release(uint64_t *guard) HIDDEN;
void rt_guard_abort(uint64_t *guard) HIDDEN;

#endif
