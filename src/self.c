#include <dlfcn.h>
#include <stddef.h>
#include <sys/mman.h>

#include "self.h"
#include "syscall.h"

__thread uint32_t self_tid_cache TLS_FAST;
uint32_t fork_parent_tid, fork_replica_tid;
uint32_t fork_generation;
uint16_t owner_code = 1;

/* Until self_init maps the page: a canary that never reads 0 (then only
 * the atfork handler notices a fork). */
static _Atomic uint32_t canary_unset = 1;
_Atomic uint32_t *fork_canary = &canary_unset;

long glibc_tid_offset;

/* glibc keeps {pid_t tid; pid_t unused; void *robust_prev;} right before
 * the robust-list head it registers for every thread. */
static void find_glibc_tid(void)
{
	void *head;
	size_t len;
	if (raw_syscall6(SYS_get_robust_list, 0, (long)&head, (long)&len, 0, 0, 0) != 0 || !head)
		return;
	const char *tp = __builtin_thread_pointer();
	const uint32_t *field = (const uint32_t *)((const char *)head - 16);
	long offset = (const char *)field - tp;
	if (offset != 0 && offset > -65536 && offset < 65536 &&
	    *field == (uint32_t)raw_syscall6(SYS_gettid, 0, 0, 0, 0, 0, 0))
		glibc_tid_offset = offset;
}

long rseq_cpu_offset;

/* glibc's rseq area: __rseq_offset from the thread pointer, cpu_id 4 bytes
 * in (the kernel's struct rseq); __rseq_size is 0 where registration
 * failed or was turned off. */
static void find_rseq_cpu(void)
{
	const ptrdiff_t *offset = dlsym(RTLD_DEFAULT, "__rseq_offset");
	const unsigned int *size = dlsym(RTLD_DEFAULT, "__rseq_size");
	if (offset && size && *size >= 8 && *offset + 4 != 0)
		rseq_cpu_offset = (long)(*offset + 4);
}

void self_init(void)
{
	if (rseq_cpu_offset == 0)
		find_rseq_cpu();
	if (glibc_tid_offset == 0)
		find_glibc_tid();
	/* The canary only backs the TLS cache, which self_tid then never uses. */
	if (glibc_tid_offset != 0 || fork_canary != &canary_unset)
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

/* The forking thread's TID, from just before fork() to the child's
 * handler. */
static uint32_t forking_tid;

void self_before_fork(void)
{
	forking_tid = self_tid();
}

void self_after_fork(void)
{
	/* Only the forking thread survives in the child, and its TID changed. */
	self_tid_cache = 0;
	fork_generation++;
	owner_code = (uint16_t)(fork_generation % UINT16_MAX + 1);
	fork_parent_tid = forking_tid;
	fork_replica_tid = self_tid();
}
