/*
 * The exported POSIX and C11 entry points.  Each is a thin dispatch to src/
 * and carries glibc's symbol versions (see librtpthread.map): the default
 * version where glibc has its default, compat versions for older binaries.
 * Every entry point works before our constructor has run.
 *
 * The versions are x86_64's names; VERSION() gives this architecture's
 * name for the ones older than aarch64's GLIBC_2.17 baseline (versions.h).
 *
 * pthread_cond_*@GLIBC_2.2.5, the pre-2002 condition ABI, is in
 * cond_compat.c; pthread_once, call_once and the C++ guards in once.c.
 */
#include <errno.h>
#include <pthread.h>
#include <threads.h>

#include "api.h"
#include "clock.h"
#include "mutex.h"
#include "probe.h"
#include "stats.h"
#include "rtpthread.h"
#include "versions.h"

/* The export_* names are reachable only through their versioned aliases. */
#pragma GCC diagnostic ignored "-Wmissing-prototypes"

#define EXPORT(...) __attribute__((visibility("default"), __VA_ARGS__))
#define AT(symbol) symver(symbol)
#define STRING(x) #x
#define VERSION(v) STRING(v) /* VERSION(GLIBC_2_2_5): "GLIBC_2.2.5" or "GLIBC_2.17" */

EXPORT(AT("rtpthread_version@@RTPTHREAD_1"))
const char *export_rtpthread_version(void)
{
	return RTPTHREAD_VERSION; /* the VERSION file, from the Makefile */
}

EXPORT(AT("rtpthread_mutex_stats@@RTPTHREAD_1"))
unsigned export_rtpthread_mutex_stats(struct rtpthread_mutex_stats *out, unsigned max)
{
	return stats_read(out, max);
}

EXPORT(AT("rtpthread_cond_wait_mask_np@@RTPTHREAD_1"))
int export_rtpthread_cond_wait_mask_np(pthread_cond_t *c, pthread_mutex_t *m, unsigned mask)
{
	return rt_cond_wait_mask(c, m, mask, CLOCK_REALTIME, NULL, 0);
}

/* A timed wait without a deadline is EINVAL, as for the POSIX calls. */
EXPORT(AT("rtpthread_cond_timedwait_mask_np@@RTPTHREAD_1"))
int export_rtpthread_cond_timedwait_mask_np(pthread_cond_t *c, pthread_mutex_t *m, unsigned mask,
					    const struct timespec *deadline)
{
	return deadline ? rt_cond_wait_mask(c, m, mask, CLOCK_REALTIME, deadline, 1) : EINVAL;
}

EXPORT(AT("rtpthread_cond_clockwait_mask_np@@RTPTHREAD_1"))
int export_rtpthread_cond_clockwait_mask_np(pthread_cond_t *c, pthread_mutex_t *m, unsigned mask,
					    clockid_t clock, const struct timespec *deadline)
{
	return deadline ? rt_cond_wait_mask(c, m, mask, clock, deadline, 0) : EINVAL;
}

EXPORT(AT("rtpthread_cond_signal_mask_np@@RTPTHREAD_1"))
int export_rtpthread_cond_signal_mask_np(pthread_cond_t *c, unsigned mask)
{
	return rt_cond_signal_mask(c, mask);
}

EXPORT(AT("rtpthread_cond_broadcast_mask_np@@RTPTHREAD_1"))
int export_rtpthread_cond_broadcast_mask_np(pthread_cond_t *c, unsigned mask)
{
	return rt_cond_broadcast_mask(c, mask);
}

EXPORT(AT("rtpthread_cond_waitany_np@@RTPTHREAD_1"))
int export_rtpthread_cond_waitany_np(pthread_cond_t *const *conds, unsigned count, pthread_mutex_t *m,
				     clockid_t clock, const struct timespec *deadline, unsigned *index)
{
	return rt_cond_waitany(conds, count, m, clock, deadline, index);
}

/* The operations that carry glibc's probes (probe.h), shared by the POSIX
 * and C11 entry points. */
/* The uncontended lock: the probes' nops and mutex.h's fast path; the
 * slow path fires "acquired" itself, so this is a tail call. */
static inline __attribute__((always_inline)) int probed_lock(pthread_mutex_t *m)
{
	PROBE1(mutex_entry, m);
	if (mutex_take_free(mutex_of(m))) {
		PROBE1(mutex_acquired, m);
		return 0;
	}
	return mutex_lock_untimed(mutex_of(m));
}

