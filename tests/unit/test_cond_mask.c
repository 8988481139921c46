/*
 * The masked-condition and wait-for-any extensions of include/rtpthread.h.
 * The calls are looked up with dlsym, so that the same file runs linked
 * against the library and preloaded into a plain glibc program; without
 * the library every test fails (there is nothing to compare with).
 *
 * What each test proves: a masked wake reaches exactly the waiters whose
 * mask meets it, highest priority first; the plain calls are the masked
 * ones with every bit; deadlines, cancellation, process-shared objects,
 * PI and recursive mutexes and destroy behave as with the POSIX calls;
 * wait-for-any returns the condition that fired and takes no wake-up from
 * other waiters; and under writers and readers at full speed, no
 * published message is missed.
 */
#include <linux/futex.h>
#include <signal.h>
#include <sys/wait.h>

#include "rtpthread.h"
#include "testutil.h"

static struct {
	typeof(rtpthread_cond_wait_mask_np) *wait;
	typeof(rtpthread_cond_timedwait_mask_np) *timedwait;
	typeof(rtpthread_cond_clockwait_mask_np) *clockwait;
	typeof(rtpthread_cond_signal_mask_np) *signal;
	typeof(rtpthread_cond_broadcast_mask_np) *broadcast;
	typeof(rtpthread_cond_waitany_np) *waitany;
} api;

static void api_load(void)
{
	api.wait = dlsym(RTLD_DEFAULT, "rtpthread_cond_wait_mask_np");
	api.timedwait = dlsym(RTLD_DEFAULT, "rtpthread_cond_timedwait_mask_np");
	api.clockwait = dlsym(RTLD_DEFAULT, "rtpthread_cond_clockwait_mask_np");
	api.signal = dlsym(RTLD_DEFAULT, "rtpthread_cond_signal_mask_np");
	api.broadcast = dlsym(RTLD_DEFAULT, "rtpthread_cond_broadcast_mask_np");
	api.waitany = dlsym(RTLD_DEFAULT, "rtpthread_cond_waitany_np");
	ck_assert_msg(api.wait && api.timedwait && api.clockwait && api.signal && api.broadcast && api.waitany,
		      "the extension calls are not in the process (is librtpthread loaded?)");
}

/* futex_waitv(2) (Linux 5.16) is there; else wait-for-any must say
 * ENOSYS and change nothing, which is checked before the test skips
 * (qemu-user before 8.0 does not translate the call). */
static bool waitv_present(void)
{
	return syscall(SYS_futex_waitv, NULL, 0, 0, NULL, 0) == -1 && errno != ENOSYS;
}

#define REQUIRE_WAITV()                                                                          \
	do {                                                                                     \
		if (!waitv_present()) {                                                          \
			pthread_mutex_t m_ = PTHREAD_MUTEX_INITIALIZER;                          \
			pthread_cond_t c_ = PTHREAD_COND_INITIALIZER, *one_[1] = { &c_ };        \
			unsigned index_ = 7;                                                     \
			pthread_mutex_lock(&m_);                                                 \
			ck_assert_int_eq(api.waitany(one_, 1, &m_, CLOCK_MONOTONIC, NULL, &index_), ENOSYS); \
			ck_assert_int_eq(pthread_mutex_unlock(&m_), 0);                          \
			ck_assert_int_eq(index_, 7);                                             \
			ck_assert_int_eq(pthread_cond_destroy(&c_), 0);                          \
			SKIP_TEST("futex_waitv(2) unavailable (kernel before 5.16, or qemu-user): " \
				  "wait-for-any returned ENOSYS and changed nothing");            \
		}                                                                                \
	} while (0)

/* Real-time priority, or the test cannot show order: a skip, but a
 * failure under CI, which has the privilege. */
#define REQUIRE_RT()                                                                        \
	do {                                                                                \
		if (!rt_available()) {                                                      \
			ck_assert_msg(!under_ci(),                                          \
				      "SCHED_FIFO refused under CI=true");                  \
			SKIP_TEST("SCHED_FIFO refused");                                    \
		}                                                                           \
	} while (0)

/* ---- one subscriber per thread ---- */

struct subscriber {
	pthread_cond_t *c;
	pthread_mutex_t *m;
	unsigned mask;
	const _Atomic int *go; /* the predicate, read under m */
	int prio;	       /* SCHED_FIFO priority, 0: SCHED_OTHER */
	_Atomic pid_t tid;
	_Atomic int wakes;     /* returns from the wait call */
	_Atomic int returned;  /* 1 once back from the wait loop */
	_Atomic int *order;    /* where to record the return order, or NULL */
	int rank;
	int result;
};

