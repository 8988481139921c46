/*
 * System calls: after load and thread start, lock, unlock, wait, signal,
 * broadcast and barrier make no system call NPTL's same operation would
 * not make, and touch no file (docs/syscalls.md).
 *
 * Each test forks a child that installs a seccomp filter (written here by
 * hand, no libseccomp) allowing only what NPTL needs for the same
 * workload: futex, the calls that create, start and end threads, time and
 * sleep, and the scheduling calls of PTHREAD_PRIO_PROTECT; plus the one
 * call the library documents beyond it, sched_getattr, once per thread at
 * its first wait on a condition with a PI mutex.  Anything else raises
 * SIGSYS (SECCOMP_RET_TRAP), whose handler notes the call's number in
 * shared memory and ends the child: the test names the call.
 * sched_getattr is trapped too and counted: the handler makes the call
 * itself (with a buffer size the filter lets through, which the library
 * never uses) and returns its result, so the library sees the truth and
 * the test sees how often it asked.
 *
 * The workloads run in threads created after the filter is in place, so
 * a thread's first lock of each kind happens under it.  They report
 * failures through the shared record, never through ck_assert (the child
 * may make no call Check makes).  Under qemu-user, which refuses
 * PR_SET_SECCOMP, the tests skip.
 */
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stddef.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <ucontext.h>

#include "testutil.h"

#if defined(__x86_64__)
#define FILTER_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define FILTER_ARCH AUDIT_ARCH_AARCH64
#endif

/* The size the SIGSYS handler passes to sched_getattr: the filter lets
 * it through; the library passes the first version's 48. */
#define GETATTR_PASS_SIZE 64

struct record {
	_Atomic int trapped;	   /* the number of a call not allowed; -1: none */
	_Atomic int getattr_calls; /* sched_getattr calls, counted by the handler */
	_Atomic int failures;
	char failure[160]; /* the first failure */
};

static struct record *rec;

static void note_failure(const char *what, int value)
{
	if (atomic_fetch_add(&rec->failures, 1) == 0)
		snprintf(rec->failure, sizeof rec->failure, "%s: %d", what, value);
}

#define EXPECT(call, expected)                              \
	do {                                                \
		int r_ = (call);                            \
		if (r_ != (expected))                       \
			note_failure(#call, r_);                    \
	} while (0)

/* ---- the filter ---- */

static const int allowed[] = {
	/* futex, and how NPTL creates, starts and ends a thread */
	SYS_futex, SYS_clone, SYS_clone3, SYS_mmap, SYS_munmap, SYS_mprotect, SYS_madvise, SYS_brk,
	SYS_rt_sigprocmask, SYS_rt_sigaction, SYS_rt_sigreturn, SYS_set_robust_list, SYS_rseq, SYS_gettid, SYS_getpid,
	SYS_exit, SYS_exit_group,
	/* time, sleep, yield */
	SYS_clock_gettime, SYS_clock_nanosleep, SYS_nanosleep, SYS_sched_yield,
	/* NPTL's PTHREAD_PRIO_PROTECT */
	SYS_sched_getparam, SYS_sched_getscheduler, SYS_sched_setscheduler, SYS_sched_get_priority_min,
	SYS_sched_get_priority_max,
};

#define FILTER_MAX 64

/* 0, or the errno of a filter the kernel refused. */
static int install_filter(void)
{
	struct sock_filter f[FILTER_MAX];
	unsigned n = 0, count = sizeof allowed / sizeof allowed[0];
	/* Layout: arch check, the allowed numbers, sched_getattr's size
	 * test, then the three returns: ALLOW, TRAP, KILL. */
	unsigned allow = 2 + 1 + count + 3, trap = allow + 1, kill = allow + 2;
	f[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch));
	f[n] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, FILTER_ARCH, 0, kill - n - 1);
	n++;
	f[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr));
	for (unsigned i = 0; i < count; i++, n++)
		f[n] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned)allowed[i], allow - n - 1, 0);
	f[n] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_sched_getattr, 0, trap - n - 1);
	n++;
	/* args[2], the size (its low half: both targets are little-endian) */
	f[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[2]));
	f[n] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, GETATTR_PASS_SIZE, allow - n - 1,
					    trap - n - 1);
	n++;
	f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRAP);
	f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS);
	struct sock_fprog prog = { .len = (unsigned short)n, .filter = f };
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
		return errno;
	return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) == 0 ? 0 : errno;
}

