/*
 * Start-up.  Nothing here is needed for correctness before it runs: every
 * entry point fetches what it needs lazily (a library we are preloaded
 * under may lock a mutex from its own constructor first).  What the
 * constructor adds is the fork hook that makes the child re-read its TID.
 */
#include <pthread.h>

#include "self.h"

__attribute__((constructor)) static void rtpthread_start(void)
{
	pthread_atfork(NULL, NULL, self_forget_tid);
}
