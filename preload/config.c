/*
 * Start-up configuration (config.h), parsed once at load from the
 * environment.  Two sources, the second overriding the first key by key:
 *
 *   1. Plain variables, one per setting that people change most:
 *        RTPTHREAD_PROTOCOL=inherit|protect|report|none
 *        RTPTHREAD_CEILING=1..99
 *        RTPTHREAD_SPIN=0..1000000
 *        RTPTHREAD_STATS=0|1|/absolute/path
 *        RTPTHREAD_ONLY_CMDS=name,name,...
 *        RTPTHREAD_SKIP_CMDS=name,name,...
 *   2. RTPTHREAD_CONF="key:value,key:value,...", with every key:
 *        protocol      inherit, protect, report, none (default none);
 *                      report changes no protocol and turns the contention
 *                      report on, counting the waits inheritance would
 *                      have bounded
 *        ceiling       1..99, the ceiling when protocol is protect
 *                      (default sched_get_priority_max(SCHED_FIFO): a
 *                      lower default would make every lock by a thread
 *                      above it fail with EINVAL, as POSIX requires,
 *                      while a configuration applies to every mutex of
 *                      programs whose priorities it cannot know; the
 *                      price, lockers above PREEMPT_RT's interrupt
 *                      threads at FIFO 50 while they hold a lock, is
 *                      the user's to lower with this key)
 *        spin          0..1000000 (default 0)
 *        stats         0 off, 1 to stderr, or an absolute path (default 0)
 *        stats_signal  USR1, USR2, RTMIN+N, a signal number; 0 or none off
 *        only_cmds     program names separated by ':' (only_cmds:python3:cyclictest)
 *        skip_cmds     the same
 *        abort_conf    true, false (default false)
 *
 * RTPTHREAD_CONF is jemalloc's MALLOC_CONF syntax, so that people who tune
 * an allocator under LD_PRELOAD already know it: pairs separated by ',',
 * key and value by the FIRST ':' (a value may hold more, which is why the
 * lists in it separate names with ':'), empty pairs ignored, and
 * abort_conf:true making every problem fatal.  abort_conf is decided
 * before anything else is parsed, wherever in the string it stands, so
 * that a problem in a plain variable or in the first pair already aborts.
 *
 * only_cmds and skip_cmds are libfaketime's FAKETIME_ONLY_CMDS and
 * FAKETIME_SKIP_CMDS: an LD_PRELOAD reaches every program that a shell, a
 * make or a test harness starts, while usually one of them is the
 * real-time one.  The program name (glibc's program_invocation_short_name,
 * the basename of argv[0]) is compared exactly with each name; empty names
 * are skipped, so a set but empty only_cmds names no program, as in
 * libfaketime.  A program that only_cmds leaves out, or that skip_cmds
 * names, runs with every setting at its default, as if nothing were
 * configured; problems in the configuration are still reported, and
 * abort_conf still applies, since it concerns the configuration, not the
 * program.  Setting both lists is not an error (libfaketime refuses it): a
 * program must be in only_cmds and not in skip_cmds.
 *
 * An RTPTHREAD_* variable that is none of these is a problem too (a typo
 * such as RTPTHREAD_PROTOCOLL would otherwise leave a program without
 * the protocol it was meant to get, silently), except the few names that
 * the project's wrapper and tests read (tool_variables).
 *
 * Each problem (an unknown variable or key, a bad value, a pair without
 * ':', a value longer than CONFIG_INPUT_MAX) is one line on report_fd,
 * one write(2):
 *
 *   rtpthread: environment: unknown variable "RTPTHREAD_PROTOCOLL" (accepted: RTPTHREAD_CONF, ...)
 *   rtpthread: RTPTHREAD_CONF: unknown key "protcol" (accepted: protocol, ceiling, ...)
 *   rtpthread: RTPTHREAD_PROTOCOL: bad value "inheritt" (accepted: inherit, protect, report, none)
 *   rtpthread: RTPTHREAD_CONF: spin: bad value "-1" (accepted: 0..1000000)
 *   rtpthread: RTPTHREAD_CONF: no ':' in "protocol" (accepted: key:value pairs separated by ',')
 *
 * and a bad value overrides nothing: the setting keeps its default, or what
 * the plain variable set.  A quoted value shows at most VALUE_SHOWN_MAX
 * bytes, control characters as '?', so that a report stays one line.
 *
 * This runs in the constructor, possibly before the program's own, and in
 * programs that must not block: no allocation, no stdio, no locale (digits
 * and names are compared byte by byte), and every loop runs over an input
 * capped at CONFIG_INPUT_MAX bytes (a longer one is reported whole as a
 * bad value and ignored).  The lists are not copied: they stay spans of
 * the environment strings, which outlive the parse.
 */
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"