/* The trapped call's arguments and result register. */
#if defined(__x86_64__)
#define CALL_ARG(uc, i) ((uc)->uc_mcontext.gregs[(int[]){ REG_RDI, REG_RSI, REG_RDX, REG_R10 }[i]])
#define CALL_RESULT(uc) ((uc)->uc_mcontext.gregs[REG_RAX])
#elif defined(__aarch64__)
#define CALL_ARG(uc, i) ((uc)->uc_mcontext.regs[i])
#define CALL_RESULT(uc) ((uc)->uc_mcontext.regs[0])
#endif

static void on_sigsys(int sig, siginfo_t *info, void *context)
{
	(void)sig;
	ucontext_t *uc = context;
	if (info->si_syscall == SYS_sched_getattr) {
		atomic_fetch_add(&rec->getattr_calls, 1);
		char buffer[GETATTR_PASS_SIZE] = { 0 };
		unsigned long size = (unsigned long)CALL_ARG(uc, 2);
		long r = syscall(SYS_sched_getattr, (long)CALL_ARG(uc, 0), buffer, GETATTR_PASS_SIZE,
				 (long)CALL_ARG(uc, 3));
		if (r == 0)
			memcpy((void *)CALL_ARG(uc, 1), buffer, size < sizeof buffer ? size : sizeof buffer);
		CALL_RESULT(uc) = r < 0 ? -errno : r;
		return;
	}
	atomic_store(&rec->trapped, info->si_syscall);
	syscall(SYS_exit_group, 70);
}

/* ---- running a workload in a filtered child ---- */

static const char *call_name(int nr)
{
	switch (nr) {
	case SYS_openat: return "openat";
	case SYS_read: return "read";
	case SYS_close: return "close";
	case SYS_write: return "write";
	case SYS_get_robust_list: return "get_robust_list";
	case SYS_sched_setattr: return "sched_setattr";
	case SYS_sched_getaffinity: return "sched_getaffinity";
	case SYS_tgkill: return "tgkill";
	default: return "see <asm/unistd.h>";
	}
}

/* Runs workload in a child under the filter; returns the getattr count
 * (after failing the test for a trapped call, a failure or a crash), or
 * -1 when the filter cannot be installed here (the caller skips). */
static const char *skip_reason;

static int run_filtered(void (*workload)(void))
{
#ifdef __SANITIZE_ADDRESS__
	/* ASan's own thread-creation and signal interceptors make calls
	 * (sched_getaffinity, sigaltstack...) that no library under test
	 * makes. */
	skip_reason = "built with ASan, whose runtime makes calls of its own";
	return -1;
#endif
	skip_reason = "seccomp filters refused here (PR_SET_SECCOMP: EINVAL, as under qemu-user)";
	rec = mmap(NULL, sizeof *rec, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ck_assert_ptr_ne(rec, MAP_FAILED);
	atomic_store(&rec->trapped, -1);
	fflush(stdout);
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		struct sigaction sa;
		memset(&sa, 0, sizeof sa);
		sa.sa_sigaction = on_sigsys;
		sa.sa_flags = SA_SIGINFO;
		sigemptyset(&sa.sa_mask);
		sigaction(SIGSYS, &sa, NULL);
		int r = install_filter();
		if (r != 0)
			_exit(r == EINVAL ? 77 : 71);
		workload();
		syscall(SYS_exit_group, atomic_load(&rec->failures) ? 1 : 0);
	}
	int status;
	/* Ends: the child's waits are all bounded (timed waits, joins of
	 * threads that end); Check's timeout covers a hang. */
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	int trapped = atomic_load(&rec->trapped);
	ck_assert_msg(trapped < 0, "system call %d (%s) made, which the allow-list of NPTL's calls does not have",
		      trapped, call_name(trapped));
	if (WIFEXITED(status) && WEXITSTATUS(status) == 77)
		return -1;
	ck_assert_msg(!WIFSIGNALED(status), "child killed by signal %d (SIGSYS %d: a call refused before the "
		      "handler ran)", WTERMSIG(status), SIGSYS);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child exit %d: %d failure(s), first %s",
		      WEXITSTATUS(status), atomic_load(&rec->failures), rec->failure);
	int calls = atomic_load(&rec->getattr_calls);
	munmap(rec, sizeof *rec);
	return calls;
}

