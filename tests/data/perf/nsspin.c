/* Spins in a function named at build time (`-DSPIN=name`, `spin_inside` without it)
 * under its caller `spin_caller`, until a line comes on its standard input: it prints
 * `ready PID` first, `stopped` after that line, and stays until its standard input ends
 * (a profiler can then look at it while it lives, in its namespaces). Built by the
 * perf_script_live tests with `cc -O1 -fno-omit-frame-pointer`, twice, with names of
 * the same length: one copy (with -g) runs inside a mount namespace of its own, the
 * other (without line tables) lies at the same path outside it. */
#include <poll.h>
#include <stdio.h>
#include <unistd.h>

#ifndef SPIN
#define SPIN spin_inside
#endif

volatile unsigned long sink;

__attribute__((noinline)) void SPIN(void) {
    for (unsigned long i = 0; i < 2000000; i++)
        sink += i * i;
}

__attribute__((noinline)) void spin_caller(void) {
    SPIN();
    sink++;
}

int main(void) {
    struct pollfd in = {.fd = 0, .events = POLLIN};
    char line[64];
    printf("ready %d\n", (int)getpid());
    fflush(stdout);
    while (poll(&in, 1, 0) == 0)
        spin_caller();
    if (!fgets(line, sizeof line, stdin))
        return 1;
    printf("stopped\n");
    fflush(stdout);
    while (fgets(line, sizeof line, stdin))
        ;
    return 0;
}
