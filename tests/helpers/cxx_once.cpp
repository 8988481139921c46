// C++ one-time initialization, as an unmodified g++ program uses it:
// function-local statics (__cxa_guard_acquire/release/abort) and
// std::call_once (pthread_once underneath).  Checks one construction under
// concurrency, an initializer that throws (the next caller runs it
// again), a recursive static initialization, and priority inheritance:
// L (FIFO 10) runs the initializer, H (FIFO 90) waits for it and M (FIFO
// 50) spins on the same CPU; H must get through within 10% of M's spin
// and L must run at 90 meanwhile.  tests/integration/cxx_once.sh runs it
// under LD_PRELOAD.
// Exit: 0 pass, 1 fail, 77 the boost checks skipped (no SCHED_FIFO).
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <mutex>
#include <pthread.h>
#include <sched.h>
#include <stdexcept>
#include <csignal>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

static int failures;

#define CHECK(cond, ...)                                              \
	do {                                                          \
		if (!(cond)) {                                        \
			std::printf("FAIL: %s:%d: ", __func__, __LINE__); \
			std::printf(__VA_ARGS__);                     \
			std::printf("\n");                            \
			failures++;                                   \
		}                                                     \
	} while (0)

static long long now_ns()
{
	timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static pid_t gettid_()
{
	return (pid_t)syscall(SYS_gettid);
}

static void sleep_ms(long ms)
{
	std::this_thread::sleep_for(std::chrono::milliseconds(ms));
}

// A thread's state and effective RT priority from /proc (PI boosts show).
static bool task_stat(pid_t tid, char *state, int *rt_prio)
{
	char path[64], buf[1024];
	std::snprintf(path, sizeof path, "/proc/self/task/%d/stat", (int)tid);
	FILE *f = std::fopen(path, "r");
	if (!f)
		return false;
	size_t n = std::fread(buf, 1, sizeof buf - 1, f);
	std::fclose(f);
	buf[n] = 0;
	char *p = std::strrchr(buf, ')');
	if (!p)
		return false;
	p += 2;
	*state = *p;
	// field 18 (priority): -1 - rt_priority for an RT task
	long field = 3, prio = 0;
	for (char *q = p; *q && field <= 18; q++) {
		if (*q == ' ') {
			field++;
			if (field == 18)
				prio = std::strtol(q + 1, nullptr, 10);
		}
	}
	*rt_prio = prio < 0 ? (int)(-1 - prio) : 0;
	return true;
}

static bool wait_sleeping(pid_t tid, long ms)
{
	long long end = now_ns() + ms * 1000000LL;
	char state;
	int prio;
	do {
		if (task_stat(tid, &state, &prio) && state == 'S')
			return true;
		sleep_ms(1);
	} while (now_ns() < end);
	return false;
}

static bool wait_prio(pid_t tid, int want, long ms)
{
	long long end = now_ns() + ms * 1000000LL;
	char state;
	int prio;
	do {
		if (task_stat(tid, &state, &prio) && prio == want)
			return true;
		sleep_ms(1);
	} while (now_ns() < end);
	return false;
}

static bool wait_flag(std::atomic<int> &flag, long ms)
{
	long long end = now_ns() + ms * 1000000LL;
	while (!flag.load()) {
		if (now_ns() >= end)
			return false;
		sleep_ms(1);
	}
	return true;
}

// A thread at SCHED_FIFO prio on cpu (std::thread cannot set either).
static bool start_fifo(pthread_t *t, int prio, int cpu, void *(*fn)(void *), void *arg)
{
	pthread_attr_t a;
	sched_param sp{};
	sp.sched_priority = prio;
	cpu_set_t cpus;
	CPU_ZERO(&cpus);
	CPU_SET(cpu, &cpus);
	pthread_attr_init(&a);
	pthread_attr_setinheritsched(&a, PTHREAD_EXPLICIT_SCHED);
	pthread_attr_setschedpolicy(&a, SCHED_FIFO);
	pthread_attr_setschedparam(&a, &sp);
	pthread_attr_setaffinity_np(&a, sizeof cpus, &cpus);
	int r = pthread_create(t, &a, fn, arg);
	pthread_attr_destroy(&a);
	return r == 0;
}

static bool library_loaded()
{
	return dlsym(RTLD_DEFAULT, "rtpthread_version") != nullptr;
}

// ---- concurrent construction of function-local statics ----

static std::atomic<int> constructed[16];

template <int N> struct Slow {
	int value;
	Slow()
	{
		constructed[N]++;
		if (N % 4 == 0)
			sleep_ms(2);
		value = N + 1;
	}
};

template <int N> static int use_static()
{
	static Slow<N> s;
	return s.value;
}

template <int... N> static bool use_all(std::integer_sequence<int, N...>)
{
	return ((use_static<N>() == N + 1) && ...);
}

static void test_static_concurrent()
{
	std::atomic<int> go{ 0 }, bad{ 0 };
	std::vector<std::thread> threads;
	for (int i = 0; i < 8; i++)
		threads.emplace_back([&] {
			while (!go.load())
				;
			if (!use_all(std::make_integer_sequence<int, 16>()))
				bad++;
		});
	go = 1;
	for (auto &t : threads)
		t.join();
	CHECK(bad.load() == 0, "%d threads saw an unconstructed static", bad.load());
	for (int n = 0; n < 16; n++)
		CHECK(constructed[n].load() == 1, "static %d constructed %d times", n, constructed[n].load());
}

// ---- a static whose first construction throws while a thread waits ----

static std::atomic<int> throw_attempts, throw_in_ctor;
static std::atomic<pid_t> throw_waiter_tid;

struct Throws {
	int value;
	Throws()
	{
		if (throw_attempts++ == 0) {
			throw_in_ctor = 1;
			long long end = now_ns() + 5000000000LL;
			while (!throw_waiter_tid.load() && now_ns() < end)
				sleep_ms(1);
			if (throw_waiter_tid.load())
				wait_sleeping(throw_waiter_tid.load(), 5000);
			throw std::runtime_error("first construction fails");
		}
		value = 42;
	}
};

static int use_throws()
{
	static Throws t;
	return t.value;
}

static void test_static_throws()
{
	bool thrown = false;
	int waiter_value = 0;
	std::thread first([&] {
		try {
			use_throws();
		} catch (const std::runtime_error &) {
			thrown = true;
		}
	});
	CHECK(wait_flag(throw_in_ctor, 5000), "the constructor did not start");
	std::thread waiter([&] {
		throw_waiter_tid = gettid_();
		waiter_value = use_throws();
	});
	first.join();
	waiter.join();
	CHECK(thrown, "the exception did not reach the first caller");
	CHECK(waiter_value == 42, "the waiter got %d", waiter_value);
	CHECK(throw_attempts.load() == 2, "%d constructions (expected 2)", throw_attempts.load());
	CHECK(use_throws() == 42, "the static is not constructed");
}

// ---- std::call_once: concurrent, and a callable that throws ----

static void test_call_once()
{
	std::once_flag flag;
	std::atomic<int> runs{ 0 }, bad{ 0 }, go{ 0 };
	int data = 0;
	std::vector<std::thread> threads;
	for (int i = 0; i < 8; i++)
		threads.emplace_back([&] {
			while (!go.load())
				;
			std::call_once(flag, [&] {
				runs++;
				sleep_ms(5);
				data = 7;
			});
			if (data != 7)
				bad++;
		});
	go = 1;
	for (auto &t : threads)
		t.join();
	CHECK(runs.load() == 1 && bad.load() == 0, "runs %d, callers before the end %d", runs.load(), bad.load());

	std::once_flag again;
	int attempts = 0;
	bool thrown = false;
	try {
		std::call_once(again, [&] {
			attempts++;
			throw std::runtime_error("fails");
		});
	} catch (const std::runtime_error &) {
		thrown = true;
	}
	std::call_once(again, [&] { attempts++; });
	std::call_once(again, [&] { attempts++; });
	CHECK(thrown && attempts == 2, "thrown %d, attempts %d (expected 1, 2)", thrown, attempts);
}

// ---- a static whose constructor reaches its own guard ----

static int recurse_static();

struct Recursive {
	int value;
	Recursive() : value(recurse_static()) {}
};

static int recurse_static()
{
	static Recursive r;
	return r.value;
}

// g++ calls __cxa_guard_acquire as nothrow: libstdc++'s recursive_init_error
// (one thread) ends in std::terminate, and with more threads libstdc++
// waits for ever.  The library terminates the same way with any number of
// threads.  Runs in a child forked before any thread exists.
static void test_static_recursive()
{
	if (!library_loaded()) {
		std::printf("SKIP: %s: libstdc++ waits for ever with more than one thread\n", __func__);
		return;
	}
	pid_t child = fork();
	if (child == 0) {
		alarm(10);
		std::thread t([] { recurse_static(); });
		t.join();
		_exit(0);
	}
	int status = 0;
	CHECK(child > 0 && waitpid(child, &status, 0) == child, "fork or waitpid failed");
	CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT,
	      "a recursive initialization: status %#x (expected SIGABRT from std::terminate)", status);
}

