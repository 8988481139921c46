/*
 * The start-up configuration parser (preload/config.c), called directly:
 * every key with good and bad values, the plain variables and
 * RTPTHREAD_CONF overriding them, scoping by program name, the exact text
 * of each report (read back through a pipe), abort_conf (in a child,
 * which must die of SIGABRT), empty pairs, and overlong input.
 *
 * The parser is compiled into this program, so the copy built against the
 * library tests the same code; config.c's symbols are hidden in the
 * library and cannot clash with these.
 */
#include <sys/resource.h>

#include "testutil.h"

#include "../preload/config.c"

#define KEYS "protocol, ceiling, spin, stats, stats_signal, only_cmds, skip_cmds, abort_conf"
#define VARIABLES                                                                                        \
	"RTPTHREAD_CONF, RTPTHREAD_PROTOCOL, RTPTHREAD_CEILING, RTPTHREAD_SPIN, RTPTHREAD_STATS, "      \
	"RTPTHREAD_ONLY_CMDS, RTPTHREAD_SKIP_CMDS"

struct result {
	struct config config;
	int problems;
	int lines; /* '\n' in what was reported */
	char reported[8192];
};

/* Reads fd until EOF (the caller closed the write end). */
static void read_all(int fd, char *buffer, size_t size)
{
	size_t used = 0;
	for (;;) {
		ck_assert_uint_lt(used, size - 1);
		ssize_t n = read(fd, buffer + used, size - 1 - used);
		if (n < 0 && errno == EINTR)
			continue;
		ck_assert_int_ge(n, 0);
		if (n == 0)
			break;
		used += (size_t)n;
	}
	buffer[used] = '\0';
}

static int count_lines(const char *s)
{
	int lines = 0;
	for (; *s; s++)
		lines += *s == '\n';
	return lines;
}

/* config_parse over the NULL-terminated entries for program, with the
 * reports collected through a pipe. */
static struct result parse_env(const char *program, const char *const *entries)
{
	static struct result r;
	char *envp[32];
	int fds[2], n = 0;
	memset(&r, 0, sizeof r);
	for (; entries != NULL && entries[n] != NULL; n++) {
		ck_assert_int_lt(n, 31);
		envp[n] = (char *)entries[n];
	}
	envp[n] = NULL;
	ck_assert_int_eq(pipe(fds), 0);
	r.problems = config_parse(&r.config, envp, program, fds[1]);
	close(fds[1]);
	read_all(fds[0], r.reported, sizeof r.reported);
	close(fds[0]);
	r.lines = count_lines(r.reported);
	/* one line per problem, always */
	ck_assert_int_eq(r.lines, r.problems);
	return r;
}

#define ENV(...) ((const char *const[]){ __VA_ARGS__, NULL })

static int default_ceiling(void)
{
	int max = sched_get_priority_max(SCHED_FIFO);
	return max >= 1 && max <= 99 ? max : 99;
}

static void assert_defaults(const struct config *c)
{
	ck_assert_int_eq(c->protocol, CONFIG_PROTOCOL_NONE);
	ck_assert_int_eq(c->ceiling, default_ceiling());
	ck_assert_int_eq(c->spin, 0);
	ck_assert_int_eq(c->stats, 0);
	ck_assert_str_eq(c->stats_path, "");
	ck_assert_int_eq(c->stats_signal, 0);
}

START_TEST(test_defaults)
{
	struct result r = parse_env("prog", ENV("PATH=/usr/bin", "HOME=/root"));
	ck_assert_int_eq(r.problems, 0);
	ck_assert_str_eq(r.reported, "");
	assert_defaults(&r.config);
	ck_assert(!r.config.abort_conf);
	ck_assert(r.config.in_scope);

	struct config c;
	memset(&c, 0xa5, sizeof c);
	ck_assert_int_eq(config_parse(&c, NULL, NULL, -1), 0);
	assert_defaults(&c);
	ck_assert(c.in_scope);

	/* what the library holds before its constructor ran */
	ck_assert_int_eq(config.protocol, CONFIG_PROTOCOL_NONE);
	ck_assert_int_eq(config.ceiling, 99);
	ck_assert_int_eq(config.spin, 0);
	ck_assert_int_eq(config.stats, 0);
	ck_assert_int_eq(config.stats_signal, 0);
	ck_assert(!config.abort_conf);
	ck_assert(config.in_scope);
}
END_TEST

/* ---- every key, good and bad values ---- */

enum field { PROTOCOL, CEILING, SPIN, STATS, STATS_SIGNAL, ABORT_CONF };

struct value_case {
	const char *entry;
	enum field field;
	bool good;
	int want;             /* good: the field's value (STATS_SIGNAL: see rtmin) */
	const char *path;     /* STATS: the expected stats_path */
	bool rtmin;           /* STATS_SIGNAL: want is N in SIGRTMIN + N */
};

#define GOOD(e, f, w) { .entry = (e), .field = (f), .good = true, .want = (w) }
#define GOOD_STATS(e, w, p) { .entry = (e), .field = STATS, .good = true, .want = (w), .path = (p) }
#define GOOD_RTMIN(e, n) { .entry = (e), .field = STATS_SIGNAL, .good = true, .want = (n), .rtmin = true }
#define BAD(e, f) { .entry = (e), .field = (f) }

