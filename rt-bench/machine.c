/*
 * machine: the facts scripts/bench cannot read from /proc or /sys: the
 * timer frequency as measured against CLOCK_MONOTONIC, and whether this
 * process may use real-time priorities and lock its memory.
 */
#include "common.h"

#include <errno.h>
#include <string.h>
#include <sys/mman.h>

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
	return 0;
}
