#include <limits.h>

#include "clock.h"
#include "futex.h"

/* Saturates instead of overflowing: a deadline centuries away stays
 * centuries away (the kernel caps what it cannot represent). */
struct timespec deadline_convert(const struct timespec *deadline, clockid_t from, clockid_t to)
{
	struct timespec now_from, now_to, out;
	clock_gettime(from, &now_from);
	clock_gettime(to, &now_to);
	/* seconds and nanoseconds apart: nothing here multiplies seconds */
	long long sec, nsec = (long long)deadline->tv_nsec - now_from.tv_nsec + now_to.tv_nsec;
	if (__builtin_sub_overflow((long long)deadline->tv_sec, (long long)now_from.tv_sec, &sec) ||
	    __builtin_add_overflow(sec, (long long)now_to.tv_sec, &sec))
		sec = deadline->tv_sec > now_from.tv_sec ? LLONG_MAX - 1 : -1;
	while (nsec >= 1000000000LL) { /* at most once: nsec < 2e9 */
		nsec -= 1000000000LL;
		sec++;
	}
	while (nsec < 0) { /* at most once: nsec > -1e9 */
		nsec += 1000000000LL;
		sec--;
	}
	if (sec < 0) {
		sec = 0;
		nsec = 0;
	}
	out.tv_sec = (time_t)sec;
	out.tv_nsec = (long)nsec;
	return out;
}

/* Returns only at the deadline, so never without one (the deadlock POSIX
 * prescribes): a wake-up of a word nobody else knows is spurious, and a
 * signal handler's return resumes the sleep. */
int sleep_until(clockid_t clock, const struct timespec *deadline)
{
	_Atomic uint32_t never = 0;
	for (;;) {
		int r = futex_wait(&never, 0, false, clock, deadline);
		if (r == ETIMEDOUT || r == EINVAL)
			return r;
	}
}
