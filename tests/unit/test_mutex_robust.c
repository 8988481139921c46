/*
 * Robust mutexes: a dead owner is reported as EOWNERDEAD (to a locker
 * already blocked too), pthread_mutex_consistent recovers, and an unlock
 * without it makes the mutex unrecoverable for everybody, waiters blocked
 * at the time included.  Owners die as threads (pthread_exit holding) and
 * as processes (SIGKILL).  Every test runs with each protocol: NONE,
 * INHERIT and PROTECT (ceiling 30, the caller at SCHED_FIFO 10; skipped
 * when real-time priority is refused).  NPTL refuses robust + PROTECT.
 */
#include "testutil.h"

#define NPROTOCOLS 3
static const int protocols[] = { PTHREAD_PRIO_NONE, PTHREAD_PRIO_INHERIT, PTHREAD_PRIO_PROTECT };
static const char *const protocol_names[] = { "NONE", "INHERIT", "PROTECT" };
#define CEILING 30
#define BASE 10

static void init_robust(pthread_mutex_t *m, int type, int protocol, bool pshared)
{
	pthread_mutexattr_t a;
	ck_assert_int_eq(pthread_mutexattr_init(&a), 0);
	ck_assert_int_eq(pthread_mutexattr_settype(&a, type), 0);
	ck_assert_int_eq(pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST), 0);
	ck_assert_int_eq(pthread_mutexattr_setprotocol(&a, protocol), 0);
	ck_assert_int_eq(pthread_mutexattr_setprioceiling(&a, CEILING), 0);
	if (pshared)
		ck_assert_int_eq(pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED), 0);
	ck_assert_int_eq(pthread_mutex_init(m, &a), 0);
	ck_assert_int_eq(pthread_mutexattr_destroy(&a), 0);
}

/* For PROTECT: run as SCHED_FIFO 10 (threads created later inherit it).
 * False if that is refused: the test must skip. */
static bool protocol_setup(int protocol)
{
	printf("protocol %s\n", protocol_names[protocol == PTHREAD_PRIO_NONE ? 0 :
					       protocol == PTHREAD_PRIO_INHERIT ? 1 : 2]);
	if (protocol != PTHREAD_PRIO_PROTECT)
		return true;
	return rt_available() && try_fifo(BASE);
}

#define PROTOCOL_SETUP(protocol)                                            \
	do {                                                                \
		if (!protocol_setup(protocol))                              \
			SKIP_TEST("robust PROTECT needs SCHED_FIFO, refused"); \
	} while (0)

/* Under PROTECT the owner runs at the ceiling, else at its base. */
static void check_prio(int protocol, bool holding)
{
	if (protocol == PTHREAD_PRIO_PROTECT) {
		int want = holding ? CEILING : BASE, prio = self_rt_prio();
		ck_assert_msg(prio == want, "priority %d, expected %d (%s)", prio, want,
			      holding ? "holding" : "not holding");
	}
}

static int acquire(pthread_mutex_t *m, int how, long timeout_ms)
{
	struct timespec dl;
	switch (how) {
	case 0:
		return pthread_mutex_lock(m);
	case 1:
		return pthread_mutex_trylock(m);
	case 2:
		dl = deadline_in_ms(CLOCK_REALTIME, timeout_ms);
		return pthread_mutex_timedlock(m, &dl);
	default:
		dl = deadline_in_ms(CLOCK_MONOTONIC, timeout_ms);
		return pthread_mutex_clocklock(m, CLOCK_MONOTONIC, &dl);
	}
}

/* A thread that locks m and exits holding it. */
static void die_holding(pthread_mutex_t *m)
{
	struct holder h;
	holder_start(&h, m);
	ck_assert_int_eq(h.lock_result, 0);
	holder_die(&h);
}

/* ---- thread death ---- */

/* The owner exits holding it: lock, trylock, timedlock and clocklock all
 * report EOWNERDEAD and own the mutex; consistent makes it normal again. */
