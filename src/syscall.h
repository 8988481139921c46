/*
 * Raw system calls for the paths that must not touch errno or go through
 * the PLT: the futex and scheduler calls under our locks.  Each returns the
 * kernel's result, negative errno on failure, as musl's __syscall does.
 * Only 64-bit x86 and arm are supported: struct timespec is then the
 * kernel's __kernel_timespec, so timeouts pass through unchanged.
 */
#ifndef RTPTHREAD_SYSCALL_H
#define RTPTHREAD_SYSCALL_H

#include <sys/syscall.h>

#if defined(__x86_64__)
static inline long raw_syscall6(long n, long a, long b, long c, long d, long e, long f)
{
	long ret;
	register long r10 __asm__("r10") = d;
	register long r8 __asm__("r8") = e;
	register long r9 __asm__("r9") = f;
	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8), "r"(r9)
			 : "rcx", "r11", "memory");
	return ret;
}
#elif defined(__aarch64__)
static inline long raw_syscall6(long n, long a, long b, long c, long d, long e, long f)
{
	register long x8 __asm__("x8") = n;
	register long x0 __asm__("x0") = a;
	register long x1 __asm__("x1") = b;
	register long x2 __asm__("x2") = c;
	register long x3 __asm__("x3") = d;
	register long x4 __asm__("x4") = e;
	register long x5 __asm__("x5") = f;
	__asm__ volatile("svc 0"
			 : "+r"(x0)
			 : "r"(x8), "r"(x1), "r"(x2), "r"(x3), "r"(x4), "r"(x5)
			 : "memory");
	return x0;
}
#else
#error "rtpthread supports x86_64 and aarch64 only"
#endif

#endif
