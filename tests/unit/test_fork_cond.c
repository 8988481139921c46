/*
 * A condition that had waiters when the process forked works in the
 * child.  The child has the memory of the parent's waiters (their queue
 * records, their stacks, the counts that include them) but not the
 * threads.  A signal in the child must reach a thread of the child, a
 * broadcast must wake them all, and neither may follow what the parent's
 * waiters left: the child reuses their stacks for its own threads
 * (glibc caches the stacks of the threads a fork child lacks).
 *
 * For every mutex kind: a parent thread waits on the condition, the
 * parent forks; in the child, optionally, a thread first scribbles over
 * the reused stack, then one (signal) or two (broadcast) new threads
 * wait and are woken once.  With the library the child can also destroy
 * the condition at the end (NPTL waits there for ever for the waiters it
 * still counts).
 *
 * A process-shared condition keeps its waiters: the parent's are alive.
 * The child's broadcast must wake the parent's waiter.
 */
#include <sys/mman.h>
#include <sys/wait.h>

#include "testutil.h"

struct ckind {
	const char *name;
	int type;
	int protocol;
	bool robust;
};

static const struct ckind ckinds[] = {
	{ "normal", PTHREAD_MUTEX_NORMAL, PTHREAD_PRIO_NONE, false },
	{ "recursive", PTHREAD_MUTEX_RECURSIVE, PTHREAD_PRIO_NONE, false },
	{ "errorcheck", PTHREAD_MUTEX_ERRORCHECK, PTHREAD_PRIO_NONE, false },
	{ "robust", PTHREAD_MUTEX_NORMAL, PTHREAD_PRIO_NONE, true },
	{ "pi", PTHREAD_MUTEX_NORMAL, PTHREAD_PRIO_INHERIT, false },
	{ "pi recursive", PTHREAD_MUTEX_RECURSIVE, PTHREAD_PRIO_INHERIT, false },
	{ "pi robust", PTHREAD_MUTEX_NORMAL, PTHREAD_PRIO_INHERIT, true },
	{ "pp", PTHREAD_MUTEX_NORMAL, PTHREAD_PRIO_PROTECT, false },
};
#define NCKINDS 8
/* Per kind: signal, broadcast, and both after a thread scribbled over
 * the dead waiter's stack. */
#define NVARIANTS 4

enum { CHILD_OK = 0, CHILD_NO_THREAD = 10, CHILD_LOST_WAKE, CHILD_DESTROY, CHILD_LOCK };

static pthread_mutex_t m;
static pthread_cond_t c;
static int parent_done, child_done; /* under m */

static void init_kind(const struct ckind *k)
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
	ck_assert_int_eq(pthread_cond_init(&c, NULL), 0);
}

struct waiter {
	_Atomic pid_t tid;
	int *flag;
	int result; /* 0 woken with the flag set, else the wait's error */
};

/* Waits for *flag under m, for at most 3 s. */
/* Woken, not sent away by its deadline: a wait that ends by the
 * deadline may return 0 (it counts itself woken if the condition's
 * counts moved meanwhile). */
static bool before(const struct timespec *deadline)
{
	return now_ns(CLOCK_REALTIME) < (int64_t)deadline->tv_sec * NSEC_PER_SEC + deadline->tv_nsec;
}

static void *waiter_main(void *arg)
{
	struct waiter *w = arg;
	atomic_store(&w->tid, test_gettid());
	struct timespec deadline = deadline_in_ms(CLOCK_REALTIME, 3000);
	int r = pthread_mutex_lock(&m);
	if (r != 0) {
		w->result = r;
		return NULL;
	}
	while (!*w->flag && r == 0)
		r = pthread_cond_timedwait(&c, &m, &deadline);
	w->result = r == 0 && !before(&deadline) ? ETIMEDOUT : r;
	pthread_mutex_unlock(&m);
	return NULL;
}

static bool start_waiter(pthread_t *t, struct waiter *w, int *flag)
{
	atomic_store(&w->tid, 0);
	w->flag = flag;
	w->result = -1;
	if (pthread_create(t, NULL, waiter_main, w) != 0)
		return false;
	int64_t end = now_ns(CLOCK_MONOTONIC) + 5 * NSEC_PER_SEC;
	while (atomic_load(&w->tid) == 0 && now_ns(CLOCK_MONOTONIC) < end)
		sleep_ms(1);
	return atomic_load(&w->tid) != 0 && wait_task_sleeping(atomic_load(&w->tid), 5000);
}

/* Runs on a stack glibc took from the cache, most likely the dead
 * waiter's: overwrites what its frames held. */
static void *scribbler(void *arg)
{
	(void)arg;
	volatile unsigned char junk[256 * 1024];
	memset((void *)junk, 0xa5, sizeof junk);
	return (void *)(uintptr_t)junk[sizeof junk / 2];
}

static int child_main(int variant)
{
	bool broadcast = variant & 1;
	pthread_t t[2];
	struct waiter w[2];
	int n = broadcast ? 2 : 1;
	if (variant & 2) {
		pthread_t s;
		if (pthread_create(&s, NULL, scribbler, NULL) != 0 || pthread_join(s, NULL) != 0)
			return CHILD_NO_THREAD;
	}
	for (int i = 0; i < n; i++)
		if (!start_waiter(&t[i], &w[i], &child_done))
			return CHILD_NO_THREAD;
	if (pthread_mutex_lock(&m) != 0)
		return CHILD_LOCK;
	child_done = 1;
	if (broadcast)
		pthread_cond_broadcast(&c);
	else
		pthread_cond_signal(&c);
	pthread_mutex_unlock(&m);
	bool lost = false;
	for (int i = 0; i < n; i++) {
		pthread_join(t[i], NULL);
		lost |= w[i].result != 0;
	}
	if (lost)
		return CHILD_LOST_WAKE;
	if (library_loaded() && pthread_cond_destroy(&c) != 0)
		return CHILD_DESTROY;
	return CHILD_OK;
}

