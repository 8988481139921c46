/*
 * Each thread's scheduling as the priority-protect protocol knows it:
 * its base (its own policy and priority, what it runs at when it holds no
 * ceiling), how it is run at a priority, and the registry where other
 * threads find its state by pthread_t; and our pthread_setschedparam,
 * setschedprio and getschedparam, which keep the ceilings a thread holds
 * (ceiling.c) in force while its priority is changed.
 *
 * pthread_getschedparam reports base while glibc is unaware of it (a
 * ceiling is held, or a base we set is not handed to glibc yet; we wrap
 * it too), and glibc's own answer otherwise.  glibc caches a thread's
 * parameters in its descriptor (fetched at the first getschedparam, set by
 * its setschedparam); we never write that cache, only keep it true: no
 * call of glibc's getschedparam or setschedprio can run while the thread
 * is boosted (under the state's lock, or the registry's for a thread not
 * yet in it, the kernel runs it above base only while glibc_unaware: see
 * ceiling.c), and a base set around glibc (which we put in the kernel
 * with a raw system call, glibc's cache left behind) is handed to glibc's
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
	long r = raw_syscall6(SYS_sched_getattr, p->tid, (long)&attr, sizeof attr, 0, 0, 0);
	if (r < 0)
		return (int)-r;
	int policy = (int)attr.policy;
	set_base(p, policy | ((attr.flags & FLAG_RESET_ON_FORK) ? SCHED_RESET_ON_FORK : 0),
		 policy_is_realtime(policy) ? (int)attr.priority : 0);
	atomic_store_explicit(&p->base_unknown, false, memory_order_relaxed);
	return 0;
}

/* A deadline thread is left as it is (ceiling.c says why). */
int priority_apply(int policy, int base_priority, uint32_t tid, int priority)
{
	struct sched_param param = { .sched_priority = priority };
	if (policy_is_deadline(policy))
		return 0;
	if (priority == base_priority)
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
	 * alone); registry_lock is taken anyway: a setschedparam or
	 * getschedparam that found nothing holds it until glibc has set or
	 * read our parameters, so our first raise cannot slip under that. */
	bool findable = registry_key_made && pthread_setspecific(registry_key, p) == 0;
	pi_lock_take(&registry_lock, false);
	for (int i = 0; findable && i < REGISTRY_SLOTS; i++)
		if (!registry[i]) {
			registry[i] = p;
			break;
		}
	pi_lock_release(&registry_lock, false);
}

/* The state of thread, locked.  NULL if it is not in the registry (it
 * never took a PP mutex), with registry_lock held instead: it cannot take
 * its first one until state_release. */
static struct priority_state *state_find(pthread_t thread)
{
	if (pthread_equal(thread, pthread_self())) {
		pi_lock_take(&self_priority.lock, false);
		return &self_priority;
	}
	pi_lock_take(&registry_lock, false);
	for (int i = 0; i < REGISTRY_SLOTS; i++)
		if (registry[i] && pthread_equal(registry[i]->thread, thread)) {
			struct priority_state *found = registry[i];
			pi_lock_take(&found->lock, false);
			pi_lock_release(&registry_lock, false);
			return found;
		}
	return NULL;
}

/* Releases what state_find took. */
static void state_release(struct priority_state *p)
{
	pi_lock_release(p ? &p->lock : &registry_lock, false);
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
	/* A thread of the parent may have been changing it: nobody is now. */
	atomic_store_explicit(&p->changes, 0, memory_order_relaxed);
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

/* Under p->lock, glibc unaware of p's thread (it holds PP mutexes, or
 * its owner has not yet handed a base set here to glibc): priority
 * becomes its base, the ceilings stay in force.  Checked first: a base the scheduler
 * would refuse later, when the last ceiling is dropped, would leave the
 * thread at the ceiling for ever. */
static int set_base_locked(struct priority_state *p, uint32_t tid, int policy, int priority)
{
	if (!policy_valid(policy, priority))
		return EINVAL;
	int base = policy_is_realtime(policy) ? priority : 0;
	int r = priority_apply(policy, base, tid, effective_over(p, base));
	if (r == 0) {
		set_base(p, policy, base);
		atomic_store_explicit(&p->base_unknown, false, memory_order_relaxed);
		atomic_store_explicit(&p->glibc_stale, true, memory_order_relaxed);
	}
	return r;
}

/* Set thread's priority: through glibc's function, unless glibc is
 * unaware of it (it holds PP mutexes, whose ceilings must stay in force). */
static int set_priority(pthread_t thread, int policy, int priority, bool keep_policy)
{
	/* before any lock: only a call that comes before our constructor
	 * (another library's) looks the functions up here */
	priority_init();
	struct priority_state *p = state_find(thread);
	if (p) {
		/* Odd from here on: an owner's raise or drop without the lock
		 * that overlaps this call sees it and redoes its work under the
		 * lock.  The fence, against the owner's (ceiling.c): either we
		 * see its ceilings, or it sees us. */
		atomic_fetch_add_explicit(&p->changes, 1, memory_order_relaxed);
		atomic_thread_fence(memory_order_seq_cst);
	}
	int r;
	if (p && glibc_unaware(p)) {
		/* A setschedprio keeps the policy: if a change through glibc
		 * left it unknown to us, the kernel has it (nothing runs the
		 * thread above its base then). */
		if (keep_policy && atomic_load_explicit(&p->base_unknown, memory_order_relaxed))
			r = priority_refresh_base(p);
		else
			r = 0;
		if (r == 0)
			r = set_base_locked(p, p->tid, keep_policy ? base_policy(p) : policy, priority);
	} else {
		if (keep_policy) {
			setschedprio_fn *next = atomic_load_explicit(&next_setschedprio, memory_order_acquire);
			r = next ? next(thread, priority) : ENOSYS;
		} else {
			r = glibc_setschedparam(thread, policy, priority);
		}
		/* The kernel has the new base, p the old one. */
		if (p)
			atomic_store_explicit(&p->base_unknown, true, memory_order_relaxed);
	}
	/* Every thread re-reads its base before its next outermost PP lock. */
	atomic_fetch_add_explicit(&priority_generation, 1, memory_order_release);
	/* release: an owner that reads the even count sees our writes. */
	if (p)
		atomic_fetch_add_explicit(&p->changes, 1, memory_order_release);
	state_release(p);
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

/* What the thread asked for: base while glibc does not know it (it holds
 * a ceiling, or ours is newer), glibc's answer otherwise (also when a
 * change through glibc left our base unknown: glibc has it), read while
 * the thread cannot raise (see the top). */
int rt_getschedparam(pthread_t thread, int *policy, struct sched_param *param)
{
	priority_init();
	getschedparam_fn *next = atomic_load_explicit(&next_getschedparam, memory_order_acquire);
	if (!next)
		return ENOSYS;
	struct priority_state *p = state_find(thread);
	int r;
	if (p && glibc_unaware(p) && !atomic_load_explicit(&p->base_unknown, memory_order_relaxed) &&
	    policy && param) {
		*policy = base_policy(p);
		param->sched_priority = base_priority(p);
		r = 0;
	} else {
		r = next(thread, policy, param);
	}
	state_release(p);
	return r;
}
