/*
 * glibc's symbol versions, per architecture: included by symbols.c (the
 * symver attributes) and by librtpthread.map (the version script, run
 * through the C preprocessor), so that both name the same versions.
 *
 * The names are those of glibc's history, as x86_64 has them.  A port
 * starts at a baseline version, and every version older than its baseline
 * is the baseline there (glibc's shlib-versions, "DEFAULT GLIBC_2.17" for
 * aarch64): pthread_cond_wait@@GLIBC_2.3.2 on x86_64 is
 * pthread_cond_wait@@GLIBC_2.17 on aarch64.  The versions from 2.28 on are
 * newer than both baselines and are written out where they are used.
 *
 * GLIBC_OLD_NODES: 1 where the versions before the baseline are nodes of
 * their own in the version script, 0 where they are all one node.
 */
#ifndef RTPTHREAD_VERSIONS_H
#define RTPTHREAD_VERSIONS_H

#if defined __x86_64__
#define GLIBC_2_2_5 GLIBC_2.2.5
#define GLIBC_2_3_2 GLIBC_2.3.2
#define GLIBC_2_3_3 GLIBC_2.3.3
#define GLIBC_2_3_4 GLIBC_2.3.4
#define GLIBC_2_4 GLIBC_2.4
#define GLIBC_2_12 GLIBC_2.12
#define GLIBC_OLD_NODES 1
#elif defined __aarch64__
#define GLIBC_2_2_5 GLIBC_2.17
#define GLIBC_2_3_2 GLIBC_2.17
#define GLIBC_2_3_3 GLIBC_2.17
#define GLIBC_2_3_4 GLIBC_2.17
#define GLIBC_2_4 GLIBC_2.17
#define GLIBC_2_12 GLIBC_2.17
#define GLIBC_OLD_NODES 0
#else
#error "rtpthread: glibc's symbol versions for this architecture are unknown (preload/versions.h)"
#endif

#endif
