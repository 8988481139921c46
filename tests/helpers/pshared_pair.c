/*
 * pshared_pair: process-shared objects between a process that has the
 * library and one that does not (docs/pshared.md has the rule).  Run it
 * under LD_PRELOAD=librtpthread; it maps a memfd shared and re-executes
 * itself without LD_PRELOAD (side "plain"), and checks that the library
 * is mapped on its own side ("lib") and not on the other.
 *
 * For every process-shared mutex kind (type x none/PI/PP x robust, but
 * robust PP, which glibc refuses to make), once made by each side:
 *   - both sides lock it 3000 times around a non-atomic counter
 *     (RECURSIVE ones twice), which must end at 6000;
 *   - one side holds it; the other sees trylock EBUSY, a 100 ms timedlock
 *     ETIMEDOUT, __owner naming the holder, EPERM unlocking it (kinds with
 *     an owner check), then blocks in a timed lock; the holder waits
 *     until the word shows a sleeper (and, PI, until its own priority is
 *     the waiter's; PP, its ceiling), unlocks, and the waiter must get it
 *     at once;
 *   - robust: a child of one side dies holding it while the other side
 *     sleeps on it: EOWNERDEAD, consistent, usable by both again; then
 *     dies again and the survivor unlocks without consistent: every lock
 *     on both sides is ENOTRECOVERABLE.
 * Then the rule for conditions and barriers: a process-shared condition
 * or barrier made by the plain side is refused by the library with
 * EINVAL at once (never a wait that misses glibc's wakes).
 *
 * Exit 0 pass, 1 fail, 77 skip (no SCHED_FIFO for the PP and PI checks).
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testlib.h"

#define ROUNDS 3000
#define CEILING 10
#define WAITER_PRIO 20
#define STEP_LIMIT_MS 30000

enum { LIB, PLAIN };
static const char *side_name[] = { "lib", "plain" };

struct shared {
	_Atomic int step[2];
	_Atomic int failures;
	_Atomic int waiting;
	_Atomic int child_holds;
	_Atomic int holder_tid;
	_Atomic int fifo; /* 1: SCHED_FIFO allowed */
	long counter;
	pthread_mutex_t m;
	pthread_cond_t c;
	pthread_barrier_t b;
	pthread_mutex_t cm;
};

static struct shared *sh;
static int side;
static int steps;
static const char *kind_name;

#define FAIL(...)                                                                              \
	do {                                                                                       \
		fprintf(stderr, "FAIL [%s, %s]: ", side_name[side], kind_name);                     \
		fprintf(stderr, __VA_ARGS__);                                                       \
		fputc('\n', stderr);                                                                \
		atomic_fetch_add(&sh->failures, 1);                                                 \
	} while (0)

