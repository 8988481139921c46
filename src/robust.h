#ifndef RTPTHREAD_ROBUST_H
#define RTPTHREAD_ROBUST_H

#include <stdbool.h>

#include "mutex.h"

/* Bracket an acquire or release of a robust mutex: the kernel finishes the
 * operation for us (marks the word OWNER_DIED, wakes a waiter) if the thread
 * dies between set and clear. */
void robust_pending_set(struct mutex *m, bool pi) HIDDEN;
void robust_pending_clear(void) HIDDEN;
/* Link a just-acquired mutex into / out of the calling thread's list. */
void robust_enqueue(struct mutex *m, bool pi) HIDDEN;
void robust_dequeue(struct mutex *m) HIDDEN;

#endif
