/*
 * Lending a destroyer's priority to the threads still inside an object
 * (see boost.c).  The caller counts itself in the object after
 * boost_enter (with a release RMW) and out before boost_leave, which is
 * its last step; a destroyer that waits for the count to drain calls
 * boost_one_inside instead of sleeping unboosted.
 */
#ifndef RTPTHREAD_BOOST_H
#define RTPTHREAD_BOOST_H

#include <stdbool.h>

#include "self.h"

/* The calling thread is inside object from now on; returns what it was
 * inside before (a wait in a signal handler nests), for boost_leave. */
const void *boost_enter(const void *object) HIDDEN;
/* The calling thread is done with the object: back to outer.  Releases
 * a destroyer that lent it its priority. */
void boost_leave(const void *outer) HIDDEN;
/* Finds a thread inside object and sleeps on a PI futex that thread owns
 * until it calls boost_leave: the kernel runs it at the caller's priority
 * meanwhile.  false (at once) if no such thread is found. */
bool boost_one_inside(const void *object) HIDDEN;

/* At load: the key whose destructor takes a thread out at exit. */
void boost_init(void) HIDDEN;
/* pthread_atfork child handler: only the calling thread is left. */
void boost_after_fork(void) HIDDEN;

#endif
