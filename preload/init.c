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
#include <stdbool.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysinfo.h>
#include <unistd.h>

#include "boost.h"
#include "api.h"
#include "config.h"
#include "mutex.h"
#include "once.h"
#include "priority.h"
#include "robust.h"
#include "self.h"
#include "stats.h"

extern char **environ;

/* Standard error as it was at load, for the report: programs close fd 2
 * before they exit (xz, coreutils' close_stdout) or point it elsewhere.
 * The report goes to the copy while it is still that file, else to fd 2
 * while fd 2 is still that file (a program that closes every descriptor
 * may reuse the copy's number for one of its own), else nowhere: fd 2 is
 * then a file the program opened for itself (a program started with fd 2
 * closed gets it from its first open), and the report would land in the
 * program's own data. */
static int report_stderr = -1;
static struct stat report_stderr_stat;

static void keep_stderr(void)
{
	int fd = fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 3);
	if (fd >= 0 && fstat(fd, &report_stderr_stat) == 0)
		report_stderr = fd;
	else if (fd >= 0)
		close(fd);
}

static bool is_start_stderr(int fd)
{
	struct stat now;
	return fstat(fd, &now) == 0 && now.st_dev == report_stderr_stat.st_dev &&
	       now.st_ino == report_stderr_stat.st_ino;
}

/* -1: standard error was closed at load, or is gone. */
static int stderr_for_report(void)
{
	if (report_stderr < 0)
		return -1;
	if (is_start_stderr(report_stderr))
		return report_stderr;
	return is_start_stderr(STDERR_FILENO) ? STDERR_FILENO : -1;
}

/* The contention report, to stderr or appended to the configured file:
 * open, poll, write and close only, so a signal handler may call it.  It
 * never blocks for long: the file is opened O_NONBLOCK (a FIFO nobody
 * reads fails with ENXIO: no report), and stats_report gives up when
 * the output stays full (see emit in stats.c).  A regular file on a slow
 * disk still takes what the kernel's write takes. */
static void report(void)
{
	int fd;
	if (config.stats_path[0])
		fd = open(config.stats_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NONBLOCK | O_NOCTTY, 0644);
	else
		fd = stderr_for_report();
	if (fd < 0)
		return;
	stats_report(fd);
	if (config.stats_path[0])
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
	/* The CPU count is read here, once: never on a lock path. */
	mutex_set_spin(config.in_scope ? config.spin : 0, get_nprocs());
	if (!config.in_scope)
		return;
	static const int protocols[] = { [CONFIG_PROTOCOL_NONE] = 0,
					 [CONFIG_PROTOCOL_INHERIT] = KIND_PI | KIND_DEFAULTED,
					 [CONFIG_PROTOCOL_PROTECT] = KIND_PP | KIND_DEFAULTED,
					 [CONFIG_PROTOCOL_REPORT] = KIND_DEFAULTED };
	mutex_set_default_protocol(protocols[config.protocol], config.ceiling);
	if (config.stats || config.protocol == CONFIG_PROTOCOL_REPORT) {
		stats_enable();
		if (!config.stats_path[0])
			keep_stderr();
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

/* Our prepare handler runs last, after those that lock. */
static void before_fork(void)
{
	self_before_fork();
}

static void after_fork_child(void)
{
	self_after_fork();
	robust_after_fork();
	priority_after_fork();
	boost_after_fork();
	once_after_fork();
	stats_after_fork();
}

__attribute__((constructor)) static void rtpthread_start(void)
{
	self_init();
	robust_init();
	configure();
	pthread_atfork(before_fork, NULL, after_fork_child);
	priority_init();
	boost_init();
}

__attribute__((destructor)) static void rtpthread_stop(void)
{
	if (stats_enabled) {
		stats_resolve_names();
		report();
	}
}
