/*
 * Contention statistics (stats.h).  A fixed table in static storage (no
 * allocation, ever), keyed by mutex address with linear probing: an
 * insert claims a free slot with one CAS, so lookups and updates take no
 * lock.  Counters are atomic adds; maxima are CAS loops that end as soon
 * as the stored value is at least ours (each failed CAS is another
 * thread's larger or newer value).  A lookup visits at most every slot
 * once; with the table full, new mutexes are not counted (the report
 * says how many were dropped).
 *
 * Each slot keeps the return address into the program of the lock call
 * that claimed it (stats_caller, one thread-local store per slow path),
 * resolved to a name only when a report at exit asks (dladdr is neither
 * cheap nor AS-safe).  Every counted wait also lands in one histogram of
 * power-of-two microsecond buckets, shared by all mutexes.
 *
 * The highest-priority waiter's longest wait is one 64-bit value,
 * priority << 56 | wait in ns (capped at 2^56 ns, over two years), so one
 * maximum keeps the pair: a higher priority wins, then a longer wait.
 */
#include <dlfcn.h>
#include <errno.h>
#include <poll.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "priority.h"
#include "stats.h"

#define STATS_SLOTS 1024
#define TOP_SHIFT 56
#define WAIT_MASK ((UINT64_C(1) << TOP_SHIFT) - 1)

bool stats_enabled;

void stats_enable(void)
{
	stats_enabled = true;
}
__thread const void *stats_caller TLS_FAST;

/* Bucket 0: under 1 us; bucket k: [2^(k-1), 2^k) us; the last: longer. */
#define HISTOGRAM_BUCKETS 32
static _Atomic uint64_t histogram[HISTOGRAM_BUCKETS];

struct stats_slot {
	_Atomic uintptr_t mutex; /* 0: free */
	_Atomic uintptr_t caller; /* the program's call that first waited */
	_Atomic int kind;
	_Atomic uint64_t contended, wait_total, wait_max, top, pi_boosts, requeued, owner_died;
};

static struct stats_slot slots[STATS_SLOTS];
static _Atomic uint64_t dropped;

static int64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void store_max(_Atomic uint64_t *p, uint64_t value)
{
	uint64_t old = atomic_load_explicit(p, memory_order_relaxed);
	while (old < value &&
	       !atomic_compare_exchange_weak_explicit(p, &old, value, memory_order_relaxed, memory_order_relaxed))
		;
}

/* m's slot, claimed if new; NULL if the table is full. */
static struct stats_slot *slot_of(struct mutex *m)
{
	uintptr_t key = (uintptr_t)m;
	unsigned start = (unsigned)((key >> 3) * 0x9e3779b1u) % STATS_SLOTS;
	for (unsigned i = 0; i < STATS_SLOTS; i++) {
		struct stats_slot *s = &slots[(start + i) % STATS_SLOTS];
		uintptr_t seen = atomic_load_explicit(&s->mutex, memory_order_acquire);
		if (seen == 0 && atomic_compare_exchange_strong_explicit(&s->mutex, &seen, key, memory_order_acq_rel,
									 memory_order_acquire)) {
			atomic_store_explicit(&s->kind, mutex_kind(m), memory_order_relaxed);
			atomic_store_explicit(&s->caller, (uintptr_t)stats_caller, memory_order_relaxed);
			return s;
		}
		if (seen == key)
			return s;
	}
	atomic_fetch_add_explicit(&dropped, 1, memory_order_relaxed);
	return NULL;
}

void stats_wait_begin(struct stats_wait *w, uint32_t owner, bool pi)
{
	if (w->start)
		return; /* the same lock call sleeps again */
	w->start = now_ns();
	w->owner = owner;
	w->priority = priority_wait_order();
	int owner_priority = pi && owner ? priority_order_of(owner) : -1;
	w->boost = pi && owner_priority >= 0 && w->priority > owner_priority;
}

void stats_wait_end(struct stats_wait *w, struct mutex *m)
{
	if (!w->start)
		return;
	struct stats_slot *s = slot_of(m);
	if (!s)
		return;
	uint64_t wait = (uint64_t)(now_ns() - w->start);
	if (wait > WAIT_MASK)
		wait = WAIT_MASK;
	atomic_fetch_add_explicit(&s->contended, 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&s->wait_total, wait, memory_order_relaxed);
	store_max(&s->wait_max, wait);
	int priority = w->priority < 0 ? 0 : w->priority > 255 ? 255 : w->priority;
	store_max(&s->top, (uint64_t)priority << TOP_SHIFT | wait);
	if (w->boost)
		atomic_fetch_add_explicit(&s->pi_boosts, 1, memory_order_relaxed);
	unsigned bucket = 0;
	for (uint64_t us = wait / 1000; us > 0 && bucket < HISTOGRAM_BUCKETS - 1; us >>= 1)
		bucket++;
	atomic_fetch_add_explicit(&histogram[bucket], 1, memory_order_relaxed);
}

