/*
 * What the configuration sets for every mutex, once at load before any
 * other thread exists (preload/init.c, through the two setters): the spin
 * counts and the protocol of mutexes whose attributes chose none; and the
 * adoption of a mutex no mutex_init of ours made, which gives it that
 * protocol.  Below every mutex protocol file: they read these values and
 * adopt through here, and nothing here calls them.
 */
#include "attr.h"
#include "mutex_internal.h"

int mutex_default_kind;
int mutex_default_ceiling = PRIORITY_MAX;

int mutex_spins;
int mutex_short_spins;

void mutex_set_spin(int spins, int cpus)
{
	/* An owner that cannot run beside us never lets go while we spin. */
	mutex_spins = spins < 0 ? 0 : spins;
	mutex_short_spins = cpus > 1 ? SHORT_SPINS : 0;
}

void mutex_set_default_protocol(int protocol, int ceiling)
{
	mutex_default_kind = protocol & (KIND_PI | KIND_PP | KIND_DEFAULTED);
	if (ceiling >= PRIORITY_MIN && ceiling <= PRIORITY_MAX)
		mutex_default_ceiling = ceiling;
}

/*
 * A mutex that no mutex_init of ours made: a static initializer (all zero
 * but the type, glibc's and C++'s std::mutex alike) or memory zeroed by the
 * program.  Its first use (always a slow path: the fast paths require
 * KIND_INIT) gives it KIND_INIT and the default protocol.  Nobody can hold
 * it yet (locking adopts it first), so no thread ever sees its protocol
 * change under a lock.  Concurrent first users race on one CAS and all
 * see its result; the ceiling is the same value whoever writes it, and is
 * written before the CAS publishes the kind (release).  A kind with any
 * other bit (NPTL's own init, destroyed memory) is left as it is.
 */
int mutex_adopt(struct mutex *m)
{
	int kind = mutex_kind(m);
	if (kind & ~(KIND_TYPE_MASK | KIND_ELISION))
		return kind;
	int adopted = kind | KIND_INIT | mutex_default_kind;
	if (adopted & KIND_PP)
		atomic_store_explicit(&m->ceiling, (uint16_t)mutex_default_ceiling, memory_order_relaxed);
	if (atomic_compare_exchange_strong_explicit(&m->kind, &kind, adopted, memory_order_release,
						    memory_order_acquire))
		return adopted;
	return kind;
}