static void *subscriber_main(void *p)
{
	struct subscriber *s = p;
	atomic_store(&s->tid, test_gettid());
	pthread_mutex_lock(s->m);
	s->result = 0;
	while (!atomic_load(s->go) && s->result == 0) {
		s->result = api.wait(s->c, s->m, s->mask);
		atomic_fetch_add(&s->wakes, 1);
	}
	if (s->order)
		s->rank = atomic_fetch_add(s->order, 1);
	atomic_store(&s->returned, 1);
	pthread_mutex_unlock(s->m);
	return NULL;
}

static void subscriber_start(pthread_t *t, struct subscriber *s)
{
	if (s->prio)
		start_thread_sched(t, SCHED_FIFO, s->prio, 0, subscriber_main, s);
	else
		ck_assert_int_eq(pthread_create(t, NULL, subscriber_main, s), 0);
	int64_t end = now_ns(CLOCK_MONOTONIC) + 5000000000LL;
	while (atomic_load(&s->tid) == 0 && now_ns(CLOCK_MONOTONIC) < end)
		sleep_ms(1);
	ck_assert_msg(wait_task_sleeping(atomic_load(&s->tid), 5000), "subscriber never slept");
}

/* Sets the predicate of the subscribers in `which` (their go words) and
 * wakes with mask.  go words are set under m, so a woken subscriber finds
 * its own. */
static void publish(pthread_mutex_t *m, _Atomic int *go, pthread_cond_t *c, unsigned mask, bool broadcast)
{
	pthread_mutex_lock(m);
	atomic_store(go, 1);
	pthread_mutex_unlock(m);
	ck_assert_int_eq(broadcast ? api.broadcast(c, mask) : api.signal(c, mask), 0);
}

static bool returned_within(struct subscriber *s, long ms)
{
	return wait_flag(&s->returned, 1, ms);
}

START_TEST(test_mask_meets)
{
	api_load();
	pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
	pthread_cond_t c = PTHREAD_COND_INITIALIZER;
	_Atomic int go_a = 0, go_b = 0, go_ab = 0;
	struct subscriber a = { .c = &c, .m = &m, .mask = 0x1, .go = &go_a };
	struct subscriber b = { .c = &c, .m = &m, .mask = 0x2, .go = &go_b };
	struct subscriber ab = { .c = &c, .m = &m, .mask = 0x6, .go = &go_ab };
	pthread_t ta, tb, tab;
	subscriber_start(&ta, &a);
	subscriber_start(&tb, &b);
	subscriber_start(&tab, &ab);

	/* 0x8 meets nobody: nobody wakes. */
	ck_assert_int_eq(api.broadcast(&c, 0x8), 0);
	ck_assert_int_eq(api.signal(&c, 0x8), 0);
	sleep_ms(50);
	ck_assert_int_eq(atomic_load(&a.wakes) + atomic_load(&b.wakes) + atomic_load(&ab.wakes), 0);

	/* 0x4 meets ab only. */
	publish(&m, &go_ab, &c, 0x4, false);
	ck_assert(returned_within(&ab, 5000));
	sleep_ms(50);
	ck_assert_int_eq(atomic_load(&a.wakes) + atomic_load(&b.wakes), 0);

	/* 0x2 meets b (and ab, gone). */
	publish(&m, &go_b, &c, 0x2, true);
	ck_assert(returned_within(&b, 5000));
	sleep_ms(50);
	ck_assert_int_eq(atomic_load(&a.wakes), 0);

	/* The plain signal is every bit: it reaches a. */
	pthread_mutex_lock(&m);
	atomic_store(&go_a, 1);
	pthread_mutex_unlock(&m);
	ck_assert_int_eq(pthread_cond_signal(&c), 0);
	ck_assert(returned_within(&a, 5000));
	pthread_join(ta, NULL);
	pthread_join(tb, NULL);
	pthread_join(tab, NULL);
	ck_assert_int_eq(a.result | b.result | ab.result, 0);
	ck_assert_int_eq(pthread_cond_destroy(&c), 0);
}
END_TEST

struct plain_arg {
	pthread_cond_t *c;
	pthread_mutex_t *m;
	_Atomic int *go;
	_Atomic pid_t tid;
};

static int plain_wait(void *p)
{
	struct plain_arg *a = p;
	atomic_store(&a->tid, test_gettid());
	pthread_mutex_lock(a->m);
	int r = 0;
	while (!atomic_load(a->go) && r == 0)
		r = pthread_cond_wait(a->c, a->m);
	pthread_mutex_unlock(a->m);
	return r;
}

/* A plain waiter on a condition in masked use is a subscriber to every
 * bit; a masked wake reaches it, and a plain broadcast reaches everybody. */
