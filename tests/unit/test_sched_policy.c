/*
 * The library never leaves a thread at a policy or priority it did not ask
 * for.  A table over every policy (OTHER and BATCH with a nice value,
 * IDLE, FIFO, RR, FIFO with reset-on-fork, DEADLINE) x every mutex protocol
 * (NONE, INHERIT, PROTECT with ceiling 50) x every way in (lock, timedlock,
 * trylock, a condition wait): a fresh thread takes the policy with a raw
 * sched_setattr (as chrt and every SCHED_DEADLINE program do), and after
 * each step the kernel's view (sched_getattr: policy, flags, nice,
 * priority, runtime/deadline/period) must be what the thread asked for,
 * the ceiling aside while a PROTECT mutex is held, and
 * pthread_getschedparam must report what the thread asked for throughout.
 *
 * PROTECT: FIFO and RR run at the ceiling, same policy; OTHER, BATCH and
 * IDLE run SCHED_FIFO at the ceiling under the library (NPTL: EINVAL) and
 * get their policy and nice value back; DEADLINE gets EINVAL and stays
 * SCHED_DEADLINE (as on NPTL).  With the protect configuration
 * (RTPTHREAD_PROTOCOL=protect, read at load: the test runs itself again
 * with it), a deadline thread locks default mutexes without any change.
 *
 * SCHED_DEADLINE needs privilege and admission (a thread allowed on every
 * CPU of its root domain): refused, those rows skip, and fail under
 * CI=true.
 */
#include <sys/wait.h>

#include "testutil.h"

#ifndef SCHED_DEADLINE
#define SCHED_DEADLINE 6
#endif
#define FLAG_RESET_ON_FORK 0x01 /* SCHED_FLAG_RESET_ON_FORK */
#define CEILING 50
#define PROTECT_CHILD_ARG "--protect-deadline-child"

/* The kernel's struct sched_attr, first version (48 bytes). */
struct kview {
	uint32_t size, policy;
	uint64_t flags;
	int32_t nice;
	uint32_t priority;
	uint64_t runtime, deadline, period;
};

static int kview_read(struct kview *v)
{
	memset(v, 0, sizeof *v);
	return syscall(SYS_sched_getattr, 0, v, sizeof *v, 0) == 0 ? 0 : errno;
}

static int kview_set(const struct kview *v)
{
	struct kview a = *v;
	a.size = sizeof a;
	return syscall(SYS_sched_setattr, 0, &a, 0) == 0 ? 0 : errno;
}

static bool kview_equal(const struct kview *a, const struct kview *b)
{
	return a->policy == b->policy && a->flags == b->flags && a->nice == b->nice && a->priority == b->priority &&
	       a->runtime == b->runtime && a->deadline == b->deadline && a->period == b->period;
}

static void kview_text(const struct kview *v, char *buf, size_t n)
{
	snprintf(buf, n, "policy %u flags %#llx nice %d prio %u dl %llu/%llu/%llu", v->policy,
		 (unsigned long long)v->flags, v->nice, v->priority, (unsigned long long)v->runtime,
		 (unsigned long long)v->deadline, (unsigned long long)v->period);
}

enum { P_OTHER, P_BATCH, P_IDLE, P_FIFO, P_RR, P_FIFO_RESET, P_DEADLINE, NPOLICIES };
static const char *const policy_names[NPOLICIES] = { "OTHER nice 5", "BATCH nice 3", "IDLE", "FIFO 10",
						     "RR 10",	     "FIFO 10 reset-on-fork", "DEADLINE 2/10/10 ms" };
static const struct kview policies[NPOLICIES] = {
	[P_OTHER] = { .policy = SCHED_OTHER, .nice = 5 },
	[P_BATCH] = { .policy = SCHED_BATCH, .nice = 3 },
	[P_IDLE] = { .policy = SCHED_IDLE }, /* the kernel keeps no nice value for IDLE */
	[P_FIFO] = { .policy = SCHED_FIFO, .priority = 10 },
	[P_RR] = { .policy = SCHED_RR, .priority = 10 },
	[P_FIFO_RESET] = { .policy = SCHED_FIFO, .flags = FLAG_RESET_ON_FORK, .priority = 10 },
	[P_DEADLINE] = { .policy = SCHED_DEADLINE, .runtime = 2000000, .deadline = 10000000, .period = 10000000 },
};

