/*
 * Start-up.  Nothing here is needed for correctness before it runs: every
 * entry point fetches what it needs lazily (a library we are preloaded
 * under may lock a mutex from its own constructor first).  What the
 * constructor adds is the fork hook that makes the child re-read its TID,
 * glibc's scheduling functions looked up before any lock is held, and the
 * configuration (config.c): a mutex first used before it runs gets no
 * default protocol.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "mutex.h"
#include "priority.h"
#include "robust.h"
#include "self.h"
#include "stats.h"

extern char **environ;

/* The contention report, to stderr or appended to the configured file:
 * open, write and close only, so a signal handler may call it. */
static void report(void)
{
	int fd = STDERR_FILENO;
	if (config.stats_path[0]) {
		fd = open(config.stats_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
		if (fd < 0)
			return;
	}
	stats_report(fd);
	if (fd != STDERR_FILENO)
		close(fd);
}

static void report_on_signal(int signal)
{
	(void)signal;
	int saved = errno;
	report();
	errno = saved;
}

static void configure(void)
{
	config_parse(&config, environ, program_invocation_short_name, STDERR_FILENO);
	if (!config.in_scope)
		return;
	static const int protocols[] = { [CONFIG_PROTOCOL_NONE] = 0, [CONFIG_PROTOCOL_INHERIT] = KIND_PI,
					 [CONFIG_PROTOCOL_PROTECT] = KIND_PP };
	mutex_set_default_protocol(protocols[config.protocol], config.ceiling);
	mutex_set_spin(config.spin);
	if (config.stats) {
		stats_enabled = true;
		if (config.stats_signal) {
			struct sigaction sa;
			memset(&sa, 0, sizeof sa);
			sa.sa_handler = report_on_signal;
			sa.sa_flags = SA_RESTART;
			sigemptyset(&sa.sa_mask);
			sigaction(config.stats_signal, &sa, NULL);
		}
	}
}

/* The forking thread's TID, from just before fork() to the child's
 * handler (our prepare handler runs last, after those that lock). */
static uint32_t forking_tid;

static void before_fork(void)
{
	forking_tid = self_tid();
}

static void after_fork_child(void)
{
	self_after_fork(forking_tid);
	robust_after_fork();
	priority_after_fork();
	stats_after_fork();
}

__attribute__((constructor)) static void rtpthread_start(void)
{
	self_init();
	configure();
	pthread_atfork(before_fork, NULL, after_fork_child);
	priority_init();
}

__attribute__((destructor)) static void rtpthread_stop(void)
{
	if (stats_enabled)
		report();
}
