// std::shared_mutex (static PTHREAD_RWLOCK_INITIALIZER, rdlock/wrlock/
// unlock) and std::shared_timed_mutex (timed and clock variants) from
// eight threads; a writer must be alone, a reader must see every table
// entry equal.  Built and run by shared_mutex.sh.
#include <shared_mutex>
#include <mutex>
#include <thread>
#include <vector>
#include <atomic>
#include <cstdio>
#include <chrono>
#include <dlfcn.h>
std::shared_timed_mutex stm;
std::shared_mutex sm;
long data[8];
std::atomic<int> inside{0}, errors{0};
int main() {
  printf("preloaded: %s\n", dlsym(RTLD_DEFAULT, "rtpthread_version") ? "yes" : "no");
  std::vector<std::thread> t;
  for (int i = 0; i < 8; i++)
    t.emplace_back([i] {
      for (int k = 0; k < 50000; k++) {
        if ((k + i) % 16 == 0) {
          std::unique_lock<std::shared_mutex> l(sm);
          if (inside.fetch_add(1000) != 0) errors++;
          for (auto &d : data) d++;
          inside.fetch_sub(1000);
        } else if ((k + i) % 16 == 1) {
          std::unique_lock<std::shared_timed_mutex> l(stm, std::chrono::milliseconds(5));
        } else if ((k + i) % 16 == 2) {
          std::shared_lock<std::shared_timed_mutex> l(stm, std::chrono::steady_clock::now() + std::chrono::milliseconds(5));
        } else {
          std::shared_lock<std::shared_mutex> l(sm);
          if (inside.fetch_add(1) >= 1000) errors++;
          long v = data[0];
          for (auto &d : data) if (d != v) errors++;
          inside.fetch_sub(1);
        }
      }
    });
  for (auto &x : t) x.join();
  printf("errors %d, data %ld\n", errors.load(), data[0]);
  return errors != 0;
}