enum { PR_NONE, PR_INHERIT, PR_PROTECT, NPROTOCOLS };
static const int protocols[NPROTOCOLS] = { PTHREAD_PRIO_NONE, PTHREAD_PRIO_INHERIT, PTHREAD_PRIO_PROTECT };
static const char *const protocol_names[NPROTOCOLS] = { "NONE", "INHERIT", "PROTECT" };

enum { OP_LOCK, OP_TIMEDLOCK, OP_TRYLOCK, OP_CONDWAIT, NOPS };
static const char *const op_names[NOPS] = { "lock", "timedlock", "trylock", "cond wait" };

/* One row's outcome, filled by its thread: skip (a reason) or a failure. */
struct row {
	int policy, protocol, op;
	char skip[160];
	char why[400];
};

#define ROW_FAIL(r, ...)                                                   \
	do {                                                               \
		snprintf((r)->why, sizeof (r)->why, __VA_ARGS__);           \
		return NULL;                                               \
	} while (0)

/* What pthread_getschedparam must say: what the thread asked for (glibc
 * reports reset-on-fork inside the policy, as sched_getscheduler does). */
static void expected_param(const struct kview *asked, int *policy, int *priority)
{
	*policy = (int)asked->policy | ((asked->flags & FLAG_RESET_ON_FORK) ? SCHED_RESET_ON_FORK : 0);
	*priority = (int)asked->priority;
}

/* Checks the kernel's view against want and getschedparam against asked;
 * returns a description of the first difference, or NULL. */
static const char *check_state(const char *step, const struct kview *want, const struct kview *asked, char *buf,
			       size_t n)
{
	struct kview now;
	char a[160], b[160];
	if (kview_read(&now) != 0) {
		snprintf(buf, n, "%s: sched_getattr: %s", step, strerror(errno));
		return buf;
	}
	if (!kview_equal(&now, want)) {
		kview_text(&now, a, sizeof a);
		kview_text(want, b, sizeof b);
		snprintf(buf, n, "%s: kernel has %s, expected %s", step, a, b);
		return buf;
	}
	int policy, priority, got_policy = -1;
	struct sched_param sp = { .sched_priority = -1 };
	expected_param(asked, &policy, &priority);
	int e = pthread_getschedparam(pthread_self(), &got_policy, &sp);
	if (e != 0 || got_policy != policy || sp.sched_priority != priority) {
		snprintf(buf, n, "%s: pthread_getschedparam: %d, policy %#x prio %d; expected policy %#x prio %d",
			 step, e, got_policy, sp.sched_priority, policy, priority);
		return buf;
	}
	return NULL;
}

static void init_mutex(pthread_mutex_t *m, int protocol)
{
	pthread_mutexattr_t a;
	pthread_mutexattr_init(&a);
	pthread_mutexattr_setprotocol(&a, protocol);
	if (protocol == PTHREAD_PRIO_PROTECT)
		pthread_mutexattr_setprioceiling(&a, CEILING);
	pthread_mutex_init(m, &a);
	pthread_mutexattr_destroy(&a);
}

static int acquire(pthread_mutex_t *m, int op)
{
	struct timespec dl = deadline_in_ms(CLOCK_REALTIME, 2000);
	switch (op) {
	case OP_TIMEDLOCK:
		return pthread_mutex_timedlock(m, &dl);
	case OP_TRYLOCK:
		return pthread_mutex_trylock(m);
	default:
		return pthread_mutex_lock(m);
	}
}

