/*
 * Start-up configuration: what the environment asks of the library,
 * parsed once at load (config.c explains the syntax).  Nothing here is
 * read on a lock path before the constructor has filled `config`; until
 * then it holds the defaults.
 */
#ifndef RTPTHREAD_CONFIG_H
#define RTPTHREAD_CONFIG_H

#include <stdbool.h>

/* self.h's definition, repeated (identically, so both may be seen) so that
 * a unit test can compile config.c without the library's include path. */
#ifndef HIDDEN
#define HIDDEN __attribute__((visibility("hidden")))
#endif

/* REPORT: no protocol changes; the contention report counts the waits
 * that inheritance would have bounded. */
enum config_protocol { CONFIG_PROTOCOL_NONE, CONFIG_PROTOCOL_INHERIT, CONFIG_PROTOCOL_PROTECT, CONFIG_PROTOCOL_REPORT };

struct config {
	enum config_protocol protocol; /* given to mutexes that ask for none */
	int ceiling;                   /* 1..99: the ceiling when protocol is protect */
	int spin;                      /* 0..1000000 */
	int stats;                     /* 0 off, 1 on */
	char stats_path[256];          /* "" = stderr, else an absolute path */
	int stats_signal;              /* 0 off, else the signal that asks for a report */
	bool abort_conf;               /* a problem in the configuration was fatal */
	bool in_scope;                 /* false: only_cmds/skip_cmds left this program out */
};

/* The configuration in force: the defaults (in scope, protocol none,
 * ceiling 99, everything else off) until the constructor parses. */
extern struct config config HIDDEN;

/*
 * Parses envp (NULL-terminated "NAME=value" strings; NULL is an empty
 * environment) for the program named `program` (glibc's
 * program_invocation_short_name; NULL counts as "") into *out, which is
 * written whole, once, at the end.  Every problem is written to report_fd
 * as one line, "rtpthread: <where>: <what> (accepted: <values>)\n", and
 * the setting it concerns keeps the value it had before that source.
 * Returns the number of problems reported; if abort_conf is true in the
 * configuration, the first problem is reported and then abort()s.
 * No allocation, no stdio, no locale: safe in a constructor.
 */
int config_parse(struct config *out, char *const *envp, const char *program, int report_fd) HIDDEN;

#endif