#define CONFIG_INPUT_MAX 4096 /* bytes of one variable */
#define VALUE_SHOWN_MAX 64    /* bytes of a bad value quoted in a report */
#define CEILING_MAX 99        /* Linux's highest SCHED_FIFO priority */
#define SPIN_MAX 1000000
#define STRINGIFY(x) #x
#define TEXT_OF(x) STRINGIFY(x)

struct config config = {
	.protocol = CONFIG_PROTOCOL_NONE,
	.ceiling = CEILING_MAX,
	.in_scope = true,
};

/* A list of program names: a span of an environment string. */
struct name_list {
	const char *names;
	size_t length;
	char separator; /* ',' in a plain variable, ':' inside RTPTHREAD_CONF */
	bool set;
};

struct parse {
	struct config config;
	struct name_list only_cmds, skip_cmds;
	int report_fd;
	int problems;
};

static struct config config_defaults(void)
{
	int ceiling = sched_get_priority_max(SCHED_FIFO);
	if (ceiling < 1 || ceiling > CEILING_MAX)
		ceiling = CEILING_MAX;
	return (struct config){ .protocol = CONFIG_PROTOCOL_NONE, .ceiling = ceiling, .in_scope = true };
}

/* ---- values ---- */

static bool equals(const char *s, size_t length, const char *word)
{
	return length == strlen(word) && memcmp(s, word, length) == 0;
}

/* Decimal 0..max, digits only: no sign, no space, no base prefix. */
static bool parse_decimal(const char *s, size_t length, long max, long *out)
{
	long value = 0;
	if (length == 0)
		return false;
	for (size_t i = 0; i < length; i++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
		value = value * 10 + (s[i] - '0');
		if (value > max) /* checked at every digit: no overflow */
			return false;
	}
	*out = value;
	return true;
}

static bool parse_bool(const char *s, size_t length, bool *out)
{
	if (equals(s, length, "true"))
		*out = true;
	else if (equals(s, length, "false"))
		*out = false;
	else
		return false;
	return true;
}

/* Signals a program may take for a report: not KILL or STOP, which cannot
 * be caught, nor the two between SIGSYS and SIGRTMIN that glibc keeps for
 * itself (cancellation and setxid). */
static bool signal_usable(long sig)
{
	return (sig >= 1 && sig <= SIGSYS && sig != SIGKILL && sig != SIGSTOP) || (sig >= SIGRTMIN && sig <= SIGRTMAX);
}

/* ---- keys ---- */

/* Each setter stores a valid value and returns true, or changes nothing
 * and returns false.  separator: between the names of a list. */
typedef bool setter(struct parse *p, const char *value, size_t length, char separator);

static bool set_protocol(struct parse *p, const char *value, size_t length, char separator)
{
	(void)separator;
	if (equals(value, length, "none"))
		p->config.protocol = CONFIG_PROTOCOL_NONE;
	else if (equals(value, length, "inherit"))
		p->config.protocol = CONFIG_PROTOCOL_INHERIT;
	else if (equals(value, length, "protect"))
		p->config.protocol = CONFIG_PROTOCOL_PROTECT;
	else if (equals(value, length, "report"))
		p->config.protocol = CONFIG_PROTOCOL_REPORT;
	else
		return false;
	return true;
}

static bool set_ceiling(struct parse *p, const char *value, size_t length, char separator)
{
	long ceiling;
	(void)separator;
	if (!parse_decimal(value, length, CEILING_MAX, &ceiling) || ceiling < 1)
		return false;
	p->config.ceiling = (int)ceiling;
	return true;
}

static bool set_spin(struct parse *p, const char *value, size_t length, char separator)
{
	long spin;
	(void)separator;
	if (!parse_decimal(value, length, SPIN_MAX, &spin))
		return false;
	p->config.spin = (int)spin;
	return true;
}

static bool set_stats(struct parse *p, const char *value, size_t length, char separator)
{
	(void)separator;
	if (equals(value, length, "0") || equals(value, length, "1")) {
		p->config.stats = value[0] - '0';
		p->config.stats_path[0] = '\0';
	} else if (length > 0 && value[0] == '/' && length < sizeof p->config.stats_path) {
		/* absolute: the working directory at load says nothing about
		 * where a report at exit belongs */
		p->config.stats = 1;
		memcpy(p->config.stats_path, value, length);
		p->config.stats_path[length] = '\0';
	} else {
		return false;
	}
	return true;
}

