/*
 * Our objects are laid over glibc's: these fail the build if a layout or a
 * static initializer ever stops fitting.
 */
#include <pthread.h>
#include <stddef.h>
#include <threads.h>

#include "mutex.h"
#include "rwlock.h"

#define FITS(ours, theirs) \
	_Static_assert(sizeof(ours) <= sizeof(theirs) && _Alignof(ours) <= _Alignof(theirs), \
		       #ours " must fit in " #theirs)

FITS(struct mutex, pthread_mutex_t);
FITS(struct mutex, mtx_t);
FITS(unsigned, pthread_mutexattr_t);
FITS(unsigned, pthread_condattr_t);
FITS(unsigned, pthread_barrierattr_t);

/* glibc's static initializers put the type where we read the kind. */
_Static_assert(offsetof(struct mutex, word) == offsetof(pthread_mutex_t, __data.__lock), "word");
_Static_assert(offsetof(struct mutex, kind) == offsetof(pthread_mutex_t, __data.__kind), "kind");
_Static_assert(offsetof(struct mutex, link) == offsetof(pthread_mutex_t, __data.__list), "link");
_Static_assert(offsetof(struct mutex, link.next) == offsetof(pthread_mutex_t, __data.__list.__next),
	       "robust entry");
_Static_assert(PTHREAD_MUTEX_NORMAL == 0 && PTHREAD_MUTEX_RECURSIVE == 1 &&
		       PTHREAD_MUTEX_ERRORCHECK == 2 && PTHREAD_MUTEX_ADAPTIVE_NP == 3,
	       "glibc's type numbers are our kind's low bits");

FITS(struct rwlock, pthread_rwlock_t);
_Static_assert(sizeof(struct rwlock) == sizeof(pthread_rwlock_t), "the rwlock uses all of glibc's bytes");
/* glibc's static initializers put the kind in __flags, where we read it. */
_Static_assert(offsetof(struct rwlock, flags) == offsetof(pthread_rwlock_t, __data.__flags), "rwlock flags");
_Static_assert(PTHREAD_RWLOCK_PREFER_READER_NP == 0 && PTHREAD_RWLOCK_PREFER_WRITER_NP == 1 &&
		       PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP == 2,
	       "glibc's rwlock kinds are our flags' low bits");
