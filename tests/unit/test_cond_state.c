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
 * waiter that looks with seq moved returns; one woken by a wake with seq
 * unchanged hands it on (count_pass_on: the first time in a wait, a wake
 * of every sleeper), then sleeps again.  A returning waiter trims pending
 * to the waiters still inside (state_trim).  A cancelled waiter (asleep,
 * or woken and not yet looking) leaves unwoken and hands a wake on, or,
 * if a signal came, signals again.
 *
 * A signal is a CAS (state_signal) that makes seq `from`, a read of seq
 * (`now`), and a wake with wake_mask(from, now): one sleeper whose bit is
 * in it; when there is none, a read of seq and a wake of every sleeper
 * whose bit is in epoch_bits_since(from, the seq read).  A broadcast is a
 * CAS (state_broadcast), then one wake as a signal's when it found one
 * waiter pending, else a wake of every sleeper.  Every system call is a
 * step of its own.  One configuration has 2 epochs instead of 32, so that
 * bits alias within a few moves.
 *
 * When nothing can move: every waiter still asleep must be pending (a
 * signal or broadcast that counted it and returned nobody else lost a
 * wake-up); none may be one that was inside when a broadcast began; and,
 * where nobody is cancelled, the waiters that returned 0 must account for
 * every signal (model_matched).
 */
#define MODEL_WAITERS 4
#define MODEL_SIGNALS 4 /* the configuration's, then a cancelled waiter's */

enum { W_NONE, W_NEW, W_GOING, W_ASLEEP, W_LOOKING, W_RETURNED, W_TIMEDOUT };
enum { S_NONE, S_READY, S_COUNTED, S_READ, S_FALLBACK_READ, S_WAKE_SINCE, S_WAKE_EVERY, S_DONE };

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
	{ "4 waiters, broadcast and signal", 4, "bs", false, false, false, 32 },
	{ "4 waiters, 2 signals", 4, "ss", false, false, false, 32 },
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
	uint32_t registered[MODEL_WAITERS];
	uint8_t signal[MODEL_SIGNALS];
	uint8_t blocked[MODEL_SIGNALS];	     /* the waiters inside at its CAS, a bit each */
	uint8_t order[MODEL_SIGNALS];	     /* its CAS was the order[j]-th */
	uint8_t cases;			     /* CASes of signals so far */
	uint32_t signal_from[MODEL_SIGNALS]; /* the seq its CAS made */
	uint32_t signal_read[MODEL_SIGNALS]; /* the seq its next wake's mask is made with */
	uint8_t returned;		     /* the waiters that returned 0, a bit each */
	uint8_t pass_ons;		     /* hand-ons not yet done */
	bool cancelled;
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
	return m->waiter[i] == W_GOING || m->waiter[i] == W_ASLEEP || m->waiter[i] == W_LOOKING;
}

/* Every state is explored once: the orders that reach it again add
 * nothing.  A state is its fields packed into 192 bits, each in as many
 * bits as its values need (checked), a seq as its distance from the
 * start (five moves at most). */
#define MODEL_KEY 6
#define MODEL_SEEN (1u << 21)
static uint32_t (*model_seen)[MODEL_KEY + 1]; /* the key, and 1 once used */
static uint32_t model_start;
static int model_states;

struct model_key {
	uint32_t word[MODEL_KEY];
	int bit;
};

/* (Check's assertions report each place they pass to the parent
 * process, a system call each: the model's hot paths test by hand.) */
static void key_put(struct model_key *k, uint32_t value, int bits)
{
	if (value >= 1u << bits || k->bit + bits > 32 * MODEL_KEY)
		ck_abort_msg("model key: %u does not fit %d bits at %d", value, bits, k->bit);
	uint64_t wide = (uint64_t)value << (k->bit % 32);
	k->word[k->bit / 32] |= (uint32_t)wide;
	if (k->bit % 32 + bits > 32)
		k->word[k->bit / 32 + 1] |= (uint32_t)(wide >> 32);
	k->bit += bits;
}

