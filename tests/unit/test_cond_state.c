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
	ck_assert_uint_eq(epoch_bit(now), epoch_bit(now ^ SEQ_BY_REQUEUE));
	/* the 32 epochs are 32 different bits */
	uint32_t all = 0;
	for (uint32_t back = 0; back < 32; back++)
		all |= epoch_bit(seq_back(now, back, false));
	ck_assert_uint_eq(all, 0xffffffffu);
	/* A signal made seq `from`, `since` moves before now. */
	for (uint32_t since = 0; since < 40; since++)
		for (int marked = 0; marked < 2; marked++) {
			uint32_t from = seq_back(now, since, marked);
			uint32_t bits = epoch_bits_since(from, now), mask = wake_mask(from, now);
			ck_assert_uint_eq(bits | mask, 0xffffffffu);
			ck_assert_uint_eq(bits & mask, 0);
			ck_assert_uint_eq(__builtin_popcount(bits), since < 32 ? since + 1 : 32);
			/* registered at from or since: never in the wake */
			for (uint32_t k = 0; k <= since; k++)
				ck_assert_msg(!(epoch_bit(seq_back(now, k, false)) & mask), "now %#x, from %u back, %u back",
					      now, since, k);
			/* registered 1..31-since moves before from: in it */
			for (uint32_t k = since + 1; k < 32; k++)
				ck_assert_msg(epoch_bit(seq_back(now, k, marked)) & mask, "now %#x, from %u back, %u back",
					      now, since, k);
		}
}
END_TEST

/*
 * A model of the process-shared protocol (cond_seq.c: count_*), explored
 * in every order of its steps, for a few small configurations of waiters
 * and signals.
 *
 * A waiter registers (pending + 1, its registration is the seq read),
 * then goes to sleep: the futex compares seq with its registration
 * (unchanged: asleep; else it looks).  A sleeper is woken by a wake whose
 * mask holds its bit, by a handler (EINTR, where allowed: once), or by
 * its deadline (state_leave_unwoken: ETIMEDOUT, or returns woken).  A
 * waiter that looks with seq moved returns, else sleeps again.  A
 * returning waiter trims pending to the waiters still inside
 * (state_trim).  A cancelled waiter (asleep, or woken and not yet
 * looking) leaves unwoken, or, if a signal came, signals again.
 *
 * A signal is a CAS (state_signal) that makes seq `from`, a read of seq
 * (`now`), and a wake with wake_mask(from, now): one sleeper whose bit is
 * in it, or, when there is none, a wake of every sleeper whose bit is in
 * epoch_bits_since(from, the seq then), another system call (other steps
 * may come between).  A broadcast is a CAS (state_broadcast), then one
 * wake as a signal's when it found one waiter pending, else a wake of
 * every sleeper.  One configuration has 2 epochs instead of 32, so that
 * bits alias within a few moves.
 *
 * When nothing can move, every waiter still asleep must be pending: a
 * signal or broadcast that counted it (pending went down for it) and
 * returned nobody else lost a wake-up; and none may be one that was
 * inside when a broadcast began.
 */
#define MODEL_WAITERS 3
#define MODEL_SIGNALS 4 /* the configuration's, then a cancelled waiter's */

enum { W_NONE, W_NEW, W_GOING, W_ASLEEP, W_LOOKING, W_PASSING, W_RETURNED, W_TIMEDOUT };
enum { P_NONE, P_READ, P_WAKE, P_FOUND_NOBODY }; /* count_pass_on's steps */
enum { S_NONE, S_READY, S_COUNTED, S_READ, S_FOUND_NOBODY, S_DONE };

struct model_config {
	const char *name;
	int waiters;
	const char *signals; /* 's' signal, 'b' broadcast */
	bool handler;	     /* waiter 0 may be interrupted, once */
	bool deadline;	     /* the last waiter has a deadline... */
	bool cancel;	     /* ...or may be cancelled */
	int epochs;	     /* moves until a bit aliases (32, or fewer to reach it) */
};

static const struct model_config model_configs[] = {
	{ "3 waiters, 3 signals", 3, "sss", false, false, false, 32 },
	{ "3 waiters, 2 signals, handler, deadline", 3, "ss", true, true, false, 32 },
	{ "3 waiters, 2 signals, cancel", 3, "ss", false, false, true, 32 },
	{ "2 waiters, signal and broadcast, handler, deadline", 2, "sb", true, true, false, 32 },
	{ "2 waiters, broadcast and signal, cancel", 2, "bs", false, false, true, 32 },
	{ "3 waiters, 2 signals, 2 epochs", 3, "ss", false, false, false, 2 },
};

static const struct model_config *model_config;