/* ---- names: at exit, outside any handler ---- */

static char names[STATS_SLOTS][128];

void stats_resolve_names(void)
{
	for (unsigned i = 0; i < STATS_SLOTS; i++) {
		const void *caller = (const void *)atomic_load_explicit(&slots[i].caller, memory_order_relaxed);
		Dl_info info;
		names[i][0] = '\0';
		if (!atomic_load_explicit(&slots[i].mutex, memory_order_acquire) || caller == NULL ||
		    !dladdr(caller, &info) || info.dli_fname == NULL)
			continue;
		const char *object = strrchr(info.dli_fname, '/');
		object = object ? object + 1 : info.dli_fname;
		if (info.dli_sname != NULL && info.dli_saddr != NULL)
			snprintf(names[i], sizeof names[i], "%s+0x%lx (%s)", info.dli_sname,
				 (unsigned long)((const char *)caller - (const char *)info.dli_saddr), object);
		else
			snprintf(names[i], sizeof names[i], "%s+0x%lx", object,
				 (unsigned long)((const char *)caller - (const char *)info.dli_fbase));
	}
}

void stats_requeued(struct mutex *m, int count)
{
	struct stats_slot *s = count > 0 ? slot_of(m) : NULL;
	if (s)
		atomic_fetch_add_explicit(&s->requeued, (uint64_t)count, memory_order_relaxed);
}

void stats_owner_died(struct mutex *m)
{
	struct stats_slot *s = slot_of(m);
	if (s)
		atomic_fetch_add_explicit(&s->owner_died, 1, memory_order_relaxed);
}

static void slot_read(const struct stats_slot *s, struct rtpthread_mutex_stats *out)
{
	uint64_t top = atomic_load_explicit(&s->top, memory_order_relaxed);
	out->mutex = (const void *)atomic_load_explicit(&s->mutex, memory_order_acquire);
	out->kind = atomic_load_explicit(&s->kind, memory_order_relaxed) &
		    (KIND_TYPE_MASK | KIND_ROBUST | KIND_PI | KIND_PP | KIND_PSHARED);
	out->contended = atomic_load_explicit(&s->contended, memory_order_relaxed);
	out->wait_total_ns = atomic_load_explicit(&s->wait_total, memory_order_relaxed);
	out->wait_max_ns = atomic_load_explicit(&s->wait_max, memory_order_relaxed);
	out->top_priority = (int)(top >> TOP_SHIFT);
	out->top_wait_max_ns = top & WAIT_MASK;
	out->pi_boosts = atomic_load_explicit(&s->pi_boosts, memory_order_relaxed);
	out->requeued = atomic_load_explicit(&s->requeued, memory_order_relaxed);
	out->owner_died = atomic_load_explicit(&s->owner_died, memory_order_relaxed);
}

/* Weight for the order of the report: contention, then owner deaths and
 * requeues for mutexes that never waited. */
static uint64_t slot_weight(const struct stats_slot *s)
{
	return atomic_load_explicit(&s->contended, memory_order_relaxed) * 4 +
	       atomic_load_explicit(&s->owner_died, memory_order_relaxed) * 2 +
	       (atomic_load_explicit(&s->requeued, memory_order_relaxed) ? 1 : 0);
}

/* The slots in use, most contended first (selection: STATS_SLOTS is
 * small and this runs at exit or on request, never on a lock path). */
static unsigned sorted_slots(unsigned short *order)
{
	unsigned n = 0;
	for (unsigned i = 0; i < STATS_SLOTS; i++)
		if (atomic_load_explicit(&slots[i].mutex, memory_order_acquire))
			order[n++] = (unsigned short)i;
	for (unsigned i = 0; i < n; i++) {
		unsigned best = i;
		for (unsigned j = i + 1; j < n; j++)
			if (slot_weight(&slots[order[j]]) > slot_weight(&slots[order[best]]))
				best = j;
		unsigned short t = order[i];
		order[i] = order[best];
		order[best] = t;
	}
	return n;
}

unsigned stats_read(struct rtpthread_mutex_stats *out, unsigned max)
{
	unsigned short order[STATS_SLOTS]; /* per call: the report may run in a handler meanwhile */
	if (!stats_enabled)
		return 0;
	unsigned n = sorted_slots(order);
	if (n > max)
		n = max;
	for (unsigned i = 0; i < n; i++)
		slot_read(&slots[order[i]], &out[i]);
	return n;
}

/* ---- the report: a line buffer and integer formatting, no stdio ---- */