START_TEST(test_owner_exit)
{
	REQUIRE_ROBUST_LIST();
	int protocol = protocols[_i / 4], how = _i % 4;
	PROTOCOL_SETUP(protocol);
	pthread_mutex_t m;
	init_robust(&m, PTHREAD_MUTEX_NORMAL, protocol, false);
	die_holding(&m);
	check_prio(protocol, false);
	ck_assert_int_eq(acquire(&m, how, 1000), EOWNERDEAD);
	check_prio(protocol, true);
	ck_assert_int_eq(other_trylock(&m), EBUSY);
	ck_assert_int_eq(pthread_mutex_consistent(&m), 0);
	ck_assert_int_eq(pthread_mutex_consistent(&m), EINVAL);
	ck_assert_int_eq(pthread_mutex_unlock(&m), 0);
	check_prio(protocol, false);
	ck_assert_int_eq(acquire(&m, how, 1000), 0);
	ck_assert_int_eq(pthread_mutex_unlock(&m), 0);
	ck_assert_int_eq(other_trylock(&m), 0);
	ck_assert_int_eq(pthread_mutex_destroy(&m), 0);
}
END_TEST

/* Lockers already blocked when the owner dies: one gets EOWNERDEAD, makes
 * it consistent and unlocks; the others then get it normally. */
struct blocked {
	pthread_mutex_t *m;
	int how;
	_Atomic pid_t tid;
	_Atomic int done;
	int result;
	int prio_inside;
};

static void *blocked_main(void *p)
{
	struct blocked *b = p;
	atomic_store(&b->tid, test_gettid());
	b->result = acquire(b->m, b->how, 20000);
	b->prio_inside = self_rt_prio();
	if (b->result == EOWNERDEAD && pthread_mutex_consistent(b->m) != 0)
		b->result = 1000;
	if ((b->result == 0 || b->result == EOWNERDEAD) && pthread_mutex_unlock(b->m) != 0)
		b->result = 2000;
	atomic_store(&b->done, 1);
	return NULL;
}

static void blocked_start(struct blocked *b, pthread_t *t, pthread_mutex_t *m, int how)
{
	b->m = m;
	b->how = how;
	b->result = -1;
	atomic_init(&b->tid, 0);
	atomic_init(&b->done, 0);
	ck_assert_int_eq(pthread_create(t, NULL, blocked_main, b), 0);
	while (atomic_load(&b->tid) == 0)
		sleep_ms(1);
	ck_assert_msg(wait_task_sleeping(b->tid, 5000), "locker did not block");
}

START_TEST(test_blocked_waiter_owner_dies)
{
	REQUIRE_ROBUST_LIST();
	int protocol = protocols[_i / 3], how = _i % 3 == 0 ? 0 : _i % 3 + 1; /* lock, timedlock, clocklock */
	PROTOCOL_SETUP(protocol);
	pthread_mutex_t m;
	init_robust(&m, PTHREAD_MUTEX_NORMAL, protocol, false);
	struct holder h;
	holder_start(&h, &m);
	ck_assert_int_eq(h.lock_result, 0);

	struct blocked b[3];
	pthread_t t[3];
	for (int i = 0; i < 3; i++)
		blocked_start(&b[i], &t[i], &m, how);
	sleep_ms(10);
	for (int i = 0; i < 3; i++)
		ck_assert(!atomic_load(&b[i].done));
	holder_die(&h);
	int ownerdead = 0;
	for (int i = 0; i < 3; i++) {
		ck_assert_int_eq(pthread_join(t[i], NULL), 0);
		ck_assert_msg(b[i].result == 0 || b[i].result == EOWNERDEAD, "locker %d: %d", i, b[i].result);
		ownerdead += b[i].result == EOWNERDEAD;
		if (protocol == PTHREAD_PRIO_PROTECT)
			ck_assert_int_eq(b[i].prio_inside, CEILING);
	}
	ck_assert_int_eq(ownerdead, 1);
	ck_assert_int_eq(pthread_mutex_lock(&m), 0);
	ck_assert_int_eq(pthread_mutex_unlock(&m), 0);
	ck_assert_int_eq(pthread_mutex_destroy(&m), 0);
}
END_TEST

