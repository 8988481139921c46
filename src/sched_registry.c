/*
 * Each thread's scheduling as the priority-protect protocol knows it:
 * its base (its own policy and priority, what it runs at when it holds no
 * ceiling), how it is run at a priority, and the registry where other
 * threads find its state by pthread_t; and our pthread_setschedparam,
 * setschedprio and getschedparam, which keep the ceilings a thread holds
 * (ceiling.c) in force while its priority is changed.
 *
 * pthread_getschedparam reports base while a ceiling is held (we wrap it
 * too), and glibc's own answer otherwise.  glibc caches a thread's
 * parameters in its descriptor (fetched at the first getschedparam, set by
 * its setschedparam); we never write that cache, only keep it true: no
 * call of glibc's getschedparam can run while the thread is boosted (the
 * state's lock, or the registry's for a thread not yet in it), and a base
 * set while a ceiling was held (which we put in the kernel with a raw
 * system call, glibc's cache left behind) is handed to glibc's
 * setschedparam at the drop that ends the boost, in that drop's one
 * system call.
 *
 * For all that, each thread's state has a PI lock and, from its first PP
 * lock on, a slot in a registry where other threads find it by pthread_t;
 * a key destructor takes it out at thread exit.  A raw
 * sched_setscheduler() on a FIFO or RR thread is invisible to us (as to
 * NPTL).
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "api.h"
#include "pi_lock.h"
#include "priority_state.h"
#include "syscall.h"

#define REGISTRY_SLOTS 1024

__thread struct priority_state self_priority TLS_FAST;

int priority_refresh_base(struct priority_state *p)
{
	struct sched_attr_v0 attr;
	long r = raw_syscall6(SYS_sched_getattr, 0, (long)&attr, sizeof attr, 0, 0, 0);
	if (r < 0)
		return (int)-r;
	int policy = (int)attr.policy;
	p->base_policy = policy | ((attr.flags & FLAG_RESET_ON_FORK) ? SCHED_RESET_ON_FORK : 0);
	p->base_priority = policy_is_realtime(policy) ? (int)attr.priority : 0;
	return 0;
}

/* A deadline thread is left as it is (ceiling.c says why). */
int priority_apply(const struct priority_state *p, uint32_t tid, int priority)
{
	struct sched_param param = { .sched_priority = priority };
	int policy = p->base_policy;
	if (policy_is_deadline(policy))
		return 0;
	if (priority == p->base_priority)
		param.sched_priority = policy_is_realtime(policy) ? priority : 0;
	else if (!policy_is_realtime(policy))
		policy = SCHED_FIFO | (policy & SCHED_RESET_ON_FORK);
	long r = raw_syscall6(SYS_sched_setscheduler, tid, policy, (long)&param, 0, 0, 0);
	if (tid == 0 || tid == self_tid())
		wait_order_forget(); /* re-read at the next PI condition wait */
	return r < 0 ? (int)-r : 0;
}
/*
 * The registry: slots point at threads' states.  registry_lock (PI) makes
 * "find a state and lock it" atomic with "take it out at thread exit", so
 * no thread ever locks the state of a thread whose TLS is gone.
 */
static _Atomic uint32_t registry_lock; /* pi_lock.h */
static struct priority_state *registry[REGISTRY_SLOTS];
/* The key whose destructor takes a state out at thread exit, created at
 * load (preload/init.c), so in practice among a process's first 32 keys,
 * which glibc stores inside the thread: setspecific then allocates
 * nothing at a thread's first PP lock.  If it cannot be created, no state
 * is ever put in the registry (nothing would take it out). */
static pthread_key_t registry_key;
static bool registry_key_made;
static pthread_once_t registry_once = PTHREAD_ONCE_INIT;

static void registry_remove(void *arg)
{
	struct priority_state *p = arg;
	pi_lock_take(&registry_lock, false);
	for (int i = 0; i < REGISTRY_SLOTS; i++)
		if (registry[i] == p)
			registry[i] = NULL;
	pi_lock_release(&registry_lock, false);
	/* Wait out a setschedparam that found us before we left. */
	pi_lock_take(&p->lock, false);
	pi_lock_release(&p->lock, false);
	p->registered = false;
}

