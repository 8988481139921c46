/*
 * channels: brokerless publish/subscribe.  8 channels, one writer each;
 * 32 readers, each subscribed to 4 of the 7 quiet channels (each written
 * every 5 ms); channel 1 is busy (written every 1 ms) and one reader in 8
 * subscribes to it as well.  So most readers do not care about most of
 * the traffic, which is where a single condition variable hurts.  A writer stamps its channel and wakes the readers; a reader
 * takes whatever is new on its channels and waits again.  Measured, per
 * variant:
 *
 *   global  one pthread condition variable and pthread_cond_broadcast:
 *           every reader wakes for every write (what POSIX alone offers)
 *   mask    rtpthread_cond_broadcast_mask_np with the channel's bit; the
 *           readers wait with rtpthread_cond_wait_mask_np and their mask
 *   any     one condition per channel; readers wait with
 *           rtpthread_cond_waitany_np on their 4 channels' conditions
 *   bitset  no pthread objects: a raw futex word, FUTEX_WAIT_BITSET with
 *           the reader's mask and FUTEX_WAKE_BITSET with the channel's
 *           bit (the floor: the kernel's filtering and nothing else)
 *
 * Metrics (VARIANT is the prefix): read latency (write stamp to the
 * reader seeing it) average and p99.9 in microseconds, reads/s, writes/s,
 * and the readers' voluntary context switches per read (getrusage
 * RUSAGE_THREAD; the writers sleep on a timer in every variant alike and
 * are left out).  mask and any need rtpthread (looked up with dlsym):
 * without it they print nan.
 *
 * usage: channels [-d seconds per variant] [-v variant,...]
 *
 * Writers run SCHED_FIFO 20, readers SCHED_FIFO 10 when granted, and the
 * program holds /dev/cpu_dma_latency at 0 while it runs, as cyclictest
 * does: an idle CPU then polls instead of halting, so a wake-up costs the
 * same whichever CPU it lands on and the variants differ by what they
 * wake, not by how deeply the CPUs slept.  The variants run one after
 * another in one process, each from a clean start.
 */
#include "common.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <linux/futex.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#define CHANNELS 8
#define READERS 32
#define BUSY_CHANNEL 1
#define PERIOD_NS 5000000ULL	  /* a quiet channel's write period */
#define BUSY_PERIOD_NS 1000000ULL /* the busy channel's */

/*
 * The order they run in: the two that every library runs come first, so
 * they are measured at the same time into every process, whether mask
 * and any run after them or print nan.  A VM can change speed for
 * seconds at a time: a variant run seconds later in one process than in
 * the other would be measured on another machine.
 */
enum variant { GLOBAL, BITSET, MASK, ANY, VARIANTS };
static const char *const variant_name[VARIANTS] = { "global", "bitset", "mask", "any" };

static int (*wait_mask)(pthread_cond_t *, pthread_mutex_t *, unsigned);
static int (*broadcast_mask)(pthread_cond_t *, unsigned);
static int (*waitany)(pthread_cond_t *const *, unsigned, pthread_mutex_t *, clockid_t,
		      const struct timespec *, unsigned *);

static struct {
	enum variant variant;
	pthread_mutex_t mutex;
	pthread_cond_t global;		  /* global, mask */
	pthread_cond_t channel[CHANNELS]; /* any */
	_Atomic uint32_t word;		  /* bitset: moves on at every write */
	/* Under mutex (global, mask, any), atomic for bitset. */
	_Atomic uint64_t seq[CHANNELS];
	_Atomic uint64_t stamp[CHANNELS]; /* now_ns() of the latest write */
	_Atomic int stop;
	_Atomic uint64_t writes;
} board;

struct reader {
	pthread_t thread;
	unsigned mask;
	uint64_t seen[CHANNELS];
	uint64_t reads;
	long switches;
	struct hist hist; /* ns */
};

static struct reader readers[READERS];

static long futex(_Atomic uint32_t *word, int op, uint32_t val, uint32_t bits)
{
	return syscall(SYS_futex, word, op | FUTEX_PRIVATE_FLAG, val, NULL, NULL, bits);
}

/* Takes what is new on r's channels; false if nothing was. */
static bool reader_take(struct reader *r)
{
	bool any = false;
	uint64_t now = now_ns();
	for (int k = 0; k < CHANNELS; k++) {
		if (!(r->mask >> k & 1))
			continue;
		uint64_t seq = atomic_load_explicit(&board.seq[k], memory_order_acquire);
		if (seq == r->seen[k])
			continue;
		uint64_t stamp = atomic_load_explicit(&board.stamp[k], memory_order_relaxed);
		r->seen[k] = seq;
		r->reads++;
		hist_add(&r->hist, now > stamp ? now - stamp : 0);
		any = true;
	}
	return any;
}