static bool set_stats_signal(struct parse *p, const char *value, size_t length, char separator)
{
	static const char rtmin[] = "RTMIN+";
	const size_t rtmin_length = sizeof rtmin - 1;
	long number;
	int sig;
	(void)separator;
	if (equals(value, length, "0") || equals(value, length, "none"))
		sig = 0;
	else if (equals(value, length, "USR1"))
		sig = SIGUSR1;
	else if (equals(value, length, "USR2"))
		sig = SIGUSR2;
	else if (length > rtmin_length && memcmp(value, rtmin, rtmin_length) == 0 &&
		 parse_decimal(value + rtmin_length, length - rtmin_length, SIGRTMAX - SIGRTMIN, &number))
		sig = SIGRTMIN + (int)number;
	else if (parse_decimal(value, length, SIGRTMAX, &number) && signal_usable(number))
		sig = (int)number;
	else
		return false;
	p->config.stats_signal = sig;
	return true;
}

static bool set_list(struct name_list *list, const char *value, size_t length, char separator)
{
	*list = (struct name_list){ .names = value, .length = length, .separator = separator, .set = true };
	return true;
}

static bool set_only_cmds(struct parse *p, const char *value, size_t length, char separator)
{
	return set_list(&p->only_cmds, value, length, separator);
}

static bool set_skip_cmds(struct parse *p, const char *value, size_t length, char separator)
{
	return set_list(&p->skip_cmds, value, length, separator);
}

/* Only checked here: conf_aborts decided it before anything was parsed,
 * from the last valid value, which a pair here must not undo midway. */
static bool set_abort_conf(struct parse *p, const char *value, size_t length, char separator)
{
	bool abort_conf;
	(void)p;
	(void)separator;
	return parse_bool(value, length, &abort_conf);
}

struct key {
	const char *name;
	setter *set;
	const char *accepted;
};

static const struct key keys[] = {
	{ "protocol", set_protocol, "inherit, protect, report, none" },
	{ "ceiling", set_ceiling, "1..99" },
	{ "spin", set_spin, "0..1000000" },
	{ "stats", set_stats, "0, 1, an absolute path shorter than 256 bytes" },
	{ "stats_signal", set_stats_signal, "USR1, USR2, RTMIN+N up to RTMAX, a catchable signal number, 0, none" },
	{ "only_cmds", set_only_cmds, "program names" },
	{ "skip_cmds", set_skip_cmds, "program names" },
	{ "abort_conf", set_abort_conf, "true, false" },
};
#define KEY_COUNT (sizeof keys / sizeof keys[0])

/* ---- reports ---- */

struct line {
	char text[512];
	size_t length;
};

/* Appends what fits, keeping one byte for the final '\n'. */
static void line_add(struct line *line, const char *s, size_t length)
{
	size_t room = sizeof line->text - 1 - line->length;
	if (length > room)
		length = room;
	memcpy(line->text + line->length, s, length);
	line->length += length;
}

/* Our own constants only: their length is known to be small. */
static void line_add_text(struct line *line, const char *s)
{
	line_add(line, s, strlen(s));
}

static void line_add_quoted(struct line *line, const char *value, size_t length)
{
	size_t shown = length > VALUE_SHOWN_MAX ? VALUE_SHOWN_MAX : length;
	line_add_text(line, "\"");
	for (size_t i = 0; i < shown; i++) {
		char c = value[i];
		if ((unsigned char)c < 0x20 || c == 0x7f)
			c = '?'; /* a newline in a value must not split the report */
		line_add(line, &c, 1);
	}
	if (shown < length)
		line_add_text(line, "...");
	line_add_text(line, "\"");
}

/*
 * "rtpthread: WHERE: [KEY: ]WHAT "VALUE" (accepted: ACCEPTED)\n" in one
 * write (ACCEPTED NULL: the names of the keys), so that lines from several
 * processes do not interleave.  The retries are bounded: a report that
 * cannot be written is dropped, and the problem still counts (and still
 * aborts under abort_conf).
 */
