/* Two functions of equal cost inlined into one: perf report's rows of the inlined
 * functions, of the function they are inlined into and of its callers compare by name
 * in some places and by address in others, and run in several processes of one file
 * their symbols change with the process (tests/it/perf_report_ties_live.rs). */
#include <stdlib.h>

static volatile unsigned long sink;

static inline __attribute__((always_inline)) void left(unsigned long n)
{
	for (unsigned long i = 0; i < n; i++)
		sink += i;
}

static inline __attribute__((always_inline)) void right(unsigned long n)
{
	for (unsigned long i = 0; i < n; i++)
		sink ^= i;
}

__attribute__((noinline)) static void work(unsigned long n)
{
	left(n);
	right(n);
}

int main(int argc, char **argv)
{
	unsigned long rounds = argc > 1 ? strtoul(argv[1], 0, 10) : 50;

	for (unsigned long r = 0; r < rounds; r++)
		work(1000000);
	return 0;
}