static const struct value_case value_cases[] = {
	GOOD("RTPTHREAD_PROTOCOL=inherit", PROTOCOL, CONFIG_PROTOCOL_INHERIT),
	GOOD("RTPTHREAD_PROTOCOL=protect", PROTOCOL, CONFIG_PROTOCOL_PROTECT),
	GOOD("RTPTHREAD_PROTOCOL=none", PROTOCOL, CONFIG_PROTOCOL_NONE),
	GOOD("RTPTHREAD_CONF=protocol:inherit", PROTOCOL, CONFIG_PROTOCOL_INHERIT),
	GOOD("RTPTHREAD_CONF=protocol:protect", PROTOCOL, CONFIG_PROTOCOL_PROTECT),
	BAD("RTPTHREAD_PROTOCOL=inheritt", PROTOCOL),
	BAD("RTPTHREAD_PROTOCOL=INHERIT", PROTOCOL),
	BAD("RTPTHREAD_PROTOCOL=", PROTOCOL),
	BAD("RTPTHREAD_PROTOCOL= inherit", PROTOCOL),
	BAD("RTPTHREAD_CONF=protocol:inher", PROTOCOL),
	BAD("RTPTHREAD_CONF=protocol:inherit:x", PROTOCOL), /* split at the first ':' */
	BAD("RTPTHREAD_CONF=protocol:", PROTOCOL),

	GOOD("RTPTHREAD_CONF=ceiling:1", CEILING, 1),
	GOOD("RTPTHREAD_CONF=ceiling:50", CEILING, 50),
	GOOD("RTPTHREAD_CONF=ceiling:99", CEILING, 99),
	GOOD("RTPTHREAD_CONF=ceiling:099", CEILING, 99),
	BAD("RTPTHREAD_CONF=ceiling:0", CEILING),
	BAD("RTPTHREAD_CONF=ceiling:100", CEILING),
	BAD("RTPTHREAD_CONF=ceiling:-1", CEILING),
	BAD("RTPTHREAD_CONF=ceiling:+5", CEILING),
	BAD("RTPTHREAD_CONF=ceiling:5x", CEILING),
	BAD("RTPTHREAD_CONF=ceiling:0x10", CEILING),
	BAD("RTPTHREAD_CONF=ceiling:", CEILING),

	GOOD("RTPTHREAD_SPIN=0", SPIN, 0),
	GOOD("RTPTHREAD_SPIN=250", SPIN, 250),
	GOOD("RTPTHREAD_SPIN=1000000", SPIN, 1000000),
	GOOD("RTPTHREAD_CONF=spin:42", SPIN, 42),
	BAD("RTPTHREAD_SPIN=1000001", SPIN),
	BAD("RTPTHREAD_SPIN=99999999999999999999999999", SPIN),
	BAD("RTPTHREAD_SPIN=-1", SPIN),
	BAD("RTPTHREAD_SPIN=1e3", SPIN),
	BAD("RTPTHREAD_SPIN=12 ", SPIN),
	BAD("RTPTHREAD_SPIN=", SPIN),
	BAD("RTPTHREAD_CONF=spin:-1", SPIN),

	GOOD_STATS("RTPTHREAD_STATS=0", 0, ""),
	GOOD_STATS("RTPTHREAD_STATS=1", 1, ""),
	GOOD_STATS("RTPTHREAD_STATS=/tmp/rt.stats", 1, "/tmp/rt.stats"),
	GOOD_STATS("RTPTHREAD_STATS=/tmp/a,b", 1, "/tmp/a,b"),
	GOOD_STATS("RTPTHREAD_CONF=stats:1", 1, ""),
	GOOD_STATS("RTPTHREAD_CONF=stats:/var/log/x:y", 1, "/var/log/x:y"),
	BAD("RTPTHREAD_STATS=2", STATS),
	BAD("RTPTHREAD_STATS=tmp/rt.stats", STATS),
	BAD("RTPTHREAD_STATS=./rt.stats", STATS),
	BAD("RTPTHREAD_STATS=~/rt.stats", STATS),
	BAD("RTPTHREAD_STATS=", STATS),
	BAD("RTPTHREAD_CONF=stats:yes", STATS),

	GOOD("RTPTHREAD_CONF=stats_signal:USR1", STATS_SIGNAL, SIGUSR1),
	GOOD("RTPTHREAD_CONF=stats_signal:USR2", STATS_SIGNAL, SIGUSR2),
	GOOD_RTMIN("RTPTHREAD_CONF=stats_signal:RTMIN+3", 3),
	GOOD_RTMIN("RTPTHREAD_CONF=stats_signal:RTMIN+0", 0),
	GOOD("RTPTHREAD_CONF=stats_signal:10", STATS_SIGNAL, 10),
	GOOD("RTPTHREAD_CONF=stats_signal:1", STATS_SIGNAL, 1),
	GOOD("RTPTHREAD_CONF=stats_signal:none", STATS_SIGNAL, 0),
	GOOD("RTPTHREAD_CONF=stats_signal:0", STATS_SIGNAL, 0),
	BAD("RTPTHREAD_CONF=stats_signal:SIGUSR1", STATS_SIGNAL),
	BAD("RTPTHREAD_CONF=stats_signal:usr1", STATS_SIGNAL),
	BAD("RTPTHREAD_CONF=stats_signal:USR3", STATS_SIGNAL),
	BAD("RTPTHREAD_CONF=stats_signal:RTMIN+", STATS_SIGNAL),
	BAD("RTPTHREAD_CONF=stats_signal:RTMIN-1", STATS_SIGNAL),
	BAD("RTPTHREAD_CONF=stats_signal:RTMIN+x", STATS_SIGNAL),
	BAD("RTPTHREAD_CONF=stats_signal:RTMIN+999", STATS_SIGNAL),
	BAD("RTPTHREAD_CONF=stats_signal:9", STATS_SIGNAL),   /* KILL: cannot be caught */
	BAD("RTPTHREAD_CONF=stats_signal:19", STATS_SIGNAL),  /* STOP */
	BAD("RTPTHREAD_CONF=stats_signal:32", STATS_SIGNAL),  /* glibc's own */
	BAD("RTPTHREAD_CONF=stats_signal:65", STATS_SIGNAL),
	BAD("RTPTHREAD_CONF=stats_signal:", STATS_SIGNAL),

	GOOD("RTPTHREAD_CONF=abort_conf:false", ABORT_CONF, 0),
	BAD("RTPTHREAD_CONF=abort_conf:yes", ABORT_CONF),
	BAD("RTPTHREAD_CONF=abort_conf:1", ABORT_CONF),
};