struct line {
	char text[256];
	unsigned length;
	unsigned stalls; /* times the output was not ready; see emit */
};

static void put(struct line *l, const char *s)
{
	while (*s && l->length < sizeof l->text - 1)
		l->text[l->length++] = *s++;
}

/* value right-aligned in width, in base 10 or 16 */
static void put_number(struct line *l, uint64_t value, unsigned width, unsigned base)
{
	char digits[24];
	unsigned n = 0;
	do {
		digits[n++] = "0123456789abcdef"[value % base];
		value /= base;
	} while (value && n < sizeof digits);
	while (width-- > n)
		put(l, " ");
	while (n > 0) {
		char c[2] = { digits[--n], 0 };
		put(l, c);
	}
}

/* 0x and the hex digits, right-aligned in width */
static void put_address(struct line *l, uintptr_t value, unsigned width)
{
	unsigned digits = 1;
	for (uintptr_t v = value >> 4; v; v >>= 4)
		digits++;
	while (width-- > digits + 2)
		put(l, " ");
	put(l, "0x");
	put_number(l, value, digits, 16);
}

/* ns as milliseconds with three decimals, right-aligned in width */
static void put_ms(struct line *l, uint64_t ns, unsigned width)
{
	uint64_t us = ns / 1000;
	put_number(l, us / 1000, width > 4 ? width - 4 : 1, 10);
	put(l, ".");
	put_number(l, us / 100 % 10, 1, 10);
	put_number(l, us / 10 % 10, 1, 10);
	put_number(l, us % 10, 1, 10);
}

/*
 * The report never blocks for long, in the destructor or in a signal
 * handler: before each write, poll says whether the output takes data
 * (stderr may be a blocking pipe nobody reads: we cannot make it
 * O_NONBLOCK, that flag is shared with every process holding it; our own
 * file is O_NONBLOCK anyway).  Each time it does not within
 * EMIT_STALL_MS, or a write finds it full (EAGAIN), is one stall; after
 * EMIT_STALLS stalls in a report, or on any error (a reader gone: POLLERR,
 * EPIPE), the rest of the report is dropped.  A line is at most 256
 * bytes, below PIPE_BUF: a pipe that polls writable takes it whole.
 */
#define EMIT_STALLS 3
#define EMIT_STALL_MS 20

static void emit(int fd, struct line *l)
{
	put(l, "\n");
	const char *p = l->text;
	unsigned n = l->length;
	l->length = 0;
	/* Ends: each turn writes at least one byte, or counts a stall (at
	 * most EMIT_STALLS per report), or gives up. */
	while (n > 0 && l->stalls < EMIT_STALLS) {
		struct pollfd out = { .fd = fd, .events = POLLOUT };
		int ready = poll(&out, 1, EMIT_STALL_MS);
		if (ready < 0 && errno != EINTR && errno != EAGAIN)
			break;
		if (ready <= 0) {
			l->stalls++;
			continue;
		}
		if (out.revents & (POLLERR | POLLHUP | POLLNVAL))
			break;
		ssize_t w = write(fd, p, n);
		if (w < 0 && (errno == EAGAIN || errno == EINTR)) {
			l->stalls++;
			continue;
		}
		if (w <= 0)
			break;
		p += w;
		n -= (unsigned)w;
	}
	if (n > 0)
		l->stalls = EMIT_STALLS; /* the rest of the report is dropped */
}

static void put_flags(struct line *l, int kind)
{
	static const char types[4] = { '-', 'r', 'e', 'a' };
	char f[6] = { types[kind & KIND_TYPE_MASK], kind & KIND_ROBUST ? 'R' : '-',
		      kind & KIND_PI ? 'I' : kind & KIND_PP ? 'P' : kind & KIND_DEFAULTED ? 'i' : '-', kind & KIND_PSHARED ? 's' : '-', ' ', 0 };
	put(l, f);
}

#define REPORT_ROWS 20

/* Microseconds with a unit: "512us", "4ms", "2s" (powers of two: exact
 * enough for bucket bounds). */
static void put_us(struct line *l, uint64_t us, unsigned width)
{
	const char *unit = "us";
	if (us >= 1000000) {
		us /= 1000000;
		unit = "s ";
	} else if (us >= 1000) {
		us /= 1000;
		unit = "ms";
	}
	put_number(l, us, width - 2, 10);
	put(l, unit);
}