static void reader_wait_locked(struct reader *r)
{
	switch (board.variant) {
	case GLOBAL:
		pthread_cond_wait(&board.global, &board.mutex);
		break;
	case MASK:
		wait_mask(&board.global, &board.mutex, r->mask);
		break;
	case ANY: {
		pthread_cond_t *conds[CHANNELS];
		unsigned n = 0, index;
		for (int k = 0; k < CHANNELS; k++)
			if (r->mask >> k & 1)
				conds[n++] = &board.channel[k];
		waitany(conds, n, &board.mutex, CLOCK_MONOTONIC, NULL, &index);
		break;
	}
	default:
		break;
	}
}

static void *reader_main(void *arg)
{
	struct reader *r = arg;
	struct rusage before, after;
	set_fifo(10);
	getrusage(RUSAGE_THREAD, &before);
	if (board.variant == BITSET) {
		while (!atomic_load(&board.stop)) {
			uint32_t word = atomic_load_explicit(&board.word, memory_order_acquire);
			if (!reader_take(r))
				futex(&board.word, FUTEX_WAIT_BITSET, word, r->mask);
		}
	} else {
		pthread_mutex_lock(&board.mutex);
		while (!atomic_load(&board.stop))
			if (!reader_take(r))
				reader_wait_locked(r);
		pthread_mutex_unlock(&board.mutex);
	}
	getrusage(RUSAGE_THREAD, &after);
	r->switches = after.ru_nvcsw - before.ru_nvcsw;
	return NULL;
}

static void publish(int k)
{
	if (board.variant == BITSET) {
		atomic_store_explicit(&board.stamp[k], now_ns(), memory_order_relaxed);
		atomic_fetch_add_explicit(&board.seq[k], 1, memory_order_release);
		atomic_fetch_add_explicit(&board.word, 1, memory_order_release);
		futex(&board.word, FUTEX_WAKE_BITSET, INT_MAX, 1u << k);
		return;
	}
	pthread_mutex_lock(&board.mutex);
	atomic_store_explicit(&board.stamp[k], now_ns(), memory_order_relaxed);
	atomic_fetch_add_explicit(&board.seq[k], 1, memory_order_release);
	pthread_mutex_unlock(&board.mutex);
	if (board.variant == GLOBAL)
		pthread_cond_broadcast(&board.global);
	else if (board.variant == MASK)
		broadcast_mask(&board.global, 1u << k);
	else
		pthread_cond_broadcast(&board.channel[k]);
}

struct writer {
	pthread_t thread;
	int channel;
	uint64_t start, end;
};

static void *writer_main(void *arg)
{
	struct writer *w = arg;
	uint64_t period = w->channel == BUSY_CHANNEL ? BUSY_PERIOD_NS : PERIOD_NS;
	set_fifo(20);
	/* Phases spread over the period, so the writers do not all fire at once. */
	for (uint64_t t = w->start + (uint64_t)w->channel * PERIOD_NS / CHANNELS; t < w->end; t += period) {
		sleep_until_ns(t);
		publish(w->channel);
		atomic_fetch_add_explicit(&board.writes, 1, memory_order_relaxed);
	}
	return NULL;
}

/* 4 consecutive quiet channels, starting at a different one for each
 * reader (every quiet channel has 18 or 19 subscribers), and the busy
 * channel for one reader in 8. */
static unsigned reader_mask(int i)
{
	static const int quiet[CHANNELS - 1] = { 0, 2, 3, 4, 5, 6, 7 };
	unsigned mask = i % 8 == 0 ? 1u << BUSY_CHANNEL : 0;
	for (int j = 0; j < 4; j++)
		mask |= 1u << quiet[(i + j) % (CHANNELS - 1)];
	return mask;
}