static int field_value(const struct config *c, enum field field)
{
	switch (field) {
	case PROTOCOL:
		return (int)c->protocol;
	case CEILING:
		return c->ceiling;
	case SPIN:
		return c->spin;
	case STATS:
		return c->stats;
	case STATS_SIGNAL:
		return c->stats_signal;
	default:
		return c->abort_conf;
	}
}

START_TEST(test_values)
{
	const struct value_case *t = &value_cases[_i];
	struct result r = parse_env("prog", ENV(t->entry));
	struct config defaults = config_defaults();
	if (t->good) {
		int want = t->rtmin ? SIGRTMIN + t->want : t->want;
		ck_assert_msg(r.problems == 0, "%s: reported %s", t->entry, r.reported);
		ck_assert_msg(field_value(&r.config, t->field) == want, "%s: got %d, want %d", t->entry,
			      field_value(&r.config, t->field), want);
		if (t->field == STATS)
			ck_assert_str_eq(r.config.stats_path, t->path);
	} else {
		ck_assert_msg(r.problems == 1, "%s: %d problems", t->entry, r.problems);
		ck_assert_msg(strstr(r.reported, ": bad value \"") != NULL, "%s: reported %s", t->entry, r.reported);
		ck_assert_msg(field_value(&r.config, t->field) == field_value(&defaults, t->field),
			      "%s: a bad value changed the setting to %d", t->entry, field_value(&r.config, t->field));
		ck_assert_str_eq(r.config.stats_path, "");
	}
	ck_assert(r.config.in_scope);
}
END_TEST

START_TEST(test_stats_path_length)
{
	static char entry[sizeof "RTPTHREAD_STATS=" + 300];
	size_t prefix = strlen("RTPTHREAD_STATS=");
	memcpy(entry, "RTPTHREAD_STATS=", prefix);
	entry[prefix] = '/';
	memset(entry + prefix + 1, 'p', 254);
	entry[prefix + 255] = '\0'; /* 255 bytes: fits with its terminator */
	struct result r = parse_env("prog", ENV(entry));
	ck_assert_int_eq(r.problems, 0);
	ck_assert_int_eq(r.config.stats, 1);
	ck_assert_uint_eq(strlen(r.config.stats_path), 255);
	ck_assert_int_eq(memcmp(r.config.stats_path, entry + prefix, 255), 0);

	entry[prefix + 255] = 'p'; /* 256 bytes */
	entry[prefix + 256] = '\0';
	r = parse_env("prog", ENV(entry));
	ck_assert_int_eq(r.problems, 1);
	ck_assert_int_eq(r.config.stats, 0);
	ck_assert_str_eq(r.config.stats_path, "");
}
END_TEST

/* ---- the exact text of reports ---- */

struct message_case {
	const char *entries[6];
	const char *reported;
};

