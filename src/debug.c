/* The debug build's report of a broken invariant (debug.h).  write(2) and
 * abort(3) only: it may run inside any lock or signal handler. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "debug.h"

static void put(const char *s)
{
	size_t n = strlen(s);
	while (n > 0) {
		ssize_t w = write(STDERR_FILENO, s, n);
		if (w <= 0)
			return; /* nowhere to report: abort anyway */
		s += w;
		n -= (size_t)w;
	}
}

void debug_invariant_broken(const char *file, int line, const char *what)
{
	char digits[16], *p = digits + sizeof digits;
	unsigned v = line > 0 ? (unsigned)line : 0;
	*--p = 0;
	do
		*--p = (char)('0' + v % 10);
	while ((v /= 10) != 0 && p > digits);
	put("rtpthread: ");
	put(file);
	put(":");
	put(p);
	put(": invariant broken: ");
	put(what);
	put("\n");
	abort();
}