static uint32_t model_seq(uint32_t seq)
{
	return (seq - model_start) & 15;
}

static bool model_first_visit(const struct model *m)
{
	struct model_key k = { { 0 }, 0 };
	key_put(&k, model_seq(state_seq(m->state)), 4);
	key_put(&k, state_pending(m->state), 3);
	key_put(&k, m->returned, MODEL_WAITERS);
	key_put(&k, m->pass_ons, 3);
	key_put(&k, m->cancelled, 1);
	for (int i = 0; i < MODEL_WAITERS; i++) {
		key_put(&k, m->waiter[i], 3);
		key_put(&k, m->woken[i] | m->handled[i] << 1 | m->handed_all[i] << 2 | m->owed[i] << 3, 4);
		key_put(&k, model_seq(m->registered[i]), 4);
	}
	for (int j = 0; j < MODEL_SIGNALS; j++) {
		key_put(&k, m->signal[j], 3);
		key_put(&k, m->blocked[j], MODEL_WAITERS);
		key_put(&k, m->order[j], 3);
		key_put(&k, model_seq(m->signal_from[j]), 4);
		key_put(&k, model_seq(m->signal_read[j]), 4);
	}
	uint32_t h = 2166136261u;
	for (int w = 0; w < MODEL_KEY; w++)
		h = (h ^ k.word[w]) * 16777619u;
	/* Ends: the table is never full (asserted below). */
	for (uint32_t slot = h % MODEL_SEEN;; slot = (slot + 1) % MODEL_SEEN) {
		if (!model_seen[slot][MODEL_KEY]) {
			memcpy(model_seen[slot], k.word, sizeof k.word);
			model_seen[slot][MODEL_KEY] = 1;
			if (++model_states >= (int)(MODEL_SEEN / 4 * 3))
				ck_abort_msg("model: more than %d states", model_states);
			return true;
		}
		if (memcmp(model_seen[slot], k.word, sizeof k.word) == 0)
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

static void model_return(struct model *m, int i)
{
	uint64_t next;
	m->waiter[i] = W_RETURNED;
	m->returned |= (uint8_t)(1u << i);
	int others = 0;
	for (int k = 0; k < MODEL_WAITERS; k++)
		others += model_inside(m, k);
	if (state_trim(m->state, (uint32_t)others, &next))
		m->state = next;
}

/* The waiters inside now, a bit each, for a signal's CAS (the next in
 * order). */
static void model_note_blocked(struct model *m, int j)
{
	m->blocked[j] = 0;
	for (int i = 0; i < MODEL_WAITERS; i++)
		if (model_inside(m, i))
			m->blocked[j] |= (uint8_t)(1u << i);
	m->order[j] = ++m->cases;
}

static void model_cancel(const struct model *m, int i)
{
	struct model n = *m;
	uint64_t next;
	n.waiter[i] = W_TIMEDOUT;
	n.cancelled = true;
	if (state_leave_unwoken(n.state, n.registered[i], &next)) {
		n.state = next;
		n.pass_ons += !n.handed_all[i];
		n.handed_all[i] = true;
	} else {
		n.signal[MODEL_SIGNALS - 1] = S_READY;
	}
	model_explore(n);
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
		} else {
			if (n.woken[i] && !n.handed_all[i]) {
				n.handed_all[i] = true;
				n.pass_ons++;
			}
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
				model_note_blocked(&n, j);
				n.state = next;
				n.signal_from[j] = state_seq(next);
				n.signal[j] = one ? S_COUNTED : S_WAKE_EVERY;
			}
		} else if (state_signal(n.state, &next)) {
			model_note_blocked(&n, j);
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
		/* count_wake_one: one sleeper its mask lets through, else a
		 * read of seq and a wake of every sleeper of the epochs since */
		n.signal[j] = S_DONE;
		uint32_t mask = model_wake_mask(m->signal_from[j], m->signal_read[j]);
		if (mask && model_wake_one(&n, mask))
			break;
		n.signal[j] = S_FALLBACK_READ;
		model_explore(n);
		break;
	case S_FALLBACK_READ:
		n.signal[j] = S_WAKE_SINCE;
		n.signal_read[j] = state_seq(n.state);
		model_explore(n);
		break;
	case S_WAKE_SINCE:
		n.signal[j] = S_DONE;
		model_wake_all(&n, model_bits_since(m->signal_from[j], m->signal_read[j]));
		model_explore(n);
		break;
	case S_WAKE_EVERY:
		n.signal[j] = S_DONE;
		model_wake_all(&n, 0xffffffffu);
		model_explore(n);
		break;
	}
}

