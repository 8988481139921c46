/*
 * The implementation functions behind the exported POSIX and C11 symbols
 * (preload/symbols.c binds each to its glibc name and versions).  All
 * hidden: nothing in src/ is visible outside the library.
 */
#ifndef RTPTHREAD_API_H
#define RTPTHREAD_API_H

#include <pthread.h>
#include <stdint.h>
#include <time.h>

#include "self.h"

int rt_mutexattr_init(pthread_mutexattr_t *attr) HIDDEN;
int rt_mutexattr_destroy(pthread_mutexattr_t *attr) HIDDEN;
int rt_mutexattr_settype(pthread_mutexattr_t *attr, int type) HIDDEN;
int rt_mutexattr_gettype(const pthread_mutexattr_t *attr, int *type) HIDDEN;
int rt_mutexattr_setprotocol(pthread_mutexattr_t *attr, int protocol) HIDDEN;
int rt_mutexattr_getprotocol(const pthread_mutexattr_t *attr, int *protocol) HIDDEN;
int rt_mutexattr_setprioceiling(pthread_mutexattr_t *attr, int ceiling) HIDDEN;
int rt_mutexattr_getprioceiling(const pthread_mutexattr_t *attr, int *ceiling) HIDDEN;
int rt_mutexattr_setrobust(pthread_mutexattr_t *attr, int robust) HIDDEN;
int rt_mutexattr_getrobust(const pthread_mutexattr_t *attr, int *robust) HIDDEN;
int rt_mutexattr_setpshared(pthread_mutexattr_t *attr, int pshared) HIDDEN;
int rt_mutexattr_getpshared(const pthread_mutexattr_t *attr, int *pshared) HIDDEN;

int rt_condattr_init(pthread_condattr_t *attr) HIDDEN;
int rt_condattr_destroy(pthread_condattr_t *attr) HIDDEN;
int rt_condattr_setpshared(pthread_condattr_t *attr, int pshared) HIDDEN;
int rt_condattr_getpshared(const pthread_condattr_t *attr, int *pshared) HIDDEN;
int rt_condattr_setclock(pthread_condattr_t *attr, clockid_t clock) HIDDEN;
int rt_condattr_getclock(const pthread_condattr_t *attr, clockid_t *clock) HIDDEN;

int rt_barrierattr_init(pthread_barrierattr_t *attr) HIDDEN;
int rt_barrierattr_destroy(pthread_barrierattr_t *attr) HIDDEN;
int rt_barrierattr_setpshared(pthread_barrierattr_t *attr, int pshared) HIDDEN;
int rt_barrierattr_getpshared(const pthread_barrierattr_t *attr, int *pshared) HIDDEN;

/* mutex_pp.c */
int rt_mutex_getprioceiling(const pthread_mutex_t *m, int *ceiling) HIDDEN;
int rt_mutex_setprioceiling(pthread_mutex_t *m, int ceiling, int *old_ceiling) HIDDEN;

/* sched_registry.c: keeps PP bookkeeping right when a thread's priority is set */
int rt_setschedparam(pthread_t thread, int policy, const struct sched_param *param) HIDDEN;
int rt_setschedprio(pthread_t thread, int priority) HIDDEN;
int rt_getschedparam(pthread_t thread, int *policy, struct sched_param *param) HIDDEN;

/* cond.c: deadline NULL waits for ever */
int rt_cond_init(pthread_cond_t *c, const pthread_condattr_t *attr) HIDDEN;
int rt_cond_destroy(pthread_cond_t *c) HIDDEN;
int rt_cond_wait(pthread_cond_t *c, pthread_mutex_t *m, clockid_t clock,
		 const struct timespec *deadline, int use_attr_clock) HIDDEN;
int rt_cond_signal(pthread_cond_t *c) HIDDEN;
int rt_cond_broadcast(pthread_cond_t *c) HIDDEN;
int rt_cond_signal_mask(pthread_cond_t *c, uint32_t mask) HIDDEN;
int rt_cond_broadcast_mask(pthread_cond_t *c, uint32_t mask) HIDDEN;

/* cond_mask.c: the rtpthread.h extensions (use_attr_clock as above) */
int rt_cond_wait_mask(pthread_cond_t *c, pthread_mutex_t *m, uint32_t mask, clockid_t clock,
		      const struct timespec *deadline, int use_attr_clock) HIDDEN;
int rt_cond_waitany(pthread_cond_t *const *conds, unsigned count, pthread_mutex_t *m, clockid_t clock,
		    const struct timespec *deadline, unsigned *index) HIDDEN;

/* barrier.c */
int rt_barrier_init(pthread_barrier_t *b, const pthread_barrierattr_t *attr, unsigned count) HIDDEN;
int rt_barrier_destroy(pthread_barrier_t *b) HIDDEN;
int rt_barrier_wait(pthread_barrier_t *b) HIDDEN;

#endif