static void *row_main(void *arg)
{
	struct row *r = arg;
	const struct kview *asked = &policies[r->policy];
	char buf[400];
	const char *bad;

	int e = kview_set(asked);
	if (e) {
		snprintf(r->skip, sizeof r->skip, "sched_setattr(%s) refused: %s", policy_names[r->policy],
			 strerror(e));
		return NULL;
	}
	struct kview before;
	if (kview_read(&before) != 0)
		ROW_FAIL(r, "sched_getattr: %s", strerror(errno));
	if ((bad = check_state("after sched_setattr", &before, asked, buf, sizeof buf)))
		ROW_FAIL(r, "%s", bad);

	pthread_mutex_t m;
	pthread_cond_t c = PTHREAD_COND_INITIALIZER;
	init_mutex(&m, protocols[r->protocol]);

	/* What the kernel must show while the mutex is held. */
	struct kview held = before;
	int expect = 0;
	if (r->protocol == PR_PROTECT) {
		switch (asked->policy) {
		case SCHED_FIFO:
		case SCHED_RR:
			held.priority = CEILING;
			break;
		case SCHED_DEADLINE:
			expect = EINVAL;
			break;
		default: /* OTHER, BATCH, IDLE */
			if (library_loaded()) {
				/* sched_getattr shows a real-time task's nice as 0
				 * and its runtime (the fair slice) as 0: "after"
				 * checks that both come back. */
				held.policy = SCHED_FIFO;
				held.priority = CEILING;
				held.nice = 0;
				held.runtime = 0;
			} else {
				expect = EINVAL; /* NPTL */
			}
		}
	}

	e = acquire(&m, r->op);
	if (e != expect)
		ROW_FAIL(r, "%s returned %d, expected %d", op_names[r->op], e, expect);
	if (e == 0) {
		if ((bad = check_state("held", &held, asked, buf, sizeof buf)))
			ROW_FAIL(r, "%s", bad);
		if (r->op == OP_CONDWAIT) {
			struct timespec dl = deadline_in_ms(CLOCK_REALTIME, 2);
			e = pthread_cond_timedwait(&c, &m, &dl);
			if (e != ETIMEDOUT)
				ROW_FAIL(r, "pthread_cond_timedwait returned %d, expected ETIMEDOUT", e);
			if ((bad = check_state("held after the wait", &held, asked, buf, sizeof buf)))
				ROW_FAIL(r, "%s", bad);
		}
		e = pthread_mutex_unlock(&m);
		if (e != 0)
			ROW_FAIL(r, "unlock returned %d", e);
	}
	if ((bad = check_state("after", &before, asked, buf, sizeof buf)))
		ROW_FAIL(r, "%s", bad);
	/* Once more: the second round runs on whatever the first cached.
	 * NPTL keeps the ceiling of a refused lock counted, so that its
	 * second lock succeeds with no change: accepted from glibc only. */
	e = acquire(&m, r->op);
	if (e == 0 && expect == EINVAL && !library_loaded())
		held = before;
	else if (e != expect)
		ROW_FAIL(r, "second %s returned %d, expected %d", op_names[r->op], e, expect);
	if (e == 0) {
		if ((bad = check_state("held again", &held, asked, buf, sizeof buf)))
			ROW_FAIL(r, "%s", bad);
		if ((e = pthread_mutex_unlock(&m)) != 0)
			ROW_FAIL(r, "second unlock returned %d", e);
	}
	if ((bad = check_state("after the second round", &before, asked, buf, sizeof buf)))
		ROW_FAIL(r, "%s", bad);
	pthread_mutex_destroy(&m);
	pthread_cond_destroy(&c);
	return NULL;
}

/* Runs fn(row) in a fresh thread with the default attributes (inherits
 * this thread's scheduling: SCHED_OTHER), then reports. */
static void run_row(void *(*fn)(void *), struct row *r)
{
	pthread_t t;
	ck_assert_int_eq(pthread_create(&t, NULL, fn, r), 0);
	ck_assert_int_eq(pthread_join(t, NULL), 0);
	if (r->skip[0]) {
		ck_assert_msg(!under_ci(), "%s (under CI=true)", r->skip);
		printf("SKIP: %s x %s x %s: %s\n", policy_names[r->policy], protocol_names[r->protocol],
		       op_names[r->op], r->skip);
		fflush(stdout);
		return;
	}
	ck_assert_msg(!r->why[0], "%s x %s x %s: %s", policy_names[r->policy], protocol_names[r->protocol],
		      op_names[r->op], r->why);
}

START_TEST(test_policy_table)
{
	struct row r = { .policy = _i / (NPROTOCOLS * NOPS), .protocol = _i / NOPS % NPROTOCOLS, .op = _i % NOPS };
	run_row(row_main, &r);
}
END_TEST

/* ---- pthread_getschedparam hides the ceiling ---- */

