/*
 * Shared by the helper programs in tests/helpers/, each a program of its
 * own that an integration script runs (most of them plain glibc programs
 * run under LD_PRELOAD): time, readers of /proc/self/task/TID, and
 * SCHED_FIFO set-up.  Nothing here touches a mutex, a condition or a
 * thread-specific key, so linking it changes nothing a helper tests.
 */
#ifndef HELPERS_COMMON_H
#define HELPERS_COMMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

/* ---- time ---- */

/* An absolute deadline ms milliseconds from now on clock (ms may be < 0). */
struct timespec in_ms(clockid_t clock, long ms);

/* CLOCK_MONOTONIC in milliseconds. */
int64_t now_ms(void);

/* Sleeps ms milliseconds in all, however many signal handlers run. */
void sleep_ms(long ms);

/* ---- /proc/self/task/TID (threads of this process) ---- */

/* The file `name` of the thread, NUL-terminated in buf (open/read, no
 * stdio: nothing allocated); false if it cannot be read. */
bool task_read(pid_t tid, const char *name, char *buf, size_t size);

/* Field `field` of the thread's stat, numbered as in proc(5) from 3 (the
 * state letter is field 3: read it with task_state); false if missing. */
bool task_stat_field(pid_t tid, int field, long *value);

/* The thread's state letter (field 3 of stat), '?' if unreadable. */
char task_state(pid_t tid);

/* Waits up to ms for the thread to sleep (state S), i.e. to block; true
 * if it did.  A thread about to block may still be running. */
bool wait_task_sleeping(pid_t tid, long ms);

/* ---- scheduling ---- */

/* Exits 77 with "SKIP: SCHED_FIFO refused" unless this process may use
 * SCHED_FIFO; the calling thread is left at SCHED_OTHER.  Tried with
 * sched_setscheduler, which no library under test wraps. */
void require_fifo(void);

/* The calling thread on CPU cpu alone, at SCHED_FIFO prio (through
 * pthread_setschedparam, as a program would). */
void fifo_on_cpu(int cpu, int prio);

#endif
