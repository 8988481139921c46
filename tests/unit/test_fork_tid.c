/*
 * In a fork child, a mutex has at most one owner even when a thread of
 * the child gets back the TID of the thread that forked while holding it
 * (TIDs are reused once their thread is gone).
 *
 * A parent thread F locks the mutex and forks, then exits in the parent;
 * in the child, /proc/sys/kernel/ns_last_pid makes the next thread X get
 * F's old TID.  X then locks the mutex (with a short deadline) and the
 * child's own thread, the replica of F, unlocks it.  NPTL takes X for the
 * owner (the word names its TID) and refuses the replica; the library
 * takes the replica for the owner (it owns what F held, docs/fork.md) and
 * gives X nothing.  Either way, never both: X holding it (0, EDEADLK,
 * EOWNERDEAD) and the replica's unlock succeeding is two owners.
 *
 * Needs root (ns_last_pid); skips where it cannot write it or where
 * another process keeps taking the TID.
 */
#include <fcntl.h>
#include <sys/wait.h>

#include "testutil.h"

struct tkind {
	const char *name;
	int type;
	int protocol;
	bool robust;
};

static const struct tkind tkinds[] = {
	{ "normal", PTHREAD_MUTEX_NORMAL, PTHREAD_PRIO_NONE, false },
	{ "recursive", PTHREAD_MUTEX_RECURSIVE, PTHREAD_PRIO_NONE, false },
	{ "errorcheck", PTHREAD_MUTEX_ERRORCHECK, PTHREAD_PRIO_NONE, false },
	{ "robust recursive", PTHREAD_MUTEX_RECURSIVE, PTHREAD_PRIO_NONE, true },
	{ "pi", PTHREAD_MUTEX_NORMAL, PTHREAD_PRIO_INHERIT, false },
	{ "pi recursive", PTHREAD_MUTEX_RECURSIVE, PTHREAD_PRIO_INHERIT, false },
	{ "pi errorcheck", PTHREAD_MUTEX_ERRORCHECK, PTHREAD_PRIO_INHERIT, false },
	{ "pp recursive", PTHREAD_MUTEX_RECURSIVE, PTHREAD_PRIO_PROTECT, false },
};
#define NTKINDS 8

enum { CHILD_OK = 0, CHILD_SKIP = 9, CHILD_TWO_OWNERS = 10, CHILD_NO_THREAD };

static pthread_mutex_t m;
static pid_t forker_tid;
static int to_child[2];
static sem_t x_done;

static void init_kind(const struct tkind *k)
{
	pthread_mutexattr_t a;
	pthread_mutexattr_init(&a);
	pthread_mutexattr_settype(&a, k->type);
	pthread_mutexattr_setprotocol(&a, k->protocol);
	if (k->protocol == PTHREAD_PRIO_PROTECT)
		pthread_mutexattr_setprioceiling(&a, 10);
	if (k->robust)
		pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
	ck_assert_int_eq(pthread_mutex_init(&m, &a), 0);
	pthread_mutexattr_destroy(&a);
}

static bool set_last_pid(pid_t last)
{
	int fd = open("/proc/sys/kernel/ns_last_pid", O_WRONLY);
	if (fd < 0)
		return false;
	char text[32];
	int n = snprintf(text, sizeof text, "%d", (int)last);
	bool ok = write(fd, text, (size_t)n) == n;
	close(fd);
	return ok;
}

struct replica_view {
	_Atomic pid_t tid;
	int lock_result;
	sem_t go;
};

/* X: reports its TID; if it is F's, locks the mutex as the child's main
 * thread asks, and stays alive (keeping the TID) until told to leave. */
static void *x_main(void *arg)
{
	struct replica_view *v = arg;
	atomic_store(&v->tid, test_gettid());
	sem_wait_intr(&v->go);
	if (atomic_load(&v->tid) == forker_tid) {
		struct timespec deadline = deadline_in_ms(CLOCK_REALTIME, 100);
		v->lock_result = pthread_mutex_timedlock(&m, &deadline);
	}
	sem_post(&x_done);
	sem_wait_intr(&v->go);
	return NULL;
}