struct model {
	uint64_t state;
	uint8_t waiter[MODEL_WAITERS];
	bool woken[MODEL_WAITERS];   /* W_LOOKING: by a wake, not by the handler */
	bool handled[MODEL_WAITERS];
	bool handed_all[MODEL_WAITERS];
	bool owed[MODEL_WAITERS]; /* inside when a broadcast began */
	uint8_t pass[MODEL_WAITERS]; /* a pass-on's next step */
	uint32_t pass_read[MODEL_WAITERS];
	uint32_t registered[MODEL_WAITERS];
	uint8_t signal[MODEL_SIGNALS];
	uint32_t signal_from[MODEL_SIGNALS]; /* the seq its CAS made */
	uint32_t signal_read[MODEL_SIGNALS]; /* S_READ: the seq its wake's mask was made with */
};

/* The model's epoch bit: epoch_bit, or one of fewer bits. */
static uint32_t model_bit(uint32_t seq)
{
	return model_config->epochs == 32 ? epoch_bit(seq) : 1u << ((seq >> 1) % (uint32_t)model_config->epochs);
}

/* epoch_bits_since and wake_mask, or their kind for fewer bits. */
static uint32_t model_bits_since(uint32_t from, uint32_t now)
{
	uint32_t epochs = (uint32_t)model_config->epochs;
	if (epochs == 32)
		return epoch_bits_since(from, now);
	uint32_t bits = 0;
	for (uint32_t k = 0; k <= (((now >> 1) - (from >> 1)) & 0x7fffffffu) && k < epochs; k++)
		bits |= 1u << (((from >> 1) + k) % epochs);
	return bits;
}

static uint32_t model_wake_mask(uint32_t from, uint32_t now)
{
	if (model_config->epochs == 32)
		return wake_mask(from, now);
	return ~model_bits_since(from, now) & ((1u << model_config->epochs) - 1);
}

static bool model_inside(const struct model *m, int i)
{
	return m->waiter[i] == W_GOING || m->waiter[i] == W_ASLEEP || m->waiter[i] == W_LOOKING ||
	       m->waiter[i] == W_PASSING;
}

/* Every state is explored once: the orders that reach it again add
 * nothing.  A state is its fields, packed into 160 bits: a seq as its
 * distance from the start in 5 bits (four moves at most). */
#define MODEL_SEEN (1u << 20)
static uint32_t (*model_seen)[6]; /* the key, and 1 once used */
static uint32_t model_start;
static int model_states;

static uint32_t model_seq(uint32_t seq)
{
	return (seq - model_start) & 31;
}

static bool model_first_visit(const struct model *m)
{
	uint32_t key[5] = { model_seq(state_seq(m->state)) | state_pending(m->state) << 5, 0, 0, 0, 0 };
	for (int i = 0; i < MODEL_WAITERS; i++) {
		key[0] |= (uint32_t)(m->woken[i] | m->handled[i] << 1 | m->handed_all[i] << 2 | m->pass[i] << 3)
			  << (9 + 5 * i);
		key[1] |= (uint32_t)m->owed[i] << (21 + i);
		key[1] |= (uint32_t)m->waiter[i] << 3 * i;
		key[2] |= model_seq(m->registered[i]) << 5 * i;
		key[4] |= model_seq(m->pass_read[i]) << 5 * i;
	}
	for (int j = 0; j < MODEL_SIGNALS; j++) {
		key[1] |= (uint32_t)m->signal[j] << (9 + 3 * j);
		uint32_t seqs = model_seq(m->signal_from[j]) | model_seq(m->signal_read[j]) << 5;
		if (j < 3)
			key[3] |= seqs << 10 * j;
		else
			key[2] |= seqs << 15;
	}
	uint32_t h = 2166136261u;
	for (int k = 0; k < 5; k++)
		h = (h ^ key[k]) * 16777619u;
	/* Ends: the table is never full (asserted below). */
	for (uint32_t slot = h % MODEL_SEEN;; slot = (slot + 1) % MODEL_SEEN) {
		if (!model_seen[slot][5]) {
			memcpy(model_seen[slot], key, sizeof key);
			model_seen[slot][5] = 1;
			model_states++;
			ck_assert_int_lt(model_states, MODEL_SEEN / 4 * 3);
			return true;
		}
		if (memcmp(model_seen[slot], key, sizeof key) == 0)
			return false;
	}
}

static void model_explore(struct model m);

/* One sleeper whose bit is in mask wakes: every choice the kernel may
 * make is explored.  false: nobody matches (nothing explored). */
static bool model_wake_one(const struct model *m, uint32_t mask)
{
	bool any = false;
	for (int i = 0; i < MODEL_WAITERS; i++)
		if (m->waiter[i] == W_ASLEEP && (model_bit(m->registered[i]) & mask)) {
			struct model n = *m;
			n.waiter[i] = W_LOOKING;
			n.woken[i] = true;
			model_explore(n);
			any = true;
		}
	return any;
}