START_TEST(test_plain_calls_are_every_bit)
{
	api_load();
	pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
	pthread_cond_t c;
	ck_assert_int_eq(pthread_cond_init(&c, NULL), 0);
	_Atomic int go = 0;
	struct subscriber masked = { .c = &c, .m = &m, .mask = 0x10, .go = &go };
	pthread_t tm;
	subscriber_start(&tm, &masked);

	/* A plain waiter: pthread_cond_wait on the same object. */
	struct call plain;
	struct plain_arg pa = { &c, &m, &go, 0 };
	call_start(&plain, plain_wait, &pa);
	while (atomic_load(&pa.tid) == 0)
		sleep_ms(1);
	ck_assert(wait_task_sleeping(pa.tid, 5000));

	/* 0x1 meets the plain waiter (every bit), not the 0x10 one. */
	pthread_mutex_lock(&m);
	atomic_store(&go, 1);
	pthread_mutex_unlock(&m);
	ck_assert_int_eq(api.signal(&c, 0x1), 0);
	ck_assert(call_done_within(&plain, 5000));
	ck_assert_int_eq(call_join(&plain), 0);
	sleep_ms(50);
	ck_assert_int_eq(atomic_load(&masked.wakes), 0);
	ck_assert_int_eq(pthread_cond_broadcast(&c), 0);
	ck_assert(returned_within(&masked, 5000));
	pthread_join(tm, NULL);
	ck_assert_int_eq(pthread_cond_destroy(&c), 0);
}
END_TEST

/* Three SCHED_FIFO subscribers on CPU 0 (10, 30, 20, started in that
 * order) and a broadcaster above them there: they return 30, 20, 10. */
START_TEST(test_priority_order)
{
	api_load();
	REQUIRE_RT();
	pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
	pthread_cond_t c = PTHREAD_COND_INITIALIZER;
	_Atomic int go = 0, order = 0;
	int prios[3] = { 10, 30, 20 };
	struct subscriber s[3];
	pthread_t t[3];
	for (int i = 0; i < 3; i++) {
		s[i] = (struct subscriber){ .c = &c, .m = &m, .mask = 1u << i | 0x100, .go = &go, .prio = prios[i],
					    .order = &order };
		subscriber_start(&t[i], &s[i]);
	}
	pin_cpu(0);
	ck_assert(try_fifo(40));
	pthread_mutex_lock(&m);
	atomic_store(&go, 1);
	pthread_mutex_unlock(&m);
	ck_assert_int_eq(api.broadcast(&c, 0x100), 0); /* meets all three masks */
	set_other();
	for (int i = 0; i < 3; i++)
		pthread_join(t[i], NULL);
	ck_assert_int_eq(s[1].rank, 0);
	ck_assert_int_eq(s[2].rank, 1);
	ck_assert_int_eq(s[0].rank, 2);
}
END_TEST

START_TEST(test_deadlines_and_bad_input)
{
	api_load();
	pthread_mutex_t m;
	pthread_mutexattr_t ma;
	pthread_mutexattr_init(&ma);
	pthread_mutexattr_settype(&ma, PTHREAD_MUTEX_ERRORCHECK);
	ck_assert_int_eq(pthread_mutex_init(&m, &ma), 0);
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_t c;
	ck_assert_int_eq(pthread_cond_init(&c, &ca), 0);

	pthread_mutex_lock(&m);
	/* timedwait uses the condition's clock (monotonic here) */
	struct timespec d = deadline_in_ms(CLOCK_MONOTONIC, 60);
	int64_t start = now_ns(CLOCK_MONOTONIC);
	ck_assert_int_eq(api.timedwait(&c, &m, 0x1, &d), ETIMEDOUT);
	ck_assert_int_ge(now_ns(CLOCK_MONOTONIC), ts_to_ns(&d));
	ck_assert_int_lt(now_ns(CLOCK_MONOTONIC) - start, 5000000000LL);
	ck_assert_int_eq(pthread_mutex_lock(&m), EDEADLK); /* held again */
	d = deadline_in_ms(CLOCK_REALTIME, 30);
	ck_assert_int_eq(api.clockwait(&c, &m, 0x1, CLOCK_REALTIME, &d), ETIMEDOUT);
	ck_assert_int_eq(pthread_mutex_lock(&m), EDEADLK);

	/* a deadline in the past times out at once; bad input changes nothing */
	struct timespec past = { 0, 0 }, bad = { 0, 1000000000L };
	ck_assert_int_eq(api.clockwait(&c, &m, 0x1, CLOCK_MONOTONIC, &past), ETIMEDOUT);
	ck_assert_int_eq(api.clockwait(&c, &m, 0x1, CLOCK_MONOTONIC, &bad), EINVAL);
	ck_assert_int_eq(api.clockwait(&c, &m, 0x1, CLOCK_PROCESS_CPUTIME_ID, &d), EINVAL);
	ck_assert_int_eq(api.wait(&c, &m, 0), EINVAL);
	ck_assert_int_eq(api.signal(&c, 0), EINVAL);
	ck_assert_int_eq(api.broadcast(&c, 0), EINVAL);
	pthread_mutex_unlock(&m);
	/* not the owner of an error-checking mutex */
	ck_assert_int_eq(api.wait(&c, &m, 0x1), EPERM);
	/* wait for any: counts and clocks */
	pthread_cond_t *one[1] = { &c };
	unsigned index = 99;
	pthread_mutex_lock(&m);
	ck_assert_int_eq(api.waitany(one, 0, &m, CLOCK_MONOTONIC, NULL, &index), EINVAL);
	ck_assert_int_eq(api.waitany(one, RTPTHREAD_WAITANY_MAX + 1, &m, CLOCK_MONOTONIC, NULL, &index), EINVAL);
	ck_assert_int_eq(api.waitany(NULL, 1, &m, CLOCK_MONOTONIC, NULL, &index), EINVAL);
	ck_assert_int_eq(api.waitany(one, 1, &m, CLOCK_THREAD_CPUTIME_ID, NULL, &index), EINVAL);
	ck_assert_int_eq(api.waitany(one, 1, &m, CLOCK_MONOTONIC, &bad, &index), EINVAL);
	d = deadline_in_ms(CLOCK_MONOTONIC, 30);
	ck_assert_int_eq(api.waitany(one, 1, &m, CLOCK_MONOTONIC, &d, &index), waitv_present() ? ETIMEDOUT : ENOSYS);
	ck_assert_int_eq(index, 99); /* untouched on a time-out */
	ck_assert_int_eq(pthread_mutex_lock(&m), EDEADLK);
	pthread_mutex_unlock(&m);

	/* nobody waits: destroy succeeds, and a destroyed condition refuses */
	ck_assert_int_eq(pthread_cond_destroy(&c), 0);
	ck_assert_int_eq(api.signal(&c, 0x1), 0); /* a no-op, as pthread_cond_signal */
	pthread_mutex_lock(&m);
	ck_assert_int_eq(api.wait(&c, &m, 0x1), EINVAL);
	pthread_mutex_unlock(&m);
	/* and it can be initialized again and used plainly */
	ck_assert_int_eq(pthread_cond_init(&c, NULL), 0);
	pthread_mutex_lock(&m);
	d = deadline_in_ms(CLOCK_REALTIME, 10);
	ck_assert_int_eq(pthread_cond_timedwait(&c, &m, &d), ETIMEDOUT);
	pthread_mutex_unlock(&m);
	ck_assert_int_eq(pthread_cond_destroy(&c), 0);
	pthread_mutex_destroy(&m);
}
END_TEST