// fork() while another thread constructs a static: the child, where that
// thread does not exist, constructs it itself (libstdc++'s child waits for
// ever).
static pid_t fork_parent;
static std::atomic<int> fork_in_ctor, fork_release, fork_constructions;

struct ForkHeld {
	ForkHeld()
	{
		fork_constructions++;
		if (getpid() != fork_parent)
			return;
		fork_in_ctor = 1;
		long long end = now_ns() + 10000000000LL;
		while (!fork_release.load() && now_ns() < end)
			sleep_ms(1);
	}
};

static void use_fork_held()
{
	static ForkHeld f;
	(void)f;
}

static void test_static_fork()
{
	if (!library_loaded()) {
		std::printf("SKIP: %s: libstdc++'s child waits for ever\n", __func__);
		return;
	}
	fork_parent = getpid();
	std::thread holder(use_fork_held);
	CHECK(wait_flag(fork_in_ctor, 5000), "the constructor did not start");
	pid_t child = fork();
	if (child == 0) {
		alarm(10);
		use_fork_held();
		use_fork_held();
		_exit(fork_constructions.load() == 2 ? 0 : 1);
	}
	int status = 0;
	CHECK(child > 0 && waitpid(child, &status, 0) == child, "fork or waitpid failed");
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child: status %#x", status);
	fork_release = 1;
	holder.join();
	CHECK(fork_constructions.load() == 1, "%d constructions in the parent", fork_constructions.load());
}