#define RUN_FILTERED(workload)                                                                   \
	({                                                                                       \
		int calls_ = run_filtered(workload);                                             \
		if (calls_ < 0)                                                                  \
			SKIP_TEST("%s", skip_reason);                                            \
		calls_;                                                                          \
	})

/* ---- the workloads ---- */

static void start(pthread_t *t, void *(*fn)(void *), void *arg)
{
	int r = pthread_create(t, NULL, fn, arg);
	if (r)
		note_failure("pthread_create", r);
}

static void join(pthread_t t)
{
	pthread_join(t, NULL);
}

/* Bounded waits for a flag (5 s): the workloads never spin for ever. */
static void await(_Atomic int *flag, int value)
{
	for (int i = 0; i < 5000 && atomic_load(flag) < value; i++)
		sleep_ms(1);
	if (atomic_load(flag) < value)
		note_failure("a thread never reached its step", value);
}

struct lock_holder {
	pthread_mutex_t *m;
	_Atomic int held;
	bool exit_holding;
};

/* Holds the mutex for 20 ms (the main thread blocks on it meanwhile),
 * or exits holding it (robust). */
static void *hold(void *arg)
{
	struct lock_holder *h = arg;
	EXPECT(pthread_mutex_lock(h->m), 0);
	atomic_store(&h->held, 1);
	if (h->exit_holding)
		return NULL;
	sleep_ms(20);
	EXPECT(pthread_mutex_unlock(h->m), 0);
	return NULL;
}

static void *mutex_kinds(void *arg);

static void mutexes_workload(void)
{
	pthread_t t;
	start(&t, mutex_kinds, NULL);
	join(t);
}

/* Every kind, uncontended, contended, timed out; robust ones also after
 * an owner's death.  In a thread created under the filter: its first
 * robust lock happens there.  PP needs a real-time caller on NPTL
 * (EINVAL otherwise): the thread asks for SCHED_FIFO 1 first. */