static void report(struct parse *p, const char *where, const char *key, const char *what, const char *value,
		   size_t length, const char *accepted)
{
	struct line line = { .length = 0 };
	line_add_text(&line, "rtpthread: ");
	line_add_text(&line, where);
	line_add_text(&line, ": ");
	if (key) {
		line_add_text(&line, key);
		line_add_text(&line, ": ");
	}
	line_add_text(&line, what);
	line_add_text(&line, " ");
	line_add_quoted(&line, value, length);
	line_add_text(&line, " (accepted: ");
	if (accepted != NULL) {
		line_add_text(&line, accepted);
	} else {
		for (size_t i = 0; i < KEY_COUNT; i++) {
			line_add_text(&line, i > 0 ? ", " : "");
			line_add_text(&line, keys[i].name);
		}
	}
	line_add_text(&line, ")");
	line.text[line.length++] = '\n';

	const char *s = line.text;
	size_t left = line.length;
	for (int tries = 0; left > 0 && tries < 8; tries++) {
		ssize_t written = write(p->report_fd, s, left);
		if (written > 0) {
			s += written;
			left -= (size_t)written;
		} else if (written < 0 && errno != EINTR) {
			break;
		}
	}
	p->problems++;
	if (p->config.abort_conf)
		abort();
}

static const char too_long[] = "at most " TEXT_OF(CONFIG_INPUT_MAX) " bytes";

static const struct key *find_key(const char *name, size_t length)
{
	for (size_t i = 0; i < KEY_COUNT; i++)
		if (equals(name, length, keys[i].name))
			return &keys[i];
	return NULL;
}

/* ---- sources ---- */

static const struct {
	const char *name;
	const char *key;
} plain_variables[] = {
	{ "RTPTHREAD_PROTOCOL", "protocol" },   { "RTPTHREAD_CEILING", "ceiling" },
	{ "RTPTHREAD_SPIN", "spin" },           { "RTPTHREAD_STATS", "stats" },
	{ "RTPTHREAD_ONLY_CMDS", "only_cmds" }, { "RTPTHREAD_SKIP_CMDS", "skip_cmds" },
};
#define PLAIN_COUNT (sizeof plain_variables / sizeof plain_variables[0])

/* Read by the project's tests (RTPTHREAD_LIB: the library under test),
 * never by the library: not a mistake to find in a program's
 * environment. */
static const char *const tool_variables[] = {
	"RTPTHREAD_LIB",
	"RTPTHREAD_TEST_STRICT",
};

static const char accepted_variables[] = "RTPTHREAD_CONF, RTPTHREAD_PROTOCOL, RTPTHREAD_CEILING, RTPTHREAD_SPIN, "
					 "RTPTHREAD_STATS, RTPTHREAD_ONLY_CMDS, RTPTHREAD_SKIP_CMDS";

/* The first NAME=value, as getenv finds it.  The kernel bounds the number
 * of environment strings (execve's limits); each is compared over at most
 * the length of name plus one. */
static const char *find_variable(char *const *envp, const char *name)
{
	size_t length = strlen(name);
	if (envp == NULL)
		return NULL;
	for (; *envp != NULL; envp++)
		if (strncmp(*envp, name, length) == 0 && (*envp)[length] == '=')
			return *envp + length + 1;
	return NULL;
}

/* The length of value, or CONFIG_INPUT_MAX + 1 if it is longer than that. */
static size_t capped_length(const char *value)
{
	return strnlen(value, CONFIG_INPUT_MAX + 1);
}

struct pair {
	const char *key;
	size_t key_length;
	const char *value; /* NULL: no ':' */
	size_t value_length;
};

/* The next non-empty pair of conf[*offset..length), split at its first
 * ':'; false at the end.  Empty pairs (",,", a leading or trailing ',')
 * are skipped, as jemalloc does. */
static bool next_pair(const char *conf, size_t length, size_t *offset, struct pair *pair)
{
	size_t start = *offset;
	while (start < length && conf[start] == ',')
		start++;
	if (start >= length)
		return false;
	size_t end = start;
	while (end < length && conf[end] != ',')
		end++;
	*offset = end;
	const char *colon = memchr(conf + start, ':', end - start);
	*pair = (struct pair){ .key = conf + start, .key_length = end - start };
	if (colon != NULL) {
		pair->key_length = (size_t)(colon - pair->key);
		pair->value = colon + 1;
		pair->value_length = end - start - pair->key_length - 1;
	}
	return true;
}

/* abort_conf as RTPTHREAD_CONF sets it (the last valid value), looked for
 * before anything is parsed, so that it covers every problem. */
static bool conf_aborts(const char *conf, size_t length)
{
	bool abort_conf = false, value;
	size_t offset = 0;
	struct pair pair;
	while (next_pair(conf, length, &offset, &pair))
		if (pair.value != NULL && equals(pair.key, pair.key_length, "abort_conf") &&
		    parse_bool(pair.value, pair.value_length, &value))
			abort_conf = value;
	return abort_conf;
}

