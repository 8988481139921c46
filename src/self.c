#include <sys/mman.h>

#include "self.h"
#include "syscall.h"

__thread uint32_t self_tid_cache TLS_FAST;

/* Until self_init maps the page: a canary that never reads 0 (then only
 * the atfork handler notices a fork). */
static _Atomic uint32_t canary_unset = 1;
_Atomic uint32_t *fork_canary = &canary_unset;

void self_init(void)
{
	if (fork_canary != &canary_unset)
		return;
	long page = raw_syscall6(SYS_mmap, 0, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (page < 0 && page > -4096)
		return;
	if (raw_syscall6(SYS_madvise, page, 4096, MADV_WIPEONFORK, 0, 0, 0) != 0) {
		raw_syscall6(SYS_munmap, page, 4096, 0, 0, 0, 0); /* kernel before 4.14 */
		return;
	}
	_Atomic uint32_t *canary = (_Atomic uint32_t *)page;
	atomic_store_explicit(canary, 1, memory_order_relaxed);
	fork_canary = canary;
}

uint32_t self_tid_fetch(void)
{
	self_tid_cache = (uint32_t)raw_syscall6(SYS_gettid, 0, 0, 0, 0, 0, 0);
	/* In a fork child the only thread is this one: re-arm the canary. */
	if (atomic_load_explicit(fork_canary, memory_order_relaxed) == 0)
		atomic_store_explicit(fork_canary, 1, memory_order_relaxed);
	return self_tid_cache;
}

/* Only the forking thread survives in the child, and its TID changed. */
void self_forget_tid(void)
{
	self_tid_cache = 0;
}