static void *mutex_kinds(void *arg)
{
	(void)arg;
	struct sched_param param = { .sched_priority = 1 };
	bool fifo = pthread_setschedparam(pthread_self(), SCHED_FIFO, &param) == 0;
	static const struct {
		int type, protocol;
		bool robust;
	} kinds[] = {
		{ PTHREAD_MUTEX_NORMAL, PTHREAD_PRIO_NONE, false },
		{ PTHREAD_MUTEX_RECURSIVE, PTHREAD_PRIO_NONE, false },
		{ PTHREAD_MUTEX_ERRORCHECK, PTHREAD_PRIO_NONE, false },
		{ PTHREAD_MUTEX_ADAPTIVE_NP, PTHREAD_PRIO_NONE, false },
		{ PTHREAD_MUTEX_NORMAL, PTHREAD_PRIO_NONE, true },
		{ PTHREAD_MUTEX_ERRORCHECK, PTHREAD_PRIO_NONE, true },
		{ PTHREAD_MUTEX_NORMAL, PTHREAD_PRIO_INHERIT, false },
		{ PTHREAD_MUTEX_RECURSIVE, PTHREAD_PRIO_INHERIT, false },
		{ PTHREAD_MUTEX_NORMAL, PTHREAD_PRIO_INHERIT, true },
		{ PTHREAD_MUTEX_NORMAL, PTHREAD_PRIO_PROTECT, false },
		{ PTHREAD_MUTEX_RECURSIVE, PTHREAD_PRIO_PROTECT, false },
	};
	for (unsigned k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
		pthread_mutexattr_t a;
		pthread_mutex_t m;
		pthread_mutexattr_init(&a);
		pthread_mutexattr_settype(&a, kinds[k].type);
		pthread_mutexattr_setprotocol(&a, kinds[k].protocol);
		if (kinds[k].protocol == PTHREAD_PRIO_PROTECT)
			pthread_mutexattr_setprioceiling(&a, 10);
		if (kinds[k].robust)
			pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
		EXPECT(pthread_mutex_init(&m, &a), 0);
		pthread_mutexattr_destroy(&a);
		int ok = kinds[k].protocol == PTHREAD_PRIO_PROTECT && !fifo ? EINVAL : 0;
		int r = pthread_mutex_lock(&m);
		if (r != 0 && r != ok)
			note_failure("lock", (int)k * 100 + r);
		if (r != 0)
			goto destroy; /* NPTL: PP from SCHED_OTHER */
		EXPECT(pthread_mutex_unlock(&m), 0);
		EXPECT(pthread_mutex_trylock(&m), 0);
		struct timespec soon = deadline_in_ms(CLOCK_REALTIME, 50);
		EXPECT(pthread_mutex_unlock(&m), 0);
		EXPECT(pthread_mutex_timedlock(&m, &soon), 0);
		EXPECT(pthread_mutex_unlock(&m), 0);
		struct timespec soon_monotonic = deadline_in_ms(CLOCK_MONOTONIC, 50);
		EXPECT(pthread_mutex_clocklock(&m, CLOCK_MONOTONIC, &soon_monotonic), 0);
		EXPECT(pthread_mutex_unlock(&m), 0);

		/* contended: another thread holds it 20 ms */
		struct lock_holder h = { .m = &m };
		pthread_t t;
		start(&t, hold, &h);
		await(&h.held, 1);
		struct timespec short_deadline = deadline_in_ms(CLOCK_MONOTONIC, 2);
		r = pthread_mutex_clocklock(&m, CLOCK_MONOTONIC, &short_deadline);
		if (r == 0)
			pthread_mutex_unlock(&m); /* the holder was already done */
		else if (r != ETIMEDOUT)
			note_failure("timedlock while held", (int)k * 100 + r);
		EXPECT(pthread_mutex_lock(&m), 0);
		EXPECT(pthread_mutex_unlock(&m), 0);
		join(t);

		if (kinds[k].robust) {
			struct lock_holder dead = { .m = &m, .exit_holding = true };
			start(&t, hold, &dead);
			join(t);
			EXPECT(pthread_mutex_lock(&m), EOWNERDEAD);
			EXPECT(pthread_mutex_consistent(&m), 0);
			EXPECT(pthread_mutex_unlock(&m), 0);
		}
	destroy:
		EXPECT(pthread_mutex_destroy(&m), 0);
	}
	return NULL;
}

struct waiters {
	pthread_mutex_t m;
	pthread_cond_t c;
	int waiting;
	unsigned round; /* the predicate: waiters wait for the next round */
	_Atomic int ready;
};

static void *cond_waiter(void *arg)
{
	struct waiters *w = arg;
	for (unsigned round = 1; round <= 10; round++) {
		EXPECT(pthread_mutex_lock(&w->m), 0);
		w->waiting++;
		atomic_fetch_add(&w->ready, 1);
		/* Ends: the main thread moves the round on, or 5 s pass. */
		while (w->round < round) {
			struct timespec limit = deadline_in_ms(CLOCK_REALTIME, 5000);
			int r = pthread_cond_timedwait(&w->c, &w->m, &limit);
			if (r == ETIMEDOUT) {
				note_failure("waiter never woken in round", (int)round);
				break;
			}
			if (r)
				note_failure("pthread_cond_timedwait", r);
		}
		w->waiting--;
		EXPECT(pthread_mutex_unlock(&w->m), 0);
	}
	return NULL;
}

/* Three waiters, ten rounds: signals under the mutex, broadcasts with
 * and without it (the first unheld one to two or more sleepers: the one
 * that read /sys), a timed wait that times out. */