/* A thread that got EOWNERDEAD and dies too passes EOWNERDEAD on. */
START_TEST(test_ownerdead_owner_dies_again)
{
	REQUIRE_ROBUST_LIST();
	int protocol = protocols[_i];
	PROTOCOL_SETUP(protocol);
	pthread_mutex_t m;
	init_robust(&m, PTHREAD_MUTEX_NORMAL, protocol, false);
	die_holding(&m);
	struct holder h;
	holder_start(&h, &m);
	ck_assert_int_eq(h.lock_result, EOWNERDEAD);
	holder_die(&h);
	ck_assert_int_eq(pthread_mutex_lock(&m), EOWNERDEAD);
	ck_assert_int_eq(pthread_mutex_consistent(&m), 0);
	ck_assert_int_eq(pthread_mutex_unlock(&m), 0);
	ck_assert_int_eq(other_trylock(&m), 0);
	ck_assert_int_eq(pthread_mutex_destroy(&m), 0);
}
END_TEST

/* PROTECT: changing the ceiling of a mutex whose owner died locks and
 * unlocks it without recovering it: the next locker still gets
 * EOWNERDEAD, at the new ceiling. */
START_TEST(test_setprioceiling_owner_dead)
{
	REQUIRE_ROBUST_LIST();
	PROTOCOL_SETUP(PTHREAD_PRIO_PROTECT);
	pthread_mutex_t m;
	init_robust(&m, PTHREAD_MUTEX_NORMAL, PTHREAD_PRIO_PROTECT, false);
	die_holding(&m);
	int old = -1, c = -1;
	ck_assert_int_eq(pthread_mutex_setprioceiling(&m, 40, &old), 0);
	ck_assert_int_eq(old, CEILING);
	ck_assert_int_eq(pthread_mutex_getprioceiling(&m, &c), 0);
	ck_assert_int_eq(c, 40);
	check_prio(PTHREAD_PRIO_PROTECT, false);
	ck_assert_int_eq(pthread_mutex_lock(&m), EOWNERDEAD);
	ck_assert_int_eq(self_rt_prio(), 40);
	ck_assert_int_eq(pthread_mutex_consistent(&m), 0);
	ck_assert_int_eq(pthread_mutex_unlock(&m), 0);
	check_prio(PTHREAD_PRIO_PROTECT, false);
	ck_assert_int_eq(pthread_mutex_lock(&m), 0);
	ck_assert_int_eq(pthread_mutex_unlock(&m), 0);
	ck_assert_int_eq(pthread_mutex_destroy(&m), 0);
}
END_TEST

/* ---- not recoverable ---- */

static int notrecoverable_all_fn(void *m)
{
	for (int how = 0; how < 4; how++) {
		int r = acquire(m, how, 5000);
		if (r != ENOTRECOVERABLE)
			return 100 * (how + 1) + r;
	}
	return 0;
}

/* Unlocked without consistent: every later lock, trylock, timedlock and
 * clocklock, by anyone, fails at once with ENOTRECOVERABLE. */
