/* Hot loops inside functions that are always inlined, two levels deep. */
#include <stdio.h>
#include <stdlib.h>

static volatile unsigned long sink;

static inline __attribute__((always_inline)) unsigned long mix(unsigned long x)
{
	for (int i = 0; i < 64; i++)
		x = x * 6364136223846793005UL + 1442695040888963407UL;
	return x;
}

static inline __attribute__((always_inline)) unsigned long stir(unsigned long x)
{
	for (int i = 0; i < 16; i++)
		x ^= mix(x + i);
	return x;
}

__attribute__((noinline)) unsigned long work(unsigned long n)
{
	unsigned long x = n;
	for (unsigned long i = 0; i < n; i++)
		x = stir(x + i);
	return x;
}

int main(int argc, char **argv)
{
	unsigned long n = argc > 1 ? strtoul(argv[1], 0, 10) : 200000;
	sink = work(n);
	printf("%lu\n", sink);
	return 0;
}