/* A timed lock without a deadline: EINVAL where it would block (NPTL
 * crashes or blocks for ever); a free mutex is taken, as with any bad
 * deadline. */
static inline __attribute__((always_inline)) int probed_timedlock(pthread_mutex_t *m, clockid_t clock,
								 const struct timespec *deadline)
{
	if (!deadline) {
		int r = mutex_trylock(mutex_of(m));
		return r == EBUSY ? EINVAL : r;
	}
	PROBE2(mutex_timedlock_entry, m, deadline);
	if (mutex_take_free(mutex_of(m))) {
		PROBE1(mutex_timedlock_acquired, m);
		return 0;
	}
	return mutex_lock_slow(mutex_of(m), clock, deadline);
}

static inline __attribute__((always_inline)) int probed_unlock(pthread_mutex_t *m)
{
	PROBE1(mutex_release, m);
	return mutex_unlock(mutex_of(m));
}

static inline __attribute__((always_inline)) int probed_cond_wait(pthread_cond_t *c, pthread_mutex_t *m)
{
	PROBE2(cond_wait, c, m);
	return rt_cond_wait(c, m, CLOCK_REALTIME, NULL, 0);
}

/* A timed wait without a deadline is EINVAL (NPTL crashes or blocks). */
static inline __attribute__((always_inline)) int probed_cond_timedwait(pthread_cond_t *c, pthread_mutex_t *m,
								      clockid_t clock,
								      const struct timespec *deadline,
								      int use_attr_clock)
{
	if (!deadline)
		return EINVAL;
	PROBE3(cond_timedwait, c, m, deadline);
	return rt_cond_wait(c, m, clock, deadline, use_attr_clock);
}

static inline __attribute__((always_inline)) int probed_cond_signal(pthread_cond_t *c)
{
	PROBE1(cond_signal, c);
	return rt_cond_signal(c);
}

static inline __attribute__((always_inline)) int probed_cond_broadcast(pthread_cond_t *c)
{
	PROBE1(cond_broadcast, c);
	return rt_cond_broadcast(c);
}

/* Mutexes */

EXPORT(AT("pthread_mutex_init@@" VERSION(GLIBC_2_2_5)), AT("__pthread_mutex_init@" VERSION(GLIBC_2_2_5)))
int export_mutex_init(pthread_mutex_t *m, const pthread_mutexattr_t *attr)
{
	PROBE1(mutex_init, m);
	return mutex_init(mutex_of(m), attr);
}

EXPORT(AT("pthread_mutex_destroy@@" VERSION(GLIBC_2_2_5)), AT("__pthread_mutex_destroy@" VERSION(GLIBC_2_2_5)))
int export_mutex_destroy(pthread_mutex_t *m)
{
	PROBE1(mutex_destroy, m);
	return mutex_destroy(mutex_of(m));
}

EXPORT(AT("pthread_mutex_lock@@" VERSION(GLIBC_2_2_5)), AT("__pthread_mutex_lock@" VERSION(GLIBC_2_2_5)))
int export_mutex_lock(pthread_mutex_t *m)
{
	return probed_lock(m);
}

EXPORT(AT("pthread_mutex_trylock@@GLIBC_2.34"), AT("pthread_mutex_trylock@" VERSION(GLIBC_2_2_5)),
       AT("__pthread_mutex_trylock@" VERSION(GLIBC_2_2_5)))
int export_mutex_trylock(pthread_mutex_t *m)
{
	return mutex_trylock(mutex_of(m));
}

EXPORT(AT("pthread_mutex_timedlock@@GLIBC_2.34"), AT("pthread_mutex_timedlock@" VERSION(GLIBC_2_2_5)))
int export_mutex_timedlock(pthread_mutex_t *m, const struct timespec *deadline)
{
	return probed_timedlock(m, CLOCK_REALTIME, deadline);
}

EXPORT(AT("pthread_mutex_clocklock@@GLIBC_2.34"), AT("pthread_mutex_clocklock@GLIBC_2.30"))
int export_mutex_clocklock(pthread_mutex_t *m, clockid_t clock, const struct timespec *deadline)
{
	if (!clock_supported(clock))
		return EINVAL;
	return probed_timedlock(m, clock, deadline);
}

