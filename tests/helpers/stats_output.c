/*
 * A program whose contention report has nowhere to go, for
 * tests/integration/stats_nonblocking.sh (a plain glibc program run under
 * LD_PRELOAD with statistics on): one mutex contended once, so the report
 * has a row; with the argument "signal" it then raises SIGUSR1 (the
 * script configures stats_signal:USR1), so the report also runs in a
 * signal handler, on this thread, before raise returns.  Prints "raised"
 * after the handler returned and "done" last; stderr stays open to the
 * end (the report at exit goes there unless stats names a file).
 */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "testlib.h"

static pthread_mutex_t mutex = PTHREAD_MUTEX_INITIALIZER;
static _Atomic int started;

static void *contender(void *arg)
{
	(void)arg;
	atomic_store(&started, 1);
	pthread_mutex_lock(&mutex);
	pthread_mutex_unlock(&mutex);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t;
	pthread_mutex_lock(&mutex);
	if (pthread_create(&t, NULL, contender, NULL) != 0)
		return 1;
	while (!atomic_load(&started))
		sleep_ms(1);
	sleep_ms(20); /* most likely asleep on the mutex: the report has a row */
	pthread_mutex_unlock(&mutex);
	pthread_join(t, NULL);
	if (argc > 1 && strcmp(argv[1], "signal") == 0) {
		raise(SIGUSR1);
		printf("raised\n");
		fflush(stdout);
	}
	printf("done\n");
	fflush(stdout);
	return 0;
}