/* FIFO 10 set with a raw sched_setscheduler (as chrt does), PP ceiling
 * 50: pthread_getschedparam says FIFO 10 while held and after, and the
 * kernel is back at 10. */
static void *raw_fifo_main(void *arg)
{
	struct row *r = arg;
	struct sched_param sp = { .sched_priority = 10 };
	if (sched_setscheduler(0, SCHED_FIFO, &sp) != 0) {
		snprintf(r->skip, sizeof r->skip, "sched_setscheduler(FIFO 10) refused: %s", strerror(errno));
		return NULL;
	}
	pthread_mutex_t m;
	init_mutex(&m, PTHREAD_PRIO_PROTECT);
	int policy;
	int e = pthread_mutex_lock(&m);
	if (e)
		ROW_FAIL(r, "lock: %d", e);
	struct kview v;
	kview_read(&v);
	if (v.priority != CEILING)
		ROW_FAIL(r, "kernel at %u while held, expected %d", v.priority, CEILING);
	e = pthread_getschedparam(pthread_self(), &policy, &sp);
	if (e || policy != SCHED_FIFO || sp.sched_priority != 10)
		ROW_FAIL(r, "held: getschedparam %d: policy %d prio %d, expected FIFO 10", e, policy, sp.sched_priority);
	pthread_mutex_unlock(&m);
	kview_read(&v);
	e = pthread_getschedparam(pthread_self(), &policy, &sp);
	if (v.policy != SCHED_FIFO || v.priority != 10)
		ROW_FAIL(r, "kernel at policy %u prio %u after, expected FIFO 10", v.policy, v.priority);
	if (e || policy != SCHED_FIFO || sp.sched_priority != 10)
		ROW_FAIL(r, "after: getschedparam %d: policy %d prio %d, expected FIFO 10", e, policy,
			 sp.sched_priority);
	pthread_mutex_destroy(&m);
	return NULL;
}

START_TEST(test_getschedparam_raw_fifo)
{
	struct row r = { .policy = P_FIFO, .protocol = PR_PROTECT, .op = OP_LOCK };
	run_row(raw_fifo_main, &r);
}
END_TEST

/* pthread_setschedparam (_i 0) or pthread_setschedprio (_i 1) to 20 while
 * a ceiling-50 mutex is held: the kernel stays at 50, getschedparam says
 * 20 at once, and after the unlock the kernel and getschedparam (glibc's
 * cached parameters included) say 20. */
static void *set_while_held_main(void *arg)
{
	struct row *r = arg;
	struct sched_param sp = { .sched_priority = 10 };
	int e = pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp);
	if (e) {
		snprintf(r->skip, sizeof r->skip, "pthread_setschedparam(FIFO 10) refused: %s", strerror(e));
		return NULL;
	}
	pthread_mutex_t m;
	init_mutex(&m, PTHREAD_PRIO_PROTECT);
	if ((e = pthread_mutex_lock(&m)))
		ROW_FAIL(r, "lock: %d", e);
	sp.sched_priority = 20;
	e = r->op == 0 ? pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp) : pthread_setschedprio(pthread_self(), 20);
	if (e)
		ROW_FAIL(r, "set to 20 while held: %d", e);
	struct kview v;
	kview_read(&v);
	if (v.priority != CEILING)
		ROW_FAIL(r, "kernel at %u while held, expected %d", v.priority, CEILING);
	int policy;
	e = pthread_getschedparam(pthread_self(), &policy, &sp);
	if (e || policy != SCHED_FIFO || sp.sched_priority != 20)
		ROW_FAIL(r, "held: getschedparam %d: policy %d prio %d, expected FIFO 20", e, policy, sp.sched_priority);
	pthread_mutex_unlock(&m);
	kview_read(&v);
	if (v.policy != SCHED_FIFO || v.priority != 20)
		ROW_FAIL(r, "kernel at policy %u prio %u after, expected FIFO 20", v.policy, v.priority);
	e = pthread_getschedparam(pthread_self(), &policy, &sp);
	if (e || policy != SCHED_FIFO || sp.sched_priority != 20)
		ROW_FAIL(r, "after: getschedparam %d: policy %d prio %d, expected FIFO 20", e, policy,
			 sp.sched_priority);
	pthread_mutex_destroy(&m);
	return NULL;
}

