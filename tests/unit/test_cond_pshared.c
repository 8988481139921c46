/*
 * Process-shared conditions across fork: waiters and wakers in
 * different processes, signal and broadcast.
 *
 * cond_util.h: the mutex kinds and the conventions of these tests.
 */
#include "cond_util.h"

/* ---- process-shared across fork ---- */

struct shm_cond {
	pthread_mutex_t m;
	pthread_cond_t c;
	int waiting;
	int tokens; /* signal: one per waiter */
	int flag;   /* broadcast */
	int woken;
	int errors;
};

struct shm_waiter_arg {
	struct shm_cond *s;
	bool broadcast;
};

static void *shm_waiter(void *p)
{
	struct shm_waiter_arg *a = p;
	struct shm_cond *s = a->s;
	struct timespec dl = deadline_in_ms(CLOCK_REALTIME, 5000);
	if (pthread_mutex_lock(&s->m) != 0) {
		__atomic_fetch_add(&s->errors, 1, __ATOMIC_SEQ_CST);
		return NULL;
	}
	s->waiting++;
	int r = 0;
	if (a->broadcast) {
		while (!s->flag && r == 0)
			r = pthread_cond_timedwait(&s->c, &s->m, &dl);
	} else {
		while (s->tokens == 0 && r == 0)
			r = pthread_cond_timedwait(&s->c, &s->m, &dl);
		if (r == 0)
			s->tokens--;
	}
	if (r == 0)
		s->woken++;
	else
		s->errors++;
	pthread_mutex_unlock(&s->m);
	return NULL;
}

/* nw waiter threads in this process; 0 if all were woken.  If the other
 * process is given (other > 0) and dies first, gives up on the threads
 * (they may be stuck on a mutex it held): 60 + its signal or exit code. */
static int shm_run_waiters(struct shm_cond *s, int nw, bool broadcast, pid_t other)
{
	pthread_t t[4];
	struct shm_waiter_arg a = { s, broadcast };
	for (int i = 0; i < nw; i++)
		if (pthread_create(&t[i], NULL, shm_waiter, &a) != 0)
			return 10;
	/* A waker that exited 0 has sent its wake-ups: the woken may still
	 * be on their way out (slowly, under qemu or load), so they get 10 s
	 * more; one that failed ends the wait at once. */
	int64_t give_up = INT64_MAX;
	for (int i = 0; i < nw; i++) {
		for (;;) {
			struct timespec dl = deadline_in_ms(CLOCK_REALTIME, 10);
			if (pthread_timedjoin_np(t[i], NULL, &dl) == 0)
				break;
			/* WNOWAIT: the caller reaps it (ck_assert_child_ok). */
			siginfo_t info = { .si_pid = 0 };
			if (other > 0 && waitid(P_PID, (id_t)other, &info, WEXITED | WNOHANG | WNOWAIT) == 0 &&
			    info.si_pid == other) {
				other = 0;
				if (info.si_code != CLD_EXITED || info.si_status != 0) {
					fprintf(stderr, "the waking process failed first: code %d status %d\n", info.si_code,
						info.si_status);
					return info.si_code == CLD_EXITED ? 60 + 100 + info.si_status : 60 + info.si_status;
				}
				give_up = now_ns(CLOCK_MONOTONIC) + 10 * NSEC_PER_SEC;
			}
			if (now_ns(CLOCK_MONOTONIC) > give_up) {
				fprintf(stderr, "the waking process exited 0, and a waiter is still waiting 10 s later\n");
				return 50;
			}
		}
	}
	return s->errors ? 20 + s->errors : (s->woken == nw ? 0 : 30 + s->woken);
}

/* Waits for nw waiters to be waiting, then wakes them. */
static int shm_run_waker(struct shm_cond *s, int nw, bool broadcast)
{
	int64_t end = now_ns(CLOCK_MONOTONIC) + 10 * NSEC_PER_SEC;
	for (;;) {
		if (pthread_mutex_lock(&s->m) != 0)
			return 40;
		if (s->waiting == nw)
			break;
		pthread_mutex_unlock(&s->m);
		if (now_ns(CLOCK_MONOTONIC) > end)
			return 41;
		sleep_ms(1);
	}
	int r = 0;
	if (broadcast) {
		s->flag = 1;
		r = pthread_cond_broadcast(&s->c);
		pthread_mutex_unlock(&s->m);
	} else {
		/* the first signal with the mutex held, the others without */
		s->tokens++;
		r = pthread_cond_signal(&s->c);
		pthread_mutex_unlock(&s->m);
		for (int i = 1; i < nw && r == 0; i++) {
			sleep_ms(5);
			pthread_mutex_lock(&s->m);
			s->tokens++;
			pthread_mutex_unlock(&s->m);
			r = pthread_cond_signal(&s->c);
		}
	}
	return r ? 50 + r : 0;
}

START_TEST(test_pshared_fork)
{
	/* bit 0: broadcast; bit 1: the child waits (else the parent); bit 2: PI mutex */
	bool broadcast = _i & 1, child_waits = _i & 2;
	const struct mkind *k = &kinds[(_i & 4) ? 7 : 0];
	int nw = broadcast ? 3 : 2;
	struct shm_cond *s = shared_alloc(sizeof *s);
	init_mutex(&s->m, k, true);
	init_cond(&s->c, CLOCK_REALTIME, true);
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0)
		_exit(child_waits ? shm_run_waiters(s, nw, broadcast, 0) : shm_run_waker(s, nw, broadcast));
	int r = child_waits ? shm_run_waker(s, nw, broadcast) : shm_run_waiters(s, nw, broadcast, pid);
	ck_assert_msg(r == 0, "%s, %s, %s: parent failed with %d%s", k->name, broadcast ? "broadcast" : "signal",
		      child_waits ? "child waits" : "parent waits", r,
		      r > 60 && r < 100 ? " (the waking child was killed by a signal: 60 + signo)" : "");
	ck_assert_child_ok(pid, 15000);
	ck_assert_int_eq(s->woken, nw);
	ck_assert_int_eq(pthread_cond_destroy(&s->c), 0);
	ck_assert_int_eq(pthread_mutex_destroy(&s->m), 0);
	shared_free(s, sizeof *s);
}
END_TEST

/* ---- suite ---- */

static Suite *cond_pshared_suite(void)
{
	Suite *s = suite_create("cond_pshared");
	TCase *tc;

	tc = tcase_create("pshared");
	tcase_set_timeout(tc, 30);
	tcase_add_loop_test(tc, test_pshared_fork, 0, 8);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return run_suite(cond_pshared_suite());
}
