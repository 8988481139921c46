/*
 * The pre-2002 condition ABI, pthread_cond_*@GLIBC_2.2.5 (x86_64 only;
 * aarch64 never had it), which binaries linked against glibc 2.2 still
 * bind.  Its object is one pointer to a condition of today's ABI, made at
 * the first use and freed by destroy, as glibc does.  glibc's versions
 * would wait on that condition with glibc's own internal mutex functions,
 * which know nothing of our private word format (and the recursion depth
 * we keep): taking these symbols over keeps the mutex in our hands, so
 * that every mutex kind works with them.
 *
 * The first use allocates (calloc), as in glibc: these are not for hot
 * real-time paths.
 */
#if defined(__x86_64__)

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "api.h"
#include "attr.h"

#pragma GCC diagnostic ignored "-Wmissing-prototypes"

#define COMPAT(symbol) __attribute__((visibility("default"), symver(symbol "@GLIBC_2.2.5")))

struct cond_2_0 {
	pthread_cond_t *_Atomic cond;
};

/* The condition behind c, made now if it is not yet (NULL: no memory).
 * Concurrent first users race on one CAS; the loser frees its copy. */
static pthread_cond_t *cond_2_0_get(struct cond_2_0 *c)
{
	pthread_cond_t *cond = atomic_load_explicit(&c->cond, memory_order_acquire);
	if (cond)
		return cond;
	pthread_cond_t *fresh = calloc(1, sizeof *fresh); /* all zero: a default condition */
	if (!fresh)
		return NULL;
	if (atomic_compare_exchange_strong_explicit(&c->cond, &cond, fresh, memory_order_acq_rel,
						    memory_order_acquire))
		return fresh;
	free(fresh);
	return cond;
}

COMPAT("pthread_cond_init")
int compat_cond_init(struct cond_2_0 *c, const pthread_condattr_t *attr)
{
	/* One pointer cannot be shared between processes (glibc: EINVAL). */
	if (attr && (attr_value(attr) & CONDATTR_PSHARED))
		return EINVAL;
	atomic_store_explicit(&c->cond, NULL, memory_order_relaxed);
	return 0;
}

COMPAT("pthread_cond_destroy")
int compat_cond_destroy(struct cond_2_0 *c)
{
	pthread_cond_t *cond = atomic_load_explicit(&c->cond, memory_order_acquire);
	if (!cond)
		return 0;
	int r = rt_cond_destroy(cond);
	if (r)
		return r;
	atomic_store_explicit(&c->cond, NULL, memory_order_relaxed);
	free(cond);
	return 0;
}

COMPAT("pthread_cond_wait")
int compat_cond_wait(struct cond_2_0 *c, pthread_mutex_t *m)
{
	pthread_cond_t *cond = cond_2_0_get(c);
	return cond ? rt_cond_wait(cond, m, CLOCK_REALTIME, NULL, 0) : ENOMEM;
}

COMPAT("pthread_cond_timedwait")
int compat_cond_timedwait(struct cond_2_0 *c, pthread_mutex_t *m, const struct timespec *deadline)
{
	if (!deadline)
		return EINVAL; /* as the current ABI's entry point */
	pthread_cond_t *cond = cond_2_0_get(c);
	return cond ? rt_cond_wait(cond, m, CLOCK_REALTIME, deadline, 1) : ENOMEM;
}

COMPAT("pthread_cond_signal")
int compat_cond_signal(struct cond_2_0 *c)
{
	pthread_cond_t *cond = cond_2_0_get(c);
	return cond ? rt_cond_signal(cond) : ENOMEM;
}

COMPAT("pthread_cond_broadcast")
int compat_cond_broadcast(struct cond_2_0 *c)
{
	pthread_cond_t *cond = cond_2_0_get(c);
	return cond ? rt_cond_broadcast(cond) : ENOMEM;
}

#endif
