/* A function inlined into two callers: `leaf` is called from `mid`, which is inlined
 * into `caller_a` and into `caller_b`. Unwound with DWARF, each sample's chain has
 * `mid (inlined)` between `leaf` and one of the callers. */
static volatile unsigned long sink;

__attribute__((noinline)) void leaf(unsigned long n)
{
	for (unsigned long i = 0; i < n; i++)
		sink += i;
}

static inline __attribute__((always_inline)) void mid(unsigned long n)
{
	leaf(n);
	sink++;
}

__attribute__((noinline)) void caller_a(unsigned long n)
{
	mid(n);
	sink += 2;
}

__attribute__((noinline)) void caller_b(unsigned long n)
{
	mid(n);
	sink += 3;
}

int main(void)
{
	for (int k = 0; k < 40; k++) {
		caller_a(5000000);
		caller_b(5000000);
	}
	return 0;
}
