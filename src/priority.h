#ifndef RTPTHREAD_PRIORITY_H
#define RTPTHREAD_PRIORITY_H

#include <stdbool.h>
#include <stdint.h>

#include "self.h"

/*
 * The priority files' entry points (priority_state.h shows how the three
 * files stand on one another).
 */

/* ceiling.c */
/* Count a held priority-protect ceiling for the calling thread and run it
 * at max(own priority, highest ceiling held).  0, EINVAL (own priority
 * above the ceiling, or a SCHED_DEADLINE thread and a ceiling the program
 * asked for), EAGAIN (too many held at one ceiling), or the scheduler's
 * refusal (EPERM) with nothing changed.  configured: the configuration,
 * not the program, made the mutex PP; a SCHED_DEADLINE thread then holds
 * it with no change to its scheduling. */
int priority_raise(int ceiling, bool configured) HIDDEN;
/* Forget one hold of ceiling and lower the thread as far as still allowed:
 * 0, or the scheduler's refusal (the hold is forgotten all the same; the
 * thread runs above what it asked for until its next raise or drop). */
int priority_drop(int ceiling) HIDDEN;

/* wait_order.c */
/* Where the calling thread queues among waiters, as the kernel orders
 * futex sleepers (by normal priority, boosts aside): SCHED_DEADLINE 100,
 * SCHED_FIFO/RR their priority, every other policy 0.  Cached per thread
 * (see wait_order.c): no system call but the first and after a change. */
int priority_wait_order(void) HIDDEN;
/* The same for another thread, by TID; -1 if it is gone. */
int priority_order_of(uint32_t tid) HIDDEN;

/* sched_registry.c (and rt_setschedparam, rt_setschedprio,
 * rt_getschedparam in api.h) */
/* Looks up glibc's pthread_setschedparam/setschedprio (at load). */
void priority_init(void) HIDDEN;

/* pthread_atfork child handler: only the calling thread is left. */
void priority_after_fork(void) HIDDEN;

#endif