/* ---- cancellation ---- */

struct cancel_arg {
	pthread_cond_t *c;
	pthread_mutex_t *m;
	bool any;
	_Atomic pid_t tid;
	_Atomic int held_in_cleanup;
};

static void cancel_cleanup(void *p)
{
	struct cancel_arg *a = p;
	/* the cleanup handler runs with the mutex held: unlock succeeds */
	atomic_store(&a->held_in_cleanup, pthread_mutex_unlock(a->m) == 0);
}

static void *cancel_main(void *p)
{
	struct cancel_arg *a = p;
	atomic_store(&a->tid, test_gettid());
	pthread_mutex_lock(a->m);
	pthread_cleanup_push(cancel_cleanup, a);
	for (;;) {
		if (a->any) {
			pthread_cond_t *both[2] = { a->c, a->c + 1 };
			api.waitany(both, 2, a->m, CLOCK_MONOTONIC, NULL, NULL);
		} else {
			api.wait(a->c, a->m, 0x1);
		}
	}
	pthread_cleanup_pop(1);
	return NULL;
}

START_TEST(test_cancel)
{
	api_load();
	bool any = _i;
	if (any)
		REQUIRE_WAITV();
	pthread_mutexattr_t ma;
	pthread_mutexattr_init(&ma);
	pthread_mutexattr_settype(&ma, PTHREAD_MUTEX_ERRORCHECK);
	pthread_mutex_t m;
	pthread_mutex_init(&m, &ma);
	pthread_cond_t c[2];
	pthread_cond_init(&c[0], NULL);
	pthread_cond_init(&c[1], NULL);
	struct cancel_arg a = { .c = c, .m = &m, .any = any };
	pthread_t t;
	ck_assert_int_eq(pthread_create(&t, NULL, cancel_main, &a), 0);
	while (atomic_load(&a.tid) == 0)
		sleep_ms(1);
	ck_assert(wait_task_sleeping(a.tid, 5000));
	ck_assert_int_eq(pthread_cancel(t), 0);
	void *ret;
	ck_assert_int_eq(pthread_join(t, &ret), 0);
	ck_assert(ret == PTHREAD_CANCELED);
	ck_assert(atomic_load(&a.held_in_cleanup));
	/* the canceled waiter left both conditions: destroy does not wait */
	ck_assert_int_eq(pthread_cond_destroy(&c[0]), 0);
	ck_assert_int_eq(pthread_cond_destroy(&c[1]), 0);
	ck_assert_int_eq(pthread_mutex_trylock(&m), 0);
	pthread_mutex_unlock(&m);
	pthread_mutex_destroy(&m);
}
END_TEST

