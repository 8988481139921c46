/*
 * The condition variable's state arithmetic (src/cond_state.h), as pure
 * functions: every transition, every wrap, every edge of the epoch masks,
 * and an exhaustive check that a wake aimed at the current seq reaches
 * exactly the sleepers that registered before it.
 */
#include "testutil.h"

#include "../src/cond_state.h"

struct seq_case {
	uint32_t seq;
	bool broadcast;
	uint32_t next;
};

static const struct seq_case seq_cases[] = {
	{ 0, false, 2 },
	{ 0, true, 3 },
	{ 2, false, 4 },
	{ 3, false, 4 },		/* a signal after a broadcast drops the mark */
	{ 3, true, 5 },
	{ 0xfffffffcu, false, 0xfffffffeu },
	{ 0xfffffffeu, false, 0 },	/* wraps to 0 */
	{ 0xfffffffeu, true, 1 },
	{ 0xffffffffu, false, 0 },
	{ 0xffffffffu, true, 1 },
};

START_TEST(test_seq_next)
{
	const struct seq_case *t = &seq_cases[_i];
	ck_assert_uint_eq(seq_next(t->seq, t->broadcast), t->next);
	ck_assert(seq_by_requeue(t->next) == t->broadcast);
	/* every move counts exactly one */
	ck_assert_uint_eq(((t->next >> 1) - (t->seq >> 1)) & 0x7fffffffu, 1);
}
END_TEST

START_TEST(test_state_pack)
{
	static const uint32_t values[] = { 0, 1, 2, 3, 0x7fffffffu, 0x80000000u, 0xfffffffeu, 0xffffffffu };
	for (size_t i = 0; i < sizeof values / sizeof values[0]; i++)
		for (size_t j = 0; j < sizeof values / sizeof values[0]; j++) {
			uint64_t s = state_make(values[i], values[j]);
			ck_assert_uint_eq(state_seq(s), values[i]);
			ck_assert_uint_eq(state_pending(s), values[j]);
			if (values[j] != 0xffffffffu) {
				/* registration: one fetch_add, seq untouched */
				ck_assert_uint_eq(state_seq(s + STATE_ONE_PENDING), values[i]);
				ck_assert_uint_eq(state_pending(s + STATE_ONE_PENDING), values[j] + 1);
			}
		}
}
END_TEST

struct transition_case {
	uint32_t seq, pending;
	bool signal_ok;
	uint32_t signal_seq, signal_pending;
	bool broadcast_ok;
	uint32_t broadcast_seq;
};

static const struct transition_case transition_cases[] = {
	{ 0, 0, false, 0, 0, false, 0 },		/* nobody pending: no change */
	{ 7, 0, false, 0, 0, false, 0 },
	{ 0, 1, true, 2, 0, true, 3 },
	{ 3, 2, true, 4, 1, true, 5 },
	{ 0xfffffffeu, 5, true, 0, 4, true, 1 },
	{ 0xffffffffu, 0xffffffffu, true, 0, 0xfffffffeu, true, 1 },
};

START_TEST(test_signal_broadcast)
{
	const struct transition_case *t = &transition_cases[_i];
	uint64_t s = state_make(t->seq, t->pending), next = 0xdeadbeef;
	ck_assert(state_signal(s, &next) == t->signal_ok);
	if (t->signal_ok) {
		ck_assert_uint_eq(state_seq(next), t->signal_seq);
		ck_assert_uint_eq(state_pending(next), t->signal_pending);
	} else {
		ck_assert_uint_eq(next, 0xdeadbeef);
	}
	for (int requeue = 0; requeue <= 1; requeue++) {
		next = 0xdeadbeef;
		ck_assert(state_broadcast(s, requeue, &next) == t->broadcast_ok);
		if (t->broadcast_ok) {
			/* only a requeue marks seq */
			ck_assert_uint_eq(state_seq(next), requeue ? t->broadcast_seq : t->broadcast_seq & ~SEQ_BY_REQUEUE);
			ck_assert_uint_eq(state_pending(next), 0);
		} else {
			ck_assert_uint_eq(next, 0xdeadbeef);
		}
	}
}
END_TEST

struct leave_case {
	uint32_t seq, pending, registered;
	bool leaves;
};