static void cond_workload(int protocol)
{
	struct waiters w = { .round = 0 };
	pthread_mutexattr_t a;
	pthread_mutexattr_init(&a);
	pthread_mutexattr_setprotocol(&a, protocol);
	EXPECT(pthread_mutex_init(&w.m, &a), 0);
	pthread_mutexattr_destroy(&a);
	EXPECT(pthread_cond_init(&w.c, NULL), 0);
	pthread_t t[3];
	for (int i = 0; i < 3; i++)
		start(&t[i], cond_waiter, &w);
	for (unsigned round = 1; round <= 10; round++) {
		await(&w.ready, 3 * (int)round); /* each waiter registered for this round */
		EXPECT(pthread_mutex_lock(&w.m), 0); /* so they are all inside the wait */
		w.round = round;
		if (round % 3 == 0) {
			EXPECT(pthread_cond_signal(&w.c), 0);
			EXPECT(pthread_cond_signal(&w.c), 0);
			EXPECT(pthread_cond_signal(&w.c), 0);
			EXPECT(pthread_mutex_unlock(&w.m), 0);
		} else if (round % 3 == 1) {
			EXPECT(pthread_mutex_unlock(&w.m), 0);
			EXPECT(pthread_cond_broadcast(&w.c), 0);
		} else {
			EXPECT(pthread_cond_broadcast(&w.c), 0);
			EXPECT(pthread_mutex_unlock(&w.m), 0);
		}
	}
	for (int i = 0; i < 3; i++)
		join(t[i]);
	EXPECT(pthread_mutex_lock(&w.m), 0);
	struct timespec soon = deadline_in_ms(CLOCK_REALTIME, 5);
	EXPECT(pthread_cond_timedwait(&w.c, &w.m, &soon), ETIMEDOUT);
	soon = deadline_in_ms(CLOCK_MONOTONIC, 5);
	EXPECT(pthread_cond_clockwait(&w.c, &w.m, CLOCK_MONOTONIC, &soon), ETIMEDOUT);
	EXPECT(pthread_mutex_unlock(&w.m), 0);
	EXPECT(pthread_cond_destroy(&w.c), 0);
	EXPECT(pthread_mutex_destroy(&w.m), 0);
}

static void cond_normal_workload(void)
{
	cond_workload(PTHREAD_PRIO_NONE);
}

static void cond_pi_workload(void)
{
	cond_workload(PTHREAD_PRIO_INHERIT);
}

static pthread_barrier_t barrier;
static _Atomic int serials;

static void *barrier_user(void *arg)
{
	(void)arg;
	for (int i = 0; i < 20; i++) {
		int r = pthread_barrier_wait(&barrier);
		if (r == PTHREAD_BARRIER_SERIAL_THREAD)
			atomic_fetch_add(&serials, 1);
		else if (r)
			note_failure("pthread_barrier_wait", r);
	}
	return NULL;
}

static void barrier_workload(void)
{
	EXPECT(pthread_barrier_init(&barrier, NULL, 3), 0);
	pthread_t t[3];
	for (int i = 0; i < 3; i++)
		start(&t[i], barrier_user, NULL);
	for (int i = 0; i < 3; i++)
		join(t[i]);
	EXPECT(atomic_load(&serials), 20);
	EXPECT(pthread_barrier_destroy(&barrier), 0);
}

/* ---- the tests ---- */

START_TEST(test_mutexes_make_only_nptl_calls)
{
	RUN_FILTERED(mutexes_workload);
}
END_TEST

START_TEST(test_cond_normal_mutex_makes_only_nptl_calls)
{
	RUN_FILTERED(cond_normal_workload);
}
END_TEST

/* Four threads wait (three waiters ten times each, the main thread
 * twice): the library asks each thread's priority once, not per wait. */
START_TEST(test_cond_pi_mutex_makes_only_nptl_calls)
{
	int calls = RUN_FILTERED(cond_pi_workload);
	ck_assert_msg(calls <= 4, "sched_getattr called %d times for 32 waits by 4 threads", calls);
}
END_TEST

START_TEST(test_barrier_makes_only_nptl_calls)
{
	RUN_FILTERED(barrier_workload);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("syscalls");
	TCase *tc = tcase_create("seccomp");
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_mutexes_make_only_nptl_calls);
	tcase_add_test(tc, test_cond_normal_mutex_makes_only_nptl_calls);
	tcase_add_test(tc, test_cond_pi_mutex_makes_only_nptl_calls);
	tcase_add_test(tc, test_barrier_makes_only_nptl_calls);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failures = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failures ? 1 : 0;
}
