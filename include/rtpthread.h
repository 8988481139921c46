/*
 * rtpthread: the public extension API.  Everything else the library offers
 * is the standard <pthread.h> and <threads.h> interface.
 */
#ifndef RTPTHREAD_H
#define RTPTHREAD_H

#ifdef __cplusplus
extern "C" {
#endif

/* The library's version, "MAJOR.MINOR.PATCH"; also a cheap way for a
 * program to tell whether it runs with rtpthread (dlsym(RTLD_DEFAULT,
 * "rtpthread_version") is non-NULL). */
const char *rtpthread_version(void);

#ifdef __cplusplus
}
#endif

#endif