static const struct message_case message_cases[] = {
	{ { "RTPTHREAD_CONF=protcol:inherit" },
	  "rtpthread: RTPTHREAD_CONF: unknown key \"protcol\" (accepted: " KEYS ")\n" },
	{ { "RTPTHREAD_PROTOCOL=inheritt" },
	  "rtpthread: RTPTHREAD_PROTOCOL: bad value \"inheritt\" (accepted: inherit, protect, report, none)\n" },
	{ { "RTPTHREAD_CONF=protocol:inheritt" },
	  "rtpthread: RTPTHREAD_CONF: protocol: bad value \"inheritt\" (accepted: inherit, protect, report, none)\n" },
	{ { "RTPTHREAD_CONF=ceiling:100" }, "rtpthread: RTPTHREAD_CONF: ceiling: bad value \"100\" (accepted: 1..99)\n" },
	{ { "RTPTHREAD_SPIN=-1" }, "rtpthread: RTPTHREAD_SPIN: bad value \"-1\" (accepted: 0..1000000)\n" },
	{ { "RTPTHREAD_STATS=rel" },
	  "rtpthread: RTPTHREAD_STATS: bad value \"rel\" (accepted: 0, 1, an absolute path shorter than 256 bytes)\n" },
	{ { "RTPTHREAD_CONF=stats_signal:KILL" },
	  "rtpthread: RTPTHREAD_CONF: stats_signal: bad value \"KILL\" (accepted: USR1, USR2, RTMIN+N up to RTMAX, "
	  "a catchable signal number, 0, none)\n" },
	{ { "RTPTHREAD_CONF=abort_conf:on" },
	  "rtpthread: RTPTHREAD_CONF: abort_conf: bad value \"on\" (accepted: true, false)\n" },
	{ { "RTPTHREAD_CONF=protocol" },
	  "rtpthread: RTPTHREAD_CONF: no ':' in \"protocol\" (accepted: key:value pairs separated by ',')\n" },
	{ { "RTPTHREAD_CONF=:inherit" }, "rtpthread: RTPTHREAD_CONF: unknown key \"\" (accepted: " KEYS ")\n" },
	{ { "RTPTHREAD_CONF=Protocol:inherit" },
	  "rtpthread: RTPTHREAD_CONF: unknown key \"Protocol\" (accepted: " KEYS ")\n" },
	/* a report stays one line whatever the value holds */
	{ { "RTPTHREAD_PROTOCOL=in\nher\tit" },
	  "rtpthread: RTPTHREAD_PROTOCOL: bad value \"in?her?it\" (accepted: inherit, protect, report, none)\n" },
	/* in order: plain variables first, then the pairs as written */
	{ { "RTPTHREAD_CONF=spin:x,bogus:1,ceiling:0", "RTPTHREAD_PROTOCOL=pi" },
	  "rtpthread: RTPTHREAD_PROTOCOL: bad value \"pi\" (accepted: inherit, protect, report, none)\n"
	  "rtpthread: RTPTHREAD_CONF: spin: bad value \"x\" (accepted: 0..1000000)\n"
	  "rtpthread: RTPTHREAD_CONF: unknown key \"bogus\" (accepted: " KEYS ")\n"
	  "rtpthread: RTPTHREAD_CONF: ceiling: bad value \"0\" (accepted: 1..99)\n" },
	/* an RTPTHREAD_* variable the library does not know, reported like a
	 * bad key; those the wrapper and the tests read are not reported */
	{ { "RTPTHREAD_PROTOCL=inherit", "RTPTHREAD_TEST_STRICT=1", "RTPTHREAD_LIB=/x" },
	  "rtpthread: environment: unknown variable \"RTPTHREAD_PROTOCL\" (accepted: " VARIABLES ")\n" },
	{ { "RTPTHREAD_CONFIG=spin:6", "RTPTHREAD_=1", "RTPTHREAD_CEILING=0" },
	  "rtpthread: environment: unknown variable \"RTPTHREAD_CONFIG\" (accepted: " VARIABLES ")\n"
	  "rtpthread: environment: unknown variable \"RTPTHREAD_\" (accepted: " VARIABLES ")\n"
	  "rtpthread: RTPTHREAD_CEILING: bad value \"0\" (accepted: 1..99)\n" },
};

START_TEST(test_messages)
{
	const struct message_case *t = &message_cases[_i];
	struct result r = parse_env("prog", t->entries);
	ck_assert_str_eq(r.reported, t->reported);
	ck_assert_int_eq(r.problems, count_lines(t->reported));
	assert_defaults(&r.config);
}
END_TEST

/* ---- sources and their order ---- */

START_TEST(test_plain_variables)
{
	struct result r = parse_env("prog", ENV("RTPTHREAD_PROTOCOL=protect", "RTPTHREAD_SPIN=300",
						"RTPTHREAD_STATS=/tmp/s", "RTPTHREAD_ONLY_CMDS=prog,other",
						"RTPTHREAD_SKIP_CMDS=bash"));
	ck_assert_int_eq(r.problems, 0);
	ck_assert_int_eq(r.config.protocol, CONFIG_PROTOCOL_PROTECT);
	ck_assert_int_eq(r.config.ceiling, default_ceiling());
	ck_assert_int_eq(r.config.spin, 300);
	ck_assert_int_eq(r.config.stats, 1);
	ck_assert_str_eq(r.config.stats_path, "/tmp/s");
	ck_assert(r.config.in_scope);

	/* the first of two entries counts, as getenv finds it */
	r = parse_env("prog", ENV("RTPTHREAD_SPIN=1", "RTPTHREAD_SPIN=2"));
	ck_assert_int_eq(r.config.spin, 1);
	/* a longer name that starts with ours is another variable (unknown:
	 * reported), and an entry without '=' is no variable at all */
	r = parse_env("prog", ENV("RTPTHREAD_SPINS=5", "RTPTHREAD_SPIN", "RTPTHREAD_CONFIG=spin:6"));
	ck_assert_int_eq(r.problems, 2);
	ck_assert_int_eq(r.config.spin, 0);
	/* RTPTHREAD_CEILING, the ceiling key's plain variable */
	r = parse_env("prog", ENV("RTPTHREAD_CEILING=49", "RTPTHREAD_PROTOCOL=protect"));
	ck_assert_int_eq(r.problems, 0);
	ck_assert_int_eq(r.config.ceiling, 49);
}
END_TEST

