/*
 * USDT probes: SystemTap's <sys/sdt.h>, provider "rtpthread".  A probe is
 * one nop in the code and a note in .note.stapsdt; a tracer (bpftrace,
 * perf probe, SystemTap) turns it into a breakpoint only while it traces,
 * and the arguments are read from where they already are (registers or
 * the stack), so an untraced probe costs the nop.
 *
 * glibc's names and arguments, so that scripts written for a libc built
 * with probes work by naming this library instead:
 *   mutex_init(mutex)  mutex_destroy(mutex)  mutex_entry(mutex)
 *   mutex_acquired(mutex)  mutex_timedlock_entry(mutex, deadline)
 *   mutex_timedlock_acquired(mutex)  mutex_release(mutex)
 *   cond_init(cond, attr)  cond_destroy(cond)  cond_wait(cond, mutex)
 *   cond_timedwait(cond, mutex, deadline)  cond_signal(cond)
 *   cond_broadcast(cond)
 * and the real-time ones, all on slow paths:
 *   mutex_contended(mutex, owner TID)   a locker is about to sleep
 *   pi_boost(mutex, owner TID, waiter priority)
 *                                       a waiter blocks in FUTEX_LOCK_PI,
 *                                       lending its priority to the owner
 *   mutex_owner_died(mutex)             a lock returns EOWNERDEAD
 *   cond_requeue(cond, mutex, moved)    waiters moved onto the mutex
 *   barrier_wait(barrier)               a thread arrives at a barrier
 *
 * Built without <sys/sdt.h> (systemtap-sdt-dev), the library has none.
 */
#ifndef RTPTHREAD_PROBE_H
#define RTPTHREAD_PROBE_H

#if __has_include(<sys/sdt.h>)
#include <sys/sdt.h>
#define PROBE1(name, a) STAP_PROBE1(rtpthread, name, a)
#define PROBE2(name, a, b) STAP_PROBE2(rtpthread, name, a, b)
#define PROBE3(name, a, b, c) STAP_PROBE3(rtpthread, name, a, b, c)
#else
#define PROBE1(name, a) ((void)(a))
#define PROBE2(name, a, b) ((void)(a), (void)(b))
#define PROBE3(name, a, b, c) ((void)(a), (void)(b), (void)(c))
#endif

#endif