/* ---- PI and recursive mutexes ---- */

struct kind_arg {
	pthread_cond_t *c;
	pthread_mutex_t *m;
	_Atomic int go;
	_Atomic pid_t tid;
	int result, relock;
};

static void *kind_main(void *p)
{
	struct kind_arg *a = p;
	atomic_store(&a->tid, test_gettid());
	pthread_mutex_lock(a->m);
	pthread_mutex_lock(a->m); /* recursive: depth 2 */
	while (!atomic_load(&a->go) && a->result == 0)
		a->result = api.wait(a->c, a->m, 0x80000000u);
	/* both levels are back: two unlocks succeed, a third is EPERM */
	a->relock = pthread_mutex_unlock(a->m) | pthread_mutex_unlock(a->m);
	if (pthread_mutex_unlock(a->m) != EPERM)
		a->relock = -1;
	return NULL;
}

START_TEST(test_pi_recursive_mutex)
{
	api_load();
	pthread_mutexattr_t ma;
	pthread_mutexattr_init(&ma);
	pthread_mutexattr_settype(&ma, PTHREAD_MUTEX_RECURSIVE);
	pthread_mutexattr_setprotocol(&ma, PTHREAD_PRIO_INHERIT);
	pthread_mutex_t m;
	ck_assert_int_eq(pthread_mutex_init(&m, &ma), 0);
	pthread_cond_t c = PTHREAD_COND_INITIALIZER;
	struct kind_arg a = { .c = &c, .m = &m };
	pthread_t t;
	ck_assert_int_eq(pthread_create(&t, NULL, kind_main, &a), 0);
	while (atomic_load(&a.tid) == 0)
		sleep_ms(1);
	ck_assert(wait_task_sleeping(a.tid, 5000));
	/* the waiter released both levels: we can take it */
	ck_assert_int_eq(pthread_mutex_lock(&m), 0);
	atomic_store(&a.go, 1);
	ck_assert_int_eq(api.broadcast(&c, 0x80000000u), 0);
	pthread_mutex_unlock(&m);
	pthread_join(t, NULL);
	ck_assert_int_eq(a.result, 0);
	ck_assert_int_eq(a.relock, 0);
	ck_assert_int_eq(pthread_cond_destroy(&c), 0);
	pthread_mutex_destroy(&m);
}
END_TEST

/* ---- destroy right after a wake, before the woken run ---- */

START_TEST(test_destroy_after_broadcast)
{
	api_load();
	for (int round = 0; round < 50; round++) {
		pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
		pthread_cond_t *c = malloc(sizeof *c);
		pthread_cond_init(c, NULL);
		_Atomic int go = 0;
		struct subscriber s[3];
		pthread_t t[3];
		for (int i = 0; i < 3; i++) {
			s[i] = (struct subscriber){ .c = c, .m = &m, .mask = 1u << i, .go = &go };
			subscriber_start(&t[i], &s[i]);
		}
		pthread_mutex_lock(&m);
		atomic_store(&go, 1);
		ck_assert_int_eq(api.broadcast(c, 0x7), 0);
		/* still holding m: the woken cannot have returned */
		ck_assert_int_eq(pthread_cond_destroy(c), 0);
		memset(c, 0xa5, sizeof *c);
		free(c);
		pthread_mutex_unlock(&m);
		for (int i = 0; i < 3; i++) {
			pthread_join(t[i], NULL);
			ck_assert_int_eq(s[i].result, 0);
		}
	}
}
END_TEST

/* ---- wait for any ---- */

struct any_arg {
	pthread_cond_t **conds;
	unsigned count;
	pthread_mutex_t *m;
	const _Atomic int *go;
	_Atomic pid_t tid;
	_Atomic int returned;
	unsigned index;
	int result;
};

static void *any_main(void *p)
{
	struct any_arg *a = p;
	atomic_store(&a->tid, test_gettid());
	pthread_mutex_lock(a->m);
	a->result = 0;
	while (!atomic_load(a->go) && a->result == 0)
		a->result = api.waitany(a->conds, a->count, a->m, CLOCK_MONOTONIC, NULL, &a->index);
	atomic_store(&a->returned, 1);
	pthread_mutex_unlock(a->m);
	return NULL;
}

static void any_start(pthread_t *t, struct any_arg *a)
{
	ck_assert_int_eq(pthread_create(t, NULL, any_main, a), 0);
	while (atomic_load(&a->tid) == 0)
		sleep_ms(1);
	ck_assert(wait_task_sleeping(a->tid, 5000));
}