/* POSIX: a signal unblocks at least one of the threads blocked on the
 * condition when it comes, and a thread it unblocks is blocked no more.
 * Taken in the order of their CASes, can each signal be given a waiter
 * that was inside at its CAS, not given to an earlier signal, and
 * returned 0 (or find none left to give)?  (A few signals: every choice
 * is tried.) */
static bool model_matched(const struct model *m, int turn, uint8_t unblocked)
{
	if (turn > m->cases)
		return true;
	int j = 0;
	while (j < MODEL_SIGNALS && m->order[j] != turn)
		j++;
	if (j == MODEL_SIGNALS || model_config->signals[j] == 'b')
		return model_matched(m, turn + 1, unblocked);
	uint8_t candidates = m->blocked[j] & (uint8_t)~unblocked;
	if (!candidates)
		return model_matched(m, turn + 1, unblocked);
	for (int i = 0; i < MODEL_WAITERS; i++)
		if ((candidates & m->returned) >> i & 1 && model_matched(m, turn + 1, unblocked | (uint8_t)(1u << i)))
			return true;
	return false;
}

static void model_check_quiet(const struct model *m)
{
	unsigned inside = 0, asleep = 0;
	for (int i = 0; i < MODEL_WAITERS; i++) {
		if (model_inside(m, i) && m->waiter[i] != W_ASLEEP)
			ck_abort_msg("%s: waiter %d stuck in state %d", model_config->name, i, m->waiter[i]);
		inside += model_inside(m, i);
		asleep += m->waiter[i] == W_ASLEEP;
		if (m->waiter[i] == W_ASLEEP && m->owed[i])
			ck_abort_msg("%s: lost wake-up: waiter %d asleep after a broadcast", model_config->name, i);
	}
	if (asleep > state_pending(m->state))
		ck_abort_msg("%s: lost wake-up: %u asleep, %u of them pending", model_config->name, asleep,
			     state_pending(m->state));
	if (state_pending(m->state) > inside)
		ck_abort_msg("%s: pending %u counts more than the %u inside", model_config->name,
			     state_pending(m->state), inside);
	if (!m->cancelled && !model_matched(m, 1, 0))
		ck_abort_msg("%s: lost wake-up: a signal returned none of the waiters there at its CAS",
			     model_config->name);
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
	for (int i = 0; i < MODEL_WAITERS; i++)
		if (m.waiter[i] >= W_NEW && m.waiter[i] <= W_LOOKING)
			any |= !model_may_start(&m, i, -1) || model_waiter_step(&m, i);
	for (int j = 0; j < MODEL_SIGNALS; j++)
		if (m.signal[j] != S_NONE && m.signal[j] != S_DONE) {
			if (model_may_start(&m, -1, j))
				model_signal_step(&m, j);
			any = true;
		}
	if (m.pass_ons > 0) {
		/* count_pass_on: a wake of every sleeper */
		struct model n = m;
		n.pass_ons--;
		model_wake_all(&n, 0xffffffffu);
		model_explore(n);
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
	tcase_set_timeout(tc, 120); /* about 1 s a configuration here, 3 under qemu-user */
	tcase_add_loop_test(tc, test_model, 0, sizeof model_configs / sizeof model_configs[0]);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
