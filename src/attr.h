/*
 * Attribute objects use glibc's encodings (pthread_*attr_t is one int on
 * x86_64), so an attribute written by any glibc-compatible code reads the
 * same here:
 *   mutexattr:   type (bits 0-1) | ceiling << 12 | protocol << 28
 *                | 0x40000000 robust | 0x80000000 process-shared, and
 *                ours: 0x04000000 protocol chosen (even if NONE)
 *   condattr:    bit 0 process-shared, bit 1 CLOCK_MONOTONIC
 *   barrierattr: 0 private, 1 process-shared
 */
#ifndef RTPTHREAD_ATTR_H
#define RTPTHREAD_ATTR_H

#include <pthread.h>
#include <stdbool.h>

#include "self.h"

#define MUTEXATTR_TYPE_MASK 0x3u
#define MUTEXATTR_CEILING_SHIFT 12
#define MUTEXATTR_CEILING_MASK 0x00fff000u
#define MUTEXATTR_PROTOCOL_SHIFT 28
#define MUTEXATTR_PROTOCOL_MASK 0x30000000u
/* Ours: setprotocol was called, so the default protocol does not apply. */
#define MUTEXATTR_PROTOCOL_SET 0x04000000u
#define MUTEXATTR_ROBUST 0x40000000u
#define MUTEXATTR_PSHARED 0x80000000u

#define CONDATTR_PSHARED 0x1u
#define CONDATTR_MONOTONIC 0x2u

/* SCHED_FIFO's range: PP ceilings are real-time priorities. */
#define PRIORITY_MIN 1
#define PRIORITY_MAX 99

static inline unsigned attr_value(const void *attr)
{
	return *(const unsigned *)attr;
}

static inline void attr_store(void *attr, unsigned value)
{
	*(unsigned *)attr = value;
}

/* The ceiling an attribute gives: glibc reads an unset one as the minimum. */
static inline int mutexattr_ceiling(unsigned value)
{
	int ceiling = (int)((value & MUTEXATTR_CEILING_MASK) >> MUTEXATTR_CEILING_SHIFT);
	return ceiling ? ceiling : PRIORITY_MIN;
}

#endif