START_TEST(test_waitany_index)
{
	api_load();
	REQUIRE_WAITV();
	pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
	pthread_cond_t c[3];
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&c[0], NULL);
	pthread_cond_init(&c[1], &ca);
	pthread_cond_init(&c[2], NULL);
	pthread_cond_t *conds[3] = { &c[0], &c[1], &c[2] };
	for (unsigned fire = 0; fire < 3; fire++) {
		_Atomic int go = 0;
		struct any_arg a = { .conds = conds, .count = 3, .m = &m, .go = &go };
		pthread_t t;
		any_start(&t, &a);
		pthread_mutex_lock(&m);
		atomic_store(&go, 1);
		pthread_mutex_unlock(&m);
		if (fire == 1)
			ck_assert_int_eq(pthread_cond_broadcast(&c[fire]), 0);
		else
			ck_assert_int_eq(pthread_cond_signal(&c[fire]), 0);
		ck_assert(wait_flag(&a.returned, 1, 5000));
		pthread_join(t, NULL);
		ck_assert_int_eq(a.result, 0);
		ck_assert_int_eq(a.index, fire);
	}
	for (int i = 0; i < 3; i++)
		ck_assert_int_eq(pthread_cond_destroy(&c[i]), 0);
}
END_TEST

/* A waiter woken by two conditions takes nothing from the other waiters
 * of either: with W waiting for any of {c0, c1} and X and Y waiting on c0
 * and c1 alone, one signal to each wakes all three. */
START_TEST(test_waitany_takes_nothing)
{
	api_load();
	REQUIRE_WAITV();
	pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
	pthread_cond_t c[2];
	pthread_cond_init(&c[0], NULL);
	pthread_cond_init(&c[1], NULL);
	pthread_cond_t *conds[2] = { &c[0], &c[1] };
	_Atomic int go = 0;
	struct any_arg w = { .conds = conds, .count = 2, .m = &m, .go = &go };
	struct subscriber x = { .c = &c[0], .m = &m, .mask = ~0u, .go = &go };
	struct subscriber y = { .c = &c[1], .m = &m, .mask = 0x1, .go = &go };
	pthread_t tw, tx, ty;
	any_start(&tw, &w);
	subscriber_start(&tx, &x);
	subscriber_start(&ty, &y);
	pthread_mutex_lock(&m);
	atomic_store(&go, 1);
	ck_assert_int_eq(pthread_cond_signal(&c[0]), 0);
	ck_assert_int_eq(api.signal(&c[1], 0x1), 0);
	pthread_mutex_unlock(&m);
	ck_assert(wait_flag(&w.returned, 1, 5000));
	ck_assert(returned_within(&x, 5000));
	ck_assert(returned_within(&y, 5000));
	pthread_join(tw, NULL);
	pthread_join(tx, NULL);
	pthread_join(ty, NULL);
	ck_assert_int_eq(w.result | x.result | y.result, 0);
	ck_assert_int_eq(w.index, 0);
	ck_assert_int_eq(pthread_cond_destroy(&c[0]), 0);
	ck_assert_int_eq(pthread_cond_destroy(&c[1]), 0);
}
END_TEST

/* ---- process-shared, across fork ---- */

struct shared_channels {
	pthread_mutex_t m;
	pthread_cond_t c[2];
	int seq[2];  /* under m */
	int phase;   /* under m: 1 in the masked wait, 2 in the wait for any */
	_Atomic int wakes; /* the child's returns from the masked wait */
};

/* The child subscribes to channel 1 (mask 0x2) on c[0], then waits for
 * any of c[0] (mask all) and c[1]; exits 0 when it saw what it expected. */
static int shared_child(struct shared_channels *s)
{
	pthread_mutex_lock(&s->m);
	s->phase = 1;
	while (s->seq[1] == 0) {
		if (api.wait(&s->c[0], &s->m, 0x2) != 0)
			return 2;
		atomic_fetch_add(&s->wakes, 1);
	}
	pthread_cond_t *conds[2] = { &s->c[0], &s->c[1] };
	unsigned index = 9;
	s->phase = 2;
	while (s->seq[0] == 0)
		if (api.waitany(conds, 2, &s->m, CLOCK_MONOTONIC, NULL, &index) != 0)
			return 3;
	pthread_mutex_unlock(&s->m);
	return index == 1 ? 0 : 4;
}