START_TEST(test_notrecoverable)
{
	REQUIRE_ROBUST_LIST();
	int protocol = protocols[_i];
	PROTOCOL_SETUP(protocol);
	pthread_mutex_t m;
	init_robust(&m, PTHREAD_MUTEX_NORMAL, protocol, false);
	die_holding(&m);
	ck_assert_int_eq(pthread_mutex_lock(&m), EOWNERDEAD);
	ck_assert_int_eq(pthread_mutex_unlock(&m), 0);
	check_prio(protocol, false);
	int64_t t0 = now_ns(CLOCK_MONOTONIC);
	for (int how = 0; how < 4; how++) {
		ck_assert_msg(acquire(&m, how, 5000) == ENOTRECOVERABLE, "acquire %d", how);
		check_prio(protocol, false);
	}
	ck_assert_int_eq(run_in_thread(notrecoverable_all_fn, &m), 0);
	ck_assert_int_eq(notrecoverable_all_fn(&m), 0);
	ck_assert_int_lt(now_ns(CLOCK_MONOTONIC) - t0, 2 * NSEC_PER_SEC);
	ck_assert_int_eq(pthread_mutex_consistent(&m), EINVAL);
	ck_assert_int_eq(pthread_mutex_unlock(&m), EPERM);
	/* All one can do is destroy it, and start again. */
	ck_assert_int_eq(pthread_mutex_destroy(&m), 0);
	init_robust(&m, PTHREAD_MUTEX_NORMAL, protocol, false);
	ck_assert_int_eq(pthread_mutex_lock(&m), 0);
	ck_assert_int_eq(pthread_mutex_unlock(&m), 0);
	ck_assert_int_eq(pthread_mutex_destroy(&m), 0);
}
END_TEST

/* Lockers blocked while the EOWNERDEAD owner unlocks without consistent
 * all fail with ENOTRECOVERABLE. */
START_TEST(test_notrecoverable_wakes_blocked)
{
	REQUIRE_ROBUST_LIST();
	int protocol = protocols[_i];
	PROTOCOL_SETUP(protocol);
	pthread_mutex_t m;
	init_robust(&m, PTHREAD_MUTEX_NORMAL, protocol, false);
	die_holding(&m);
	ck_assert_int_eq(pthread_mutex_lock(&m), EOWNERDEAD);
	struct blocked b[4];
	pthread_t t[4];
	for (int i = 0; i < 4; i++)
		blocked_start(&b[i], &t[i], &m, i < 2 ? 0 : i); /* lock, lock, timedlock, clocklock */
	sleep_ms(10);
	ck_assert_int_eq(pthread_mutex_unlock(&m), 0);
	for (int i = 0; i < 4; i++) {
		ck_assert_msg(wait_flag(&b[i].done, 1, 5000), "blocked locker %d never returned", i);
		ck_assert_int_eq(pthread_join(t[i], NULL), 0);
		ck_assert_msg(b[i].result == ENOTRECOVERABLE, "blocked locker %d: %d", i, b[i].result);
	}
	ck_assert_int_eq(pthread_mutex_trylock(&m), ENOTRECOVERABLE);
	ck_assert_int_eq(pthread_mutex_destroy(&m), 0);
}
END_TEST

/* Owner dies with lockers blocked; the one that gets EOWNERDEAD unlocks
 * without consistent: the rest get ENOTRECOVERABLE. */
static void *giveup_main(void *p)
{
	struct blocked *b = p;
	atomic_store(&b->tid, test_gettid());
	b->result = acquire(b->m, b->how, 20000);
	if ((b->result == 0 || b->result == EOWNERDEAD) && pthread_mutex_unlock(b->m) != 0)
		b->result = 2000;
	atomic_store(&b->done, 1);
	return NULL;
}

START_TEST(test_owner_dies_then_notrecoverable)
{
	REQUIRE_ROBUST_LIST();
	int protocol = protocols[_i];
	PROTOCOL_SETUP(protocol);
	pthread_mutex_t m;
	init_robust(&m, PTHREAD_MUTEX_NORMAL, protocol, false);
	struct holder h;
	holder_start(&h, &m);
	struct blocked b[3];
	pthread_t t[3];
	for (int i = 0; i < 3; i++) {
		b[i].m = &m;
		b[i].how = i == 2 ? 2 : 0;
		b[i].result = -1;
		atomic_init(&b[i].tid, 0);
		atomic_init(&b[i].done, 0);
		ck_assert_int_eq(pthread_create(&t[i], NULL, giveup_main, &b[i]), 0);
		while (atomic_load(&b[i].tid) == 0)
			sleep_ms(1);
		ck_assert(wait_task_sleeping(b[i].tid, 5000));
	}
	holder_die(&h);
	int ownerdead = 0, notrecoverable = 0;
	for (int i = 0; i < 3; i++) {
		ck_assert_msg(wait_flag(&b[i].done, 1, 5000), "locker %d never returned", i);
		ck_assert_int_eq(pthread_join(t[i], NULL), 0);
		ownerdead += b[i].result == EOWNERDEAD;
		notrecoverable += b[i].result == ENOTRECOVERABLE;
	}
	ck_assert_msg(ownerdead == 1 && notrecoverable == 2, "results %d %d %d", b[0].result, b[1].result,
		      b[2].result);
	ck_assert_int_eq(pthread_mutex_lock(&m), ENOTRECOVERABLE);
	ck_assert_int_eq(pthread_mutex_destroy(&m), 0);
}
END_TEST

