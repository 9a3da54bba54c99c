/* Built without debug information. The hot function has two global names at one
 * address, as glibc's and jemalloc's allocators have (__libc_realloc and realloc): perf
 * takes the one with fewer leading underscores as the symbol, while binutils, which
 * names the frame from the symbol table for want of DWARF, takes the first in the table. */
int __libc_spin(long n)
{
	volatile long x = 0;

	for (long i = 0; i < n; i++)
		x += i;
	return (int)x;
}

int spin(long n) __attribute__((alias("__libc_spin")));
