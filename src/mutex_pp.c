/*
 * Priority protect (immediate ceiling): the owner runs at the mutex's
 * ceiling from before it competes for the word until after it released
 * it, so that no thread below the ceiling can preempt it meanwhile.  The
 * word itself is the ordinary word protocol (mutex_word.h), robust included;
 * the ceiling lives beside it, and owner_ceiling remembers which ceiling
 * the owner raised to, so that a ceiling changed while held is given back
 * exactly.  Every failure (EBUSY, ETIMEDOUT, ...) drops the raise again:
 * the caller leaves with the priority it came with, or learns that it
 * could not (the drop's error is returned instead).  A mutex that the
 * configuration made PP (KIND_DEFAULTED) is locked by a SCHED_DEADLINE thread
 * with no change to it; one the program made PP gets EINVAL, as in NPTL
 * (ceiling.c says why).
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

/* Whether the configuration, not the program, made m a PP mutex. */
static bool configured(struct mutex *m)
{
	return mutex_kind(m) & KIND_DEFAULTED;
}

int pp_lock(struct mutex *m, int kind, uint32_t tid, const struct lock_request *req)
{
	int ceiling = ceiling_of(m);
	int r = priority_raise(ceiling, configured(m));
	if (r)
		return r;
	r = word_lock(m, kind, tid, req);
	if (r != 0 && r != EOWNERDEAD) {
		/* A priority left wrong outranks the lock's own failure. */
		int e = priority_drop(ceiling);
		return e ? e : r;
	}
	/* setprioceiling may have changed it while we waited. */
	int now = ceiling_of(m);
	if (now != ceiling) {
		int e = priority_raise(now, configured(m));
		int d = priority_drop(ceiling);
		if (e || d) {
			word_unlock(m, kind);
			if (!e)
				priority_drop(now); /* d is reported: the priority is wrong either way */
			return e ? e : d;
		}
		ceiling = now;
	}
	m->owner_ceiling = (uint16_t)ceiling;
	return r;
}

/* The release, then the drop: its failure (the thread left above its own
 * priority) is the unlock's result, as in glibc, the mutex released. */
int pp_unlock(struct mutex *m, int kind)
{
	int ceiling = m->owner_ceiling;
	word_unlock(m, kind);
	return priority_drop(ceiling);
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
		int r = priority_raise(ceiling, configured(m));
		if (r)
			return r;
		/* The change is made whatever the drop says: it only reports a
		 * priority left too high. */
		int d = priority_drop(m->owner_ceiling);
		m->owner_ceiling = (uint16_t)ceiling;
		atomic_store_explicit(&m->ceiling, (uint16_t)ceiling, memory_order_relaxed);
		if (d) {
			if (old_ceiling)
				*old_ceiling = old;
			return d;
		}
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
