/* A process of four threads that stays until its standard input ends: three threads
 * block in pause(), the main thread prints `ready PID` once they run and then waits
 * on its standard input, so a profiler attached with -p (or walking every process)
 * finds it whole. Built by the perf_record_synth_live tests with `cc -O1`. */
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

static pthread_barrier_t started;

static void *idle(void *arg) {
    (void)arg;
    pthread_barrier_wait(&started);
    for (;;)
        pause();
    return NULL;
}

int main(void) {
    pthread_t t[3];
    char c;
    pthread_barrier_init(&started, NULL, 4);
    for (int i = 0; i < 3; i++)
        pthread_create(&t[i], NULL, idle, NULL);
    pthread_barrier_wait(&started);
    printf("ready %d\n", (int)getpid());
    fflush(stdout);
    while (read(0, &c, 1) > 0)
        ;
    return 0;
}