/* One line per non-empty bucket, with a bar scaled to the fullest. */
static void report_histogram(int fd, struct line *l)
{
	uint64_t counts[HISTOGRAM_BUCKETS], most = 0;
	for (unsigned b = 0; b < HISTOGRAM_BUCKETS; b++) {
		counts[b] = atomic_load_explicit(&histogram[b], memory_order_relaxed);
		if (counts[b] > most)
			most = counts[b];
	}
	if (most == 0)
		return;
	put(l, "rtpthread: wait histogram, every counted wait:     from       to      waits");
	emit(fd, l);
	for (unsigned b = 0; b < HISTOGRAM_BUCKETS; b++) {
		if (counts[b] == 0)
			continue;
		put(l, "rtpthread:                                   ");
		put_us(l, b == 0 ? 0 : UINT64_C(1) << (b - 1), 8);
		if (b == HISTOGRAM_BUCKETS - 1)
			put(l, "    above");
		else
			put_us(l, UINT64_C(1) << b, 9);
		put_number(l, counts[b], 11, 10);
		put(l, " ");
		for (uint64_t n = (counts[b] * 40 + most - 1) / most; n > 0; n--)
			put(l, "#");
		emit(fd, l);
	}
}

void stats_report(int fd)
{
	unsigned short order[STATS_SLOTS];
	struct line l = { .length = 0 };
	unsigned n = sorted_slots(order);
	bool would_inherit = false;
	put(&l, "rtpthread: contention report: ");
	put_number(&l, n, 1, 10);
	put(&l, " mutexes contended, ");
	put_number(&l, atomic_load_explicit(&dropped, memory_order_relaxed), 1, 10);
	put(&l, " waits not counted (table full); most contended first:");
	emit(fd, &l);
	put(&l, "rtpthread:             Mutex  Contended  Total[ms]    Avg[ms]    Max[ms] TopPrio TopMax[ms] "
		"PI-boosts Requeued OwnerDied Flags First seen at");
	emit(fd, &l);
	for (unsigned i = 0; i < n && i < REPORT_ROWS; i++) {
		struct rtpthread_mutex_stats s;
		slot_read(&slots[order[i]], &s);
		put(&l, "rtpthread: ");
		put_address(&l, (uintptr_t)s.mutex, 18);
		put_number(&l, s.contended, 11, 10);
		put_ms(&l, s.wait_total_ns, 11);
		put_ms(&l, s.contended ? s.wait_total_ns / s.contended : 0, 11);
		put_ms(&l, s.wait_max_ns, 11);
		put_number(&l, (uint64_t)s.top_priority, 8, 10);
		put_ms(&l, s.top_wait_max_ns, 11);
		put_number(&l, s.pi_boosts, 10, 10);
		put_number(&l, s.requeued, 9, 10);
		put_number(&l, s.owner_died, 10, 10);
		put(&l, " ");
		int kind = atomic_load_explicit(&slots[order[i]].kind, memory_order_relaxed);
		would_inherit |= (kind & (KIND_DEFAULTED | KIND_PI | KIND_PP)) == KIND_DEFAULTED;
		put_flags(&l, kind);
		if (names[order[i]][0]) {
			put(&l, names[order[i]]);
		} else {
			uintptr_t caller = atomic_load_explicit(&slots[order[i]].caller, memory_order_relaxed);
			if (caller)
				put_address(&l, caller, 1);
		}
		emit(fd, &l);
	}
	put(&l, "rtpthread: Flags: type (- normal, r recursive, e errorcheck, a adaptive), R robust, "
		"I inherit / P protect, s process-shared.  Uncontended locks are not counted.");
	emit(fd, &l);
	report_histogram(fd, &l);
	if (!would_inherit)
		return;
	put(&l, "rtpthread: i: no protocol of its own under protocol=report; its PI-boosts are the waits "
		"by a thread above the owner, which inheritance would have bounded.");
	emit(fd, &l);
}

/* A fork child counts its own contention from zero: the parent's counts
 * are the parent's to report, and a report of both would count them
 * twice.  Only the calling thread exists. */
void stats_after_fork(void)
{
	if (!stats_enabled)
		return; /* all zero: spare the child copying the pages */
	for (unsigned i = 0; i < STATS_SLOTS; i++) {
		struct stats_slot *s = &slots[i];
		atomic_store_explicit(&s->mutex, 0, memory_order_relaxed);
		atomic_store_explicit(&s->kind, 0, memory_order_relaxed);
		atomic_store_explicit(&s->contended, 0, memory_order_relaxed);
		atomic_store_explicit(&s->wait_total, 0, memory_order_relaxed);
		atomic_store_explicit(&s->wait_max, 0, memory_order_relaxed);
		atomic_store_explicit(&s->top, 0, memory_order_relaxed);
		atomic_store_explicit(&s->pi_boosts, 0, memory_order_relaxed);
		atomic_store_explicit(&s->requeued, 0, memory_order_relaxed);
		atomic_store_explicit(&s->owner_died, 0, memory_order_relaxed);
	}
	atomic_store_explicit(&dropped, 0, memory_order_relaxed);
}
