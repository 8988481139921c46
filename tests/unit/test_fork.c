/*
 * A fork child locks with its own TID.  fork() runs pthread_atfork
 * handlers, _Fork() (glibc 2.34) runs none: the library must notice the
 * new process either way, or the child's owner-tracked locks carry the
 * parent's TID (its own unlock of a PI mutex then fails with EPERM, and
 * another of its threads cannot tell who owns the mutex).
 *
 * Each case forks while another thread of the parent holds one mutex
 * and waits, then checks in the child: the lock word of each kind holds
 * the child's TID, unlock succeeds, and a second thread of the child
 * gets the mutex after the child's unlock.
 */
#include <sys/wait.h>

#include "testutil.h"

enum { CHILD_OK = 0, CHILD_BAD_WORD = 10, CHILD_BAD_LOCK, CHILD_BAD_UNLOCK, CHILD_BAD_THREAD };

struct fkind {
	const char *name;
	int type;
	int protocol;
	bool robust;
};

static const struct fkind fkinds[] = {
	{ "pi", PTHREAD_MUTEX_NORMAL, PTHREAD_PRIO_INHERIT, false },
	{ "pi errorcheck", PTHREAD_MUTEX_ERRORCHECK, PTHREAD_PRIO_INHERIT, false },
	{ "robust", PTHREAD_MUTEX_NORMAL, PTHREAD_PRIO_NONE, true },
	{ "robust pi", PTHREAD_MUTEX_NORMAL, PTHREAD_PRIO_INHERIT, true },
	{ "errorcheck", PTHREAD_MUTEX_ERRORCHECK, PTHREAD_PRIO_NONE, false },
};
#define NFKINDS 5

static void init_kind(pthread_mutex_t *m, const struct fkind *k)
{
	pthread_mutexattr_t a;
	pthread_mutexattr_init(&a);
	pthread_mutexattr_settype(&a, k->type);
	pthread_mutexattr_setprotocol(&a, k->protocol);
	if (k->robust)
		pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
	pthread_mutex_init(m, &a);
	pthread_mutexattr_destroy(&a);
}

static pthread_mutex_t child_mutex;

static void *child_locker(void *p)
{
	(void)p;
	struct timespec dl = deadline_in_ms(CLOCK_REALTIME, 2000);
	int r = pthread_mutex_timedlock(&child_mutex, &dl);
	if (r == 0)
		pthread_mutex_unlock(&child_mutex);
	return (void *)(intptr_t)r;
}

/* In the child: what a lock shows.  The owner's TID is in __lock (PI and
 * robust kinds everywhere, every kind in rtpthread) or __owner (glibc's
 * other kinds). */
static int child_checks(const struct fkind *k)
{
	init_kind(&child_mutex, k);
	if (pthread_mutex_lock(&child_mutex) != 0)
		return CHILD_BAD_LOCK;
	unsigned tid = (unsigned)test_gettid();
	bool word_ok = ((unsigned)child_mutex.__data.__lock & 0x3fffffffu) == tid ||
		       (unsigned)child_mutex.__data.__owner == tid;
	pthread_t t;
	if (pthread_create(&t, NULL, child_locker, NULL) != 0)
		return CHILD_BAD_THREAD;
	sleep_ms(20);
	if (pthread_mutex_unlock(&child_mutex) != 0)
		return CHILD_BAD_UNLOCK;
	void *r;
	pthread_join(t, &r);
	if (!word_ok)
		return CHILD_BAD_WORD;
	return r == 0 ? CHILD_OK : CHILD_BAD_THREAD;
}

static pthread_mutex_t parent_mutex = PTHREAD_MUTEX_INITIALIZER;
static sem_t parent_go;

static void *parent_holder(void *p)
{
	(void)p;
	pthread_mutex_lock(&parent_mutex);
	sem_wait_intr(&parent_go);
	pthread_mutex_unlock(&parent_mutex);
	return NULL;
}

static void fork_and_check(const struct fkind *k, bool raw)
{
	/* the parent's TID is cached in this thread before the fork */
	pthread_mutex_t warm;
	init_kind(&warm, k);
	ck_assert_int_eq(pthread_mutex_lock(&warm), 0);
	ck_assert_int_eq(pthread_mutex_unlock(&warm), 0);
	sem_init(&parent_go, 0, 0);
	pthread_t holder;
	ck_assert_int_eq(pthread_create(&holder, NULL, parent_holder, NULL), 0);
	pid_t pid = raw ? _Fork() : fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0)
		_exit(child_checks(k));
	int raw_status = wait_child(pid, 5000);
	int status = raw_status >= 0 && WIFEXITED(raw_status) ? WEXITSTATUS(raw_status) : -1;
	sem_post(&parent_go);
	pthread_join(holder, NULL);
	static const char *const why[] = { [CHILD_BAD_WORD - 10] = "the lock word holds another TID",
					   [CHILD_BAD_LOCK - 10] = "lock failed",
					   [CHILD_BAD_UNLOCK - 10] = "its own unlock failed",
					   [CHILD_BAD_THREAD - 10] = "a second child thread could not lock" };
	ck_assert_msg(status == CHILD_OK, "%s, %s: child: %s (status %d)", raw ? "_Fork" : "fork", k->name,
		      status >= 10 && status <= 13 ? why[status - 10] : "died", status);
}

START_TEST(test_fork_child_tid)
{
	fork_and_check(&fkinds[_i], false);
}
END_TEST

START_TEST(test_raw_fork_child_tid)
{
	fork_and_check(&fkinds[_i], true);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("fork");
	TCase *tc = tcase_create("child");
	tcase_set_timeout(tc, 30);
	tcase_add_loop_test(tc, test_fork_child_tid, 0, NFKINDS);
	tcase_add_loop_test(tc, test_raw_fork_child_tid, 0, NFKINDS);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
