/*
 * The pthread_rwlock_* entry points (src/rwlock.c), at glibc's versions:
 * the default at GLIBC_2.34, compat at GLIBC_2.2.5 (GLIBC_2.30 for the
 * clock variants, which appeared then), and the __pthread_rwlock_* compat
 * aliases glibc still exports.  A timed call without a deadline is EINVAL.
 */
#include <errno.h>
#include <pthread.h>
#include <time.h>

#include "rwlock.h"
#include "versions.h"

/* The export_* names are reachable only through their versioned aliases. */
#pragma GCC diagnostic ignored "-Wmissing-prototypes"

#define EXPORT(...) __attribute__((visibility("default"), __VA_ARGS__))
#define AT(symbol) symver(symbol)
#define STRING(x) #x
#define VERSION(v) STRING(v) /* VERSION(GLIBC_2_2_5): "GLIBC_2.2.5" or "GLIBC_2.17" */

EXPORT(AT("pthread_rwlock_init@@GLIBC_2.34"), AT("pthread_rwlock_init@" VERSION(GLIBC_2_2_5)), AT("__pthread_rwlock_init@" VERSION(GLIBC_2_2_5)))
int export_rwlock_init(pthread_rwlock_t *rw, const pthread_rwlockattr_t *attr)
{
	return rwlock_init(rwlock_of(rw), attr);
}

EXPORT(AT("pthread_rwlock_destroy@@GLIBC_2.34"), AT("pthread_rwlock_destroy@" VERSION(GLIBC_2_2_5)), AT("__pthread_rwlock_destroy@" VERSION(GLIBC_2_2_5)))
int export_rwlock_destroy(pthread_rwlock_t *rw)
{
	return rwlock_destroy(rwlock_of(rw));
}

EXPORT(AT("pthread_rwlock_rdlock@@GLIBC_2.34"), AT("pthread_rwlock_rdlock@" VERSION(GLIBC_2_2_5)), AT("__pthread_rwlock_rdlock@" VERSION(GLIBC_2_2_5)))
int export_rwlock_rdlock(pthread_rwlock_t *rw)
{
	return rwlock_rdlock(rwlock_of(rw), 0, CLOCK_REALTIME, NULL);
}

EXPORT(AT("pthread_rwlock_tryrdlock@@GLIBC_2.34"), AT("pthread_rwlock_tryrdlock@" VERSION(GLIBC_2_2_5)), AT("__pthread_rwlock_tryrdlock@" VERSION(GLIBC_2_2_5)))
int export_rwlock_tryrdlock(pthread_rwlock_t *rw)
{
	return rwlock_rdlock(rwlock_of(rw), 1, CLOCK_REALTIME, NULL);
}

EXPORT(AT("pthread_rwlock_timedrdlock@@GLIBC_2.34"), AT("pthread_rwlock_timedrdlock@" VERSION(GLIBC_2_2_5)))
int export_rwlock_timedrdlock(pthread_rwlock_t *restrict rw, const struct timespec *restrict deadline)
{
	return deadline ? rwlock_rdlock(rwlock_of(rw), 0, CLOCK_REALTIME, deadline) : EINVAL;
}

EXPORT(AT("pthread_rwlock_clockrdlock@@GLIBC_2.34"), AT("pthread_rwlock_clockrdlock@GLIBC_2.30"))
int export_rwlock_clockrdlock(pthread_rwlock_t *restrict rw, clockid_t clock, const struct timespec *restrict deadline)
{
	return deadline ? rwlock_rdlock(rwlock_of(rw), 0, clock, deadline) : EINVAL;
}

EXPORT(AT("pthread_rwlock_wrlock@@GLIBC_2.34"), AT("pthread_rwlock_wrlock@" VERSION(GLIBC_2_2_5)), AT("__pthread_rwlock_wrlock@" VERSION(GLIBC_2_2_5)))
int export_rwlock_wrlock(pthread_rwlock_t *rw)
{
	return rwlock_wrlock(rwlock_of(rw), 0, CLOCK_REALTIME, NULL);
}

