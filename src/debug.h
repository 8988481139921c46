/*
 * Invariant checks for the debug build (make debug: -DRTPTHREAD_DEBUG).
 * A broken invariant writes one line naming the file, the line and the
 * invariant to stderr and aborts.  In the release build the condition is
 * not evaluated (sizeof keeps it compiled, so it cannot rot) and costs
 * nothing.
 */
#ifndef RTPTHREAD_DEBUG_H
#define RTPTHREAD_DEBUG_H

#include "self.h"

#ifdef RTPTHREAD_DEBUG
#define DEBUG_ASSERT(condition) \
	((condition) ? (void)0 : debug_invariant_broken(__FILE__, __LINE__, #condition))
#else
#define DEBUG_ASSERT(condition) ((void)sizeof(condition))
#endif

/* Writes "rtpthread: FILE:LINE: invariant broken: WHAT" and aborts. */
void debug_invariant_broken(const char *file, int line, const char *what) HIDDEN __attribute__((noreturn, cold));

#endif