START_TEST(test_pshared_fork)
{
	api_load();
	REQUIRE_WAITV();
	struct shared_channels *s = shared_alloc(sizeof *s);
	pthread_mutexattr_t ma;
	pthread_mutexattr_init(&ma);
	pthread_mutexattr_setpshared(&ma, PTHREAD_PROCESS_SHARED);
	pthread_mutexattr_setrobust(&ma, PTHREAD_MUTEX_ROBUST);
	ck_assert_int_eq(pthread_mutex_init(&s->m, &ma), 0);
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setpshared(&ca, PTHREAD_PROCESS_SHARED);
	ck_assert_int_eq(pthread_cond_init(&s->c[0], &ca), 0);
	ck_assert_int_eq(pthread_cond_init(&s->c[1], &ca), 0);
	pid_t pid = fork();
	if (pid == 0)
		_exit(shared_child(s));
	ck_assert(wait_task_sleeping(pid, 5000));
	/* channel 0 (mask 0x1) does not reach the child */
	pthread_mutex_lock(&s->m);
	ck_assert_int_eq(api.broadcast(&s->c[0], 0x1), 0);
	pthread_mutex_unlock(&s->m);
	sleep_ms(50);
	ck_assert_int_eq(atomic_load(&s->wakes), 0);
	/* channel 1 does */
	pthread_mutex_lock(&s->m);
	s->seq[1] = 1;
	ck_assert_int_eq(api.broadcast(&s->c[0], 0x2), 0);
	pthread_mutex_unlock(&s->m);
	/* then it waits for any of the two: fire the second */
	int64_t end = now_ns(CLOCK_MONOTONIC) + 5000000000LL;
	bool in_waitany = false;
	while (!in_waitany && now_ns(CLOCK_MONOTONIC) < end) {
		sleep_ms(5);
		/* phase 2 seen under m: the child released m inside the wait */
		pthread_mutex_lock(&s->m);
		in_waitany = s->phase == 2;
		if (in_waitany) {
			s->seq[0] = 1;
			ck_assert_int_eq(pthread_cond_signal(&s->c[1]), 0);
		}
		pthread_mutex_unlock(&s->m);
	}
	ck_assert(in_waitany);
	int status = wait_child(pid, 5000);
	ck_assert_msg(status >= 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0, "child status %d", status);
	ck_assert_int_eq(pthread_cond_destroy(&s->c[0]), 0);
	ck_assert_int_eq(pthread_cond_destroy(&s->c[1]), 0);
	shared_free(s, sizeof *s);
}
END_TEST

/* ---- writers and readers: nothing published is missed ---- */

#define CHANNELS 8
#define READERS 6
#define WRITERS 3

struct board {
	pthread_mutex_t m;
	pthread_cond_t c;      /* masked: bit k is channel k */
	pthread_cond_t any[2]; /* channels 0-3 and 4-7, for the waitany readers */
	unsigned long seq[CHANNELS]; /* under m */
	_Atomic int stop;
	_Atomic long reads, timeouts, waits;
	int64_t end_ns;
};

struct reader {
	struct board *b;
	unsigned mask;
	int style; /* 0 wait, 1 timed wait, 2 wait for any */
	unsigned long seen[CHANNELS];
	_Atomic int64_t behind_since; /* when it first slept with news in its channels, else 0 */
	int error;
};

/* News for r in its channels (under m). */
static bool reader_news(struct reader *r)
{
	for (int k = 0; k < CHANNELS; k++)
		if ((r->mask >> k & 1) && r->b->seq[k] != r->seen[k])
			return true;
	return false;
}

static void reader_take(struct reader *r)
{
	for (int k = 0; k < CHANNELS; k++)
		if (r->mask >> k & 1)
			r->seen[k] = r->b->seq[k];
	atomic_fetch_add(&r->b->reads, 1);
}

static void *reader_main(void *p)
{
	struct reader *r = p;
	struct board *b = r->b;
	pthread_mutex_lock(&b->m);
	while (!atomic_load(&b->stop)) {
		if (reader_news(r)) {
			reader_take(r);
			continue;
		}
		atomic_fetch_add(&b->waits, 1);
		int e;
		if (r->style == 0) {
			e = api.wait(&b->c, &b->m, r->mask);
		} else if (r->style == 1) {
			struct timespec d = deadline_in_ms(CLOCK_MONOTONIC, 1 + (int)(r->mask % 3));
			e = api.clockwait(&b->c, &b->m, r->mask, CLOCK_MONOTONIC, &d);
			if (e == ETIMEDOUT) {
				atomic_fetch_add(&b->timeouts, 1);
				e = 0;
			}
		} else {
			pthread_cond_t *conds[2] = { &b->any[0], &b->any[1] };
			unsigned index;
			e = api.waitany(conds, 2, &b->m, CLOCK_MONOTONIC, NULL, &index);
		}
		if (e) {
			r->error = e;
			break;
		}
	}
	pthread_mutex_unlock(&b->m);
	return NULL;
}

struct writer {
	struct board *b;
	unsigned seed;
	long writes;
};

static void *writer_main(void *p)
{
	struct writer *w = p;
	struct board *b = w->b;
	while (now_ns(CLOCK_MONOTONIC) < b->end_ns) {
		int k = (int)(rand_r(&w->seed) % CHANNELS);
		bool held = rand_r(&w->seed) & 1, broadcast = rand_r(&w->seed) & 1;
		pthread_mutex_lock(&b->m);
		b->seq[k]++;
		if (held) {
			broadcast ? api.broadcast(&b->c, 1u << k) : api.signal(&b->c, 1u << k);
			pthread_cond_broadcast(&b->any[k / 4]);
		}
		pthread_mutex_unlock(&b->m);
		if (!held) {
			broadcast ? api.broadcast(&b->c, 1u << k) : api.signal(&b->c, 1u << k);
			pthread_cond_signal(&b->any[k / 4]);
		}
		w->writes++;
		if (rand_r(&w->seed) % 8 == 0)
			sched_yield();
	}
	return NULL;
}