EXPORT(AT("pthread_mutex_unlock@@" VERSION(GLIBC_2_2_5)), AT("__pthread_mutex_unlock@" VERSION(GLIBC_2_2_5)))
int export_mutex_unlock(pthread_mutex_t *m)
{
	return probed_unlock(m);
}

EXPORT(AT("pthread_mutex_consistent@@GLIBC_2.34"), AT("pthread_mutex_consistent@" VERSION(GLIBC_2_12)),
       AT("pthread_mutex_consistent_np@" VERSION(GLIBC_2_4)))
int export_mutex_consistent(pthread_mutex_t *m)
{
	return mutex_consistent(mutex_of(m));
}

EXPORT(AT("pthread_mutex_getprioceiling@@GLIBC_2.34"), AT("pthread_mutex_getprioceiling@" VERSION(GLIBC_2_4)))
int export_mutex_getprioceiling(const pthread_mutex_t *m, int *ceiling)
{
	return rt_mutex_getprioceiling(m, ceiling);
}

EXPORT(AT("pthread_mutex_setprioceiling@@GLIBC_2.34"), AT("pthread_mutex_setprioceiling@" VERSION(GLIBC_2_4)))
int export_mutex_setprioceiling(pthread_mutex_t *m, int ceiling, int *old_ceiling)
{
	return rt_mutex_setprioceiling(m, ceiling, old_ceiling);
}

/* Mutex attributes */

EXPORT(AT("pthread_mutexattr_init@@GLIBC_2.34"), AT("pthread_mutexattr_init@" VERSION(GLIBC_2_2_5)),
       AT("__pthread_mutexattr_init@" VERSION(GLIBC_2_2_5)))
int export_mutexattr_init(pthread_mutexattr_t *attr)
{
	return rt_mutexattr_init(attr);
}

EXPORT(AT("pthread_mutexattr_destroy@@GLIBC_2.34"), AT("pthread_mutexattr_destroy@" VERSION(GLIBC_2_2_5)),
       AT("__pthread_mutexattr_destroy@" VERSION(GLIBC_2_2_5)))
int export_mutexattr_destroy(pthread_mutexattr_t *attr)
{
	return rt_mutexattr_destroy(attr);
}

EXPORT(AT("pthread_mutexattr_settype@@GLIBC_2.34"), AT("pthread_mutexattr_settype@" VERSION(GLIBC_2_2_5)),
       AT("__pthread_mutexattr_settype@" VERSION(GLIBC_2_2_5)),
       AT("pthread_mutexattr_setkind_np@" VERSION(GLIBC_2_2_5)))
int export_mutexattr_settype(pthread_mutexattr_t *attr, int type)
{
	return rt_mutexattr_settype(attr, type);
}

EXPORT(AT("pthread_mutexattr_gettype@@GLIBC_2.34"), AT("pthread_mutexattr_gettype@" VERSION(GLIBC_2_2_5)),
       AT("pthread_mutexattr_getkind_np@" VERSION(GLIBC_2_2_5)))
int export_mutexattr_gettype(const pthread_mutexattr_t *attr, int *type)
{
	return rt_mutexattr_gettype(attr, type);
}

EXPORT(AT("pthread_mutexattr_setprotocol@@GLIBC_2.34"), AT("pthread_mutexattr_setprotocol@" VERSION(GLIBC_2_4)))
int export_mutexattr_setprotocol(pthread_mutexattr_t *attr, int protocol)
{
	return rt_mutexattr_setprotocol(attr, protocol);
}

EXPORT(AT("pthread_mutexattr_getprotocol@@GLIBC_2.34"), AT("pthread_mutexattr_getprotocol@" VERSION(GLIBC_2_4)))
int export_mutexattr_getprotocol(const pthread_mutexattr_t *attr, int *protocol)
{
	return rt_mutexattr_getprotocol(attr, protocol);
}

EXPORT(AT("pthread_mutexattr_setprioceiling@@GLIBC_2.34"), AT("pthread_mutexattr_setprioceiling@" VERSION(GLIBC_2_4)))
int export_mutexattr_setprioceiling(pthread_mutexattr_t *attr, int ceiling)
{
	return rt_mutexattr_setprioceiling(attr, ceiling);
}

