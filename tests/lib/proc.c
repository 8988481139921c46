/* The test library's readers of /proc/self/task/TID: see testlib.h. */
#include "testlib.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NSEC_PER_MS 1000000LL

/* The file at path, NUL-terminated in buf (open/read: nothing allocated). */
static bool read_file(const char *path, char *buf, size_t size)
{
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

bool task_read(pid_t tid, const char *name, char *buf, size_t size)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/self/task/%d/%s", (int)tid, name);
	return read_file(path, buf, size);
}

#define STAT_FIELDS 64

/* The thread's stat as numbers: fields[3..] as in proc(5) (fields[3] is 0:
 * read the state letter from *state).  Returns the number of the last
 * field read, 0 if stat cannot be read or parsed. */
static int stat_fields(pid_t tid, long fields[STAT_FIELDS], char *state)
{
	char path[64], buf[1024];
	snprintf(path, sizeof path, "/proc/self/task/%d/stat", (int)tid);
	if (!read_file(path, buf, sizeof buf)) {
		snprintf(path, sizeof path, "/proc/%d/stat", (int)tid);
		if (!read_file(path, buf, sizeof buf))
			return 0;
	}
	/* Field 2 (comm) may contain spaces and ')': skip to the last ')'. */
	char *p = strrchr(buf, ')');
	if (!p || p[1] != ' ')
		return 0;
	p += 2; /* field 3 */
	*state = *p;
	memset(fields, 0, STAT_FIELDS * sizeof fields[0]);
	int field = 3;
	/* Ends: p moves forward through a NUL-terminated buffer. */
	while (*p && field < STAT_FIELDS) {
		while (*p == ' ')
			p++;
		if (!*p)
			break;
		fields[field] = strtol(p, NULL, 10);
		while (*p && *p != ' ')
			p++;
		field++;
	}
	return field - 1;
}

bool task_sched_read(pid_t tid, struct task_sched *out)
{
	long fields[STAT_FIELDS];
	char state;
	if (stat_fields(tid, fields, &state) < 41)
		return false;
	out->state = state;
	out->prio = fields[18];
	out->nice = fields[19];
	out->rt_priority = fields[40];
	out->policy = fields[41];
	return true;
}

bool task_stat_field(pid_t tid, int field, long *value)
{
	long fields[STAT_FIELDS];
	char state;
	if (field < 3 || field >= STAT_FIELDS || stat_fields(tid, fields, &state) < field)
		return false;
	*value = fields[field];
	return true;
}

char task_state(pid_t tid)
{
	long fields[STAT_FIELDS];
	char state;
	return stat_fields(tid, fields, &state) >= 3 ? state : '?';
}

bool wait_task_sleeping(pid_t tid, long ms)
{
	int64_t end = now_ns(CLOCK_MONOTONIC) + ms * NSEC_PER_MS;
	/* Ends: at end, unless the thread sleeps first. */
	for (;;) {
		if (task_state(tid) == 'S')
			return true;
		if (now_ns(CLOCK_MONOTONIC) >= end)
			return false;
		sleep_ms(1);
	}
}

void task_wchan(pid_t tid, char *out, size_t size)
{
	if (!task_read(tid, "wchan", out, size))
		out[0] = '\0';
}

void task_times(pid_t tid, long long *on_cpu_ms, long long *waiting_ms)
{
	char buf[128];
	unsigned long long run = 0, wait = 0;
	if (!task_read(tid, "schedstat", buf, sizeof buf) || sscanf(buf, "%llu %llu", &run, &wait) != 2)
		run = wait = 0;
	*on_cpu_ms = (long long)(run / NSEC_PER_MS);
	*waiting_ms = (long long)(wait / NSEC_PER_MS);
}

/* The syscall a thread is in: "NR ARG0", "running", or "none". */
static void task_syscall(pid_t tid, char *out, size_t size)
{
	char buf[256], nr[24] = "", arg0[24] = "";
	if (!task_read(tid, "syscall", buf, sizeof buf) || sscanf(buf, "%23s %23s", nr, arg0) < 1) {
		snprintf(out, size, "?");
		return;
	}
	if (strcmp(nr, "-1") == 0)
		snprintf(out, size, "none");
	else if (arg0[0])
		snprintf(out, size, "%s %s", nr, arg0);
	else
		snprintf(out, size, "%s", nr);
}

void task_describe(pid_t tid, char *out, size_t size)
{
	struct task_sched s;
	if (tid <= 0 || !task_sched_read(tid, &s)) {
		snprintf(out, size, "tid %d: gone", (int)tid);
		return;
	}
	char wchan[64], sys[64];
	long long cpu, waiting;
	task_wchan(tid, wchan, sizeof wchan);
	task_syscall(tid, sys, sizeof sys);
	task_times(tid, &cpu, &waiting);
	snprintf(out, size,
		 "tid %d: state %c, stat priority %ld, wchan %s, syscall %s, %lld ms on a CPU and %lld ms waiting "
		 "for one",
		 (int)tid, s.state, s.prio, wchan[0] ? wchan : "?", sys, cpu, waiting);
}