static void model_wake_all(struct model *m, uint32_t mask)
{
	for (int i = 0; i < MODEL_WAITERS; i++)
		if (m->waiter[i] == W_ASLEEP && (model_bit(m->registered[i]) & mask)) {
			m->waiter[i] = W_LOOKING;
			m->woken[i] = true;
		}
}


/* A returning waiter trims pending to the others inside. */
static void model_return(struct model *m, int i)
{
	uint64_t next;
	m->waiter[i] = W_RETURNED;
	int others = 0;
	for (int k = 0; k < MODEL_WAITERS; k++)
		others += model_inside(m, k);
	if (state_trim(m->state, (uint32_t)others, &next))
		m->state = next;
}

static void model_cancel(const struct model *m, int i)
{
	struct model n = *m;
	uint64_t next;
	n.waiter[i] = W_TIMEDOUT;
	if (state_leave_unwoken(n.state, n.registered[i], &next)) {
		n.state = next;
		n.pass[i] = P_READ;
	} else {
		n.signal[MODEL_SIGNALS - 1] = S_READY;
	}
	model_explore(n);
}

/* A step of waiter i's pass-on (count_pass_on): read seq; wake one that
 * registered before it; when that finds nobody, and the waiter has not
 * yet in this wait, wake every sleeper of its bit. */
static void model_pass_step(const struct model *m, int i)
{
	struct model n = *m;
	switch (m->pass[i]) {
	case P_READ:
		n.pass[i] = P_WAKE;
		n.pass_read[i] = state_seq(n.state);
		model_explore(n);
		return;
	case P_WAKE:
		n.pass[i] = P_NONE;
		if (n.waiter[i] == W_PASSING)
			n.waiter[i] = W_GOING;
		if (model_wake_one(&n, model_wake_mask(m->pass_read[i], m->pass_read[i])))
			return;
		if (!n.handed_all[i])
			n.pass[i] = P_FOUND_NOBODY;
		model_explore(n);
		return;
	case P_FOUND_NOBODY:
		n.pass[i] = P_NONE;
		n.handed_all[i] = true;
		model_wake_all(&n, model_bit(m->pass_read[i]));
		model_explore(n);
		return;
	}
}

/* false: waiter i has no step to take (asleep, with nothing to wake it
 * but a wake). */
static bool model_waiter_step(const struct model *m, int i)
{
	struct model n = *m;
	uint64_t next;
	bool last = i == model_config->waiters - 1;
	switch (m->waiter[i]) {
	case W_NEW:
		n.registered[i] = state_seq(n.state);
		n.state += STATE_ONE_PENDING;
		n.waiter[i] = W_GOING;
		model_explore(n);
		break;
	case W_GOING:
		n.waiter[i] = state_seq(n.state) == n.registered[i] ? W_ASLEEP : W_LOOKING;
		n.woken[i] = false;
		model_explore(n);
		break;
	case W_ASLEEP:
		if (!(i == 0 && model_config->handler && !m->handled[i]) &&
		    !(last && (model_config->deadline || model_config->cancel)))
			return false;
		if (i == 0 && model_config->handler && !m->handled[i]) {
			n.waiter[i] = W_LOOKING;
			n.woken[i] = false;
			n.handled[i] = true;
			model_explore(n);
		}
		if (last && model_config->deadline) {
			n = *m;
			if (state_leave_unwoken(n.state, n.registered[i], &next)) {
				n.state = next;
				n.waiter[i] = W_TIMEDOUT;
			} else {
				model_return(&n, i);
			}
			model_explore(n);
		}
		if (last && model_config->cancel)
			model_cancel(m, i);
		break;
	case W_LOOKING:
		if (last && model_config->cancel && m->woken[i])
			model_cancel(m, i);
		if (state_seq(n.state) != n.registered[i]) {
			model_return(&n, i);
		} else if (n.woken[i]) {
			n.waiter[i] = W_PASSING;
			n.pass[i] = P_READ;
		} else {
			n.waiter[i] = W_GOING;
		}
		model_explore(n);
		break;
	}
	return true;
}

