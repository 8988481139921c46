/*
 * pthread_once and call_once under concurrency, with initializers that
 * leave by pthread_exit (the cancellation path: the word goes back to
 * "never run") and threads at mixed priorities (SCHED_FIFO 10-30 where
 * allowed).
 *
 * Each round makes OBJECTS fresh once words (half used through
 * call_once) and starts THREADS callers; each calls every object, in its
 * own random order.  An initializer counts itself in, sleeps or spins a
 * little, and either leaves by pthread_exit (one time in EXIT_IN, while
 * the object has not completed) or completes.  Checked:
 *   - never two initializers of one object at a time;
 *   - a call returns only once an initializer of its object completed;
 *   - each object completes exactly once, and its word reads 2 (glibc's
 *     "done") at the end of the round;
 *   - a round ends within STUCK_MS of wall time and of the run clock
 *     (common.h): else a caller is stuck (a lost wake-up or a slot left
 *     held), and its state is shown.
 * The harness waits for its threads with pthread_join and sleeps, never
 * with the objects under test.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <threads.h>
#include <unistd.h>

#include "common.h"

#define OBJECTS 6
#define THREADS 6
#define EXIT_IN 4
#define STUCK_MS 10000

struct object {
	pthread_once_t once;
	_Atomic int busy;      /* initializers inside now */
	_Atomic int completed; /* initializers that returned */
	_Atomic int exits;     /* initializers that left by pthread_exit */
};

static struct object objects[OBJECTS];
static _Atomic int violations;
static char violation[256];

struct caller {
	pthread_t thread;
	_Atomic pid_t tid;
	_Atomic int finished;
	int prio;
	struct rng rng;
};

static __thread struct caller *self;
static __thread struct object *current;

static void violate(const char *what, int object)
{
	if (atomic_fetch_add(&violations, 1) == 0)
		snprintf(violation, sizeof violation, "object %d: %s", object, what);
}

static void initializer(void)
{
	struct object *o = current;
	int n = (int)(o - objects);
	if (atomic_fetch_add(&o->busy, 1) != 0)
		violate("two initializers at once", n);
	if (atomic_load(&o->completed) != 0)
		violate("an initializer ran after one completed", n);
	uint32_t r = rng_below(&self->rng, 100);
	if (r < 30)
		nap_us(rng_below(&self->rng, 200));
	else
		spin_ns(rng_below(&self->rng, 50000));
	if (rng_below(&self->rng, EXIT_IN) == 0) {
		atomic_fetch_add(&o->exits, 1);
		atomic_fetch_sub(&o->busy, 1);
		atomic_store(&self->finished, 1);
		pthread_exit(NULL);
	}
	atomic_fetch_add(&o->completed, 1);
	atomic_fetch_sub(&o->busy, 1);
}

static void *caller_main(void *arg)
{
	self = arg;
	atomic_store(&self->tid, (pid_t)syscall(SYS_gettid));
	if (self->prio)
		stress_set_priority(self->prio);
	int order[OBJECTS];
	for (int i = 0; i < OBJECTS; i++)
		order[i] = i;
	for (int i = OBJECTS - 1; i > 0; i--) {
		int j = (int)rng_below(&self->rng, (uint32_t)i + 1), t = order[i];
		order[i] = order[j];
		order[j] = t;
	}
	for (int i = 0; i < OBJECTS; i++) {
		struct object *o = &objects[order[i]];
		current = o;
		if (order[i] % 2) {
			call_once((once_flag *)&o->once, initializer);
		} else {
			int e = pthread_once(&o->once, initializer);
			if (e != 0)
				violate("pthread_once did not return 0", order[i]);
		}
		if (atomic_load(&o->completed) != 1)
			violate("a call returned before an initializer completed", order[i]);
	}
	atomic_store(&self->finished, 1);
	return NULL;
}

int main(void)
{
	stress_start("stress_once", 8);
	bool fifo = stress_fifo_or_note("callers at mixed SCHED_FIFO priorities");
	stress_start_run_clock();
	long rounds = 0, exits = 0;
	while (stress_running()) {
		memset(objects, 0, sizeof objects);
		struct caller callers[THREADS];
		for (int i = 0; i < THREADS; i++) {
			memset(&callers[i], 0, sizeof callers[i]);
			callers[i].prio = fifo ? 10 + 10 * (i % 3) : 0;
			rng_seed(&callers[i].rng, (uint64_t)rounds * THREADS + (uint64_t)i);
			if (pthread_create(&callers[i].thread, NULL, caller_main, &callers[i]) != 0)
				stress_fail("pthread_create failed");
		}
		struct moment start = stress_moment_now();
		for (int i = 0; i < THREADS; i++) {
			while (!atomic_load(&callers[i].finished)) {
				if (stress_lasted(start, stress_moment_now(), STUCK_MS)) {
					printf("round %ld: caller %d stuck\n", rounds, i);
					for (int k = 0; k < THREADS; k++)
						if (!atomic_load(&callers[k].finished))
							stress_print_task("caller", atomic_load(&callers[k].tid));
					for (int n = 0; n < OBJECTS; n++)
						printf("  object %d: word %#x, busy %d, completed %d, exits %d\n", n,
						       (unsigned)*(int *)&objects[n].once, atomic_load(&objects[n].busy),
						       atomic_load(&objects[n].completed), atomic_load(&objects[n].exits));
					stress_fail("a caller is stuck in a once call");
				}
				nap_us(1000);
			}
		}
		for (int i = 0; i < THREADS; i++)
			pthread_join(callers[i].thread, NULL);
		for (int n = 0; n < OBJECTS; n++) {
			exits += atomic_load(&objects[n].exits);
			/* Every caller may have left by pthread_exit: then nobody
			 * completed it, and the word is back to 0. */
			int word = *(int *)&objects[n].once, done = atomic_load(&objects[n].completed);
			if (!((done == 1 && word == 2) || (done == 0 && word == 0)))
				violate("completed count and word disagree at the end", n);
		}
		if (atomic_load(&violations))
			stress_fail("%s (%d violation(s), round %ld)", violation, atomic_load(&violations), rounds);
		rounds++;
	}
	printf("PASS: %ld rounds, %ld initializers left by pthread_exit, under %s\n", rounds, exits,
	       stress_library());
	return 0;
}