START_TEST(test_set_while_held_then_get)
{
	struct row r = { .policy = P_FIFO, .protocol = PR_PROTECT, .op = _i };
	run_row(set_while_held_main, &r);
}
END_TEST

/* A thread that used a PP mutex while SCHED_OTHER and then became a
 * deadline thread with a raw sched_setattr (the only way there is): its
 * next PP lock is refused and it stays SCHED_DEADLINE. */
static void *other_then_deadline_main(void *arg)
{
	struct row *r = arg;
	pthread_mutex_t m;
	init_mutex(&m, PTHREAD_PRIO_PROTECT);
	if (pthread_mutex_lock(&m) == 0) /* NPTL: EINVAL for SCHED_OTHER */
		pthread_mutex_unlock(&m);
	int e = kview_set(&policies[P_DEADLINE]);
	if (e) {
		snprintf(r->skip, sizeof r->skip, "sched_setattr(SCHED_DEADLINE) refused: %s", strerror(e));
		return NULL;
	}
	struct kview before, v;
	kview_read(&before);
	e = pthread_mutex_lock(&m);
	if (e == 0)
		pthread_mutex_unlock(&m);
	kview_read(&v);
	if (!kview_equal(&v, &before))
		ROW_FAIL(r, "the thread left SCHED_DEADLINE: policy %u prio %u runtime %llu", v.policy, v.priority,
			 (unsigned long long)v.runtime);
	/* NPTL: 0 with no change, its refused SCHED_OTHER lock still counted. */
	if (e != EINVAL && (e != 0 || library_loaded()))
		ROW_FAIL(r, "PP lock by a deadline thread returned %d, expected EINVAL", e);
	pthread_mutex_destroy(&m);
	return NULL;
}

START_TEST(test_other_then_deadline)
{
	struct row r = { .policy = P_DEADLINE, .protocol = PR_PROTECT, .op = OP_LOCK };
	run_row(other_then_deadline_main, &r);
}
END_TEST

/* ---- RTPTHREAD_PROTOCOL=protect ---- */

/* In the child run with RTPTHREAD_PROTOCOL=protect: a FIFO 10 thread
 * proves the configuration is in force (under the library it runs at the
 * default ceiling, 99, while it holds a default mutex); a deadline thread
 * (one that locked default mutexes before it became one, too) locks them
 * with no change at all, lock, timedlock, trylock and condition wait. */
static pthread_mutex_t static_mutex = PTHREAD_MUTEX_INITIALIZER;

static void *protect_fifo_main(void *arg)
{
	struct row *r = arg;
	struct sched_param sp = { .sched_priority = 10 };
	if (sched_setscheduler(0, SCHED_FIFO, &sp) != 0) {
		snprintf(r->skip, sizeof r->skip, "sched_setscheduler(FIFO 10) refused: %s", strerror(errno));
		return NULL;
	}
	pthread_mutex_lock(&static_mutex);
	struct kview v;
	kview_read(&v);
	pthread_mutex_unlock(&static_mutex);
	unsigned want = library_loaded() ? 99 : 10;
	if (v.priority != want)
		ROW_FAIL(r, "FIFO 10 thread at %u holding a default mutex, expected %u", v.priority, want);
	return NULL;
}