// ---- cancellation inside an initializer with destructors ----

// The thread running pthread_once's initializer is cancelled: as with
// glibc, the initializer's own destructors run (the unwinder goes through
// its frame) and the word goes back to "never run".
static std::atomic<int> destroyed, cancel_in_init, cancel_runs;
static pthread_once_t cancel_once = PTHREAD_ONCE_INIT;

struct Noisy {
	~Noisy() { destroyed++; }
};

static void cancellable_init()
{
	Noisy n;
	cancel_in_init = 1;
	long long end = now_ns() + 10000000000LL;
	while (now_ns() < end) {
		pthread_testcancel();
		sleep_ms(1);
	}
}

static void counting_init()
{
	cancel_runs++;
}

static void *cancel_main(void *)
{
	pthread_once(&cancel_once, cancellable_init);
	return nullptr;
}

static void test_cancel_destructors()
{
	pthread_t t;
	CHECK(pthread_create(&t, nullptr, cancel_main, nullptr) == 0, "pthread_create");
	CHECK(wait_flag(cancel_in_init, 5000), "the initializer did not start");
	pthread_cancel(t);
	void *ret = nullptr;
	pthread_join(t, &ret);
	CHECK(ret == PTHREAD_CANCELED, "not cancelled");
	CHECK(destroyed.load() == 1, "the initializer's destructor ran %d times", destroyed.load());
	pthread_once(&cancel_once, counting_init);
	CHECK(cancel_runs.load() == 1, "after the cancellation the initializer ran %d times", cancel_runs.load());
}

// ---- one guard, our functions and libstdc++'s own copy mixed ----

// A thread bound to libstdc++'s copy (a library with its own binding) may
// initialize or wait on a guard that another thread reaches through ours:
// each waits the other's way and is woken by the other's release.
using guard_fn = int (*)(uint64_t *);
using guard_void_fn = void (*)(uint64_t *);

struct guard_ops {
	guard_fn acquire;
	guard_void_fn release, abort;
};

static bool guard_ops_of(void *handle, guard_ops *ops)
{
	ops->acquire = (guard_fn)dlvsym(handle, "__cxa_guard_acquire", "CXXABI_1.3");
	ops->release = (guard_void_fn)dlvsym(handle, "__cxa_guard_release", "CXXABI_1.3");
	ops->abort = (guard_void_fn)dlvsym(handle, "__cxa_guard_abort", "CXXABI_1.3");
	return ops->acquire && ops->release && ops->abort;
}

// first initializes (and releases, or aborts), second waits meanwhile.
static void mixed_case(const char *what, const guard_ops &first, const guard_ops &second, bool abort_first)
{
	uint64_t guard = 0;
	CHECK(first.acquire(&guard) == 1, "%s: the first caller does not initialize", what);
	std::atomic<pid_t> waiter_tid{ 0 };
	std::atomic<int> result{ -1 };
	std::thread waiter([&] {
		waiter_tid = gettid_();
		result = second.acquire(&guard);
		if (result.load() == 1)
			second.release(&guard);
	});
	while (!waiter_tid.load())
		sleep_ms(1);
	CHECK(wait_sleeping(waiter_tid.load(), 5000), "%s: the waiter did not block", what);
	CHECK(result.load() == -1, "%s: the waiter returned %d during the initialization", what, result.load());
	if (abort_first)
		first.abort(&guard);
	else
		first.release(&guard);
	waiter.join();
	CHECK(result.load() == (abort_first ? 1 : 0), "%s: the waiter got %d", what, result.load());
	CHECK(*(unsigned char *)&guard == 1, "%s: byte 0 is %d after the release", what, *(unsigned char *)&guard);
}

