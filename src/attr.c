/* Mutex, condition and barrier attributes (encodings in attr.h). */
#include <errno.h>
#include <time.h>

#include "attr.h"
#include "api.h"

int rt_mutexattr_init(pthread_mutexattr_t *attr)
{
	attr_store(attr, 0);
	return 0;
}

int rt_mutexattr_destroy(pthread_mutexattr_t *attr)
{
	(void)attr;
	return 0;
}

int rt_mutexattr_settype(pthread_mutexattr_t *attr, int type)
{
	if (type < PTHREAD_MUTEX_NORMAL || type > PTHREAD_MUTEX_ADAPTIVE_NP)
		return EINVAL;
	attr_store(attr, (attr_value(attr) & ~MUTEXATTR_TYPE_MASK) | (unsigned)type);
	return 0;
}

int rt_mutexattr_gettype(const pthread_mutexattr_t *attr, int *type)
{
	*type = (int)(attr_value(attr) & MUTEXATTR_TYPE_MASK);
	return 0;
}

int rt_mutexattr_setprotocol(pthread_mutexattr_t *attr, int protocol)
{
	if (protocol != PTHREAD_PRIO_NONE && protocol != PTHREAD_PRIO_INHERIT &&
	    protocol != PTHREAD_PRIO_PROTECT)
		return EINVAL;
	attr_store(attr, (attr_value(attr) & ~MUTEXATTR_PROTOCOL_MASK) | MUTEXATTR_PROTOCOL_SET |
				 ((unsigned)protocol << MUTEXATTR_PROTOCOL_SHIFT));
	return 0;
}

int rt_mutexattr_getprotocol(const pthread_mutexattr_t *attr, int *protocol)
{
	*protocol = (int)((attr_value(attr) & MUTEXATTR_PROTOCOL_MASK) >> MUTEXATTR_PROTOCOL_SHIFT);
	return 0;
}

int rt_mutexattr_setprioceiling(pthread_mutexattr_t *attr, int ceiling)
{
	if (ceiling < PRIORITY_MIN || ceiling > PRIORITY_MAX)
		return EINVAL;
	attr_store(attr, (attr_value(attr) & ~MUTEXATTR_CEILING_MASK) |
				 ((unsigned)ceiling << MUTEXATTR_CEILING_SHIFT));
	return 0;
}

int rt_mutexattr_getprioceiling(const pthread_mutexattr_t *attr, int *ceiling)
{
	*ceiling = mutexattr_ceiling(attr_value(attr));
	return 0;
}

int rt_mutexattr_setrobust(pthread_mutexattr_t *attr, int robust)
{
	if (robust != PTHREAD_MUTEX_STALLED && robust != PTHREAD_MUTEX_ROBUST)
		return EINVAL;
	unsigned value = attr_value(attr) & ~MUTEXATTR_ROBUST;
	attr_store(attr, robust == PTHREAD_MUTEX_ROBUST ? value | MUTEXATTR_ROBUST : value);
	return 0;
}

int rt_mutexattr_getrobust(const pthread_mutexattr_t *attr, int *robust)
{
	*robust = (attr_value(attr) & MUTEXATTR_ROBUST) ? PTHREAD_MUTEX_ROBUST : PTHREAD_MUTEX_STALLED;
	return 0;
}

static int set_pshared_bit(void *attr, int pshared, unsigned bit)
{
	if (pshared != PTHREAD_PROCESS_PRIVATE && pshared != PTHREAD_PROCESS_SHARED)
		return EINVAL;
	unsigned value = attr_value(attr) & ~bit;
	attr_store(attr, pshared == PTHREAD_PROCESS_SHARED ? value | bit : value);
	return 0;
}

static int get_pshared_bit(const void *attr, int *pshared, unsigned bit)
{
	*pshared = (attr_value(attr) & bit) ? PTHREAD_PROCESS_SHARED : PTHREAD_PROCESS_PRIVATE;
	return 0;
}

int rt_mutexattr_setpshared(pthread_mutexattr_t *attr, int pshared)
{
	return set_pshared_bit(attr, pshared, MUTEXATTR_PSHARED);
}

int rt_mutexattr_getpshared(const pthread_mutexattr_t *attr, int *pshared)
{
	return get_pshared_bit(attr, pshared, MUTEXATTR_PSHARED);
}

int rt_condattr_init(pthread_condattr_t *attr)
{
	attr_store(attr, 0);
	return 0;
}

int rt_condattr_destroy(pthread_condattr_t *attr)
{
	(void)attr;
	return 0;
}

int rt_condattr_setpshared(pthread_condattr_t *attr, int pshared)
{
	return set_pshared_bit(attr, pshared, CONDATTR_PSHARED);
}

int rt_condattr_getpshared(const pthread_condattr_t *attr, int *pshared)
{
	return get_pshared_bit(attr, pshared, CONDATTR_PSHARED);
}

int rt_condattr_setclock(pthread_condattr_t *attr, clockid_t clock)
{
	if (clock != CLOCK_REALTIME && clock != CLOCK_MONOTONIC)
		return EINVAL;
	unsigned value = attr_value(attr) & ~CONDATTR_MONOTONIC;
	attr_store(attr, clock == CLOCK_MONOTONIC ? value | CONDATTR_MONOTONIC : value);
	return 0;
}

int rt_condattr_getclock(const pthread_condattr_t *attr, clockid_t *clock)
{
	*clock = (attr_value(attr) & CONDATTR_MONOTONIC) ? CLOCK_MONOTONIC : CLOCK_REALTIME;
	return 0;
}

int rt_barrierattr_init(pthread_barrierattr_t *attr)
{
	attr_store(attr, 0);
	return 0;
}

int rt_barrierattr_destroy(pthread_barrierattr_t *attr)
{
	(void)attr;
	return 0;
}

int rt_barrierattr_setpshared(pthread_barrierattr_t *attr, int pshared)
{
	return set_pshared_bit(attr, pshared, 1);
}

int rt_barrierattr_getpshared(const pthread_barrierattr_t *attr, int *pshared)
{
	return get_pshared_bit(attr, pshared, 1);
}