#define EXPECT(call, want)                                                                     \
	do {                                                                                       \
		int got_ = (call);                                                                  \
		if (got_ != (want))                                                                 \
			FAIL("%s: %d (%s), expected %s", #call, got_, strerror(got_), #want);       \
	} while (0)

/* Both sides reach the same point; exits if the other side is stuck. */
static void meet(void)
{
	steps++;
	atomic_store(&sh->step[side], steps);
	int64_t end = now_ms() + STEP_LIMIT_MS;
	while (atomic_load(&sh->step[!side]) < steps) {
		if (now_ms() > end) {
			FAIL("the %s side never reached step %d (it is at %d)", side_name[!side], steps,
			     atomic_load(&sh->step[!side]));
			exit(1);
		}
		sleep_ms(1);
	}
}

static bool library_mapped(void)
{
	char line[512];
	FILE *f = fopen("/proc/self/maps", "r");
	bool found = false;
	if (!f)
		return false;
	while (!found && fgets(line, sizeof line, f))
		found = strstr(line, "librtpthread") != NULL;
	fclose(f);
	return found;
}

static int self_prio(void)
{
	long prio = 0;
	task_stat_field(gettid(), 18, &prio);
	return (int)prio;
}

/* Waits up to 5 s for cond() to hold. */
static bool wait_for(bool (*cond)(void))
{
	int64_t end = now_ms() + 5000;
	while (!cond()) {
		if (now_ms() > end)
			return false;
		sleep_ms(1);
	}
	return true;
}

struct kind {
	int type, protocol, robust;
};
static struct kind k;

static bool sleeper_in_word(void)
{
	unsigned word = atomic_load((_Atomic unsigned *)&sh->m.__data.__lock);
	if (k.protocol == PTHREAD_PRIO_INHERIT || k.robust)
		return word & 0x80000000u;
	return (word & 0x7ffffu) == 2; /* glibc's "held with sleepers", below a PP ceiling */
}

static bool boosted(void)
{
	return self_prio() == -1 - WAITER_PRIO;
}

static bool child_holds(void)
{
	return atomic_load(&sh->child_holds) != 0;
}

static void make_mutex(void)
{
	pthread_mutexattr_t a;
	pthread_mutexattr_init(&a);
	pthread_mutexattr_settype(&a, k.type);
	pthread_mutexattr_setprotocol(&a, k.protocol);
	if (k.protocol == PTHREAD_PRIO_PROTECT)
		pthread_mutexattr_setprioceiling(&a, CEILING);
	pthread_mutexattr_setrobust(&a, k.robust ? PTHREAD_MUTEX_ROBUST : PTHREAD_MUTEX_STALLED);
	pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
	EXPECT(pthread_mutex_init(&sh->m, &a), 0);
	pthread_mutexattr_destroy(&a);
}

static void counter_rounds(void)
{
	for (int i = 0; i < ROUNDS; i++) {
		EXPECT(pthread_mutex_lock(&sh->m), 0);
		if (k.type == PTHREAD_MUTEX_RECURSIVE)
			EXPECT(pthread_mutex_lock(&sh->m), 0);
		long v = sh->counter;
		if (i % 64 == 0)
			sched_yield();
		sh->counter = v + 1;
		if (k.type == PTHREAD_MUTEX_RECURSIVE)
			EXPECT(pthread_mutex_unlock(&sh->m), 0);
		EXPECT(pthread_mutex_unlock(&sh->m), 0);
	}
}

/* The holder's side of the hold-and-wait round. */
static void hold(void)
{
	EXPECT(pthread_mutex_lock(&sh->m), 0);
	if (k.type == PTHREAD_MUTEX_ERRORCHECK)
		EXPECT(pthread_mutex_lock(&sh->m), EDEADLK);
	atomic_store(&sh->holder_tid, gettid());
	if (k.protocol == PTHREAD_PRIO_PROTECT && self_prio() != -1 - CEILING)
		FAIL("holding a PP mutex at priority %d, not the ceiling's %d", self_prio(), -1 - CEILING);
	meet(); /* A: held */
	meet(); /* B: the waiter's checks are done, it goes to sleep */
	if (!wait_for(sleeper_in_word))
		FAIL("no sleeper in the word after 5 s (word %#x)", sh->m.__data.__lock);
	if (k.protocol == PTHREAD_PRIO_INHERIT && atomic_load(&sh->fifo) && !wait_for(boosted))
		FAIL("not boosted by the PI waiter: priority %d, expected %d", self_prio(), -1 - WAITER_PRIO);
	EXPECT(pthread_mutex_unlock(&sh->m), 0);
	meet(); /* C */
}

static void wait_on_holder(void)
{
	meet(); /* A */
	EXPECT(pthread_mutex_trylock(&sh->m), EBUSY);
	struct timespec soon = deadline_in_ms(CLOCK_REALTIME, 100);
	EXPECT(pthread_mutex_timedlock(&sh->m, &soon), ETIMEDOUT);
	if (sh->m.__data.__owner != atomic_load(&sh->holder_tid))
		FAIL("__owner is %d, the holder is %d", sh->m.__data.__owner, atomic_load(&sh->holder_tid));
	bool owner_checked = k.type == PTHREAD_MUTEX_ERRORCHECK || k.type == PTHREAD_MUTEX_RECURSIVE || k.robust ||
			     k.protocol == PTHREAD_PRIO_INHERIT;
	if (owner_checked)
		EXPECT(pthread_mutex_unlock(&sh->m), EPERM);
	bool fifo = k.protocol == PTHREAD_PRIO_INHERIT && atomic_load(&sh->fifo);
	struct sched_param high = { .sched_priority = WAITER_PRIO }, none = { .sched_priority = 0 };
	if (fifo && sched_setscheduler(0, SCHED_FIFO, &high) != 0)
		FAIL("SCHED_FIFO %d: %s", WAITER_PRIO, strerror(errno));
	meet(); /* B */
	int64_t start = now_ms();
	struct timespec later = deadline_in_ms(CLOCK_REALTIME, 10000);
	EXPECT(pthread_mutex_timedlock(&sh->m, &later), 0);
	if (now_ms() - start > 8000)
		FAIL("woken %lld ms after the lock began", (long long)(now_ms() - start));
	if (fifo)
		sched_setscheduler(0, SCHED_OTHER, &none);
	EXPECT(pthread_mutex_unlock(&sh->m), 0);
	meet(); /* C */
}

/* A child of this side takes the mutex and dies with it, once the other
 * side sleeps on it (if sleeper) or at once. */
static void die_holding(bool sleeper)
{
	atomic_store(&sh->child_holds, 0);
	pid_t child = fork();
	if (child == 0) {
		if (pthread_mutex_lock(&sh->m) != 0)
			_exit(2);
		atomic_store(&sh->child_holds, 1);
		if (sleeper)
			pause();
		_exit(0);
	}
	if (!wait_for(child_holds))
		FAIL("the child never took the mutex");
	meet(); /* D: the child holds it */
	if (sleeper && !wait_for(sleeper_in_word))
		FAIL("no sleeper in the word after 5 s (word %#x)", sh->m.__data.__lock);
	if (sleeper)
		kill(child, SIGKILL);
	int status;
	waitpid(child, &status, 0);
	meet(); /* E: the child is gone */
}

static void robust_rounds(bool killer)
{
	/* The owner dies while the survivor sleeps: EOWNERDEAD, then repaired. */
	if (killer) {
		die_holding(true);
		meet(); /* F: the survivor made it consistent */
		EXPECT(pthread_mutex_lock(&sh->m), 0);
		EXPECT(pthread_mutex_unlock(&sh->m), 0);
	} else {
		meet(); /* D */
		struct timespec later = deadline_in_ms(CLOCK_REALTIME, 10000);
		EXPECT(pthread_mutex_timedlock(&sh->m, &later), EOWNERDEAD);
		if (sh->m.__data.__owner != INT_MAX)
			FAIL("__owner %d after EOWNERDEAD, expected INT_MAX", sh->m.__data.__owner);
		EXPECT(pthread_mutex_consistent(&sh->m), 0);
		EXPECT(pthread_mutex_unlock(&sh->m), 0);
		meet(); /* E */
		meet(); /* F */
	}
	meet(); /* G */
	/* The owner dies, the survivor gives up: not recoverable for both. */
	if (killer) {
		die_holding(false);
	} else {
		meet(); /* D */
		meet(); /* E */
		EXPECT(pthread_mutex_lock(&sh->m), EOWNERDEAD);
		EXPECT(pthread_mutex_unlock(&sh->m), 0);
		EXPECT(pthread_mutex_lock(&sh->m), ENOTRECOVERABLE);
	}
	meet(); /* H */
	/* Lock before trylock: glibc 2.36's robust trylock returns
	 * ENOTRECOVERABLE but leaves the word held by the caller, and its
	 * lock would then sleep for ever. */
	EXPECT(pthread_mutex_lock(&sh->m), ENOTRECOVERABLE);
	EXPECT(pthread_mutex_trylock(&sh->m), ENOTRECOVERABLE);
	meet(); /* I */
}

static void run_kind(int maker)
{
	if (side == maker)
		make_mutex();
	meet();
	counter_rounds();
	meet();
	if (side == maker) {
		if (sh->counter != 2 * ROUNDS)
			FAIL("counter %ld after 2 x %d locked increments", sh->counter, ROUNDS);
		sh->counter = 0;
	}
	meet();
	if (side == maker)
		hold();
	else
		wait_on_holder();
	if (k.robust)
		robust_rounds(side == maker);
	meet();
	if (side == maker) {
		unsigned word = sh->m.__data.__lock;
		int owner = sh->m.__data.__owner;
		int r = pthread_mutex_destroy(&sh->m);
		if (r != 0)
			FAIL("destroy: %s (word %#x, __owner %d)", strerror(r), word, owner);
	}
	meet();
}

/* Conditions and barriers made by the plain side: the library refuses
 * them at once. */
static void foreign_cond_and_barrier(void)
{
	kind_name = "glibc's process-shared condition and barrier";
	if (side == PLAIN) {
		pthread_condattr_t ca;
		pthread_condattr_init(&ca);
		pthread_condattr_setpshared(&ca, PTHREAD_PROCESS_SHARED);
		EXPECT(pthread_cond_init(&sh->c, &ca), 0);
		pthread_barrierattr_t ba;
		pthread_barrierattr_init(&ba);
		pthread_barrierattr_setpshared(&ba, PTHREAD_PROCESS_SHARED);
		EXPECT(pthread_barrier_init(&sh->b, &ba, 2), 0);
		pthread_mutexattr_t ma;
		pthread_mutexattr_init(&ma);
		pthread_mutexattr_setpshared(&ma, PTHREAD_PROCESS_SHARED);
		EXPECT(pthread_mutex_init(&sh->cm, &ma), 0);
	}
	meet();
	if (side == LIB) {
		EXPECT(pthread_mutex_lock(&sh->cm), 0);
		int64_t start = now_ms();
		struct timespec later = deadline_in_ms(CLOCK_REALTIME, 2000);
		EXPECT(pthread_cond_timedwait(&sh->c, &sh->cm, &later), EINVAL);
		if (now_ms() - start > 1000)
			FAIL("the refused wait took %lld ms", (long long)(now_ms() - start));
		EXPECT(pthread_mutex_unlock(&sh->cm), 0);
		EXPECT(pthread_cond_signal(&sh->c), EINVAL);
		EXPECT(pthread_cond_broadcast(&sh->c), EINVAL);
		EXPECT(pthread_barrier_wait(&sh->b), EINVAL);
	}
	meet();
}

static const char *type_names[] = { "normal", "recursive", "errorcheck", "adaptive" };
static const char *protocol_names[] = { "", " PI", " PP" };

static int run(void)
{
	char name[64];
	bool skipped_fifo = false;
	for (int protocol = 0; protocol < 3; protocol++) {
		if (protocol == PTHREAD_PRIO_PROTECT) {
			/* PP needs a real-time caller (glibc refuses others). */
			if (!atomic_load(&sh->fifo)) {
				skipped_fifo = true;
				continue;
			}
			struct sched_param low = { .sched_priority = 1 };
			if (sched_setscheduler(0, SCHED_FIFO, &low) != 0) {
				kind_name = "PP";
				FAIL("SCHED_FIFO 1: %s", strerror(errno));
			}
		}
		for (int robust = 0; robust < 2; robust++) {
			if (robust && protocol == PTHREAD_PRIO_PROTECT)
				continue;
			for (int type = 0; type < 4; type++) {
				k = (struct kind){ type, protocol, robust };
				for (int maker = LIB; maker <= PLAIN; maker++) {
					snprintf(name, sizeof name, "%s%s%s, made by %s", type_names[type],
						 protocol_names[protocol], robust ? " robust" : "", side_name[maker]);
					kind_name = name;
					run_kind(maker);
				}
			}
		}
	}
	foreign_cond_and_barrier();
	return skipped_fifo ? 77 : 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && strcmp(argv[1], "--plain") == 0) {
		side = PLAIN;
		kind_name = "start";
		int fd = atoi(argv[2]);
		sh = mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (sh == MAP_FAILED)
			return 1;
		if (library_mapped()) {
			FAIL("the library is mapped in the process that should not have it");
			return 1;
		}
		run();
		return 0;
	}

	side = LIB;
	kind_name = "start";
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!library_mapped()) {
		fprintf(stderr, "FAIL: run me with LD_PRELOAD=librtpthread.so.1\n");
		return 1;
	}
	int fd = memfd_create("pshared_pair", 0);
	if (fd < 0 || ftruncate(fd, sizeof *sh) != 0)
		return 1;
	sh = mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (sh == MAP_FAILED)
		return 1;
	struct sched_param p = { .sched_priority = 1 }, none = { .sched_priority = 0 };
	if (sched_setscheduler(0, SCHED_FIFO, &p) == 0) {
		atomic_store(&sh->fifo, 1);
		sched_setscheduler(0, SCHED_OTHER, &none);
	}

	pid_t child = fork();
	if (child == 0) {
		char fdarg[16];
		snprintf(fdarg, sizeof fdarg, "%d", fd);
		unsetenv("LD_PRELOAD");
		execl("/proc/self/exe", argv[0], "--plain", fdarg, (char *)NULL);
		_exit(127);
	}
	int rc = run();
	int status = 0;
	waitpid(child, &status, 0);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		fprintf(stderr, "FAIL: the plain side exited with status %#x\n", status);
		return 1;
	}
	if (atomic_load(&sh->failures)) {
		fprintf(stderr, "FAIL: %d check(s) failed\n", atomic_load(&sh->failures));
		return 1;
	}
	if (rc == 77) {
		printf("SKIP: SCHED_FIFO refused: the PP kinds and the PI boost were not run\n");
		return 77;
	}
	printf("PASS: every process-shared mutex kind between a process with the library and one without, "
	       "both ways; glibc's conditions and barriers refused\n");
	return 0;
}
