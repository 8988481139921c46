/*
 * The exported once and static-initialization entry points (see
 * preload/symbols.c for the conventions): pthread_once and call_once at
 * glibc's versions, and the C++ ABI's __cxa_guard_* at libstdc++'s
 * CXXABI_1.3, which a versioned reference from g++-compiled code names.
 */
#include <pthread.h>
#include <threads.h>

#include "once.h"
#include "versions.h"

#pragma GCC diagnostic ignored "-Wmissing-prototypes"

/* glibc's objects (anchors: 4 bytes, static initializer 0); call_once
 * treats a once_flag as a pthread_once_t. */
_Static_assert(sizeof(pthread_once_t) == 4 && _Alignof(pthread_once_t) == 4, "pthread_once_t is glibc's int");
_Static_assert(sizeof(once_flag) == sizeof(pthread_once_t), "once_flag is a pthread_once_t");
_Static_assert(PTHREAD_ONCE_INIT == 0, "PTHREAD_ONCE_INIT is 0");

#define EXPORT(...) __attribute__((visibility("default"), __VA_ARGS__))
#define AT(symbol) symver(symbol)
#define STRING(x) #x
#define VERSION(v) STRING(v)

EXPORT(AT("pthread_once@@GLIBC_2.34"), AT("pthread_once@" VERSION(GLIBC_2_2_5)),
       AT("__pthread_once@" VERSION(GLIBC_2_2_5)))
int export_pthread_once(pthread_once_t *once, void (*init)(void))
{
	return rt_once(once, init);
}

/* call_once cannot report an error: a recursive call returns, as
 * pthread_once's EDEADLK does, instead of never returning. */
EXPORT(AT("call_once@@GLIBC_2.34"), AT("call_once@GLIBC_2.28"))
void export_call_once(once_flag *flag, void (*func)(void))
{
	rt_once((pthread_once_t *)flag, func);
}

EXPORT(AT("__cxa_guard_acquire@@CXXABI_1.3"))
int export_cxa_guard_acquire(uint64_t *guard)
{
	return rt_guard_acquire(guard);
}

EXPORT(AT("__cxa_guard_release@@CXXABI_1.3"))
void export_cxa_guard_release(uint64_t *guard)
{
	rt_guard_release(guard);
}

EXPORT(AT("__cxa_guard_abort@@CXXABI_1.3"))
void export_cxa_guard_abort(uint64_t *guard)
{
	rt_guard_abort(guard);
}