static void test_guard_mixed()
{
	guard_ops ours, theirs;
	void *cxx = dlopen("libstdc++.so.6", RTLD_NOW | RTLD_NOLOAD);
	if (!library_loaded() || !cxx || !guard_ops_of(RTLD_DEFAULT, &ours) || !guard_ops_of(cxx, &theirs)) {
		std::printf("SKIP: %s: needs the library and libstdc++\n", __func__);
		return;
	}
	CHECK(ours.acquire != theirs.acquire, "the library's guard functions are libstdc++'s");
	mixed_case("libstdc++ initializes, ours waits", theirs, ours, false);
	mixed_case("ours initializes, libstdc++ waits", ours, theirs, false);
	mixed_case("libstdc++ aborts, ours waits", theirs, ours, true);
	mixed_case("ours aborts, libstdc++ waits", ours, theirs, true);
	dlclose(cxx);
}

// ---- priority inheritance ----

enum { M_SPIN_MS = 1000 }; // at most: M stops once H is through

static std::atomic<int> in_init, release;
static std::atomic<pid_t> init_tid;

static void spin_until_released()
{
	init_tid = gettid_();
	in_init = 1;
	long long end = now_ns() + 3000000000LL;
	while (!release.load() && now_ns() < end)
		;
}

struct Boosted {
	Boosted() { spin_until_released(); }
};

static std::once_flag boost_flag;

static void wait_for_initializer(int variant)
{
	if (variant == 0) {
		static Boosted b;
		(void)b;
	} else {
		std::call_once(boost_flag, spin_until_released);
	}
}

struct scenario {
	int variant;
	std::atomic<pid_t> high_tid{ 0 };
	std::atomic<long long> high_done{ 0 };
};

static void *low_main(void *p)
{
	wait_for_initializer(static_cast<scenario *>(p)->variant);
	return nullptr;
}

static void *high_main(void *p)
{
	auto *s = static_cast<scenario *>(p);
	s->high_tid = gettid_();
	wait_for_initializer(s->variant);
	s->high_done = now_ns();
	return nullptr;
}

static void *medium_main(void *p)
{
	auto *s = static_cast<scenario *>(p);
	long long end = now_ns() + M_SPIN_MS * 1000000LL;
	while (!s->high_done.load() && now_ns() < end)
		;
	return nullptr;
}

// Returns false if SCHED_FIFO is refused.
static bool test_boost(int variant)
{
	const char *what = variant == 0 ? "static local" : "std::call_once";
	scenario s;
	s.variant = variant;
	in_init = 0;
	release = 0;
	init_tid = 0;
	pthread_t low, high, medium;
	if (!start_fifo(&low, 10, 0, low_main, &s))
		return false;
	CHECK(wait_flag(in_init, 5000), "%s: the initializer did not start", what);
	CHECK(start_fifo(&high, 90, 0, high_main, &s), "%s: no H thread", what);
	long long end = now_ns() + 5000000000LL;
	while (!s.high_tid.load() && now_ns() < end)
		sleep_ms(1);
	CHECK(wait_sleeping(s.high_tid.load(), 5000), "%s: H did not block", what);
	bool boosted = wait_prio(init_tid.load(), 90, 1000);
	CHECK(start_fifo(&medium, 50, 0, medium_main, &s), "%s: no M thread", what);
	sleep_ms(20);
	long long released = now_ns();
	release = 1;
	pthread_join(high, nullptr);
	pthread_join(medium, nullptr);
	pthread_join(low, nullptr);
	long long waited = s.high_done.load() - released;
	CHECK(boosted && waited < M_SPIN_MS * 1000000LL / 10,
	      "%s: priority inversion: initializer boosted to 90: %s; H waited %lld us after its release "
	      "(bound: 10%% of M's %d ms spin)",
	      what, boosted ? "yes" : "no", waited / 1000, (int)M_SPIN_MS);
	return true;
}

int main()
{
	test_static_recursive(); /* forks: before any thread */
	test_static_concurrent();
	test_static_throws();
	test_call_once();
	test_static_fork();
	test_cancel_destructors();
	test_guard_mixed();
	bool rt = sysconf(_SC_NPROCESSORS_ONLN) >= 2;
	for (int variant = 0; rt && variant < 2; variant++)
		rt = test_boost(variant);
	if (failures) {
		std::printf("%d check(s) failed\n", failures);
		return 1;
	}
	if (!rt) {
		std::printf("SKIP: the boost checks: SCHED_FIFO refused or one CPU\n");
		return 77;
	}
	std::printf("PASS: statics and std::call_once, boost included\n");
	return 0;
}