EXPORT(AT("pthread_rwlock_trywrlock@@GLIBC_2.34"), AT("pthread_rwlock_trywrlock@" VERSION(GLIBC_2_2_5)), AT("__pthread_rwlock_trywrlock@" VERSION(GLIBC_2_2_5)))
int export_rwlock_trywrlock(pthread_rwlock_t *rw)
{
	return rwlock_wrlock(rwlock_of(rw), 1, CLOCK_REALTIME, NULL);
}

EXPORT(AT("pthread_rwlock_timedwrlock@@GLIBC_2.34"), AT("pthread_rwlock_timedwrlock@" VERSION(GLIBC_2_2_5)))
int export_rwlock_timedwrlock(pthread_rwlock_t *restrict rw, const struct timespec *restrict deadline)
{
	return deadline ? rwlock_wrlock(rwlock_of(rw), 0, CLOCK_REALTIME, deadline) : EINVAL;
}

EXPORT(AT("pthread_rwlock_clockwrlock@@GLIBC_2.34"), AT("pthread_rwlock_clockwrlock@GLIBC_2.30"))
int export_rwlock_clockwrlock(pthread_rwlock_t *restrict rw, clockid_t clock, const struct timespec *restrict deadline)
{
	return deadline ? rwlock_wrlock(rwlock_of(rw), 0, clock, deadline) : EINVAL;
}

EXPORT(AT("pthread_rwlock_unlock@@GLIBC_2.34"), AT("pthread_rwlock_unlock@" VERSION(GLIBC_2_2_5)), AT("__pthread_rwlock_unlock@" VERSION(GLIBC_2_2_5)))
int export_rwlock_unlock(pthread_rwlock_t *rw)
{
	return rwlock_unlock(rwlock_of(rw));
}

EXPORT(AT("pthread_rwlockattr_init@@GLIBC_2.34"), AT("pthread_rwlockattr_init@" VERSION(GLIBC_2_2_5)))
int export_rwlockattr_init(pthread_rwlockattr_t *attr)
{
	return rwlockattr_init(attr);
}

EXPORT(AT("pthread_rwlockattr_destroy@@GLIBC_2.34"), AT("pthread_rwlockattr_destroy@" VERSION(GLIBC_2_2_5)))
int export_rwlockattr_destroy(pthread_rwlockattr_t *attr)
{
	return rwlockattr_destroy(attr);
}

EXPORT(AT("pthread_rwlockattr_getpshared@@GLIBC_2.34"), AT("pthread_rwlockattr_getpshared@" VERSION(GLIBC_2_2_5)))
int export_rwlockattr_getpshared(const pthread_rwlockattr_t *restrict attr, int *restrict pshared)
{
	return rwlockattr_getpshared(attr, pshared);
}

EXPORT(AT("pthread_rwlockattr_setpshared@@GLIBC_2.34"), AT("pthread_rwlockattr_setpshared@" VERSION(GLIBC_2_2_5)))
int export_rwlockattr_setpshared(pthread_rwlockattr_t *attr, int pshared)
{
	return rwlockattr_setpshared(attr, pshared);
}

EXPORT(AT("pthread_rwlockattr_getkind_np@@GLIBC_2.34"), AT("pthread_rwlockattr_getkind_np@" VERSION(GLIBC_2_2_5)))
int export_rwlockattr_getkind_np(const pthread_rwlockattr_t *restrict attr, int *restrict kind)
{
	return rwlockattr_getkind(attr, kind);
}

EXPORT(AT("pthread_rwlockattr_setkind_np@@GLIBC_2.34"), AT("pthread_rwlockattr_setkind_np@" VERSION(GLIBC_2_2_5)))
int export_rwlockattr_setkind_np(pthread_rwlockattr_t *attr, int kind)
{
	return rwlockattr_setkind(attr, kind);
}
