/*
 * Priority protect (immediate ceiling): the owner runs at the mutex's
 * ceiling from before it competes for the word until after it released
 * it, so that no thread below the ceiling can preempt it meanwhile.  The
 * word itself is the ordinary word protocol (mutex_word.h), robust included;
 * the ceiling lives beside it, and owner_ceiling remembers which ceiling
 * the owner raised to, so that a ceiling changed while held is given back
 * exactly.  Every failure (EBUSY, ETIMEDOUT, ...) drops the raise again:
 * the caller leaves with the priority it came with.
 */
#include "api.h"
#include "attr.h"
#include "mutex_internal.h"
#include "mutex_word.h"
#include "priority.h"

static int ceiling_of(struct mutex *m)
{
	return atomic_load_explicit(&m->ceiling, memory_order_relaxed);
}

int pp_lock(struct mutex *m, int kind, uint32_t tid, const struct lock_request *req)
{
	int ceiling = ceiling_of(m);
	int r = priority_raise(ceiling);
	if (r)
		return r;
	r = word_lock(m, kind, tid, req);
	if (r != 0 && r != EOWNERDEAD) {
		priority_drop(ceiling);
		return r;
	}
	/* setprioceiling may have changed it while we waited. */
	int now = ceiling_of(m);
	if (now != ceiling) {
		int e = priority_raise(now);
		priority_drop(ceiling);
		if (e) {
			word_unlock(m, kind);
			return e;
		}
		ceiling = now;
	}
	m->owner_ceiling = (uint16_t)ceiling;
	return r;
}

void pp_unlock(struct mutex *m, int kind)
{
	int ceiling = m->owner_ceiling;
	word_unlock(m, kind);
	priority_drop(ceiling);
}

int rt_mutex_getprioceiling(const pthread_mutex_t *mutex, int *ceiling)
{
	struct mutex *m = mutex_of((pthread_mutex_t *)mutex);
	int kind = mutex_kind_adopted(m);
	if (!kind_valid(kind) || !(kind & KIND_PP))
		return EINVAL;
	if (kind_lll_word(kind))
		*ceiling = (int)(atomic_load_explicit(&m->word, memory_order_relaxed) >> LLL_CEILING_SHIFT);
	else
		*ceiling = atomic_load_explicit(&m->ceiling, memory_order_relaxed);
	return 0;
}

/*
 * POSIX: lock (without the ceiling protocol, so a caller above the old
 * ceiling may still change it), set, unlock.  The owner may change it in
 * place; its own priority follows the new ceiling.
 */
int rt_mutex_setprioceiling(pthread_mutex_t *mutex, int ceiling, int *old_ceiling)
{
	struct mutex *m = mutex_of(mutex);
	int kind = mutex_kind_adopted(m);
	if (!kind_valid(kind) || !(kind & KIND_PP) || ceiling < PRIORITY_MIN || ceiling > PRIORITY_MAX)
		return EINVAL;
	if (kind_lll_word(kind))
		return lll_setprioceiling(m, kind, ceiling, old_ceiling);
	uint32_t tid = self_tid();
	int old = ceiling_of(m);

	if (mutex_owned(m, kind, tid)) {
		int r = priority_raise(ceiling);
		if (r)
			return r;
		priority_drop(m->owner_ceiling);
		m->owner_ceiling = (uint16_t)ceiling;
		atomic_store_explicit(&m->ceiling, (uint16_t)ceiling, memory_order_relaxed);
	} else {
		struct lock_request req = { .try = false, .clock = CLOCK_REALTIME, .deadline = NULL };
		int r = word_lock(m, kind, tid, &req);
		if (r != 0 && r != EOWNERDEAD)
			return r;
		old = ceiling_of(m);
		atomic_store_explicit(&m->ceiling, (uint16_t)ceiling, memory_order_relaxed);
		if (r == EOWNERDEAD) {
			/* Not ours to recover: the next locker still gets EOWNERDEAD. */
			atomic_store_explicit(&m->owner, 0, memory_order_relaxed);
			word_unlock_robust(m, kind, WORD_OWNER_DIED, false);
		} else {
			word_unlock(m, kind);
		}
	}
	if (old_ceiling)
		*old_ceiling = old;
	return 0;
}
