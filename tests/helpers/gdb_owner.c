/*
 * gdb_owner: holds one locked mutex of each kind and stops (SIGTRAP) so
 * that gdb can print them (tests/integration/gdb_owner.sh): __owner must
 * name the holder, as glibc keeps it and gdb's glibc printers read it.
 * Prints "tid TID" first.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

#include "testlib.h"

pthread_mutex_t m_normal, m_recursive, m_errorcheck, m_pi, m_robust, m_shared, m_static = PTHREAD_MUTEX_INITIALIZER;

static void make(pthread_mutex_t *m, int type, int protocol, int robust, int pshared)
{
	pthread_mutexattr_t a;
	pthread_mutexattr_init(&a);
	pthread_mutexattr_settype(&a, type);
	pthread_mutexattr_setprotocol(&a, protocol);
	pthread_mutexattr_setrobust(&a, robust);
	pthread_mutexattr_setpshared(&a, pshared);
	pthread_mutex_init(m, &a);
	pthread_mutexattr_destroy(&a);
}

int main(void)
{
	make(&m_normal, PTHREAD_MUTEX_NORMAL, PTHREAD_PRIO_NONE, 0, 0);
	make(&m_recursive, PTHREAD_MUTEX_RECURSIVE, PTHREAD_PRIO_NONE, 0, 0);
	make(&m_errorcheck, PTHREAD_MUTEX_ERRORCHECK, PTHREAD_PRIO_NONE, 0, 0);
	make(&m_pi, PTHREAD_MUTEX_NORMAL, PTHREAD_PRIO_INHERIT, 0, 0);
	make(&m_robust, PTHREAD_MUTEX_NORMAL, PTHREAD_PRIO_NONE, 1, 0);
	make(&m_shared, PTHREAD_MUTEX_NORMAL, PTHREAD_PRIO_NONE, 0, 1);
	pthread_mutex_t *all[] = { &m_normal, &m_recursive, &m_errorcheck, &m_pi, &m_robust, &m_shared, &m_static };
	for (unsigned i = 0; i < sizeof all / sizeof all[0]; i++)
		if (pthread_mutex_lock(all[i]) != 0)
			return 1;
	printf("tid %d\n", gettid());
	fflush(stdout);
	raise(SIGTRAP);
	return 0;
}