/* ---- types ---- */

/* The owner dies holding a recursive mutex three times over: the next
 * owner holds it once. */
static int lock_thrice_and_die(void *m)
{
	for (int i = 0; i < 3; i++)
		if (pthread_mutex_lock(m) != 0)
			return i + 1;
	pthread_exit(NULL);
}

START_TEST(test_robust_recursive_death)
{
	REQUIRE_ROBUST_LIST();
	int protocol = protocols[_i];
	PROTOCOL_SETUP(protocol);
	pthread_mutex_t m;
	init_robust(&m, PTHREAD_MUTEX_RECURSIVE, protocol, false);
	struct holder h;
	holder_start(&h, &m);
	ck_assert_int_eq(pthread_mutex_unlock(&m), EPERM);
	ck_assert_int_eq(other_unlock(&m), EPERM);
	holder_finish(&h);
	ck_assert_int_eq(h.unlock_result, 0);

	ck_assert_int_eq(run_in_thread(lock_thrice_and_die, &m), -1);
	ck_assert_int_eq(pthread_mutex_lock(&m), EOWNERDEAD);
	ck_assert_int_eq(pthread_mutex_lock(&m), 0); /* recursion works while inconsistent */
	ck_assert_int_eq(pthread_mutex_consistent(&m), 0);
	ck_assert_int_eq(pthread_mutex_unlock(&m), 0);
	ck_assert_int_eq(other_trylock(&m), EBUSY);
	ck_assert_int_eq(pthread_mutex_unlock(&m), 0);
	check_prio(protocol, false);
	ck_assert_int_eq(other_trylock(&m), 0);
	ck_assert_int_eq(pthread_mutex_unlock(&m), EPERM);
	ck_assert_int_eq(pthread_mutex_destroy(&m), 0);
}
END_TEST

START_TEST(test_robust_errorcheck)
{
	REQUIRE_ROBUST_LIST();
	int protocol = protocols[_i];
	PROTOCOL_SETUP(protocol);
	pthread_mutex_t m;
	init_robust(&m, PTHREAD_MUTEX_ERRORCHECK, protocol, false);
	ck_assert_int_eq(pthread_mutex_lock(&m), 0);
	ck_assert_int_eq(pthread_mutex_lock(&m), EDEADLK);
	ck_assert_int_eq(pthread_mutex_trylock(&m), EBUSY);
	ck_assert_int_eq(other_unlock(&m), EPERM);
	ck_assert_int_eq(pthread_mutex_unlock(&m), 0);
	ck_assert_int_eq(pthread_mutex_unlock(&m), EPERM);

	die_holding(&m);
	ck_assert_int_eq(pthread_mutex_trylock(&m), EOWNERDEAD);
	ck_assert_int_eq(pthread_mutex_lock(&m), EDEADLK);
	ck_assert_int_eq(other_unlock(&m), EPERM);
	ck_assert_int_eq(pthread_mutex_consistent(&m), 0);
	ck_assert_int_eq(pthread_mutex_unlock(&m), 0);
	ck_assert_int_eq(pthread_mutex_unlock(&m), EPERM);
	check_prio(protocol, false);
	ck_assert_int_eq(other_trylock(&m), 0);
	ck_assert_int_eq(pthread_mutex_destroy(&m), 0);
}
END_TEST

