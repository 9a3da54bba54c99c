/* Hot loops on several source lines, one of them inlined into its caller: the test
 * program of lines.data (see README.md), which also spends a while in the kernel
 * through libc. */
#include <unistd.h>

volatile unsigned long sink;

static inline __attribute__((always_inline)) void mix(unsigned long i)
{
	sink ^= i * 7;
	sink += i >> 3;
}

__attribute__((noinline)) void first(unsigned long n)
{
	for (unsigned long i = 0; i < n; i++)
		sink += i * i;
}

__attribute__((noinline)) void second(unsigned long n)
{
	for (unsigned long i = 0; i < n; i++)
		mix(i);
}

__attribute__((noinline)) void calls_kernel(int n)
{
	for (int i = 0; i < n; i++)
		sink += (unsigned long)getppid();
}

int main(void)
{
	for (int r = 0; r < 40; r++) {
		first(2000000);
		second(1500000);
	}
	calls_kernel(100000);
	return 0;
}