START_TEST(test_conf_overrides_plain)
{
	/* RTPTHREAD_CONF wins wherever it stands in the environment */
	struct result r = parse_env("prog", ENV("RTPTHREAD_CONF=protocol:protect,spin:7,stats:0",
						"RTPTHREAD_PROTOCOL=inherit", "RTPTHREAD_SPIN=5",
						"RTPTHREAD_STATS=/tmp/s"));
	ck_assert_int_eq(r.problems, 0);
	ck_assert_int_eq(r.config.protocol, CONFIG_PROTOCOL_PROTECT);
	ck_assert_int_eq(r.config.spin, 7);
	ck_assert_int_eq(r.config.stats, 0);
	ck_assert_str_eq(r.config.stats_path, "");

	/* a key RTPTHREAD_CONF does not name keeps the plain variable's value */
	r = parse_env("prog", ENV("RTPTHREAD_SPIN=5", "RTPTHREAD_CONF=protocol:inherit"));
	ck_assert_int_eq(r.config.spin, 5);
	ck_assert_int_eq(r.config.protocol, CONFIG_PROTOCOL_INHERIT);

	/* within RTPTHREAD_CONF the last pair wins */
	r = parse_env("prog", ENV("RTPTHREAD_CONF=spin:1,ceiling:10,spin:2,ceiling:20"));
	ck_assert_int_eq(r.problems, 0);
	ck_assert_int_eq(r.config.spin, 2);
	ck_assert_int_eq(r.config.ceiling, 20);

	/* a bad value overrides nothing: the plain variable's value stays */
	r = parse_env("prog", ENV("RTPTHREAD_PROTOCOL=inherit", "RTPTHREAD_CONF=protocol:pi,spin:3,spin:-3"));
	ck_assert_int_eq(r.problems, 2);
	ck_assert_int_eq(r.config.protocol, CONFIG_PROTOCOL_INHERIT);
	ck_assert_int_eq(r.config.spin, 3);

	/* and a bad plain variable is repaired by RTPTHREAD_CONF */
	r = parse_env("prog", ENV("RTPTHREAD_PROTOCOL=pi", "RTPTHREAD_CONF=protocol:inherit"));
	ck_assert_int_eq(r.problems, 1);
	ck_assert_int_eq(r.config.protocol, CONFIG_PROTOCOL_INHERIT);

	/* every key at once */
	r = parse_env("prog", ENV("RTPTHREAD_CONF=protocol:protect,ceiling:80,spin:1000,stats:/tmp/st,"
				  "stats_signal:RTMIN+2,only_cmds:prog,skip_cmds:bash,abort_conf:false"));
	ck_assert_int_eq(r.problems, 0);
	ck_assert_int_eq(r.config.protocol, CONFIG_PROTOCOL_PROTECT);
	ck_assert_int_eq(r.config.ceiling, 80);
	ck_assert_int_eq(r.config.spin, 1000);
	ck_assert_int_eq(r.config.stats, 1);
	ck_assert_str_eq(r.config.stats_path, "/tmp/st");
	ck_assert_int_eq(r.config.stats_signal, SIGRTMIN + 2);
	ck_assert(!r.config.abort_conf);
	ck_assert(r.config.in_scope);
}
END_TEST

START_TEST(test_empty_pairs)
{
	const char *const tolerated[] = {
		"RTPTHREAD_CONF=",
		"RTPTHREAD_CONF=,",
		"RTPTHREAD_CONF=,,,",
		"RTPTHREAD_CONF=spin:5,",
		"RTPTHREAD_CONF=,spin:5",
		"RTPTHREAD_CONF=,,protocol:inherit,,spin:5,,",
	};
	for (size_t i = 0; i < sizeof tolerated / sizeof tolerated[0]; i++) {
		struct result r = parse_env("prog", ENV(tolerated[i]));
		ck_assert_msg(r.problems == 0, "%s: reported %s", tolerated[i], r.reported);
		ck_assert_str_eq(r.reported, "");
		ck_assert_int_eq(r.config.spin, strstr(tolerated[i], "spin:5") ? 5 : 0);
		ck_assert_int_eq(r.config.protocol,
				 strstr(tolerated[i], "inherit") ? CONFIG_PROTOCOL_INHERIT : CONFIG_PROTOCOL_NONE);
	}
}
END_TEST

