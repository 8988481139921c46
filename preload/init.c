/*
 * Start-up.  Nothing here is needed for correctness before it runs: every
 * entry point fetches what it needs lazily (a library we are preloaded
 * under may lock a mutex from its own constructor first).  What the
 * constructor adds is the fork hook that makes the child re-read its TID,
 * and glibc's scheduling functions looked up before any lock is held.
 */
#include <pthread.h>

#include "priority.h"
#include "self.h"

static void after_fork_child(void)
{
	self_forget_tid();
	priority_after_fork();
}

__attribute__((constructor)) static void rtpthread_start(void)
{
	self_init();
	pthread_atfork(NULL, NULL, after_fork_child);
	priority_init();
}