static void registry_create_key(void)
{
	registry_key_made = pthread_key_create(&registry_key, registry_remove) == 0;
}

/* At the first PP lock: make the state findable (if a slot is free: with
 * more than REGISTRY_SLOTS PP users at once, others' setschedparam on the
 * rest acts as glibc's alone). */
void registry_add(struct priority_state *p)
{
	p->thread = pthread_self();
	p->tid = self_tid();
	pthread_once(&registry_once, registry_create_key);
	p->registered = true;
	/* Not findable without the key (setschedparam then acts as glibc's
	 * alone); registry_lock is taken anyway: a getschedparam that found
	 * nothing holds it until glibc has read our parameters, so our
	 * first raise cannot slip under that read. */
	bool findable = registry_key_made && pthread_setspecific(registry_key, p) == 0;
	pi_lock_take(&registry_lock, false);
	for (int i = 0; findable && i < REGISTRY_SLOTS; i++)
		if (!registry[i]) {
			registry[i] = p;
			break;
		}
	pi_lock_release(&registry_lock, false);
}

/* The state of thread, locked; NULL if it never took a PP mutex. */
static struct priority_state *registry_find_locked(pthread_t thread)
{
	struct priority_state *found = NULL;
	pi_lock_take(&registry_lock, false);
	for (int i = 0; i < REGISTRY_SLOTS && !found; i++)
		if (registry[i] && pthread_equal(registry[i]->thread, thread))
			found = registry[i];
	if (found)
		pi_lock_take(&found->lock, false);
	pi_lock_release(&registry_lock, false);
	return found;
}