EXPORT(AT("pthread_mutexattr_getprioceiling@@GLIBC_2.34"), AT("pthread_mutexattr_getprioceiling@" VERSION(GLIBC_2_4)))
int export_mutexattr_getprioceiling(const pthread_mutexattr_t *attr, int *ceiling)
{
	return rt_mutexattr_getprioceiling(attr, ceiling);
}

EXPORT(AT("pthread_mutexattr_setrobust@@GLIBC_2.34"), AT("pthread_mutexattr_setrobust@" VERSION(GLIBC_2_12)),
       AT("pthread_mutexattr_setrobust_np@" VERSION(GLIBC_2_4)))
int export_mutexattr_setrobust(pthread_mutexattr_t *attr, int robust)
{
	return rt_mutexattr_setrobust(attr, robust);
}

EXPORT(AT("pthread_mutexattr_getrobust@@GLIBC_2.34"), AT("pthread_mutexattr_getrobust@" VERSION(GLIBC_2_12)),
       AT("pthread_mutexattr_getrobust_np@" VERSION(GLIBC_2_4)))
int export_mutexattr_getrobust(const pthread_mutexattr_t *attr, int *robust)
{
	return rt_mutexattr_getrobust(attr, robust);
}

EXPORT(AT("pthread_mutexattr_setpshared@@GLIBC_2.34"), AT("pthread_mutexattr_setpshared@" VERSION(GLIBC_2_2_5)))
int export_mutexattr_setpshared(pthread_mutexattr_t *attr, int pshared)
{
	return rt_mutexattr_setpshared(attr, pshared);
}

EXPORT(AT("pthread_mutexattr_getpshared@@GLIBC_2.34"), AT("pthread_mutexattr_getpshared@" VERSION(GLIBC_2_2_5)))
int export_mutexattr_getpshared(const pthread_mutexattr_t *attr, int *pshared)
{
	return rt_mutexattr_getpshared(attr, pshared);
}

/* Scheduling: only to keep priority-protect bookkeeping exact. */

EXPORT(AT("pthread_setschedparam@@" VERSION(GLIBC_2_2_5)))
int export_setschedparam(pthread_t thread, int policy, const struct sched_param *param)
{
	return rt_setschedparam(thread, policy, param);
}

EXPORT(AT("pthread_setschedprio@@GLIBC_2.34"), AT("pthread_setschedprio@" VERSION(GLIBC_2_3_4)))
int export_setschedprio(pthread_t thread, int priority)
{
	return rt_setschedprio(thread, priority);
}

/* What the thread asked for, not the ceiling it runs at. */
EXPORT(AT("pthread_getschedparam@@" VERSION(GLIBC_2_2_5)))
int export_getschedparam(pthread_t thread, int *policy, struct sched_param *param)
{
	return rt_getschedparam(thread, policy, param);
}

/* Condition variables */

EXPORT(AT("pthread_cond_init@@" VERSION(GLIBC_2_3_2)))
int export_cond_init(pthread_cond_t *c, const pthread_condattr_t *attr)
{
	PROBE2(cond_init, c, attr);
	return rt_cond_init(c, attr);
}

EXPORT(AT("pthread_cond_destroy@@" VERSION(GLIBC_2_3_2)))
int export_cond_destroy(pthread_cond_t *c)
{
	PROBE1(cond_destroy, c);
	return rt_cond_destroy(c);
}

EXPORT(AT("pthread_cond_wait@@" VERSION(GLIBC_2_3_2)))
int export_cond_wait(pthread_cond_t *c, pthread_mutex_t *m)
{
	return probed_cond_wait(c, m);
}

EXPORT(AT("pthread_cond_timedwait@@" VERSION(GLIBC_2_3_2)))
int export_cond_timedwait(pthread_cond_t *c, pthread_mutex_t *m, const struct timespec *deadline)
{
	return probed_cond_timedwait(c, m, CLOCK_REALTIME, deadline, 1);
}

EXPORT(AT("pthread_cond_clockwait@@GLIBC_2.34"), AT("pthread_cond_clockwait@GLIBC_2.30"))
int export_cond_clockwait(pthread_cond_t *c, pthread_mutex_t *m, clockid_t clock,
			  const struct timespec *deadline)
{
	if (!clock_supported(clock))
		return EINVAL;
	return probed_cond_timedwait(c, m, clock, deadline, 0);
}