/* The replica of F, in the child. */
static int child_main(void)
{
	char byte;
	if (read(to_child[0], &byte, 1) != 1) /* F has exited in the parent */
		return CHILD_NO_THREAD;
	sem_init(&x_done, 0, 0);
	struct replica_view v;
	sem_init(&v.go, 0, 0);
	/* Ends: 200 tries; other processes may take the TID first. */
	for (int attempt = 0; attempt < 200; attempt++) {
		atomic_store(&v.tid, 0);
		if (!set_last_pid(forker_tid - 1))
			return CHILD_SKIP;
		pthread_t x;
		if (pthread_create(&x, NULL, x_main, &v) != 0)
			return CHILD_NO_THREAD;
		while (atomic_load(&v.tid) == 0)
			sleep_ms(1);
		sem_post(&v.go);
		if (atomic_load(&v.tid) != forker_tid) {
			sem_wait_intr(&x_done);
			sem_post(&v.go);
			pthread_join(x, NULL);
			sleep_ms(2);
			continue;
		}
		sem_wait_intr(&x_done);
		int r = v.lock_result;
		bool x_owns = r == 0 || r == EDEADLK || r == EOWNERDEAD;
		int unlock = pthread_mutex_unlock(&m);
		sem_post(&v.go);
		pthread_join(x, NULL);
		if (x_owns && unlock == 0) {
			fprintf(stderr, "X's lock: %d, the replica's unlock: %d\n", r, unlock);
			return CHILD_TWO_OWNERS;
		}
		return CHILD_OK;
	}
	return CHILD_SKIP;
}

static void *forker_main(void *arg)
{
	(void)arg;
	forker_tid = test_gettid();
	if (pthread_mutex_lock(&m) != 0)
		return (void *)(intptr_t)-1;
	pid_t pid = fork();
	if (pid == 0)
		_exit(child_main());
	return (void *)(intptr_t)pid; /* exits holding m: this copy is never used again */
}

START_TEST(test_fork_tid_reuse)
{
	const struct tkind *k = &tkinds[_i];
	if (access("/proc/sys/kernel/ns_last_pid", W_OK) != 0) {
		ck_assert_msg(!under_ci(), "/proc/sys/kernel/ns_last_pid is not writable");
		SKIP_TEST("cannot write /proc/sys/kernel/ns_last_pid (not root)");
	}
	if (k->protocol == PTHREAD_PRIO_PROTECT && !try_fifo(1)) {
		ck_assert_msg(!under_ci(), "SCHED_FIFO refused");
		SKIP_TEST("a PP lock needs a real-time caller; SCHED_FIFO refused");
	}
	init_kind(k);
	ck_assert_int_eq(pipe(to_child), 0);
	pthread_t f;
	ck_assert_int_eq(pthread_create(&f, NULL, forker_main, NULL), 0);
	void *ret;
	ck_assert_int_eq(pthread_join(f, &ret), 0);
	pid_t pid = (pid_t)(intptr_t)ret;
	ck_assert_int_gt(pid, 0);
	/* F is gone once joined (the kernel cleared its TID word). */
	ck_assert_int_eq(write(to_child[1], "x", 1), 1);
	int raw = wait_child(pid, 20000);
	close(to_child[0]);
	close(to_child[1]);
	int status = raw >= 0 && WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
	if (status == CHILD_SKIP) {
		ck_assert_msg(!under_ci(), "no thread of the child got the forking thread's TID back");
		SKIP_TEST("%s: no thread of the child got the forking thread's TID back", k->name);
	}
	ck_assert_msg(status == CHILD_OK, "%s: child: %s (status 0x%x)", k->name,
		      status == CHILD_TWO_OWNERS ? "two owners"
		      : status == CHILD_NO_THREAD ? "could not start a thread"
						  : "killed or hung",
		      raw);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("fork_tid");
	TCase *tc = tcase_create("tid reuse");
	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, test_fork_tid_reuse, 0, NTKINDS);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