/* fork: the child has only the calling thread, with a new TID. */
void priority_after_fork(void)
{
	struct priority_state *p = &self_priority;
	wait_order_forget(); /* SCHED_RESET_ON_FORK may have changed it */
	for (int i = 0; i < REGISTRY_SLOTS; i++)
		registry[i] = NULL;
	atomic_store_explicit(&registry_lock, 0, memory_order_relaxed);
	atomic_store_explicit(&p->lock, 0, memory_order_relaxed);
	if (p->registered) {
		p->tid = self_tid();
		if (registry_key_made)
			registry[0] = p;
	}
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
typedef int getschedparam_fn(pthread_t, int *, struct sched_param *);

/* glibc's functions, looked up once (at load, from preload/init.c):
 * dlsym takes the dynamic linker's lock, which is not PI, so it must not
 * run while the caller may hold a PI mutex at real-time priority. */
static setschedparam_fn *_Atomic next_setschedparam;
static setschedprio_fn *_Atomic next_setschedprio;
static getschedparam_fn *_Atomic next_getschedparam;

void priority_init(void)
{
	pthread_once(&registry_once, registry_create_key);
	if (!atomic_load_explicit(&next_setschedparam, memory_order_acquire))
		atomic_store_explicit(&next_setschedparam,
				      (setschedparam_fn *)dlsym(RTLD_NEXT, "pthread_setschedparam"),
				      memory_order_release);
	if (!atomic_load_explicit(&next_setschedprio, memory_order_acquire))
		atomic_store_explicit(&next_setschedprio, (setschedprio_fn *)dlsym(RTLD_NEXT, "pthread_setschedprio"),
				      memory_order_release);
	if (!atomic_load_explicit(&next_getschedparam, memory_order_acquire))
		atomic_store_explicit(&next_getschedparam,
				      (getschedparam_fn *)dlsym(RTLD_NEXT, "pthread_getschedparam"),
				      memory_order_release);
}

int glibc_setschedparam(pthread_t thread, int policy, int priority)
{
	setschedparam_fn *next = atomic_load_explicit(&next_setschedparam, memory_order_acquire);
	struct sched_param param = { .sched_priority = priority };
	return next ? next(thread, policy, &param) : ENOSYS;
}

/* A policy and priority the scheduler takes, as sched_setscheduler checks
 * them: 1..99 for FIFO and RR, 0 for the others. */
static bool policy_valid(int policy, int priority)
{
	int base = policy & ~SCHED_RESET_ON_FORK;
	if (policy_is_realtime(policy))
		return priority >= PRIORITY_MIN && priority <= PRIORITY_MAX;
	return (base == SCHED_OTHER || base == SCHED_BATCH || base == SCHED_IDLE) && priority == 0;
}

/* Under p->lock, p's thread holding PP mutexes: priority becomes its
 * base, the ceilings stay in force.  Checked first: a base the scheduler
 * would refuse later, when the last ceiling is dropped, would leave the
 * thread at the ceiling for ever. */
static int set_base_locked(struct priority_state *p, uint32_t tid, int policy, int priority)
{
	if (!policy_valid(policy, priority))
		return EINVAL;
	struct priority_state next = *p;
	next.base_policy = policy;
	next.base_priority = policy_is_realtime(policy) ? priority : 0;
	int r = priority_apply(&next, tid, effective(&next));
	if (r == 0) {
		p->base_policy = next.base_policy;
		p->base_priority = next.base_priority;
		p->glibc_stale = true;
	}
	return r;
}

/* Set thread's priority: through glibc's function, unless the thread
 * holds PP mutexes, whose ceilings must stay in force. */
static int set_priority(pthread_t thread, int policy, int priority, bool keep_policy)
{
	/* before any lock: only a call that comes before our constructor
	 * (another library's) looks the functions up here */
	priority_init();
	bool self = pthread_equal(thread, pthread_self());
	struct priority_state *p = self ? &self_priority : registry_find_locked(thread);
	if (self)
		pi_lock_take(&p->lock, false);
	int r;
	if (p && highest_ceiling(p) != 0) {
		r = set_base_locked(p, self ? 0 : p->tid, keep_policy ? p->base_policy : policy, priority);
	} else if (keep_policy) {
		setschedprio_fn *next = atomic_load_explicit(&next_setschedprio, memory_order_acquire);
		r = next ? next(thread, priority) : ENOSYS;
	} else {
		r = glibc_setschedparam(thread, policy, priority);
	}
	/* Every thread re-reads its base before its next outermost PP lock. */
	atomic_fetch_add_explicit(&priority_generation, 1, memory_order_release);
	if (p)
		pi_lock_release(&p->lock, false);
	return r;
}

int rt_setschedparam(pthread_t thread, int policy, const struct sched_param *param)
{
	if (!param)
		return EINVAL;
	return set_priority(thread, policy, param->sched_priority, false);
}

int rt_setschedprio(pthread_t thread, int priority)
{
	return set_priority(thread, 0, priority, true);
}

/* What the thread asked for: base while it holds a ceiling, glibc's
 * answer otherwise, read while the thread cannot raise (see the top). */
int rt_getschedparam(pthread_t thread, int *policy, struct sched_param *param)
{
	priority_init();
	getschedparam_fn *next = atomic_load_explicit(&next_getschedparam, memory_order_acquire);
	if (!next)
		return ENOSYS;
	struct priority_state *p = NULL;
	bool registry_held = false;
	if (pthread_equal(thread, pthread_self())) {
		p = &self_priority;
		pi_lock_take(&p->lock, false);
	} else {
		pi_lock_take(&registry_lock, false);
		for (int i = 0; i < REGISTRY_SLOTS && !p; i++)
			if (registry[i] && pthread_equal(registry[i]->thread, thread))
				p = registry[i];
		if (p) {
			pi_lock_take(&p->lock, false);
			pi_lock_release(&registry_lock, false);
		} else {
			registry_held = true; /* it cannot register, nor raise, until glibc has read it */
		}
	}
	int r;
	if (p && highest_ceiling(p) != 0 && policy && param) {
		*policy = p->base_policy;
		param->sched_priority = p->base_priority;
		r = 0;
	} else {
		r = next(thread, policy, param);
	}
	if (registry_held)
		pi_lock_release(&registry_lock, false);
	else
		pi_lock_release(&p->lock, false);
	return r;
}