START_TEST(test_fork_cond_waiters)
{
	const struct ckind *k = &ckinds[_i / NVARIANTS];
	int variant = _i % NVARIANTS;
	if (k->protocol == PTHREAD_PRIO_PROTECT && !try_fifo(1)) {
		ck_assert_msg(!under_ci(), "SCHED_FIFO refused");
		SKIP_TEST("a PP lock needs a real-time caller; SCHED_FIFO refused");
	}
	init_kind(k);
	parent_done = child_done = 0;
	pthread_t pt;
	struct waiter pw;
	ck_assert_msg(start_waiter(&pt, &pw, &parent_done), "the parent's waiter did not block");
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0)
		_exit(child_main(variant));
	int raw = wait_child(pid, 10000);
	ck_assert_int_eq(pthread_mutex_lock(&m), 0);
	parent_done = 1;
	ck_assert_int_eq(pthread_cond_broadcast(&c), 0);
	ck_assert_int_eq(pthread_mutex_unlock(&m), 0);
	pthread_join(pt, NULL);
	static const char *const why[] = { [CHILD_NO_THREAD - 10] = "could not start its waiters",
					   [CHILD_LOST_WAKE - 10] = "a waiter was never woken",
					   [CHILD_DESTROY - 10] = "destroy refused",
					   [CHILD_LOCK - 10] = "could not lock the mutex" };
	int status = raw >= 0 && WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
	ck_assert_msg(status == CHILD_OK, "%s, %s%s: child: %s (status 0x%x)", k->name,
		      variant & 1 ? "broadcast" : "signal", variant & 2 ? " on a reused stack" : "",
		      status >= 10 && status <= 13 ? why[status - 10] : "killed or hung", raw);
	ck_assert_int_eq(pw.result, 0);
}
END_TEST

/* In shared memory: the parent's waiter is woken by the child. */
struct shared {
	pthread_mutex_t m;
	pthread_cond_t c;
	int flag;
};

static struct shared *sh;

static void *shared_waiter(void *arg)
{
	_Atomic pid_t *tid = arg;
	atomic_store(tid, test_gettid());
	struct timespec deadline = deadline_in_ms(CLOCK_REALTIME, 5000);
	int r = pthread_mutex_lock(&sh->m);
	if (r != 0)
		return (void *)(intptr_t)r;
	while (!sh->flag && r == 0)
		r = pthread_cond_timedwait(&sh->c, &sh->m, &deadline);
	if (r == 0 && !before(&deadline))
		r = ETIMEDOUT;
	pthread_mutex_unlock(&sh->m);
	return (void *)(intptr_t)r;
}

START_TEST(test_fork_pshared_keeps_waiters)
{
	const struct ckind *k = &ckinds[_i];
	if (k->protocol == PTHREAD_PRIO_PROTECT && !try_fifo(1)) {
		ck_assert_msg(!under_ci(), "SCHED_FIFO refused");
		SKIP_TEST("a PP lock needs a real-time caller; SCHED_FIFO refused");
	}
	sh = mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ck_assert(sh != MAP_FAILED);
	pthread_mutexattr_t a;
	pthread_mutexattr_init(&a);
	pthread_mutexattr_settype(&a, k->type);
	pthread_mutexattr_setprotocol(&a, k->protocol);
	if (k->protocol == PTHREAD_PRIO_PROTECT)
		pthread_mutexattr_setprioceiling(&a, 10);
	if (k->robust)
		pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
	pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
	ck_assert_int_eq(pthread_mutex_init(&sh->m, &a), 0);
	pthread_mutexattr_destroy(&a);
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setpshared(&ca, PTHREAD_PROCESS_SHARED);
	ck_assert_int_eq(pthread_cond_init(&sh->c, &ca), 0);
	pthread_condattr_destroy(&ca);
	sh->flag = 0;
	_Atomic pid_t tid = 0;
	pthread_t t;
	ck_assert_int_eq(pthread_create(&t, NULL, shared_waiter, &tid), 0);
	while (atomic_load(&tid) == 0)
		sleep_ms(1);
	ck_assert(wait_task_sleeping(atomic_load(&tid), 5000));
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		if (pthread_mutex_lock(&sh->m) != 0)
			_exit(1);
		sh->flag = 1;
		pthread_cond_broadcast(&sh->c);
		pthread_mutex_unlock(&sh->m);
		_exit(0);
	}
	ck_assert_child_ok(pid, 10000);
	void *r;
	ck_assert_int_eq(pthread_join(t, &r), 0);
	ck_assert_msg(r == NULL, "%s: the parent's waiter was not woken by the child (%d)", k->name,
		      (int)(intptr_t)r);
	munmap(sh, sizeof *sh);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("fork_cond");
	TCase *tc = tcase_create("waiters at fork");
	tcase_set_timeout(tc, 30);
	tcase_add_loop_test(tc, test_fork_cond_waiters, 0, NCKINDS * NVARIANTS);
	tcase_add_loop_test(tc, test_fork_pshared_keeps_waiters, 0, NCKINDS);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
