/* The test library's thread and scheduling set-up: see testlib.h. */
#include "testlib.h"

#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

pid_t test_gettid(void)
{
	return (pid_t)syscall(SYS_gettid);
}

bool under_ci(void)
{
	const char *ci = getenv("CI");
	return ci && strcmp(ci, "true") == 0;
}

const char *test_emulator(void)
{
	const char *name = getenv("TESTS_EMULATOR");
	return name && *name ? name : NULL;
}

bool try_fifo(int prio)
{
	struct sched_param param = { .sched_priority = prio };
	return pthread_setschedparam(pthread_self(), SCHED_FIFO, &param) == 0;
}

bool can_fifo(void)
{
	if (!try_fifo(1))
		return false;
	struct sched_param param = { .sched_priority = 0 };
	pthread_setschedparam(pthread_self(), SCHED_OTHER, &param);
	return true;
}

static void *rt_probe_thread(void *arg)
{
	(void)arg;
	return (void *)(intptr_t)try_fifo(1);
}

bool rt_available(void)
{
	pthread_t t;
	void *ok = NULL;
	if (pthread_create(&t, NULL, rt_probe_thread, NULL) != 0)
		return false;
	pthread_join(t, &ok);
	return ok != NULL;
}

void require_fifo(void)
{
	struct sched_param sp = { .sched_priority = 1 };
	if (sched_setscheduler(0, SCHED_FIFO, &sp) != 0) {
		printf("SKIP: SCHED_FIFO refused\n");
		exit(77);
	}
	sp.sched_priority = 0;
	sched_setscheduler(0, SCHED_OTHER, &sp);
}

bool try_pin_cpu(int cpu)
{
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof set, &set) == 0;
}

void fifo_on_cpu(int cpu, int prio)
{
	try_pin_cpu(cpu);
	struct sched_param sp = { .sched_priority = prio };
	pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp);
}

int cpu_count(void)
{
	cpu_set_t set;
	if (sched_getaffinity(0, sizeof set, &set) != 0)
		return 1;
	return CPU_COUNT(&set);
}
