/*
 * machine: the facts scripts/bench cannot read from /proc or /sys: the
 * timer frequency as measured against CLOCK_MONOTONIC, whether this
 * process may use real-time priorities and lock its memory, and what a
 * futex wake-up costs when the sleeper's CPU is the waker's own and when
 * it is another, idle one.
 *
 * The last decides how a requeue chain (one thread woken per mutex unlock)
 * compares with a herd (every thread woken by one call): each link of the
 * chain wakes a thread that the kernel places on an idle CPU if there is
 * one, so a chain of n costs about n idle wake-ups where a herd costs one.
 * On a VM whose idle vCPUs halt (no guest halt polling) that wake-up is
 * tens of microseconds.
 */
#include "common.h"

#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#define PING_ROUNDS 2000

/* Raw futexes: the measurement must not depend on whose pthread is loaded. */
static _Atomic int ping, pong;
static int partner_cpu;

static void futex_wait_while(_Atomic int *word, int value)
{
	while (atomic_load_explicit(word, memory_order_acquire) == value)
		syscall(SYS_futex, word, FUTEX_WAIT_PRIVATE, value, NULL, NULL, 0);
}

static void futex_post(_Atomic int *word)
{
	atomic_store_explicit(word, 1, memory_order_release);
	syscall(SYS_futex, word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

static void *partner(void *arg)
{
	(void)arg;
	pin_cpu(partner_cpu);
	for (int i = 0; i < PING_ROUNDS; i++) {
		futex_wait_while(&ping, 0);
		atomic_store_explicit(&ping, 0, memory_order_relaxed);
		futex_post(&pong);
	}
	return NULL;
}

/* Microseconds per one-way wake-up (half a ping-pong round trip between
 * this thread on CPU 0 and a partner on `cpu`), or -1. */
static double wake_us(int cpu)
{
	pthread_t t;
	partner_cpu = cpu;
	atomic_store(&ping, 0);
	atomic_store(&pong, 0);
	if (!pin_cpu(0) || pthread_create(&t, small_stack(), partner, NULL))
		return -1;
	usleep(10000);
	uint64_t t0 = now_ns();
	for (int i = 0; i < PING_ROUNDS; i++) {
		futex_post(&ping);
		futex_wait_while(&pong, 0);
		atomic_store_explicit(&pong, 0, memory_order_relaxed);
	}
	uint64_t t1 = now_ns();
	pthread_join(t, NULL);
	return (double)(t1 - t0) / 1e3 / PING_ROUNDS / 2;
}

int main(void)
{
	printf("timer_unit %s\n", TIMER_UNIT);
	printf("timer_mhz %.3f\n", timer_mhz());
	printf("cpus %d\n", ncpus());
	printf("rt_granted %s\n", set_fifo(1) ? "yes" : "no");
	set_other();
	int ok = mlockall(MCL_CURRENT) == 0;
	printf("mlockall %s\n", ok ? "yes" : strerror(errno));
	if (ok)
		munlockall();
	printf("wake_us_same_cpu %.1f\n", wake_us(0));
	if (ncpus() > 1)
		printf("wake_us_idle_cpu %.1f\n", wake_us(1));
	return 0;
}
