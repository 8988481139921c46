/*
 * A fork child's contention statistics start from zero: the parent's
 * counts are the parent's to report (a child that exits through exit()
 * writes its own report, which would count them a second time), and the
 * child counts its own.
 *
 * The program runs itself again with RTPTHREAD_STATS=/dev/null, so that
 * statistics are on from the library's load.  A library promise: skipped
 * where rtpthread_mutex_stats does not exist (NPTL).
 */
#include <sys/wait.h>

#include "rtpthread.h"
#include "testutil.h"

typedef unsigned stats_fn(struct rtpthread_mutex_stats *, unsigned);

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static _Atomic pid_t contender_tid;

static void *contender(void *arg)
{
	(void)arg;
	atomic_store(&contender_tid, test_gettid());
	struct timespec deadline = deadline_in_ms(CLOCK_REALTIME, 5000);
	int r = pthread_mutex_timedlock(&m, &deadline);
	if (r == 0)
		pthread_mutex_unlock(&m);
	return (void *)(intptr_t)r;
}

/* One contended lock of m: a thread blocks on it while we hold it. */
static bool contend(void)
{
	if (pthread_mutex_lock(&m) != 0)
		return false;
	atomic_store(&contender_tid, 0);
	pthread_t t;
	if (pthread_create(&t, NULL, contender, NULL) != 0)
		return false;
	while (atomic_load(&contender_tid) == 0)
		sleep_ms(1);
	bool blocked = wait_task_sleeping(atomic_load(&contender_tid), 5000);
	pthread_mutex_unlock(&m);
	void *r;
	pthread_join(t, &r);
	return blocked && r == NULL;
}

static unsigned long long contended(stats_fn *read_stats)
{
	struct rtpthread_mutex_stats s[16];
	unsigned n = read_stats(s, 16);
	for (unsigned i = 0; i < n; i++)
		if (s[i].mutex == (const void *)&m)
			return s[i].contended;
	return 0;
}

START_TEST(test_child_counts_from_zero)
{
	stats_fn *read_stats = (stats_fn *)dlsym(RTLD_DEFAULT, "rtpthread_mutex_stats");
	if (!read_stats)
		SKIP_TEST("no rtpthread_mutex_stats: NPTL");
	ck_assert(contend());
	ck_assert_msg(contended(read_stats) >= 1, "the parent's contended lock was not counted");
	unsigned long long before = contended(read_stats);
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		if (contended(read_stats) != 0)
			_exit(1); /* the parent's counts */
		if (!contend() || contended(read_stats) < 1)
			_exit(2); /* its own were not counted */
		_exit(0);
	}
	ck_assert_child_ok(pid, 10000);
	ck_assert_int_eq(contended(read_stats), before);
}
END_TEST

int main(int argc, char **argv)
{
	(void)argc;
	const char *stats = getenv("RTPTHREAD_STATS");
	if (!stats || strcmp(stats, "/dev/null") != 0) {
		setenv("RTPTHREAD_STATS", "/dev/null", 1);
		execv("/proc/self/exe", argv);
		perror("execv /proc/self/exe");
		return 1;
	}
	Suite *s = suite_create("fork_stats");
	TCase *tc = tcase_create("stats");
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_child_counts_from_zero);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