/* ---- scoping by program name ---- */

struct scope_case {
	const char *entries[3];
	const char *program;
	bool in_scope;
	int problems;
};

#define IN(p, ...) { .program = (p), .in_scope = true, .entries = { __VA_ARGS__ } }
#define OUT(p, ...) { .program = (p), .in_scope = false, .entries = { __VA_ARGS__ } }
#define OUT_REPORTED(p, ...) { .program = (p), .in_scope = false, .problems = 1, .entries = { __VA_ARGS__ } }

static const struct scope_case scope_cases[] = {
	IN("cyclictest", "RTPTHREAD_ONLY_CMDS=python3,cyclictest"),
	IN("python3", "RTPTHREAD_ONLY_CMDS=python3,cyclictest"),
	OUT("python", "RTPTHREAD_ONLY_CMDS=python3,cyclictest"),
	OUT("python3.11", "RTPTHREAD_ONLY_CMDS=python3,cyclictest"),
	OUT("cyclictest2", "RTPTHREAD_ONLY_CMDS=python3,cyclictest"),
	OUT("", "RTPTHREAD_ONLY_CMDS=python3,cyclictest"),
	OUT(NULL, "RTPTHREAD_ONLY_CMDS=python3,cyclictest"),
	IN("cyclictest", "RTPTHREAD_ONLY_CMDS=,python3,,cyclictest,"),
	OUT("cyclictest", "RTPTHREAD_ONLY_CMDS="), /* set but empty: nobody */
	OUT("", "RTPTHREAD_ONLY_CMDS=,"),
	OUT("a", "RTPTHREAD_ONLY_CMDS=a:b"),       /* ':' is part of a name here */
	IN("a:b", "RTPTHREAD_ONLY_CMDS=a:b"),
	OUT("bash", "RTPTHREAD_SKIP_CMDS=bash,make"),
	OUT("make", "RTPTHREAD_SKIP_CMDS=bash,make"),
	IN("cyclictest", "RTPTHREAD_SKIP_CMDS=bash,make"),
	IN("", "RTPTHREAD_SKIP_CMDS=bash,make"),
	IN("bash", "RTPTHREAD_SKIP_CMDS="),
	IN("cyclictest", "RTPTHREAD_CONF=only_cmds:python3:cyclictest"),
	IN("python3", "RTPTHREAD_CONF=only_cmds:python3:cyclictest"),
	OUT("bash", "RTPTHREAD_CONF=only_cmds:python3:cyclictest"),
	OUT("python3:cyclictest", "RTPTHREAD_CONF=only_cmds:python3:cyclictest"),
	OUT_REPORTED("cyclictest", "RTPTHREAD_CONF=only_cmds:python3,cyclictest:x"), /* unknown key */
	OUT("make", "RTPTHREAD_CONF=skip_cmds:bash:make"),
	IN("cyclictest", "RTPTHREAD_CONF=skip_cmds:bash:make"),
	/* RTPTHREAD_CONF's list replaces the plain one */
	IN("cyclictest", "RTPTHREAD_ONLY_CMDS=bash", "RTPTHREAD_CONF=only_cmds:cyclictest"),
	OUT("bash", "RTPTHREAD_ONLY_CMDS=bash", "RTPTHREAD_CONF=only_cmds:cyclictest"),
	IN("cyclictest", "RTPTHREAD_SKIP_CMDS=cyclictest", "RTPTHREAD_CONF=skip_cmds:bash"),
	/* both lists: in only_cmds and not in skip_cmds */
	IN("a", "RTPTHREAD_ONLY_CMDS=a,b", "RTPTHREAD_SKIP_CMDS=b"),
	OUT("b", "RTPTHREAD_ONLY_CMDS=a,b", "RTPTHREAD_SKIP_CMDS=b"),
	OUT("c", "RTPTHREAD_ONLY_CMDS=a,b", "RTPTHREAD_SKIP_CMDS=b"),
	OUT("a", "RTPTHREAD_CONF=only_cmds:a:b,skip_cmds:a"),
	IN("b", "RTPTHREAD_CONF=only_cmds:a:b,skip_cmds:a"),
};

START_TEST(test_scope)
{
	const struct scope_case *t = &scope_cases[_i];
	/* everything else configured, so that leaving it out shows */
	const char *entries[8] = { "RTPTHREAD_PROTOCOL=inherit", "RTPTHREAD_SPIN=9", "RTPTHREAD_STATS=1" };
	for (int i = 0; i < 3 && t->entries[i] != NULL; i++)
		entries[3 + i] = t->entries[i];
	struct result r = parse_env(t->program, entries);
	ck_assert_int_eq(r.problems, t->problems);
	ck_assert_msg(r.config.in_scope == t->in_scope, "%s %s, program \"%s\": in_scope %d", t->entries[0],
		      t->entries[1] ? t->entries[1] : "", t->program ? t->program : "(null)", r.config.in_scope);
	if (t->in_scope) {
		ck_assert_int_eq(r.config.protocol, CONFIG_PROTOCOL_INHERIT);
		ck_assert_int_eq(r.config.spin, 9);
		ck_assert_int_eq(r.config.stats, 1);
	} else {
		assert_defaults(&r.config);
	}
}
END_TEST