/* pthread_mutex_consistent: EINVAL unless robust and inconsistent. */
START_TEST(test_consistent_einval)
{
	pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
	ck_assert_int_eq(pthread_mutex_consistent(&m), EINVAL);
	ck_assert_int_eq(pthread_mutex_lock(&m), 0);
	ck_assert_int_eq(pthread_mutex_consistent(&m), EINVAL);
	ck_assert_int_eq(pthread_mutex_unlock(&m), 0);

	pthread_mutexattr_t a;
	ck_assert_int_eq(pthread_mutexattr_init(&a), 0);
	ck_assert_int_eq(pthread_mutexattr_setprotocol(&a, PTHREAD_PRIO_INHERIT), 0);
	ck_assert_int_eq(pthread_mutex_init(&m, &a), 0);
	ck_assert_int_eq(pthread_mutex_lock(&m), 0);
	ck_assert_int_eq(pthread_mutex_consistent(&m), EINVAL);
	ck_assert_int_eq(pthread_mutex_unlock(&m), 0);
	ck_assert_int_eq(pthread_mutex_destroy(&m), 0);
	ck_assert_int_eq(pthread_mutexattr_destroy(&a), 0);

	init_robust(&m, PTHREAD_MUTEX_NORMAL, PTHREAD_PRIO_NONE, false);
	ck_assert_int_eq(pthread_mutex_consistent(&m), EINVAL); /* free */
	ck_assert_int_eq(pthread_mutex_lock(&m), 0);
	ck_assert_int_eq(pthread_mutex_consistent(&m), EINVAL); /* consistent */
	ck_assert_int_eq(pthread_mutex_unlock(&m), 0);
	ck_assert_int_eq(pthread_mutex_destroy(&m), 0);
}
END_TEST

/* Many robust mutexes held at exit, some unlocked out of order before:
 * exactly the ones still held are reported. */
struct many {
	pthread_mutex_t m[10];
};

static int many_fn(void *p)
{
	struct many *x = p;
	for (int i = 0; i < 10; i++)
		if (pthread_mutex_lock(&x->m[i]) != 0)
			return i + 1;
	/* unlock from the middle, the first and the last locked */
	static const int drop[] = { 4, 0, 9, 5 };
	for (int i = 0; i < 4; i++)
		if (pthread_mutex_unlock(&x->m[drop[i]]) != 0)
			return 100 + i;
	pthread_exit(NULL);
}

START_TEST(test_many_held_at_exit)
{
	REQUIRE_ROBUST_LIST();
	bool pp = rt_available() && try_fifo(BASE);
	struct many x;
	for (int i = 0; i < 10; i++)
		init_robust(&x.m[i], i % 3 == 2 ? PTHREAD_MUTEX_RECURSIVE : PTHREAD_MUTEX_NORMAL,
			    protocols[pp ? i % 3 : i % 2], i & 1);
	ck_assert_int_eq(run_in_thread(many_fn, &x), -1);
	for (int i = 0; i < 10; i++) {
		bool dropped = i == 4 || i == 0 || i == 9 || i == 5;
		int r = pthread_mutex_trylock(&x.m[i]);
		ck_assert_msg(r == (dropped ? 0 : EOWNERDEAD), "mutex %d: %d", i, r);
		if (r == EOWNERDEAD)
			ck_assert_int_eq(pthread_mutex_consistent(&x.m[i]), 0);
		ck_assert_int_eq(pthread_mutex_unlock(&x.m[i]), 0);
	}
	for (int i = 0; i < 10; i++)
		ck_assert_int_eq(pthread_mutex_destroy(&x.m[i]), 0);
}
END_TEST

/* ---- process death ---- */

struct shared_robust {
	pthread_mutex_t m;
	_Atomic int child_locked;
	_Atomic pid_t blocked_tid;
};

