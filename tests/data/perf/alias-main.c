/* Built with -g and linked with alias-spin.c, which is built without debug information:
 * the hot function's frame lies in code the program's DWARF does not cover. */
#include <stdlib.h>

int spin(long n);

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 200000000;
	return spin(n) == 42;
}
