/*
 * A known workload for tests/integration/probes.sh: two threads lock one
 * mutex 1000 times each, sleeping 50 us inside (so they contend), then
 * meet at a barrier 100 times; the main thread signals a condition 100
 * times to a thread that waits for each signal.  Counts the probes must
 * see: mutex_entry 2000 (+ the main thread's 200 + the waiter's 100),
 * barrier_wait 200, cond_signal 100, cond_wait 100 or more (spurious
 * returns wait again), mutex_contended more than 0.
 * Waits for a line on standard input first, so a tracer can attach.
 */
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

static pthread_mutex_t mutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static pthread_barrier_t barrier;
static int posted, taken;

static void *locker(void *arg)
{
	(void)arg;
	for (int i = 0; i < 1000; i++) {
		pthread_mutex_lock(&mutex);
		usleep(50);
		pthread_mutex_unlock(&mutex);
	}
	for (int i = 0; i < 100; i++)
		pthread_barrier_wait(&barrier);
	return NULL;
}

static void *waiter(void *arg)
{
	(void)arg;
	for (int i = 0; i < 100; i++) {
		pthread_mutex_lock(&mutex);
		while (posted == taken)
			pthread_cond_wait(&cond, &mutex);
		taken++;
		pthread_mutex_unlock(&mutex);
	}
	return NULL;
}

int main(void)
{
	char line[16];
	if (!fgets(line, sizeof line, stdin))
		return 2;
	pthread_barrier_init(&barrier, NULL, 2);
	pthread_t a, b, w;
	pthread_create(&a, NULL, locker, NULL);
	pthread_create(&b, NULL, locker, NULL);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	pthread_create(&w, NULL, waiter, NULL);
	for (int i = 0; i < 100; i++) {
		pthread_mutex_lock(&mutex);
		posted++;
		pthread_cond_signal(&cond);
		pthread_mutex_unlock(&mutex);
		/* the waiter takes each item before the next is posted */
		for (int spin = 0; spin < 1000; spin++) {
			pthread_mutex_lock(&mutex);
			int done = taken == posted;
			pthread_mutex_unlock(&mutex);
			if (done)
				break;
			usleep(100);
		}
	}
	pthread_join(w, NULL);
	printf("done posted=%d taken=%d\n", posted, taken);
	return taken == 100 ? 0 : 1;
}
