/*
 * Deadline conversion between clocks (src/clock.c, used where the kernel
 * lacks FUTEX_LOCK_PI2 and a MONOTONIC deadline must become a REALTIME
 * one): far-future deadlines saturate instead of overflowing into the
 * past, and every result is a valid timespec.
 */
#include <limits.h>

#include "testutil.h"

#include "../src/clock.c"

static void check_valid(struct timespec t)
{
	ck_assert_int_ge(t.tv_sec, 0);
	ck_assert_int_ge(t.tv_nsec, 0);
	ck_assert_int_lt(t.tv_nsec, 1000000000L);
}

struct convert_case {
	const char *name;
	time_t ahead_sec; /* deadline = now + ahead (saturating below) */
	long nsec;
	bool far;	  /* expect at least 100 years ahead */
};

static const struct convert_case cases[] = {
	{ "one second", 1, 0, false },
	{ "now, nsec edge", 0, 999999999, false },
	{ "past", -10, 0, false },
	{ "a century", 100LL * 365 * 86400, 0, true },
	{ "2^62 s", (time_t)1 << 62, 500000000, true },
	{ "time_t max", 0, 999999999, true }, /* tv_sec = LLONG_MAX below */
};

START_TEST(test_convert)
{
	const struct convert_case *c = &cases[_i];
	for (int dir = 0; dir < 2; dir++) {
		clockid_t from = dir ? CLOCK_REALTIME : CLOCK_MONOTONIC, to = dir ? CLOCK_MONOTONIC : CLOCK_REALTIME;
		struct timespec now;
		clock_gettime(from, &now);
		struct timespec dl = { .tv_nsec = c->nsec };
		if (c->far && c->ahead_sec == 0)
			dl.tv_sec = LLONG_MAX;
		else if (__builtin_add_overflow(now.tv_sec, c->ahead_sec, &dl.tv_sec))
			dl.tv_sec = LLONG_MAX;
		struct timespec out = deadline_convert(&dl, from, to);
		check_valid(out);
		struct timespec to_now;
		clock_gettime(to, &to_now);
		if (c->far) {
			ck_assert_msg(out.tv_sec >= to_now.tv_sec + 100LL * 365 * 86400 - 2, "%s: %lld is not far ahead",
				      c->name, (long long)out.tv_sec);
		} else if (c->ahead_sec >= 0) {
			long long want = (long long)to_now.tv_sec + c->ahead_sec;
			ck_assert_msg(out.tv_sec >= want - 1 && out.tv_sec <= want + 1, "%s: %lld, want about %lld",
				      c->name, (long long)out.tv_sec, want);
		}
	}
}
END_TEST

int main(void)
{
	Suite *s = suite_create("clock");
	TCase *tc = tcase_create("convert");
	tcase_add_loop_test(tc, test_convert, 0, sizeof cases / sizeof cases[0]);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