EXPORT(AT("pthread_cond_signal@@" VERSION(GLIBC_2_3_2)))
int export_cond_signal(pthread_cond_t *c)
{
	return probed_cond_signal(c);
}

EXPORT(AT("pthread_cond_broadcast@@" VERSION(GLIBC_2_3_2)))
int export_cond_broadcast(pthread_cond_t *c)
{
	return probed_cond_broadcast(c);
}

/* Condition attributes */

EXPORT(AT("pthread_condattr_init@@" VERSION(GLIBC_2_2_5)))
int export_condattr_init(pthread_condattr_t *attr)
{
	return rt_condattr_init(attr);
}

EXPORT(AT("pthread_condattr_destroy@@" VERSION(GLIBC_2_2_5)))
int export_condattr_destroy(pthread_condattr_t *attr)
{
	return rt_condattr_destroy(attr);
}

EXPORT(AT("pthread_condattr_setpshared@@GLIBC_2.34"), AT("pthread_condattr_setpshared@" VERSION(GLIBC_2_2_5)))
int export_condattr_setpshared(pthread_condattr_t *attr, int pshared)
{
	return rt_condattr_setpshared(attr, pshared);
}

EXPORT(AT("pthread_condattr_getpshared@@GLIBC_2.34"), AT("pthread_condattr_getpshared@" VERSION(GLIBC_2_2_5)))
int export_condattr_getpshared(const pthread_condattr_t *attr, int *pshared)
{
	return rt_condattr_getpshared(attr, pshared);
}

EXPORT(AT("pthread_condattr_setclock@@GLIBC_2.34"), AT("pthread_condattr_setclock@" VERSION(GLIBC_2_3_3)))
int export_condattr_setclock(pthread_condattr_t *attr, clockid_t clock)
{
	return rt_condattr_setclock(attr, clock);
}

EXPORT(AT("pthread_condattr_getclock@@GLIBC_2.34"), AT("pthread_condattr_getclock@" VERSION(GLIBC_2_3_3)))
int export_condattr_getclock(const pthread_condattr_t *attr, clockid_t *clock)
{
	return rt_condattr_getclock(attr, clock);
}

/* Barriers */

EXPORT(AT("pthread_barrier_init@@GLIBC_2.34"), AT("pthread_barrier_init@" VERSION(GLIBC_2_2_5)))
int export_barrier_init(pthread_barrier_t *b, const pthread_barrierattr_t *attr, unsigned count)
{
	return rt_barrier_init(b, attr, count);
}

EXPORT(AT("pthread_barrier_destroy@@GLIBC_2.34"), AT("pthread_barrier_destroy@" VERSION(GLIBC_2_2_5)))
int export_barrier_destroy(pthread_barrier_t *b)
{
	return rt_barrier_destroy(b);
}

EXPORT(AT("pthread_barrier_wait@@GLIBC_2.34"), AT("pthread_barrier_wait@" VERSION(GLIBC_2_2_5)))
int export_barrier_wait(pthread_barrier_t *b)
{
	PROBE1(barrier_wait, b);
	return rt_barrier_wait(b);
}

EXPORT(AT("pthread_barrierattr_init@@GLIBC_2.34"), AT("pthread_barrierattr_init@" VERSION(GLIBC_2_2_5)))
int export_barrierattr_init(pthread_barrierattr_t *attr)
{
	return rt_barrierattr_init(attr);
}

EXPORT(AT("pthread_barrierattr_destroy@@GLIBC_2.34"), AT("pthread_barrierattr_destroy@" VERSION(GLIBC_2_2_5)))
int export_barrierattr_destroy(pthread_barrierattr_t *attr)
{
	return rt_barrierattr_destroy(attr);
}

EXPORT(AT("pthread_barrierattr_setpshared@@GLIBC_2.34"), AT("pthread_barrierattr_setpshared@" VERSION(GLIBC_2_2_5)))
int export_barrierattr_setpshared(pthread_barrierattr_t *attr, int pshared)
{
	return rt_barrierattr_setpshared(attr, pshared);
}

EXPORT(AT("pthread_barrierattr_getpshared@@GLIBC_2.34"), AT("pthread_barrierattr_getpshared@" VERSION(GLIBC_2_3_3)))
int export_barrierattr_getpshared(const pthread_barrierattr_t *attr, int *pshared)
{
	return rt_barrierattr_getpshared(attr, pshared);
}