START_TEST(test_out_of_scope)
{
	/* every setting back to its default, but problems still reported */
	struct result r = parse_env("bash", ENV("RTPTHREAD_CONF=only_cmds:cyclictest,protocol:protect,ceiling:70,"
						"spin:8,stats:/tmp/x,stats_signal:USR1,protcol:inherit,spin:z"));
	ck_assert(!r.config.in_scope);
	assert_defaults(&r.config);
	ck_assert_int_eq(r.problems, 2);
	ck_assert_str_eq(r.reported, "rtpthread: RTPTHREAD_CONF: unknown key \"protcol\" (accepted: " KEYS ")\n"
				     "rtpthread: RTPTHREAD_CONF: spin: bad value \"z\" (accepted: 0..1000000)\n");

	/* the same configuration for the program it names */
	r = parse_env("cyclictest", ENV("RTPTHREAD_CONF=only_cmds:cyclictest,protocol:protect,ceiling:70,"
					"spin:8,stats:/tmp/x,stats_signal:USR1"));
	ck_assert(r.config.in_scope);
	ck_assert_int_eq(r.problems, 0);
	ck_assert_int_eq(r.config.protocol, CONFIG_PROTOCOL_PROTECT);
	ck_assert_int_eq(r.config.ceiling, 70);
	ck_assert_int_eq(r.config.spin, 8);
	ck_assert_str_eq(r.config.stats_path, "/tmp/x");
	ck_assert_int_eq(r.config.stats_signal, SIGUSR1);
}
END_TEST

/* ---- overlong input ---- */

START_TEST(test_overlong)
{
	static char entry[sizeof "RTPTHREAD_CONF=" + 5000];
	size_t prefix = strlen("RTPTHREAD_CONF=");
	memcpy(entry, "RTPTHREAD_CONF=spin:7", prefix + 6);
	/* 4096 bytes: accepted (the rest is empty pairs) */
	memset(entry + prefix + 6, ',', 4096 - 6);
	entry[prefix + 4096] = '\0';
	struct result r = parse_env("prog", ENV(entry));
	ck_assert_int_eq(r.problems, 0);
	ck_assert_int_eq(r.config.spin, 7);

	/* 4097: rejected whole, good pairs included */
	entry[prefix + 4096] = ',';
	entry[prefix + 4097] = '\0';
	r = parse_env("prog", ENV(entry));
	ck_assert_int_eq(r.problems, 1);
	ck_assert_int_eq(r.config.spin, 0);
	char want[256];
	snprintf(want, sizeof want, "rtpthread: RTPTHREAD_CONF: bad value \"spin:7%.*s...\" (accepted: at most 4096 bytes)\n",
		 58, entry + prefix + 6);
	ck_assert_str_eq(r.reported, want);

	/* far longer: still one line, the value cut at 64 bytes */
	memset(entry + prefix, 'k', 4999);
	entry[prefix + 4999] = '\0';
	r = parse_env("prog", ENV(entry));
	ck_assert_int_eq(r.problems, 1);
	ck_assert_uint_lt(strlen(r.reported), 200);

	/* a plain variable over the limit counts as not set */
	static char list[sizeof "RTPTHREAD_ONLY_CMDS=" + 4100];
	size_t list_prefix = strlen("RTPTHREAD_ONLY_CMDS=");
	memcpy(list, "RTPTHREAD_ONLY_CMDS=", list_prefix);
	memset(list + list_prefix, 'a', 4097);
	list[list_prefix + 4097] = '\0';
	r = parse_env("prog", ENV(list, "RTPTHREAD_SPIN=4"));
	ck_assert_int_eq(r.problems, 1);
	ck_assert(r.config.in_scope);
	ck_assert_int_eq(r.config.spin, 4);
	ck_assert(strncmp(r.reported, "rtpthread: RTPTHREAD_ONLY_CMDS: bad value \"aaaa", 46) == 0);
	ck_assert(strstr(r.reported, "...\" (accepted: at most 4096 bytes)\n") != NULL);

	/* at 4096 bytes it is a list (that does not name prog) */
	list[list_prefix + 4096] = '\0';
	r = parse_env("prog", ENV(list, "RTPTHREAD_SPIN=4"));
	ck_assert_int_eq(r.problems, 0);
	ck_assert(!r.config.in_scope);
	ck_assert_int_eq(r.config.spin, 0);
}
END_TEST

/* ---- abort_conf ---- */

/*
 * Runs config_parse in a child: its wait status, and what it reported.
 * The child exits 100 + problems if config_parse returns.
 */
static int parse_in_child(const char *program, const char *const *entries, char *reported, size_t size)
{
	int fds[2];
	ck_assert_int_eq(pipe(fds), 0);
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		struct rlimit no_core = { 0, 0 };
		char *envp[8];
		int n = 0;
		setrlimit(RLIMIT_CORE, &no_core);
		for (; entries[n] != NULL && n < 7; n++)
			envp[n] = (char *)entries[n];
		envp[n] = NULL;
		close(fds[0]);
		struct config c;
		_exit(100 + config_parse(&c, envp, program, fds[1]));
	}
	close(fds[1]);
	read_all(fds[0], reported, size);
	close(fds[0]);
	int status = wait_child(pid, 10000);
	ck_assert_msg(status != -1, "child did not finish");
	return status;
}

