/*
 * Priority-protect bookkeeping, per thread.  A thread holding PP mutexes
 * runs at max(base, highest ceiling held), where base is its own policy and
 * priority.  We count holds per ceiling (any release order restores
 * correctly) and keep a 128-bit mask of the ceilings held, so the highest
 * is two clz away: no loop, no allocation (NPTL callocs a table).
 *
 * The scheduler is touched only when the effective priority really
 * changes: one sched_setscheduler at the raise, one at the drop; none when
 * the thread already runs at or above the ceiling.  A SCHED_OTHER thread is
 * run as SCHED_FIFO at the ceiling while it holds one (NPTL refuses it with
 * EINVAL), and given back SCHED_OTHER (its nice value untouched) after.
 *
 * base is read from the kernel at the first PP lock, and again at the
 * first PP lock after anyone changed a priority through
 * pthread_setschedparam/pthread_setschedprio (which we wrap to bump a
 * generation).  A change of our own priority while holding PP mutexes
 * updates base and keeps the ceiling in force.  A raw sched_setscheduler()
 * is invisible to us (as to NPTL) until the thread holds no PP mutex and
 * someone bumps the generation.
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "api.h"
#include "attr.h"
#include "priority.h"
#include "syscall.h"

struct priority_state {
	uint16_t held[PRIORITY_MAX + 1];
	uint64_t mask[2];
	int base_policy; /* as sched_getscheduler returns it, RESET_ON_FORK included */
	int base_priority;
	unsigned generation; /* of base; 0: never read */
};

static __thread struct priority_state self_priority TLS_FAST;
static _Atomic unsigned priority_generation = 1;

static int highest_ceiling(const struct priority_state *p)
{
	if (p->mask[1])
		return 127 - __builtin_clzll(p->mask[1]);
	if (p->mask[0])
		return 63 - __builtin_clzll(p->mask[0]);
	return 0;
}

static int effective(const struct priority_state *p)
{
	int top = highest_ceiling(p);
	return top > p->base_priority ? top : p->base_priority;
}

static bool policy_is_realtime(int policy)
{
	policy &= ~SCHED_RESET_ON_FORK;
	return policy == SCHED_FIFO || policy == SCHED_RR;
}

static int refresh_base(struct priority_state *p)
{
	struct sched_param param;
	long policy = raw_syscall6(SYS_sched_getscheduler, 0, 0, 0, 0, 0, 0);
	if (policy < 0)
		return (int)-policy;
	long r = raw_syscall6(SYS_sched_getparam, 0, (long)&param, 0, 0, 0, 0);
	if (r < 0)
		return (int)-r;
	p->base_policy = (int)policy;
	p->base_priority = policy_is_realtime((int)policy) ? param.sched_priority : 0;
	return 0;
}

/* Run the calling thread at priority (base itself when it equals base). */
static int apply(const struct priority_state *p, int priority)
{
	struct sched_param param = { .sched_priority = priority };
	int policy = p->base_policy;
	if (priority == p->base_priority)
		param.sched_priority = policy_is_realtime(policy) ? priority : 0;
	else if (!policy_is_realtime(policy))
		policy = SCHED_FIFO | (policy & SCHED_RESET_ON_FORK);
	long r = raw_syscall6(SYS_sched_setscheduler, 0, policy, (long)&param, 0, 0, 0);
	return r < 0 ? (int)-r : 0;
}

static void mark(struct priority_state *p, int ceiling, bool held)
{
	uint64_t bit = 1ull << (ceiling & 63);
	if (held)
		p->mask[ceiling >> 6] |= bit;
	else
		p->mask[ceiling >> 6] &= ~bit;
}

int priority_raise(int ceiling)
{
	struct priority_state *p = &self_priority;
	if (ceiling < PRIORITY_MIN || ceiling > PRIORITY_MAX)
		return EINVAL;
	unsigned generation = atomic_load_explicit(&priority_generation, memory_order_acquire);
	if (p->generation != generation && highest_ceiling(p) == 0) {
		int r = refresh_base(p);
		if (r)
			return r;
		p->generation = generation;
	}
	if (p->base_priority > ceiling)
		return EINVAL;
	if (p->held[ceiling] == UINT16_MAX)
		return EAGAIN;
	int before = effective(p);
	if (ceiling > before) {
		int r = apply(p, ceiling);
		if (r)
			return r;
	}
	p->held[ceiling]++;
	mark(p, ceiling, true);
	return 0;
}

void priority_drop(int ceiling)
{
	struct priority_state *p = &self_priority;
	if (ceiling < PRIORITY_MIN || ceiling > PRIORITY_MAX || p->held[ceiling] == 0)
		return;
	int before = effective(p);
	if (--p->held[ceiling] == 0)
		mark(p, ceiling, false);
	int after = effective(p);
	if (after < before)
		apply(p, after);
}

/*
 * pthread_setschedparam/pthread_setschedprio: glibc's, found with
 * RTLD_NEXT (only it knows another thread's TID), plus a generation bump so
 * that every thread re-reads its base before its next outermost PP lock.
 * For the calling thread while it holds PP mutexes, the new priority
 * becomes its base and the ceiling stays in force.
 */
typedef int setschedparam_fn(pthread_t, int, const struct sched_param *);
typedef int setschedprio_fn(pthread_t, int);

static void *next_symbol(const char *name)
{
	return dlsym(RTLD_NEXT, name);
}

static int set_own_base(int policy, int priority)
{
	struct priority_state *p = &self_priority;
	struct priority_state next = *p;
	next.base_policy = policy;
	next.base_priority = policy_is_realtime(policy) ? priority : 0;
	if (next.base_priority > PRIORITY_MAX || next.base_priority < 0)
		return EINVAL;
	int r = apply(&next, effective(&next));
	if (r == 0) {
		p->base_policy = next.base_policy;
		p->base_priority = next.base_priority;
	}
	return r;
}

int rt_setschedparam(pthread_t thread, int policy, const struct sched_param *param)
{
	if (pthread_equal(thread, pthread_self()) && highest_ceiling(&self_priority) != 0)
		return set_own_base(policy, param->sched_priority);
	setschedparam_fn *next = (setschedparam_fn *)next_symbol("pthread_setschedparam");
	if (!next)
		return ENOSYS;
	int r = next(thread, policy, param);
	atomic_fetch_add_explicit(&priority_generation, 1, memory_order_release);
	return r;
}

int rt_setschedprio(pthread_t thread, int priority)
{
	if (pthread_equal(thread, pthread_self()) && highest_ceiling(&self_priority) != 0)
		return set_own_base(self_priority.base_policy, priority);
	setschedprio_fn *next = (setschedprio_fn *)next_symbol("pthread_setschedprio");
	if (!next)
		return ENOSYS;
	int r = next(thread, priority);
	atomic_fetch_add_explicit(&priority_generation, 1, memory_order_release);
	return r;
}