static bool variable_known(const char *name, size_t length)
{
	if (equals(name, length, "RTPTHREAD_CONF"))
		return true;
	for (size_t i = 0; i < PLAIN_COUNT; i++)
		if (equals(name, length, plain_variables[i].name))
			return true;
	for (size_t i = 0; i < sizeof tool_variables / sizeof tool_variables[0]; i++)
		if (equals(name, length, tool_variables[i]))
			return true;
	return false;
}

/* Every RTPTHREAD_*=... entry whose name is none of ours, in the order of
 * the environment.  A name is compared over at most CONFIG_INPUT_MAX
 * bytes (a longer one is unknown anyway). */
static void parse_unknown(struct parse *p, char *const *envp)
{
	static const char prefix[] = "RTPTHREAD_";
	if (envp == NULL)
		return;
	for (; *envp != NULL; envp++) {
		if (strncmp(*envp, prefix, sizeof prefix - 1) != 0)
			continue;
		const char *equal = memchr(*envp, '=', capped_length(*envp));
		if (equal == NULL)
			continue; /* not NAME=value: no variable getenv would find */
		size_t length = (size_t)(equal - *envp);
		if (!variable_known(*envp, length))
			report(p, "environment", NULL, "unknown variable", *envp, length, accepted_variables);
	}
}

static void parse_plain(struct parse *p, char *const *envp)
{
	parse_unknown(p, envp);
	for (size_t i = 0; i < PLAIN_COUNT; i++) {
		const char *name = plain_variables[i].name, *value = find_variable(envp, name);
		if (value == NULL)
			continue;
		const struct key *key = find_key(plain_variables[i].key, strlen(plain_variables[i].key));
		size_t length = capped_length(value);
		if (length > CONFIG_INPUT_MAX)
			report(p, name, NULL, "bad value", value, length, too_long);
		else if (!key->set(p, value, length, ','))
			report(p, name, NULL, "bad value", value, length, key->accepted);
	}
}

static void parse_conf(struct parse *p, const char *conf, size_t length)
{
	size_t offset = 0;
	struct pair pair;
	while (next_pair(conf, length, &offset, &pair)) {
		const struct key *key = find_key(pair.key, pair.key_length);
		if (pair.value == NULL)
			report(p, "RTPTHREAD_CONF", NULL, "no ':' in", pair.key, pair.key_length,
			       "key:value pairs separated by ','");
		else if (key == NULL)
			report(p, "RTPTHREAD_CONF", NULL, "unknown key", pair.key, pair.key_length, NULL);
		else if (!key->set(p, pair.value, pair.value_length, ':'))
			report(p, "RTPTHREAD_CONF", key->name, "bad value", pair.value, pair.value_length,
			       key->accepted);
	}
}

/* Whether list names program exactly; empty names never match. */
static bool list_names(const struct name_list *list, const char *program, size_t program_length)
{
	size_t start = 0;
	while (start < list->length) {
		size_t end = start;
		while (end < list->length && list->names[end] != list->separator)
			end++;
		if (end > start && end - start == program_length &&
		    memcmp(list->names + start, program, program_length) == 0)
			return true;
		start = end + 1;
	}
	return false;
}

static bool program_in_scope(const struct parse *p, const char *program)
{
	size_t length = program != NULL ? capped_length(program) : 0;
	if (program == NULL)
		program = "";
	if (p->only_cmds.set && !list_names(&p->only_cmds, program, length))
		return false;
	return !(p->skip_cmds.set && list_names(&p->skip_cmds, program, length));
}

int config_parse(struct config *out, char *const *envp, const char *program, int report_fd)
{
	struct parse p = { .config = config_defaults(), .report_fd = report_fd };
	const char *conf = find_variable(envp, "RTPTHREAD_CONF");
	size_t conf_length = conf != NULL ? capped_length(conf) : 0;

	if (conf != NULL && conf_length <= CONFIG_INPUT_MAX)
		p.config.abort_conf = conf_aborts(conf, conf_length);
	parse_plain(&p, envp);
	if (conf != NULL && conf_length > CONFIG_INPUT_MAX)
		report(&p, "RTPTHREAD_CONF", NULL, "bad value", conf, conf_length, too_long);
	else if (conf != NULL)
		parse_conf(&p, conf, conf_length);

	if (!program_in_scope(&p, program)) {
		bool abort_conf = p.config.abort_conf;
		p.config = config_defaults();
		p.config.abort_conf = abort_conf;
		p.config.in_scope = false;
	}
	*out = p.config;
	return p.problems;
}