static void run(enum variant v, double seconds)
{
	memset(&board, 0, sizeof board);
	board.variant = v;
	pthread_mutex_init(&board.mutex, NULL);
	pthread_cond_init(&board.global, NULL);
	for (int k = 0; k < CHANNELS; k++)
		pthread_cond_init(&board.channel[k], NULL);
	for (int i = 0; i < READERS; i++) {
		struct reader *r = &readers[i];
		memset(r, 0, sizeof *r);
		r->mask = reader_mask(i);
		hist_init(&r->hist);
		pthread_create(&r->thread, small_stack(), reader_main, r);
	}
	sleep_ns(50000000); /* every reader asleep */
	struct writer writers[CHANNELS];
	uint64_t start = now_ns() + 10000000, end = start + (uint64_t)(seconds * 1e9);
	for (int k = 0; k < CHANNELS; k++) {
		writers[k] = (struct writer){ .channel = k, .start = start, .end = end };
		pthread_create(&writers[k].thread, small_stack(), writer_main, &writers[k]);
	}
	for (int k = 0; k < CHANNELS; k++)
		pthread_join(writers[k].thread, NULL);
	uint64_t stopped = now_ns();

	/* Stop the readers: every variant's wake with every bit. */
	if (v != BITSET)
		pthread_mutex_lock(&board.mutex);
	atomic_store(&board.stop, 1);
	atomic_fetch_add(&board.word, 1);
	if (v != BITSET) {
		pthread_mutex_unlock(&board.mutex);
		pthread_cond_broadcast(&board.global);
		for (int k = 0; k < CHANNELS; k++)
			pthread_cond_broadcast(&board.channel[k]);
	}
	futex(&board.word, FUTEX_WAKE_BITSET, INT_MAX, FUTEX_BITSET_MATCH_ANY);

	struct hist all;
	hist_init(&all);
	uint64_t reads = 0;
	long switches = 0;
	for (int i = 0; i < READERS; i++) {
		pthread_join(readers[i].thread, NULL);
		hist_merge(&all, &readers[i].hist);
		reads += readers[i].reads;
		switches += readers[i].switches;
	}
	double elapsed = (stopped - start) / 1e9;
	char name[64];
	const char *p = variant_name[v];
	snprintf(name, sizeof name, "%s avg us", p);
	metric(name, all.n ? all.sum / (double)all.n / 1000.0 : 0);
	snprintf(name, sizeof name, "%s p99.9 us", p);
	metric(name, hist_quantile(&all, 0.999) / 1000.0);
	snprintf(name, sizeof name, "%s reads/s", p);
	metric(name, reads / elapsed);
	snprintf(name, sizeof name, "%s writes/s", p);
	metric(name, atomic_load(&board.writes) / elapsed);
	snprintf(name, sizeof name, "%s ctxsw/read", p);
	metric(name, reads ? (double)switches / (double)reads : 0);
}

int main(int argc, char **argv)
{
	double seconds = 2;
	const char *only = NULL;
	int opt;
	while ((opt = getopt(argc, argv, "d:v:")) != -1) {
		if (opt == 'd')
			seconds = arg_double(optarg, "-d");
		else if (opt == 'v')
			only = optarg;
		else {
			fprintf(stderr, "usage: channels [-d seconds per variant] [-v global,bitset,mask,any]\n");
			return 2;
		}
	}
	wait_mask = (typeof(wait_mask))dlsym(RTLD_DEFAULT, "rtpthread_cond_wait_mask_np");
	broadcast_mask = (typeof(broadcast_mask))dlsym(RTLD_DEFAULT, "rtpthread_cond_broadcast_mask_np");
	waitany = (typeof(waitany))dlsym(RTLD_DEFAULT, "rtpthread_cond_waitany_np");
	lock_memory();
	/* Kept open until exit: closing it drops the request. */
	int latency_fd = open("/dev/cpu_dma_latency", O_WRONLY);
	int32_t zero = 0;
	if (latency_fd >= 0 && write(latency_fd, &zero, sizeof zero) == sizeof zero)
		printf("# cpu_dma_latency: 0 (idle CPUs poll)\n");
	else
		printf("# cpu_dma_latency: not set (%s): idle CPUs may halt\n", strerror(errno));
	report_impl("pthread_cond_wait");
	for (int v = 0; v < VARIANTS; v++) {
		if (only && !strstr(only, variant_name[v]))
			continue;
		bool available = (v != MASK || (wait_mask && broadcast_mask)) && (v != ANY || waitany);
		if (!available) {
			char name[64];
			static const char *const metrics[] = { "avg us", "p99.9 us", "reads/s", "writes/s", "ctxsw/read" };
			for (int i = 0; i < 5; i++) {
				snprintf(name, sizeof name, "%s %s", variant_name[v], metrics[i]);
				metric(name, NAN);
			}
			continue;
		}
		run((enum variant)v, seconds);
	}
	report_sched();
	return 0;
}