/* C11: mtx_t and cnd_t are glibc's pthread objects, so are ours. */

static int thrd_result(int err)
{
	switch (err) {
	case 0:
		return thrd_success;
	case EBUSY:
		return thrd_busy;
	case ETIMEDOUT:
		return thrd_timedout;
	case ENOMEM:
		return thrd_nomem;
	default:
		return thrd_error;
	}
}

EXPORT(AT("mtx_init@@GLIBC_2.34"), AT("mtx_init@GLIBC_2.28"))
int export_mtx_init(mtx_t *m, int type)
{
	pthread_mutexattr_t attr;
	rt_mutexattr_init(&attr);
	/* glibc's choice: recursive only for the two recursive types, a
	 * plain mutex for anything else, valid or not. */
	if (type == (mtx_plain | mtx_recursive) || type == (mtx_timed | mtx_recursive))
		rt_mutexattr_settype(&attr, PTHREAD_MUTEX_RECURSIVE);
	return thrd_result(mutex_init((struct mutex *)m, &attr));
}

EXPORT(AT("mtx_lock@@GLIBC_2.34"), AT("mtx_lock@GLIBC_2.28"))
int export_mtx_lock(mtx_t *m)
{
	return thrd_result(probed_lock((pthread_mutex_t *)m));
}

EXPORT(AT("mtx_trylock@@GLIBC_2.34"), AT("mtx_trylock@GLIBC_2.28"))
int export_mtx_trylock(mtx_t *m)
{
	return thrd_result(mutex_trylock((struct mutex *)m));
}

EXPORT(AT("mtx_timedlock@@GLIBC_2.34"), AT("mtx_timedlock@GLIBC_2.28"))
int export_mtx_timedlock(mtx_t *restrict m, const struct timespec *restrict deadline)
{
	return thrd_result(probed_timedlock((pthread_mutex_t *)m, CLOCK_REALTIME, deadline));
}

EXPORT(AT("mtx_unlock@@GLIBC_2.34"), AT("mtx_unlock@GLIBC_2.28"))
int export_mtx_unlock(mtx_t *m)
{
	return thrd_result(probed_unlock((pthread_mutex_t *)m));
}

EXPORT(AT("mtx_destroy@@GLIBC_2.34"), AT("mtx_destroy@GLIBC_2.28"))
void export_mtx_destroy(mtx_t *m)
{
	mutex_destroy((struct mutex *)m);
}

EXPORT(AT("cnd_init@@GLIBC_2.34"), AT("cnd_init@GLIBC_2.28"))
int export_cnd_init(cnd_t *c)
{
	return thrd_result(rt_cond_init((pthread_cond_t *)c, NULL));
}

EXPORT(AT("cnd_signal@@GLIBC_2.34"), AT("cnd_signal@GLIBC_2.28"))
int export_cnd_signal(cnd_t *c)
{
	return thrd_result(probed_cond_signal((pthread_cond_t *)c));
}

EXPORT(AT("cnd_broadcast@@GLIBC_2.34"), AT("cnd_broadcast@GLIBC_2.28"))
int export_cnd_broadcast(cnd_t *c)
{
	return thrd_result(probed_cond_broadcast((pthread_cond_t *)c));
}

EXPORT(AT("cnd_wait@@GLIBC_2.34"), AT("cnd_wait@GLIBC_2.28"))
int export_cnd_wait(cnd_t *c, mtx_t *m)
{
	return thrd_result(probed_cond_wait((pthread_cond_t *)c, (pthread_mutex_t *)m));
}

EXPORT(AT("cnd_timedwait@@GLIBC_2.34"), AT("cnd_timedwait@GLIBC_2.28"))
int export_cnd_timedwait(cnd_t *restrict c, mtx_t *restrict m, const struct timespec *restrict deadline)
{
	return thrd_result(
		probed_cond_timedwait((pthread_cond_t *)c, (pthread_mutex_t *)m, CLOCK_REALTIME, deadline, 0));
}

EXPORT(AT("cnd_destroy@@GLIBC_2.34"), AT("cnd_destroy@GLIBC_2.28"))
void export_cnd_destroy(cnd_t *c)
{
	rt_cond_destroy((pthread_cond_t *)c);
}