struct killer {
	struct shared_robust *s;
	pid_t child;
	pid_t victim_waiter; /* kill once this thread sleeps in lock; 0: at once */
	_Atomic int locking; /* the waiter is about to call lock */
};

static int killer_fn(void *p)
{
	struct killer *k = p;
	if (k->victim_waiter &&
	    (!wait_flag(&k->locking, 1, 5000) || !wait_task_sleeping(k->victim_waiter, 5000)))
		return 1;
	sleep_ms(5);
	return kill(k->child, SIGKILL);
}

static pid_t fork_locker(struct shared_robust *s)
{
	atomic_store(&s->child_locked, 0);
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		int r = pthread_mutex_lock(&s->m);
		atomic_store(&s->child_locked, r == 0 || r == EOWNERDEAD ? 1 : 100 + r);
		for (;;)
			pause();
	}
	ck_assert_msg(wait_flag(&s->child_locked, 1, 5000), "child did not lock: %d", atomic_load(&s->child_locked));
	return pid;
}

static void expect_killed(pid_t pid)
{
	int status = wait_child(pid, 5000);
	ck_assert_msg(status != -1 && WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL, "child status 0x%x", status);
}

/* Children lock a process-shared robust mutex and are SIGKILLed, five
 * times: the parent gets EOWNERDEAD each time, blocked in lock while the
 * kill happens on even rounds, locking afterwards on odd ones. */
START_TEST(test_process_death)
{
	REQUIRE_ROBUST_LIST();
	int protocol = protocols[_i];
	PROTOCOL_SETUP(protocol);
	struct shared_robust *s = shared_alloc(sizeof *s);
	init_robust(&s->m, PTHREAD_MUTEX_NORMAL, protocol, true);
	for (int round = 0; round < 6; round++) {
		pid_t child = fork_locker(s);
		ck_assert_int_eq(pthread_mutex_trylock(&s->m), EBUSY);
		check_prio(protocol, false);
		struct killer k = { .s = s, .child = child, .victim_waiter = round % 2 ? 0 : test_gettid() };
		atomic_init(&k.locking, 0);
		struct call killer;
		call_start(&killer, killer_fn, &k);
		if (round % 2)
			ck_assert_int_eq(call_join(&killer), 0);
		atomic_store(&k.locking, 1);
		int r = round == 4 ? acquire(&s->m, 2, 10000) : pthread_mutex_lock(&s->m);
		ck_assert_msg(r == EOWNERDEAD, "round %d: %d", round, r);
		if (round % 2 == 0)
			ck_assert_int_eq(call_join(&killer), 0);
		expect_killed(child);
		check_prio(protocol, true);
		ck_assert_int_eq(pthread_mutex_consistent(&s->m), 0);
		ck_assert_int_eq(pthread_mutex_unlock(&s->m), 0);
		check_prio(protocol, false);
	}

	/* Once more, and this time nobody recovers it: a new child can't lock. */
	pid_t child = fork_locker(s);
	kill(child, SIGKILL);
	expect_killed(child);
	ck_assert_int_eq(pthread_mutex_lock(&s->m), EOWNERDEAD);
	ck_assert_int_eq(pthread_mutex_unlock(&s->m), 0);
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		struct timespec dl = deadline_in_ms(CLOCK_REALTIME, 1000);
		if (pthread_mutex_lock(&s->m) != ENOTRECOVERABLE)
			_exit(1);
		if (pthread_mutex_trylock(&s->m) != ENOTRECOVERABLE)
			_exit(2);
		if (pthread_mutex_timedlock(&s->m, &dl) != ENOTRECOVERABLE)
			_exit(3);
		_exit(0);
	}
	ck_assert_child_ok(pid, 5000);
	ck_assert_int_eq(pthread_mutex_destroy(&s->m), 0);
	shared_free(s, sizeof *s);
}
END_TEST

