/* A JIT in miniature: copies a spin loop into anonymous executable memory three times,
 * names the copies in /tmp/perf-PID.map (with lines perf parses in its own way: a short
 * line, 0x prefixes, a name with spaces, a line that is no map line, a last line
 * without a newline, and entries that overlap), runs each copy and prints its pid. Built by the perf_script_live
 * tests with `cc -O1 -fno-omit-frame-pointer`.
 * With a second argument, `hold`, it prints `ready PID` once its map is written, runs
 * the copies over and over until a line comes on its standard input, prints `stopped`
 * and stays until its standard input ends (a profiler can then look at it while it
 * lives, in its namespaces). */
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* x86-64: mov %rdi,%rax; 1: dec %rax; jnz 1b; ret */
static const unsigned char spin_code[] = {0x48, 0x89, 0xf8, 0x48, 0xff, 0xc8, 0x75, 0xfb, 0xc3};

typedef unsigned long (*spin_fn)(unsigned long);

int main(int argc, char **argv) {
    unsigned long n = argc > 1 ? strtoul(argv[1], 0, 0) : 200000000UL;
    unsigned char *page = mmap(0, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
                               MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (page == MAP_FAILED) {
        perror("mmap");
        return 1;
    }
    for (int i = 0; i < 3; i++)
        memcpy(page + 0x40 * i, spin_code, sizeof spin_code);
    char path[64];
    snprintf(path, sizeof path, "/tmp/perf-%d.map", (int)getpid());
    FILE *f = fopen(path, "w");
    if (!f) {
        perror(path);
        return 1;
    }
    /* A JIT's map may name code again: an entry over the whole page, and a second
     * name for the first copy; perf's lookup takes the first entry holding the address
     * on its way down its tree. */
    fprintf(f, "%lx 1000 jit_whole_page\n", (unsigned long)page);
    fprintf(f, "%lx 9 jit_spin\n", (unsigned long)page);
    fprintf(f, "%lx 9 jit_spin_again\n", (unsigned long)page);
    fprintf(f, "zz\n");
    fprintf(f, "0x%lx 0x20 jit spin two [tier 2]\n", (unsigned long)page + 0x40);
    fprintf(f, "not a map line\n");
    fprintf(f, "%lx 10 jit_tail_name", (unsigned long)page + 0x80);
    fclose(f);
    if (argc > 2 && strcmp(argv[2], "hold") == 0) {
        struct pollfd in = {.fd = 0, .events = POLLIN};
        char line[64];
        printf("ready %d\n", (int)getpid());
        fflush(stdout);
        while (poll(&in, 1, 0) == 0) {
            ((spin_fn)page)(n);
            ((spin_fn)(page + 0x40))(n / 2);
            ((spin_fn)(page + 0x80))(n / 2);
        }
        if (!fgets(line, sizeof line, stdin))
            return 1;
        printf("stopped\n");
        fflush(stdout);
        while (fgets(line, sizeof line, stdin))
            ;
        return 0;
    }
    ((spin_fn)page)(n);
    ((spin_fn)(page + 0x40))(n / 2);
    ((spin_fn)(page + 0x80))(n / 2);
    printf("%d\n", (int)getpid());
    return 0;
}