static const struct leave_case leave_cases[] = {
	{ 4, 1, 4, true },		/* nothing came: off pending */
	{ 4, 3, 4, true },
	{ 6, 1, 4, false },		/* a signal came: woken */
	{ 5, 0, 4, false },		/* a broadcast came */
	{ 4, 0, 4, false },		/* cannot happen; counted as woken (spurious at worst) */
	{ 0, 2, 0xfffffffeu, false },	/* moved across the wrap */
	{ 0xfffffffeu, 1, 0xfffffffeu, true },
};

START_TEST(test_leave_unwoken)
{
	const struct leave_case *t = &leave_cases[_i];
	uint64_t next = 0;
	bool leaves = state_leave_unwoken(state_make(t->seq, t->pending), t->registered, &next);
	ck_assert(leaves == t->leaves);
	if (leaves) {
		ck_assert_uint_eq(state_seq(next), t->seq);
		ck_assert_uint_eq(state_pending(next), t->pending - 1);
	}
}
END_TEST

struct trim_case {
	uint32_t pending, others;
	bool trims;
};

static const struct trim_case trim_cases[] = {
	{ 0, 0, false }, { 1, 1, false }, { 1, 0, true },	 /* the waiter that left was counted */
	{ 5, 2, true },	 { 2, 5, false }, { 0xffffffffu, 0, true },
};

START_TEST(test_trim)
{
	const struct trim_case *t = &trim_cases[_i];
	uint64_t next = 7;
	ck_assert(state_trim(state_make(42, t->pending), t->others, &next) == t->trims);
	if (t->trims) {
		ck_assert_uint_eq(state_seq(next), 42); /* never moves seq */
		ck_assert_uint_eq(state_pending(next), t->others);
	}
}
END_TEST

/* The count of a seq: how many moves made it (mod 2^31). */
static uint32_t count_of(uint32_t seq)
{
	return seq >> 1;
}

/* A seq `back` moves before seq (marked or not: the mark never changes
 * the epoch). */
static uint32_t seq_back(uint32_t seq, uint32_t back, bool marked)
{
	return ((count_of(seq) - back) << 1 | (marked ? 1u : 0u));
}

static const uint32_t mask_bases[] = { 0, 1, 2, 62, 63, 64, 65, 0x7ffffffeu, 0xfffffffcu, 0xfffffffeu, 0xffffffffu };

START_TEST(test_epoch_masks)
{
	uint32_t now = mask_bases[_i];
	ck_assert_uint_eq(__builtin_popcount(epoch_bit(now)), 1);
	ck_assert_uint_eq(wake_mask(now) | alias_mask(now), 0xffffffffu);
	ck_assert_uint_eq(wake_mask(now) & alias_mask(now), 0);
	ck_assert_uint_eq(epoch_bit(now), epoch_bit(now ^ SEQ_BY_REQUEUE));
	/* registered 1..31 moves ago: reached by the wake, not the alias */
	for (uint32_t back = 1; back < 32; back++)
		for (int marked = 0; marked < 2; marked++) {
			uint32_t bit = epoch_bit(seq_back(now, back, marked));
			ck_assert_msg(bit & wake_mask(now), "now %#x, %u back", now, back);
			ck_assert_msg(!(bit & alias_mask(now)), "now %#x, %u back", now, back);
		}
	/* registered at the current seq: never the wake, always the alias */
	ck_assert(!(epoch_bit(now) & wake_mask(now)));
	/* 32, 64, ... moves ago: the alias wake */
	for (uint32_t back = 32; back <= 256; back += 32)
		ck_assert(epoch_bit(seq_back(now, back, false)) & alias_mask(now));
	/* the 32 epochs are 32 different bits */
	uint32_t all = 0;
	for (uint32_t back = 0; back < 32; back++)
		all |= epoch_bit(seq_back(now, back, false));
	ck_assert_uint_eq(all, 0xffffffffu);
}
END_TEST

/*
 * A small model of the protocol, exhaustively: two waiters register and
 * time out, two signals come, in every order of their steps.  At the end
 * nobody may be left asleep while a signal that came after its
 * registration found it pending and no waiter returned for it.
 *
 * Steps: waiter i registers (R), sleeps or sees seq moved, and may give up
 * (T: state_leave_unwoken); signal j does its CAS (S) and its wake (W,
 * aimed at the current seq).  A sleeping waiter whose epoch bit is in the
 * wake mask may be woken, and returns; that it never is one that
 * registered at the current seq is checked at every wake.
 */
enum { W_NEW, W_ASLEEP, W_RETURNED, W_TIMEDOUT };