START_TEST(test_stress_no_message_missed)
{
	api_load();
	struct board *b = calloc(1, sizeof *b);
	pthread_mutexattr_t ma;
	pthread_mutexattr_init(&ma);
	if (_i == 1)
		pthread_mutexattr_setprotocol(&ma, PTHREAD_PRIO_INHERIT);
	ck_assert_int_eq(pthread_mutex_init(&b->m, &ma), 0);
	pthread_cond_init(&b->c, NULL);
	pthread_cond_init(&b->any[0], NULL);
	pthread_cond_init(&b->any[1], NULL);
	unsigned seed = (unsigned)now_ns(CLOCK_MONOTONIC);
	const char *env = getenv("STRESS_SEED");
	if (env)
		seed = (unsigned)strtoul(env, NULL, 0);
	printf("stress (%s mutex): seed %u (STRESS_SEED repeats it)\n", _i ? "PI" : "normal", seed);
	b->end_ns = now_ns(CLOCK_MONOTONIC) + 2000000000LL;

	struct reader r[READERS];
	pthread_t tr[READERS], tw[WRITERS];
	struct writer w[WRITERS];
	for (int i = 0; i < READERS; i++) {
		unsigned mask = (rand_r(&seed) & 0xffu) | 1u << (i % CHANNELS);
		r[i] = (struct reader){ .b = b, .mask = mask, .style = i % (waitv_present() ? 3 : 2) };
		if (r[i].style == 2)
			r[i].mask = 0xffu; /* the two any-conditions cover every channel */
		ck_assert_int_eq(pthread_create(&tr[i], NULL, reader_main, &r[i]), 0);
	}
	for (int i = 0; i < WRITERS; i++) {
		w[i] = (struct writer){ .b = b, .seed = seed + (unsigned)i };
		ck_assert_int_eq(pthread_create(&tw[i], NULL, writer_main, &w[i]), 0);
	}
	for (int i = 0; i < WRITERS; i++)
		pthread_join(tw[i], NULL);

	/* Quiet: every reader must catch up with what was published, woken
	 * by the writes it subscribed to and nothing else. */
	int64_t limit = now_ns(CLOCK_MONOTONIC) + 5000000000LL;
	bool caught_up = false;
	while (!caught_up && now_ns(CLOCK_MONOTONIC) < limit) {
		sleep_ms(10);
		pthread_mutex_lock(&b->m);
		caught_up = true;
		for (int i = 0; i < READERS; i++)
			caught_up &= !reader_news(&r[i]);
		pthread_mutex_unlock(&b->m);
	}
	long writes = 0;
	for (int i = 0; i < WRITERS; i++)
		writes += w[i].writes;
	pthread_mutex_lock(&b->m);
	for (int i = 0; i < READERS; i++)
		if (reader_news(&r[i]))
			printf("reader %d (mask %#x, style %d) missed news\n", i, r[i].mask, r[i].style);
	atomic_store(&b->stop, 1);
	pthread_cond_broadcast(&b->c);
	pthread_cond_broadcast(&b->any[0]);
	pthread_cond_broadcast(&b->any[1]);
	pthread_mutex_unlock(&b->m);
	for (int i = 0; i < READERS; i++) {
		pthread_join(tr[i], NULL);
		ck_assert_int_eq(r[i].error, 0);
	}
	printf("%ld writes, %ld reads, %ld waits (%ld timed out)\n", writes, atomic_load(&b->reads),
	       atomic_load(&b->waits), atomic_load(&b->timeouts));
	ck_assert_msg(caught_up, "a reader slept with news for it: a lost wake-up");
	ck_assert_int_gt(writes, 1000);
	ck_assert_int_eq(pthread_cond_destroy(&b->c), 0);
	ck_assert_int_eq(pthread_cond_destroy(&b->any[0]), 0);
	ck_assert_int_eq(pthread_cond_destroy(&b->any[1]), 0);
	free(b);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("cond_mask");
	TCase *tc = tcase_create("mask");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_mask_meets);
	tcase_add_test(tc, test_plain_calls_are_every_bit);
	tcase_add_test(tc, test_priority_order);
	tcase_add_test(tc, test_deadlines_and_bad_input);
	tcase_add_loop_test(tc, test_cancel, 0, 2);
	tcase_add_test(tc, test_pi_recursive_mutex);
	tcase_add_test(tc, test_destroy_after_broadcast);
	tcase_add_test(tc, test_waitany_index);
	tcase_add_test(tc, test_waitany_takes_nothing);
	tcase_add_test(tc, test_pshared_fork);
	tcase_add_loop_test(tc, test_stress_no_message_missed, 0, 2);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