static void *protect_deadline_main(void *arg)
{
	struct row *r = arg;
	pthread_mutex_t m;
	pthread_mutex_init(&m, NULL);
	pthread_cond_t c = PTHREAD_COND_INITIALIZER;
	/* SCHED_OTHER first: the library may learn that policy here. */
	pthread_mutex_lock(&m);
	pthread_mutex_unlock(&m);
	int e = kview_set(&policies[P_DEADLINE]);
	if (e) {
		snprintf(r->skip, sizeof r->skip, "sched_setattr(SCHED_DEADLINE) refused: %s", strerror(e));
		return NULL;
	}
	struct kview before, v;
	kview_read(&before);
	pthread_mutex_t *const mutexes[] = { &m, &static_mutex };
	for (int i = 0; i < 2; i++)
		for (int op = 0; op < NOPS; op++) {
			e = acquire(mutexes[i], op);
			if (e)
				ROW_FAIL(r, "%s of a default mutex by a deadline thread: %d", op_names[op], e);
			kview_read(&v);
			if (!kview_equal(&v, &before))
				ROW_FAIL(r, "%s: deadline thread at policy %u prio %u while holding", op_names[op],
					 v.policy, v.priority);
			if (op == OP_CONDWAIT) {
				struct timespec dl = deadline_in_ms(CLOCK_REALTIME, 2);
				if ((e = pthread_cond_timedwait(&c, mutexes[i], &dl)) != ETIMEDOUT)
					ROW_FAIL(r, "cond wait: %d", e);
			}
			if ((e = pthread_mutex_unlock(mutexes[i])))
				ROW_FAIL(r, "unlock: %d", e);
			kview_read(&v);
			if (!kview_equal(&v, &before))
				ROW_FAIL(r, "%s: deadline thread at policy %u prio %u runtime %llu after the unlock",
					 op_names[op], v.policy, v.priority, (unsigned long long)v.runtime);
		}
	pthread_mutex_destroy(&m);
	return NULL;
}

/* The child: 0 pass, 1 fail, 77 skip (the reason on stdout). */
static int protect_child(void)
{
	void *(*const mains[])(void *) = { protect_fifo_main, protect_deadline_main };
	int status = 0;
	for (int i = 0; i < 2; i++) {
		struct row r = { 0 };
		pthread_t t;
		if (pthread_create(&t, NULL, mains[i], &r) != 0 || pthread_join(t, NULL) != 0)
			return 1;
		if (r.why[0]) {
			printf("FAIL: %s\n", r.why);
			return 1;
		}
		if (r.skip[0]) {
			printf("%s\n", r.skip);
			status = 77;
		}
	}
	fflush(stdout);
	return status;
}

START_TEST(test_protect_configuration_deadline)
{
	int out[2];
	ck_assert_int_eq(pipe(out), 0);
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		dup2(out[1], STDOUT_FILENO);
		close(out[0]);
		setenv("RTPTHREAD_PROTOCOL", "protect", 1);
		unsetenv("RTPTHREAD_CONF");
		char *argv[] = { "test_sched_policy", PROTECT_CHILD_ARG, NULL };
		execv("/proc/self/exe", argv);
		/* qemu-user without binfmt_misc cannot start a guest program:
		 * not a missing privilege, so a skip even under CI. */
		printf("cannot re-execute itself (%s): an emulator without binfmt_misc", strerror(errno));
		fflush(stdout);
		_exit(errno == ENOEXEC ? 78 : 2);
	}
	close(out[1]);
	char text[600] = "";
	size_t got = 0;
	ssize_t n;
	while (got < sizeof text - 1 && (n = read(out[0], text + got, sizeof text - 1 - got)) > 0)
		got += (size_t)n;
	text[got] = '\0';
	close(out[0]);
	int status;
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status));
	if (WEXITSTATUS(status) == 78)
		SKIP_TEST("%s", text);
	if (WEXITSTATUS(status) == 77) {
		ck_assert_msg(!under_ci(), "%s (under CI=true)", text);
		SKIP_TEST("%s", text);
	}
	ck_assert_msg(WEXITSTATUS(status) == 0, "RTPTHREAD_PROTOCOL=protect child: exit %d: %s",
		      WEXITSTATUS(status), text);
}
END_TEST

static Suite *sched_policy_suite(void)
{
	Suite *s = suite_create("sched_policy");
	TCase *tc = tcase_create("table");
	tcase_set_timeout(tc, 30);
	tcase_add_loop_test(tc, test_policy_table, 0, NPOLICIES * NPROTOCOLS * NOPS);
	suite_add_tcase(s, tc);

	tc = tcase_create("getschedparam");
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_getschedparam_raw_fifo);
	tcase_add_loop_test(tc, test_set_while_held_then_get, 0, 2);
	suite_add_tcase(s, tc);

	tc = tcase_create("deadline");
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_other_then_deadline);
	tcase_add_test(tc, test_protect_configuration_deadline);
	suite_add_tcase(s, tc);
	return s;
}

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], PROTECT_CHILD_ARG) == 0)
		return protect_child();
	return run_suite(sched_policy_suite());
}
