/* A unit whose DWARF 5 line table has file 0 "file-zero.c" and file 1 "spin.h": gcc
 * numbers files in the order its lines use them, and the first functions it emits,
 * `step` and `spin`, have their lines in spin.h (as static functions of an included
 * header would). The line program never sets the file register before their rows, so
 * they are file 1 by the register's initial value, which binutils 2.40 takes for
 * file 0. `spin` calls `step`, so it is also a caller in call chains. */
#include <stdio.h>
#include <stdlib.h>

#line 1 "spin.h"
static __attribute__((noipa)) unsigned long step(unsigned long x, unsigned long i)
{
	return x * 31 + i;
}

static __attribute__((noipa)) unsigned long spin(unsigned long n)
{
	unsigned long x = 0;
	for (unsigned long i = 0; i < n; i++)
		x = step(x, i);
	return x;
}
#line 24 "file-zero.c"

int main(int argc, char **argv)
{
	unsigned long n = argc > 1 ? strtoul(argv[1], NULL, 0) : 100000000UL;
	printf("%lu\n", spin(n));
	return 0;
}