struct model {
	uint64_t state;
	int waiter[2];
	uint32_t registered[2];
	int signal_done[2]; /* 0 none, 1 CAS done, 2 wake done */
	bool signal_counted[2];
	int returned;
};

static int model_runs;

static void model_explore(struct model m, int depth)
{
	bool any = false;
	for (int i = 0; i < 2; i++) {
		if (m.waiter[i] == W_NEW) {
			struct model n = m;
			n.registered[i] = state_seq(n.state);
			n.state += STATE_ONE_PENDING;
			n.waiter[i] = W_ASLEEP;
			model_explore(n, depth + 1);
			any = true;
		} else if (m.waiter[i] == W_ASLEEP) {
			/* its deadline: leave if nothing came, else return woken */
			struct model n = m;
			uint64_t next;
			if (state_leave_unwoken(n.state, n.registered[i], &next)) {
				n.state = next;
				n.waiter[i] = W_TIMEDOUT;
			} else {
				n.waiter[i] = W_RETURNED;
				n.returned++;
			}
			model_explore(n, depth + 1);
			any = true;
		}
	}
	for (int j = 0; j < 2; j++) {
		if (m.signal_done[j] == 0) {
			struct model n = m;
			uint64_t next;
			n.signal_counted[j] = state_signal(n.state, &next);
			if (n.signal_counted[j])
				n.state = next;
			n.signal_done[j] = n.signal_counted[j] ? 1 : 2;
			model_explore(n, depth + 1);
			any = true;
		} else if (m.signal_done[j] == 1) {
			/* the kernel may pick any sleeper the mask lets through */
			uint32_t seq = state_seq(m.state);
			bool woke = false;
			for (int i = 0; i < 2; i++)
				if (m.waiter[i] == W_ASLEEP && (epoch_bit(m.registered[i]) & wake_mask(seq))) {
					ck_assert_msg(m.registered[i] != seq, "a wake reached a waiter that registered since");
					struct model n = m;
					n.waiter[i] = W_RETURNED;
					n.returned++;
					n.signal_done[j] = 2;
					model_explore(n, depth + 1);
					woke = true;
				}
			if (!woke) {
				struct model n = m;
				n.signal_done[j] = 2;
				model_explore(n, depth + 1);
			}
			any = true;
		}
	}
	if (any)
		return;
	/* Quiescent: every waiter still asleep is one nothing was counted
	 * against, or the signals found it and returned somebody else. */
	model_runs++;
	int counted = m.signal_counted[0] + m.signal_counted[1];
	int asleep = (m.waiter[0] == W_ASLEEP) + (m.waiter[1] == W_ASLEEP);
	ck_assert_msg(asleep == 0 || m.returned >= counted,
		      "lost wake-up: %d counted signals, %d returned, %d asleep", counted, m.returned, asleep);
	/* pending = registrations - counted signals - waiters that left */
	ck_assert_int_eq((int)state_pending(m.state), asleep + m.returned - counted);
}

START_TEST(test_model_two_waiters_two_signals)
{
	static const uint32_t starts[] = { 0, 3, 0xfffffffcu, 0xffffffffu };
	for (size_t i = 0; i < sizeof starts / sizeof starts[0]; i++) {
		struct model m = { .state = state_make(starts[i], 0) };
		model_runs = 0;
		model_explore(m, 0);
		ck_assert_int_gt(model_runs, 100); /* every order was tried */
	}
}
END_TEST

int main(void)
{
	Suite *s = suite_create("cond_state");
	TCase *tc = tcase_create("arithmetic");
	tcase_add_loop_test(tc, test_seq_next, 0, sizeof seq_cases / sizeof seq_cases[0]);
	tcase_add_test(tc, test_state_pack);
	tcase_add_loop_test(tc, test_signal_broadcast, 0, sizeof transition_cases / sizeof transition_cases[0]);
	tcase_add_loop_test(tc, test_leave_unwoken, 0, sizeof leave_cases / sizeof leave_cases[0]);
	tcase_add_loop_test(tc, test_epoch_masks, 0, sizeof mask_bases / sizeof mask_bases[0]);
	tcase_add_loop_test(tc, test_trim, 0, sizeof trim_cases / sizeof trim_cases[0]);
	suite_add_tcase(s, tc);
	tc = tcase_create("model");
	tcase_add_test(tc, test_model_two_waiters_two_signals);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