static void model_signal_step(const struct model *m, int j)
{
	struct model n = *m;
	uint64_t next;
	switch (m->signal[j]) {
	case S_READY:
		n.signal[j] = S_DONE;
		if (j < MODEL_SIGNALS - 1 && model_config->signals[j] == 'b') {
			for (int i = 0; i < MODEL_WAITERS; i++)
				n.owed[i] |= model_inside(&n, i);
			if (state_broadcast(n.state, false, &next)) {
				bool one = state_pending(n.state) == 1;
				n.state = next;
				n.signal_from[j] = state_seq(next);
				if (one)
					n.signal[j] = S_COUNTED;
				else
					model_wake_all(&n, 0xffffffffu);
			}
		} else if (state_signal(n.state, &next)) {
			n.state = next;
			n.signal_from[j] = state_seq(next);
			n.signal[j] = S_COUNTED;
		}
		model_explore(n);
		break;
	case S_COUNTED:
		n.signal[j] = S_READ;
		n.signal_read[j] = state_seq(n.state);
		model_explore(n);
		break;
	case S_READ:
		/* count_wake_one: one sleeper its mask lets through, else (a
		 * system call later) every sleeper of the epochs since */
		n.signal[j] = S_DONE;
		uint32_t mask = model_wake_mask(m->signal_from[j], m->signal_read[j]);
		if (mask && model_wake_one(&n, mask))
			break;
		n.signal[j] = S_FOUND_NOBODY;
		model_explore(n);
		break;
	case S_FOUND_NOBODY:
		n.signal[j] = S_DONE;
		model_wake_all(&n, model_bits_since(m->signal_from[j], state_seq(n.state)));
		model_explore(n);
		break;
	}
}

static void model_check_quiet(const struct model *m)
{
	unsigned inside = 0, asleep = 0;
	for (int i = 0; i < MODEL_WAITERS; i++) {
		ck_assert(!model_inside(m, i) || m->waiter[i] == W_ASLEEP);
		inside += model_inside(m, i);
		asleep += m->waiter[i] == W_ASLEEP;
	}
	ck_assert_msg(asleep <= state_pending(m->state), "%s: lost wake-up: %u asleep, %u of them pending",
		      model_config->name, asleep, state_pending(m->state));
	for (int i = 0; i < MODEL_WAITERS; i++)
		ck_assert_msg(m->waiter[i] != W_ASLEEP || !m->owed[i], "%s: lost wake-up: waiter %d asleep after a broadcast",
			      model_config->name, i);
	ck_assert_uint_le(state_pending(m->state), inside);
}

/* Waiters without a handler, a deadline or a cancellation are alike, as
 * are signals of one kind: only the orders in which the first of them
 * registers, or does its CAS, first are explored (any other order is one
 * of these with the names swapped). */
static bool model_plain_waiter(int i)
{
	bool last = i == model_config->waiters - 1;
	return !(i == 0 && model_config->handler) && !(last && (model_config->deadline || model_config->cancel));
}

static bool model_may_start(const struct model *m, int i, int j)
{
	if (i >= 0) {
		if (m->waiter[i] != W_NEW || !model_plain_waiter(i))
			return true;
		for (int k = 0; k < i; k++)
			if (model_plain_waiter(k) && m->waiter[k] == W_NEW)
				return false;
		return true;
	}
	if (m->signal[j] != S_READY || j == MODEL_SIGNALS - 1)
		return true;
	for (int k = 0; k < j; k++)
		if (model_config->signals[k] == model_config->signals[j] && m->signal[k] == S_READY)
			return false;
	return true;
}

static void model_explore(struct model m)
{
	if (!model_first_visit(&m))
		return;
	bool any = false;
	for (int i = 0; i < MODEL_WAITERS; i++) {
		if (m.pass[i] != P_NONE) {
			model_pass_step(&m, i);
			any = true;
		} else if (m.waiter[i] >= W_NEW && m.waiter[i] <= W_LOOKING) {
			any |= !model_may_start(&m, i, -1) || model_waiter_step(&m, i);
		}
	}
	for (int j = 0; j < MODEL_SIGNALS; j++)
		if (m.signal[j] != S_NONE && m.signal[j] != S_DONE) {
			if (model_may_start(&m, -1, j))
				model_signal_step(&m, j);
			any = true;
		}
	if (!any)
		model_check_quiet(&m);
}

/* Seqs to start from: a plain one, and one two moves from the wrap. */
static const uint32_t model_starts[] = { 0, 0xfffffffcu };

START_TEST(test_model)
{
	model_config = &model_configs[_i];
	for (size_t s = 0; s < sizeof model_starts / sizeof model_starts[0]; s++) {
		struct model m = { .state = state_make(model_starts[s], 0) };
		for (int i = 0; i < model_config->waiters; i++)
			m.waiter[i] = W_NEW;
		for (int j = 0; model_config->signals[j]; j++)
			m.signal[j] = S_READY;
		model_start = model_starts[s];
		model_seen = calloc(MODEL_SEEN, sizeof *model_seen);
		ck_assert_ptr_nonnull(model_seen);
		model_states = 0;
		model_explore(m);
		free(model_seen);
		ck_assert_int_gt(model_states, 1000); /* every order was tried */
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
	tcase_add_loop_test(tc, test_model, 0, sizeof model_configs / sizeof model_configs[0]);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
