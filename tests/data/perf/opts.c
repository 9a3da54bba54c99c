/* The workloads of perf record's option tests (tests/it/perf_record_opts_live.rs):
 *   opts threads SECS FILE  a thread named "worker" spins in spin_worker while the main
 *                           thread spins in spin_main; the worker's tid is written to
 *                           FILE first, then both spin for SECS seconds
 *   opts fork SECS          a child spins in spin_child for SECS, the parent in
 *                           spin_main after it
 *   opts writes             five writes of 7 bytes and five of 3 bytes to /dev/null
 *   opts touch              touches each of 16 pages mapped at 0x200000000 once */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}
volatile unsigned long sink;
static double secs = 0.3;
__attribute__((noinline)) void spin_main(void) { double end = now() + secs; while (now() < end) sink++; }
__attribute__((noinline)) void spin_worker(void) { double end = now() + secs; while (now() < end) sink++; }
__attribute__((noinline)) void spin_child(void) { double end = now() + secs; while (now() < end) sink++; }

static const char *tid_file;
static pthread_barrier_t ready;

static void *worker(void *arg) {
    (void)arg;
    FILE *f = fopen(tid_file, "w");
    if (!f) exit(2);
    fprintf(f, "%ld\n", (long)syscall(SYS_gettid));
    fclose(f);
    pthread_barrier_wait(&ready);
    spin_worker();
    return NULL;
}

int main(int argc, char **argv) {
    if (argc >= 4 && !strcmp(argv[1], "threads")) {
        secs = atof(argv[2]);
        tid_file = argv[3];
        pthread_t t;
        pthread_barrier_init(&ready, NULL, 2);
        if (pthread_create(&t, NULL, worker, NULL)) return 2;
        pthread_setname_np(t, "worker");
        pthread_barrier_wait(&ready);
        spin_main();
        pthread_join(t, NULL);
        return 0;
    }
    if (argc >= 3 && !strcmp(argv[1], "fork")) {
        secs = atof(argv[2]);
        pid_t c = fork();
        if (c == 0) { spin_child(); _exit(0); }
        waitpid(c, NULL, 0);
        spin_main();
        return 0;
    }
    if (argc >= 2 && !strcmp(argv[1], "writes")) {
        int fd = open("/dev/null", O_WRONLY);
        for (int i = 0; i < 5; i++)
            if (write(fd, "1234567", 7) != 7 || write(fd, "123", 3) != 3) return 2;
        return 0;
    }
    if (argc >= 2 && !strcmp(argv[1], "touch")) {
        char *p = mmap((void *)0x200000000UL, 16 * 4096, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
        if (p == MAP_FAILED) return 2;
        for (int i = 0; i < 16; i++) p[i * 4096] = 1;
        return 0;
    }
    fprintf(stderr, "usage: opts threads SECS FILE | fork SECS | writes | touch\n");
    return 1;
}
