#include "self.h"
#include "syscall.h"

__thread uint32_t self_tid_cache TLS_FAST;

uint32_t self_tid_fetch(void)
{
	self_tid_cache = (uint32_t)raw_syscall6(SYS_gettid, 0, 0, 0, 0, 0, 0);
	return self_tid_cache;
}

/* Only the forking thread survives in the child, and its TID changed. */
void self_forget_tid(void)
{
	self_tid_cache = 0;
}
