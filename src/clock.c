#include "clock.h"

struct timespec deadline_convert(const struct timespec *deadline, clockid_t from, clockid_t to)
{
	struct timespec now_from, now_to, out;
	clock_gettime(from, &now_from);
	clock_gettime(to, &now_to);
	long long ns = (long long)(deadline->tv_sec - now_from.tv_sec) * 1000000000LL +
		       (deadline->tv_nsec - now_from.tv_nsec);
	ns += (long long)now_to.tv_sec * 1000000000LL + now_to.tv_nsec;
	if (ns < 0)
		ns = 0;
	out.tv_sec = (time_t)(ns / 1000000000LL);
	out.tv_nsec = (long)(ns % 1000000000LL);
	return out;
}