static void assert_aborts(const char *program, const char *const *entries, const char *first_report)
{
	char reported[4096];
	int status = parse_in_child(program, entries, reported, sizeof reported);
	ck_assert_msg(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT, "%s: status 0x%x, reported %s", entries[0],
		      status, reported);
	/* the problem is reported first, and nothing after it */
	ck_assert_str_eq(reported, first_report);
}

static void assert_returns(const char *program, const char *const *entries, int problems)
{
	char reported[4096];
	int status = parse_in_child(program, entries, reported, sizeof reported);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 100 + problems, "%s: status 0x%x, reported %s",
		      entries[0], status, reported);
}

START_TEST(test_abort_conf)
{
	const char *unknown = "rtpthread: RTPTHREAD_CONF: unknown key \"protcol\" (accepted: " KEYS ")\n";
	/* before or after the bad key */
	assert_aborts("prog", ENV("RTPTHREAD_CONF=abort_conf:true,protcol:inherit,spin:x"), unknown);
	assert_aborts("prog", ENV("RTPTHREAD_CONF=protcol:inherit,spin:x,abort_conf:true"), unknown);
	/* a bad value, a pair without ':', a bad plain variable */
	assert_aborts("prog", ENV("RTPTHREAD_CONF=spin:x,abort_conf:true"),
		      "rtpthread: RTPTHREAD_CONF: spin: bad value \"x\" (accepted: 0..1000000)\n");
	assert_aborts("prog", ENV("RTPTHREAD_CONF=abort_conf:true,spin"),
		      "rtpthread: RTPTHREAD_CONF: no ':' in \"spin\" (accepted: key:value pairs separated by ',')\n");
	assert_aborts("prog", ENV("RTPTHREAD_PROTOCOL=pi", "RTPTHREAD_CONF=abort_conf:true"),
		      "rtpthread: RTPTHREAD_PROTOCOL: bad value \"pi\" (accepted: inherit, protect, report, none)\n");
	/* an unknown variable aborts too */
	assert_aborts("prog", ENV("RTPTHREAD_PROTOCOLL=inherit", "RTPTHREAD_CONF=abort_conf:true"),
		      "rtpthread: environment: unknown variable \"RTPTHREAD_PROTOCOLL\" (accepted: " VARIABLES ")\n");
	/* a bad abort_conf value, when another pair set it */
	assert_aborts("prog", ENV("RTPTHREAD_CONF=abort_conf:true,abort_conf:maybe"),
		      "rtpthread: RTPTHREAD_CONF: abort_conf: bad value \"maybe\" (accepted: true, false)\n");
	/* it concerns the configuration: a program out of scope aborts too */
	assert_aborts("bash", ENV("RTPTHREAD_CONF=only_cmds:cyclictest,abort_conf:true,protcol:inherit"), unknown);

	/* nothing is fatal when all is good */
	assert_returns("prog", ENV("RTPTHREAD_CONF=abort_conf:true,protocol:inherit,spin:5,,"), 0);
	struct result r = parse_env("prog", ENV("RTPTHREAD_CONF=abort_conf:true,protocol:inherit"));
	ck_assert(r.config.abort_conf);
	ck_assert_int_eq(r.config.protocol, CONFIG_PROTOCOL_INHERIT);
	/* the last value counts */
	assert_returns("prog", ENV("RTPTHREAD_CONF=abort_conf:true,protcol:inherit,abort_conf:false"), 1);
	/* without it, problems are only reported */
	assert_returns("prog", ENV("RTPTHREAD_CONF=protcol:inherit,spin:x", "RTPTHREAD_SPIN=y"), 3);
	/* a report that cannot be written still counts */
	struct config c;
	ck_assert_int_eq(config_parse(&c, (char *[]){ "RTPTHREAD_SPIN=y", NULL }, "prog", -1), 1);
}
END_TEST

static Suite *config_suite(void)
{
	Suite *s = suite_create("config");
	TCase *tc = tcase_create("parse");
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_defaults);
	tcase_add_loop_test(tc, test_values, 0, sizeof value_cases / sizeof value_cases[0]);
	tcase_add_test(tc, test_stats_path_length);
	tcase_add_loop_test(tc, test_messages, 0, sizeof message_cases / sizeof message_cases[0]);
	tcase_add_test(tc, test_plain_variables);
	tcase_add_test(tc, test_conf_overrides_plain);
	tcase_add_test(tc, test_empty_pairs);
	tcase_add_loop_test(tc, test_scope, 0, sizeof scope_cases / sizeof scope_cases[0]);
	tcase_add_test(tc, test_out_of_scope);
	tcase_add_test(tc, test_overlong);
	tcase_add_test(tc, test_abort_conf);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return run_suite(config_suite());
}
