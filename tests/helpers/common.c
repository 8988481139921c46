/* Shared by the helper programs: see common.h. */
#include "common.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NS_PER_MS 1000000LL
#define NS_PER_S 1000000000LL

struct timespec in_ms(clockid_t clock, long ms)
{
	struct timespec ts;
	clock_gettime(clock, &ts);
	long long ns = (long long)ts.tv_nsec + ms * NS_PER_MS;
	ts.tv_sec += ns / NS_PER_S;
	ts.tv_nsec = ns % NS_PER_S;
	if (ts.tv_nsec < 0) {
		ts.tv_nsec += NS_PER_S;
		ts.tv_sec--;
	}
	return ts;
}

int64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / NS_PER_MS;
}

void sleep_ms(long ms)
{
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * NS_PER_MS };
	while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
		;
}

bool task_read(pid_t tid, const char *name, char *buf, size_t size)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/self/task/%d/%s", (int)tid, name);
	int fd = open(path, O_RDONLY);
	if (fd < 0)
		return false;
	ssize_t n = read(fd, buf, size - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	return true;
}

/* Field 3 of stat: after the last ')', since field 2 (the command) may
 * hold spaces and parentheses. */
static const char *stat_state(pid_t tid, char *buf, size_t size)
{
	if (!task_read(tid, "stat", buf, size))
		return NULL;
	char *p = strrchr(buf, ')');
	return p && p[1] == ' ' ? p + 2 : NULL;
}

bool task_stat_field(pid_t tid, int field, long *value)
{
	char buf[1024];
	const char *p = stat_state(tid, buf, sizeof buf);
	for (int i = 3; p && i < field; i++) {
		p = strchr(p, ' ');
		if (p)
			p++;
	}
	if (!p || !*p)
		return false;
	*value = strtol(p, NULL, 10);
	return true;
}

char task_state(pid_t tid)
{
	char buf[1024];
	const char *p = stat_state(tid, buf, sizeof buf);
	return p ? *p : '?';
}

bool wait_task_sleeping(pid_t tid, long ms)
{
	int64_t end = now_ms() + ms;
	for (;;) {
		if (task_state(tid) == 'S')
			return true;
		if (now_ms() >= end)
			return false;
		sleep_ms(1);
	}
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

void fifo_on_cpu(int cpu, int prio)
{
	cpu_set_t cpus;
	CPU_ZERO(&cpus);
	CPU_SET(cpu, &cpus);
	sched_setaffinity(0, sizeof cpus, &cpus);
	struct sched_param sp = { .sched_priority = prio };
	pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp);
}
