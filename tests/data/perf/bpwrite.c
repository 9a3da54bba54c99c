/* Writes the global `target` a known number of times, for breakpoint events. */
#include <stdlib.h>

volatile long target;

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000;
	for (long i = 0; i < n; i++)
		target = i;
	return 0;
}