/* A child that locks and unlocks in a loop is SIGKILLed at a random
 * moment, possibly inside lock or unlock: the parent must always get the
 * mutex back (0 or EOWNERDEAD), never hang. */
START_TEST(test_process_death_anywhere)
{
	REQUIRE_ROBUST_LIST();
	int protocol = protocols[_i];
	PROTOCOL_SETUP(protocol);
	struct shared_robust *s = shared_alloc(sizeof *s);
	init_robust(&s->m, PTHREAD_MUTEX_NORMAL, protocol, true);
	unsigned seed = (unsigned)now_ns(CLOCK_MONOTONIC);
	int ownerdead = 0;
	for (int round = 0; round < 25; round++) {
		atomic_store(&s->child_locked, 0);
		pid_t pid = fork();
		ck_assert_int_ge(pid, 0);
		if (pid == 0) {
			atomic_store(&s->child_locked, 1);
			for (unsigned iteration = 0;;) {
				int r = pthread_mutex_lock(&s->m);
				if (r == EOWNERDEAD)
					pthread_mutex_consistent(&s->m);
				else if (r != 0)
					_exit(1);
				/* every other time, hold it a while: die inside too */
				for (volatile unsigned k = 0; k < (iteration++ & 1) * 20000; k++)
					;
				pthread_mutex_unlock(&s->m);
			}
		}
		ck_assert(wait_flag(&s->child_locked, 1, 5000));
		struct timespec d = { 0, (long)(rand_r(&seed) % 3000) * 1000 };
		nanosleep(&d, NULL);
		kill(pid, SIGKILL);
		expect_killed(pid);
		int r = acquire(&s->m, 2, 5000);
		ck_assert_msg(r == 0 || r == EOWNERDEAD, "round %d: %d", round, r);
		if (r == EOWNERDEAD) {
			ownerdead++;
			ck_assert_int_eq(pthread_mutex_consistent(&s->m), 0);
		}
		ck_assert_int_eq(pthread_mutex_unlock(&s->m), 0);
		check_prio(protocol, false);
	}
	printf("owner died holding it in %d of 25 rounds\n", ownerdead);
	ck_assert_int_eq(pthread_mutex_destroy(&s->m), 0);
	shared_free(s, sizeof *s);
}
END_TEST

static Suite *robust_suite(void)
{
	Suite *s = suite_create("mutex_robust");
	TCase *tc;

	tc = tcase_create("thread_death");
	tcase_set_timeout(tc, 30);
	tcase_add_loop_test(tc, test_owner_exit, 0, NPROTOCOLS * 4);
	tcase_add_loop_test(tc, test_blocked_waiter_owner_dies, 0, NPROTOCOLS * 3);
	tcase_add_loop_test(tc, test_ownerdead_owner_dies_again, 0, NPROTOCOLS);
	tcase_add_test(tc, test_many_held_at_exit);
	tcase_add_test(tc, test_setprioceiling_owner_dead);
	suite_add_tcase(s, tc);

	tc = tcase_create("notrecoverable");
	tcase_set_timeout(tc, 30);
	tcase_add_loop_test(tc, test_notrecoverable, 0, NPROTOCOLS);
	tcase_add_loop_test(tc, test_notrecoverable_wakes_blocked, 0, NPROTOCOLS);
	tcase_add_loop_test(tc, test_owner_dies_then_notrecoverable, 0, NPROTOCOLS);
	suite_add_tcase(s, tc);

	tc = tcase_create("types");
	tcase_set_timeout(tc, 30);
	tcase_add_loop_test(tc, test_robust_recursive_death, 0, NPROTOCOLS);
	tcase_add_loop_test(tc, test_robust_errorcheck, 0, NPROTOCOLS);
	tcase_add_test(tc, test_consistent_einval);
	suite_add_tcase(s, tc);

	tc = tcase_create("process_death");
	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, test_process_death, 0, NPROTOCOLS);
	tcase_add_loop_test(tc, test_process_death_anywhere, 0, NPROTOCOLS);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return run_suite(robust_suite());
}
