/*
 * The test library: time, readers of /proc/self/task/TID, and scheduling
 * set-up, shared by every test program (the Check unit tests through
 * testutil.h, the helper programs of the integration scripts, and the
 * stress programs).  It needs no Check, and touches no mutex, condition,
 * barrier or thread-specific key, so linking it changes nothing a program
 * tests.  The /proc readers use open/read, not stdio: they allocate
 * nothing, so a watchdog may call them while other threads are stuck.
 */
#ifndef RTPTHREAD_TESTLIB_H
#define RTPTHREAD_TESTLIB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

/* ---- time (time.c) ---- */

#define NSEC_PER_SEC 1000000000LL

int64_t ts_to_ns(const struct timespec *ts);

/* The clock's time in nanoseconds. */
int64_t now_ns(clockid_t clock);

/* CLOCK_MONOTONIC in milliseconds. */
int64_t now_ms(void);

/* An absolute deadline ns nanoseconds from now on clock (ns may be < 0). */
struct timespec deadline_in_ns(clockid_t clock, int64_t ns);

/* An absolute deadline ms milliseconds from now on clock (ms may be < 0). */
struct timespec deadline_in_ms(clockid_t clock, long ms);

/* Sleeps ms milliseconds in all, however many signal handlers run. */
void sleep_ms(long ms);

/* One sleep of us microseconds on CLOCK_MONOTONIC.  A signal handler may
 * cut it short: for callers that only want to give up the CPU for about
 * that long. */
void nap_us(int64_t us);

/* Busy-waits ns nanoseconds of wall time: keeps the CPU, to widen a
 * window without letting other threads of the same priority run. */
void spin_ns(int64_t ns);

/* Burns ms of the calling thread's CPU time (preemption does not count). */
void burn_cpu_ms(long ms);

/* ---- /proc/self/task/TID (proc.c) ---- */

/* The file `name` of a thread of this process, NUL-terminated in buf;
 * false if it cannot be read. */
bool task_read(pid_t tid, const char *name, char *buf, size_t size);

/*
 * A thread's scheduling as the kernel sees it, from its stat (man 5
 * proc): field 3 state, 18 priority (-1 - rt_priority for a real-time
 * task, 20 + nice otherwise; reflects priority-inheritance boosts), 19
 * nice, 40 rt_priority (the static sched_param), 41 policy (the static
 * policy).  Our own threads are read through /proc/self/task: qemu-user
 * makes up /proc/<its own pid>/stat (priority fields 0) but passes that
 * one to the kernel; any other task (another process) by its TID.
 */
struct task_sched {
	char state;
	long prio;
	long nice;
	long rt_priority;
	long policy;
};
bool task_sched_read(pid_t tid, struct task_sched *out);

/* Field `field` of the thread's stat, numbered as in proc(5) from 3 (the
 * state letter is field 3: read it with task_state); false if missing. */
bool task_stat_field(pid_t tid, int field, long *value);

/* The thread's state letter (field 3 of stat), '?' if unreadable. */
char task_state(pid_t tid);

/* Waits up to ms until the thread sleeps (state S), i.e. is blocked; true
 * if it did.  A thread about to block in a futex may still be running.
 * The state is read again after the last nap: a loaded machine may keep
 * the caller off the CPU for the whole time. */
bool wait_task_sleeping(pid_t tid, long ms);

/* The kernel function the thread sleeps in ("" if unknown). */
void task_wchan(pid_t tid, char *out, size_t size);

/* Time the thread spent on a CPU and waiting for one, in ms, from
 * schedstat (0 and 0 if it cannot be read). */
void task_times(pid_t tid, long long *on_cpu_ms, long long *waiting_ms);

/* One line on a thread for a watchdog's report, NUL-terminated in out:
 * "tid T: state S, stat priority P, wchan W, syscall N A, C ms on a CPU
 * and R ms waiting for one".  The syscall is the number and first
 * argument from /proc's syscall file (a futex's address; the host's
 * numbers under qemu-user), "running", or "none" outside one; a thread
 * whose stat cannot be read is "gone".  snprintf and open/read only: a
 * watchdog may call it while other threads are stuck. */
void task_describe(pid_t tid, char *out, size_t size);

/* ---- threads and scheduling (sched.c) ---- */

pid_t test_gettid(void);

/* Under CI=true the machine has the privileges the tests need: a skip
 * for a refused SCHED_FIFO there hides a bug, so it fails instead. */
bool under_ci(void);

/* The emulator the tests run under (TESTS_EMULATOR, which make
 * test-aarch64 sets to qemu-user), or NULL on the machine itself.
 * qemu-user's translator spins on locks of its own: SCHED_FIFO threads of
 * several priorities can starve a preempted lower one that holds such a
 * lock for good, a hang of the emulator that tests with many such threads
 * avoid there. */
const char *test_emulator(void);

/* SCHED_FIFO at prio for the calling thread; false if the system refuses
 * (no CAP_SYS_NICE, RLIMIT_RTPRIO too low, ...).  Goes through
 * pthread_setschedparam, as a real program would. */
bool try_fifo(int prio);

/* Whether the calling thread may use SCHED_FIFO: tried at priority 1 and
 * put back to SCHED_OTHER. */
bool can_fifo(void);

/* Whether real-time priority is available at all, probed in a throwaway
 * thread so that the caller's own scheduling is not touched. */
bool rt_available(void);

/* Exits 77 with "SKIP: SCHED_FIFO refused" unless this process may use
 * SCHED_FIFO; the calling thread is left at SCHED_OTHER.  Tried with
 * sched_setscheduler, which no library under test wraps. */
void require_fifo(void);

/* The calling thread on CPU cpu alone; false if refused. */
bool try_pin_cpu(int cpu);

/* The calling thread on CPU cpu alone, at SCHED_FIFO prio (through
 * pthread_setschedparam, as a program would); failures ignored. */
void fifo_on_cpu(int cpu, int prio);

/* CPUs the process may run on. */
int cpu_count(void);

#endif
